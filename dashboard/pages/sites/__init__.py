"""Sites: the registry's table and forms (page.py), their reads and writes (view.py).

Dash loads ``page.py`` itself (it registers the page); the other modules are imported
from it."""
