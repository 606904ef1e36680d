"""The dashboard's pages, one folder each, found by Dash pages (``use_pages=True``).

To add a page, create ``dashboard/pages/<name>/page.py`` holding:

- ``dash.register_page(__name__, path="/<name>", name="<Nav label>", order=<n>)``: the
  navigation bar lists every registered page by ``order`` and keeps the shell's state
  (site, pages, time zone, theme) in its links;
- ``layout(**query)``: receives the URL's query parameters; read them with
  ``dashboard.state`` (``from_kwargs``, ``ShellState.from_query``) and prefix every
  component id with the page name;
- its callbacks, declared with ``dash.callback``. Read the view's state from
  ``Input("url", "search")``; record a control change with
  ``Output("url", "search", allow_duplicate=True)`` (no re-render) or move to another view
  with ``Output("navigate", "href", allow_duplicate=True)`` (re-render). Reach the database,
  recorder and cache with ``dashboard.services.get_services()`` and read through
  ``dashboard.reads.shared`` so every viewer shares one query per cache bucket.

Dash executes each ``page.py`` itself (and any module here whose text names its
``register_`` + ``page`` call): the page's other modules sit beside it and are imported
from it (``dashboard/pages/history/view.py`` for instance), never the other way round.
"""
