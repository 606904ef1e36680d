"""The load generator's page: its controls, backfill and progress (page.py).

Dash loads ``page.py`` itself (it registers the page); the other modules are imported
from it."""
