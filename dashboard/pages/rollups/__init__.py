"""Rollups: the rolled-up levels as chart and table, and their checks (page.py).

Dash loads ``page.py`` itself (it registers the page); the other modules are imported
from it."""
