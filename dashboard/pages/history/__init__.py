"""History: hits over any range (page.py), its KPIs and breakdown panels (panels.py,
breakdowns.py), the view read from the URL alone (url.py, view.py), the comparison
(compare.py) and its notes and band (notes.py).

Dash loads ``page.py`` itself (it registers the page); the other modules are imported
from it."""
