"""What one app owns and shares across threads: the database, the hit recorder, the cache.

Callbacks and Flask routes reach them with :func:`get_services` (inside a request) or
``server.extensions["hitboard"]``; nothing else opens a connection of its own.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import flask

import queries
from queries.counting import DimensionRecorder
from queries.journal.pipeline import Pipeline
from queries.stats.sites import SettingsCache, register_known

from .cache import ResultCache
from .settings import Settings

log = logging.getLogger(__name__)
EXTENSION_KEY = "hitboard"
WATCH_EVERY = 5.0      # seconds between looks at the background writers


@dataclass
class Services:
    settings: Settings
    db: object
    recorder: queries.HitRecorder | None
    cache: ResultCache
    # Dimensions and visitor sketches, beside the hit recorder (None read-only).
    dimensions: DimensionRecorder | None = None
    sites: SettingsCache | None = None
    # The /hit journal and the pipeline counting it (None read-only).
    journal: Pipeline | None = None
    _closers: list[Callable[[], None]] = field(default_factory=list)
    closed: bool = False
    # Background writers (recorders, the beacon's event writer, jobs): each has
    # ``revive()`` and ``problems()``; a watcher starts a stopped one again.
    workers: list = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    @classmethod
    def open(cls, settings: Settings) -> Services:
        db = queries.connect(settings.store, settings.database, read_only=settings.readonly)
        recorder = dimensions = journal = None
        try:
            if not settings.readonly:
                queries.ensure_indexes(db)
                register_known(db)
                recorder = queries.HitRecorder(db, flush_interval=settings.flush_interval)
                dimensions = DimensionRecorder(db, flush_interval=settings.flush_interval)
                journal = Pipeline(db, settings.journal, sync=settings.journal_sync,
                                   flush_interval=settings.flush_interval)
        except BaseException:
            if recorder is not None:
                recorder.close()
            db.client.close()
            raise
        services = cls(settings, db, recorder, ResultCache(settings.cache_max_bytes),
                       dimensions, SettingsCache(db), journal)
        for worker in (recorder, dimensions, journal):
            if worker is not None:
                services.watch(worker)
        threading.Thread(target=services._watch, name="hitboard-watch", daemon=True).start()
        return services

    def watch(self, worker) -> None:
        """Keep ``worker`` running: started again if its thread stops, and reported."""
        self.workers.append(worker)

    def _watch(self) -> None:
        while not self._stop.wait(WATCH_EVERY):
            self.cache.sweep()                  # an idle server lets expired results go
            for worker in list(self.workers):
                try:
                    worker.revive()
                except Exception:
                    log.exception("could not start %r again", worker)

    def accepting(self) -> bool:
        """Whether a ``/hit`` can be taken now: its journal has room and is counted."""
        return self.journal is not None and self.journal.accepting()

    def problems(self) -> list[str]:
        """What keeps the server from counting as it should: a writer down, a backlog
        past its bound."""
        return [problem for worker in self.workers for problem in worker.problems()]

    def on_close(self, closer: Callable[[], None]) -> None:
        """Run ``closer`` when the app shuts down (before the recorder's last flush), e.g.
        to stop a background job an extension started."""
        self._closers.append(closer)

    def close(self) -> None:
        """Stop extensions' jobs, flush the recorder, close the connection (idempotent)."""
        if self.closed:
            return
        self.closed = True
        self._stop.set()
        for closer in reversed(self._closers):
            try:
                closer()
            except Exception:
                log.exception("error while stopping %r", closer)
        if self.journal is not None:
            self.journal.close()
        if self.recorder is not None:
            self.recorder.close()
        if self.dimensions is not None:
            self.dimensions.close()
        self.db.client.close()


def get_services(server: flask.Flask | None = None) -> Services:
    """The services of ``server``, or of the app handling the current request."""
    app = server if server is not None else flask.current_app
    return app.extensions[EXTENSION_KEY]
