"""hitboard's Dash application: ``create_app(settings)`` and, for gunicorn,
``create_server()``. Imported lazily so the ``hitboard`` CLI starts without loading Dash."""

from __future__ import annotations

__all__ = ["create_app", "create_server"]


def __getattr__(name: str):
    if name in __all__:
        from . import app

        return getattr(app, name)
    raise AttributeError(f"module 'dashboard' has no attribute {name!r}")
