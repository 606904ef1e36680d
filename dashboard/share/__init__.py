"""Share links and embeds: ``/share/<token>`` shows one site's History and Live,
read-only, locked to the link's filter, as a page or in an ``<iframe>``
(``?embed=true``). The links live in ``queries.shares``; ``hitboard share`` makes them."""

from .routes import register_share

__all__ = ["register_share"]
