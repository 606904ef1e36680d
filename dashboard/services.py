"""What one app owns and shares across threads: the database, the hit recorder, the cache.

Callbacks and Flask routes reach them with :func:`get_services` (inside a request) or
``server.extensions["hitboard"]``; nothing else opens a connection of its own.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

import flask

import queries
from queries.dimensions import DimensionRecorder
from queries.stats.sites import SettingsCache

from .cache import ResultCache
from .settings import Settings

log = logging.getLogger(__name__)
EXTENSION_KEY = "hitboard"


@dataclass
class Services:
    settings: Settings
    db: object
    recorder: queries.HitRecorder | None
    cache: ResultCache
    # Dimensions and visitor sketches, beside the hit recorder (None read-only).
    dimensions: DimensionRecorder | None = None
    sites: SettingsCache | None = None
    _closers: list[Callable[[], None]] = field(default_factory=list)
    closed: bool = False

    @classmethod
    def open(cls, settings: Settings) -> Services:
        db = queries.connect(settings.store, settings.database, read_only=settings.readonly)
        recorder = dimensions = None
        try:
            if not settings.readonly:
                queries.ensure_indexes(db)
            if not settings.readonly:
                recorder = queries.HitRecorder(db, flush_interval=settings.flush_interval)
                dimensions = DimensionRecorder(db, flush_interval=settings.flush_interval)
        except BaseException:
            if recorder is not None:
                recorder.close()
            db.client.close()
            raise
        return cls(settings, db, recorder, ResultCache(), dimensions, SettingsCache(db))

    def on_close(self, closer: Callable[[], None]) -> None:
        """Run ``closer`` when the app shuts down (before the recorder's last flush), e.g.
        to stop a background job an extension started."""
        self._closers.append(closer)

    def close(self) -> None:
        """Stop extensions' jobs, flush the recorder, close the connection (idempotent)."""
        if self.closed:
            return
        self.closed = True
        for closer in reversed(self._closers):
            try:
                closer()
            except Exception:
                log.exception("error while stopping %r", closer)
        if self.recorder is not None:
            self.recorder.close()
        if self.dimensions is not None:
            self.dimensions.close()
        self.db.client.close()


def get_services(server: flask.Flask | None = None) -> Services:
    """The services of ``server``, or of the app handling the current request."""
    app = server if server is not None else flask.current_app
    return app.extensions[EXTENSION_KEY]
