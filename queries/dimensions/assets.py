"""Static asset or page, by the path's extension, so "top pages" can leave assets out."""

from __future__ import annotations

import posixpath

ASSET, PAGE = "asset", "page"
EXTENSIONS = frozenset((
    ".css", ".js", ".mjs", ".map", ".png", ".jpg", ".jpeg", ".gif", ".webp", ".avif", ".svg",
    ".ico", ".bmp", ".tif", ".tiff", ".woff", ".woff2", ".ttf", ".otf", ".eot", ".mp4",
    ".webm", ".mp3", ".ogg", ".wav", ".pdf", ".zip", ".gz", ".tgz", ".bz2", ".xz", ".7z",
    ".rar", ".jar", ".swf", ".json", ".xml", ".txt", ".csv", ".wasm",
))


def kind(path: str) -> str:
    """``asset`` when the last segment's extension is a static file's, else ``page``.
    ``robots.txt`` and ``sitemap.xml`` are assets too: nobody reads them as pages."""
    ext = posixpath.splitext(path.rsplit("/", 1)[-1])[1].lower()
    return ASSET if ext in EXTENSIONS else PAGE
