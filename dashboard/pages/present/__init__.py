"""The presenter screen (page.py) and what it shows, computed from the URL alone (view.py).

Dash loads ``page.py`` itself (it registers the page); the other modules are imported
from it."""
