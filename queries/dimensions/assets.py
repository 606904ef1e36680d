"""Page or static asset, by the type of file a path names, so "top pages", pageviews and
visits leave files out.

A path is a page when its last segment has no extension (``/blog/``, ``/about``,
``/v1.2/``; a numeric one is a version or a date: ``/docs/2.7``; one of other characters
than letters and digits is part of a name: ``/a.b-c``), when its extension's
type is HTML (``.html``, ``.xhtml``), or when it names a page made on the server
(``.php``, ``.aspx``, ``.jsp``...: they answer HTML). Any other extension is a file:
one the ``content-types`` list gives a type (images, ``.xbm`` icons included, fonts,
``.mpg`` and other video, archives, text, JSON, XML...), or one no list of types knows
(``logstash.jar``, ``hbase.spec``): an extension that names no kind of page. The list is
a package's (about 360 extensions, maintained upstream, the same on every machine)
rather than Python's ``mimetypes``, whose table depends on the Python version (3.11's
has no ``.woff2``, ``.webp`` or ``.7z``) and, through its module functions, on the
machine's ``/etc/mime.types``.
"""

from __future__ import annotations

import posixpath
from functools import lru_cache

from content_types import EXTENSION_TO_CONTENT_TYPE

from .encoding import clean

ASSET, PAGE = "asset", "page"
HTML_TYPES = frozenset(("text/html", "application/xhtml+xml"))
# Pages the list has no HTML type for: XHTML, and what servers run to make a page.
PAGE_EXTENSIONS = frozenset((
    "xhtml", "xht", "shtml", "php", "phtml", "asp", "aspx", "jsp", "jspx", "cfm", "cgi",
    "do", "action",
))


@lru_cache(maxsize=65_536)
def kind(path: str) -> str:
    """``page`` or ``asset``, by the last segment's extension (see the module doc);
    ``robots.txt`` and ``sitemap.xml`` are assets too: nobody reads them as pages."""
    ext = posixpath.splitext(path.rsplit("/", 1)[-1])[1][1:].lower()
    if not ext.isalnum() or ext.isdigit() or ext in PAGE_EXTENSIONS \
            or EXTENSION_TO_CONTENT_TYPE.get(ext) in HTML_TYPES:
        return PAGE
    return ASSET


def page_of(path: str | None, known: dict) -> str | None:
    """The page a path is, None for an asset (``known``: paths seen, their pages)."""
    if path not in known:
        known[path] = clean(path) if path and kind(path) == PAGE else None
    return known[path]
