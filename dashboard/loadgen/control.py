"""The server's one load generator, shared by every browser: its state lives here, in the
process, so a page reload (or another viewer) sees the same running generator.

It owns at most one live :class:`LoadRunner` and one backfill thread, refuses to write
when the server is read-only, and caps every rate at the ``loadgen_max_rate`` setting.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import threading
import time
from dataclasses import dataclass

import flask

import queries
from queries import HitboardError
from queries.annotations import record_activity
from queries.events import custom
from queries.events.writer import EventWriter
from queries.jobs.backfill import Progress, check_days
from queries.loadgen.events import EventFeed
from queries.loadgen.history import backfill_history
from queries.loadgen.model import TrafficModel
from queries.loadgen.runner import MAX_RATE, LoadRunner, check_rate
from queries.stats.generator_state import remember_running

log = logging.getLogger(__name__)
EXTENSION_KEY = "hitboard.loadgen"


class GenerationDisabledError(HitboardError):
    """The server is read-only: it generates no traffic."""


@dataclass(frozen=True)
class Config:
    """What the page's controls set; the runner is rebuilt when any of these but ``rate``
    changes. ``events``: also write one raw ``events`` document per hit."""

    rate: float = 100.0
    sites: int = 2
    pages: int = 15
    zipf_s: float = 1.1
    diurnal: float = 0.5
    seed: int = 0
    events: bool = True

    def model(self) -> TrafficModel:
        return TrafficModel(sites=self.sites, pages=self.pages, zipf_s=self.zipf_s,
                            diurnal=self.diurnal, seed=self.seed)


@dataclass(frozen=True)
class BackfillState:
    """The last backfill as it stands: replaced, never changed, as it progresses."""

    running: bool = False
    days: int = 0
    done: int = 0
    total: int = 0
    hits: int = 0
    seconds: float = 0.0
    error: str = ""


@dataclass(frozen=True)
class GeneratorStatus:
    """What :meth:`LoadGenerator.status` reports: its settings, the live runner's rates and
    counters (zeros when none runs; sent and errors add up every runner since the server
    started), the recorder's backlog, raw events and the last backfill."""

    enabled: bool
    config: Config
    max_rate: float
    running: bool = False
    target_now: float = 0.0
    achieved: float = 0.0
    hits_sent: int = 0
    errors: int = 0
    last_error: str = ""
    spiking: bool = False
    pending_hits: int = 0
    db_operations_per_s: float = 0.0
    sites: tuple[str, ...] = ()
    events_written: int = 0
    events_pending: int = 0
    backfill: BackfillState = BackfillState()


class LoadGenerator:
    """Commands (start, stop, rate, spike, backfill) and status of the server's generator.
    Thread-safe: every viewer's callbacks call the same instance."""

    def __init__(self, db, recorder, readonly: bool = False, max_rate: float = MAX_RATE,
                 dimensions=None):
        self.db = db
        self.recorder = recorder
        self.dimensions = dimensions
        self.readonly = readonly or recorder is None
        self.max_rate = float(min(max_rate, MAX_RATE))
        self.config = Config(rate=min(Config.rate, self.max_rate))
        self._runner: LoadRunner | None = None
        self._lock = threading.Lock()
        self._sent_before = 0
        self._errors_before = 0
        self.backfill_state = BackfillState()
        self._backfill_thread: threading.Thread | None = None
        self._events: EventWriter | None = None
        self._custom: EventWriter | None = None

    # -- live traffic --------------------------------------------------------------------
    def start(self, config: Config | None = None) -> bool:
        """Run at ``config`` (the current one if omitted). Starting a running generator
        with a new rate changes the rate; with new sites or pages, restarts it."""
        self._check_enabled()
        config = config or self.config
        check_rate(config.rate, self.max_rate)
        model = config.model()
        with self._lock:
            runner = self._runner
            if (runner is not None and runner.running and model == runner.model
                    and config.events == self.config.events):
                runner.set_rate(config.rate)
                changed = config.rate != self.config.rate
                self.config = config
                if changed:
                    self._note(f"load generator: rate changed to {config.rate:,g} hits/s")
                return False
            queries.register_synthetic(self.db, model.site_names)
            self._retire(runner)
            feed = (EventFeed(self._event_writer(), config.seed, self._custom_writer())
                    if config.events else None)
            self._runner = LoadRunner(self.recorder, model, config.rate, max_rate=self.max_rate,
                                      events=feed, dimensions=self.dimensions)
            self.config = config
            started = self._runner.start()
        remember_running(self.db, True)
        if started:
            self._note(f"load generator started: {config.rate:,g} hits/s on "
                       f"{config.pages} pages")
        return started

    def stop(self, remember: bool = True) -> bool:
        """Stop live traffic; ``remember`` it (a presenter's Stop) so that a restart with
        ``--demo`` leaves traffic stopped. Shutting down does not count as a Stop."""
        with self._lock:
            runner = self._runner
            stopped = runner.stop() if runner is not None else False
        if remember and not self.readonly:
            remember_running(self.db, False)
        if stopped:
            self._note("load generator stopped")
        return stopped

    def set_rate(self, rate: float) -> None:
        self._check_enabled()
        check_rate(rate, self.max_rate)
        with self._lock:
            changed = float(rate) != self.config.rate
            self.config = dataclasses.replace(self.config, rate=float(rate))
            running = self._runner is not None and self._runner.running
            if self._runner is not None:
                self._runner.set_rate(rate)
        if changed and running:
            self._note(f"load generator: rate changed to {float(rate):,g} hits/s")

    def spike(self) -> None:
        """×10 for 30 s; only while running."""
        self._check_enabled()
        with self._lock:
            if self._runner is None or not self._runner.running:
                raise HitboardError("start the generator before adding a spike")
            self._runner.spike()
        self._note("load generator spike: ×10 for 30 s", "spike")

    def _note(self, text: str, kind: str = "load-test") -> None:
        """An automatic note on the generated sites' charts."""
        runner = self._runner
        if runner is not None:
            record_activity(self.db, runner.model.site_names, text, kind)

    def _event_writer(self) -> EventWriter:
        if self._events is None:
            self._events = EventWriter(self.db, flush_interval=1.0)
        return self._events

    def _custom_writer(self) -> EventWriter:
        if self._custom is None:
            self._custom = custom.writer(self.db, flush_interval=1.0)
        return self._custom

    def _retire(self, runner: LoadRunner | None) -> None:
        if runner is not None:
            runner.stop()
            self._sent_before += runner.hits_sent
            self._errors_before += runner.errors

    # -- history -------------------------------------------------------------------------
    def backfill(self, days: int, config: Config | None = None, now: dt.datetime | None = None,
                 progress: Progress | None = None, wait: bool = False) -> bool:
        """Write ``days`` days of history in a background thread (``wait`` for it to end);
        False if one is already running. ``progress(done, total)`` as in queries.backfill."""
        self._check_enabled()
        check_days(days)
        config = config or self.config
        check_rate(config.rate, self.max_rate)
        model = config.model()
        with self._lock:
            if self.backfill_state.running:
                return False
            self.backfill_state = BackfillState(running=True, days=days,
                                                total=(days + 1) * model.sites)
            self._backfill_thread = threading.Thread(
                target=self._backfill, args=(model, config.rate, days, now, progress),
                name="hitboard-backfill", daemon=True)
            self._backfill_thread.start()
        if wait:
            self.wait_backfill()
        return True

    def _backfill(self, model, rate, days, now, callback) -> None:
        started = time.perf_counter()

        def advance(**changes) -> None:   # only this thread writes the state while it runs
            self.backfill_state = dataclasses.replace(
                self.backfill_state, seconds=time.perf_counter() - started, **changes)

        def progress(done, total):
            advance(done=done, total=total)
            if callback is not None:
                callback(done, total)

        try:
            totals = backfill_history(self.db, model, rate, days, now=now, progress=progress,
                                      dimensions=self.dimensions)
            advance(hits=totals.hits)
            record_activity(self.db, model.site_names,
                            f"backfilled {days} days of synthetic traffic "
                            f"({totals.hits:,} hits)", "backfill")
        except Exception as exc:  # shown on the page: the thread must not die silently
            log.exception("backfill failed")
            advance(error=f"{type(exc).__name__}: {exc}")
        finally:
            advance(running=False)

    def wait_backfill(self, timeout: float | None = None) -> None:
        thread = self._backfill_thread
        if thread is not None:
            thread.join(timeout)

    # -- reporting and lifecycle ---------------------------------------------------------
    @property
    def disabled_reason(self) -> str | None:
        if self.readonly:
            return ("This server is read-only (HITBOARD_READONLY=1): it records no hits, "
                    "so traffic generation and backfill are disabled.")
        return None

    def _check_enabled(self) -> None:
        reason = self.disabled_reason
        if reason:
            raise GenerationDisabledError(reason)

    def status(self) -> GeneratorStatus:
        runner = self._runner
        status = GeneratorStatus(
            enabled=not self.readonly, config=self.config, max_rate=self.max_rate,
            hits_sent=self._sent_before, errors=self._errors_before,
            pending_hits=(self.recorder.status().pending_hits
                          if self.recorder is not None else 0),
            events_written=self._events.totals.written if self._events else 0,
            events_pending=self._events.pending() if self._events else 0,
            backfill=self.backfill_state)
        if runner is None:
            return status
        live = runner.status()
        return dataclasses.replace(
            status, running=live.running, target_now=live.target_now,
            achieved=live.achieved, hits_sent=status.hits_sent + live.hits_sent,
            errors=status.errors + live.errors, last_error=live.last_error,
            spiking=live.spiking, db_operations_per_s=live.db_operations_per_s,
            sites=tuple(runner.model.site_names))

    def close(self) -> None:
        self.stop(remember=False)
        self.wait_backfill(timeout=30)
        for writer in (self._events, self._custom):
            if writer is not None:
                writer.close()


def get_generator(server: flask.Flask | None = None) -> LoadGenerator:
    app = server if server is not None else flask.current_app
    return app.extensions[EXTENSION_KEY]
