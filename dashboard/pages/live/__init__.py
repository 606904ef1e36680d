"""Live: the last minutes by minute (page.py), active visitors and referrers (panels.py),
the recent-hits feed (feed.py) and its notes, band and excursion banner (notes.py).

Dash loads ``page.py`` itself (it registers the page); the other modules are imported
from it."""
