"""The load generator's engine: a thread that feeds a HitRecorder at a target rate.

Every tick it draws how many hits arrived since the last one (Poisson around the target,
times the diurnal cycle and any spike), splits them over pages by popularity, cuts each
page's share into visits and counts them as rows of the count step
(``queries.counting.count``, a row per visit holding its hits): the work per tick
depends on the pages and visits, not on the rate, which is how 20,000 hits/s fit in one
Python thread.
The clock is injectable, so a test drives ``step()`` through simulated time.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import polars as pl

from ..counting.count import CountStep
from ..errors import HitboardError, InvalidRangeError
from .model import TrafficModel
from .visitors import SyntheticVisitors, visit_rows

log = logging.getLogger(__name__)
MIN_RATE = 1
MAX_RATE = 20_000
TICK_S = 0.1
# Longest interval one step makes up for: a generator that falls further behind (the
# machine cannot keep up) shows a lower achieved rate instead of bursting to catch up.
MAX_STEP_S = 1.0
WINDOW_S = 5.0
SPIKE_FACTOR = 10.0
SPIKE_SECONDS = 30.0
_CELLS = {"site": pl.String, "page": pl.String, "n": pl.Int64}


def check_rate(rate, limit: float = MAX_RATE) -> float:
    if isinstance(rate, bool) or not isinstance(rate, int | float) or not MIN_RATE <= rate <= limit:
        raise InvalidRangeError(
            f"rate must be from {MIN_RATE} to {limit:,.0f} hits/s, got {rate!r}")
    return float(rate)


@dataclass(frozen=True)
class RunnerStatus:
    """What :meth:`LoadRunner.status` reports: rates in hits/s (the target now, with the
    daily cycle and any spike; the one achieved over the last ``WINDOW_S``), counters,
    and the recorder's backlog and operations per second."""

    running: bool
    rate: float
    target_now: float
    achieved: float
    hits_sent: int
    expected_hits: float
    errors: int
    last_error: str
    spiking: bool
    pending_hits: int
    db_operations_per_s: float
    busy_s: float


class LoadRunner:
    """Generates hits for ``model`` into ``recorder`` at ``rate`` hits/s (a daily mean when
    the model has a diurnal cycle). ``events(cells, when, span_s)``, if given, also gets
    each tick's ``(site, page, n, visits)`` cells (see events.EventFeed): the visits the
    dimensions recorded, so both classify each hit alike. ``start``/``stop`` are
    idempotent."""

    def __init__(self, recorder, model: TrafficModel, rate: float, *, max_rate: float = MAX_RATE,
                 tick: float = TICK_S, clock: Callable[[], float] = time.monotonic,
                 wall: Callable[[], dt.datetime] | None = None, events=None,
                 dimensions=None):
        self.recorder = recorder
        self.model = model
        self.max_rate = float(max_rate)
        self.rate = check_rate(rate, self.max_rate)
        self.tick = tick
        self._clock = clock
        self._wall = wall or (lambda: dt.datetime.now(dt.UTC))
        self._events = events
        # A DimensionRecorder: referrers, browsers, countries, bots and visitors per hit.
        # The visits are drawn for the raw events too: they are the same requests.
        self._dimensions = dimensions
        self._visitors = (SyntheticVisitors(model.seed)
                          if dimensions is not None or events is not None else None)
        self._step = CountStep(dimensions=dimensions is not None)
        self._rng = np.random.default_rng([model.seed, 1])
        self._cells = model.cells()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._last: float | None = None
        self._spike_until = -1.0
        self._window: deque[tuple[float, int, float]] = deque()
        self._ops: deque[tuple[float, int]] = deque()
        self.hits_sent = 0
        self.expected_hits = 0.0
        self.errors = 0
        self.last_error = ""
        self.busy_s = 0.0

    # -- control ---------------------------------------------------------------------
    def set_rate(self, rate: float) -> None:
        self.rate = check_rate(rate, self.max_rate)

    def spike(self, duration: float = SPIKE_SECONDS) -> None:
        """Multiply the rate by ``SPIKE_FACTOR`` for ``duration`` seconds from now."""
        self._spike_until = self._clock() + duration

    def start(self) -> bool:
        """Start the thread; False if it was already running."""
        with self._lock:
            if self.running:
                return False
            self._stop.clear()
            self._begin()
            self._thread = threading.Thread(target=self._run, name="hitboard-loadgen", daemon=True)
            self._thread.start()
            return True

    def stop(self, timeout: float = 5.0) -> bool:
        """Stop the thread; False if it was not running."""
        with self._lock:
            thread, self._thread = self._thread, None
            if thread is None or not thread.is_alive():
                return False
            self._stop.set()
            thread.join(timeout)
            self._end()
            return True

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _begin(self) -> None:
        self._last = self._clock()
        self._window.clear()
        self._ops.clear()

    def _end(self) -> None:
        self._last = None
        self._window.clear()

    def _run(self) -> None:
        deadline = self._clock()
        while not self._stop.is_set():
            try:
                self.step()
            except Exception as exc:  # the thread must survive any one bad tick, visibly
                self.errors += 1
                self.last_error = f"{type(exc).__name__}: {exc}"
                log.exception("load generator tick failed")
            deadline = max(deadline + self.tick, self._clock())
            self._stop.wait(max(0.0, deadline - self._clock()))

    # -- one tick ----------------------------------------------------------------------
    def target_now(self, now: float | None = None) -> float:
        """The instantaneous target: rate × diurnal factor × spike, capped at max_rate."""
        now = self._clock() if now is None else now
        factor = self.model.diurnal_factor(self._wall())
        if now < self._spike_until:
            factor *= SPIKE_FACTOR
        return min(self.rate * factor, self.max_rate)

    def step(self, now: float | None = None) -> int:
        """Generate the hits due since the previous step; returns how many were recorded."""
        now = self._clock() if now is None else now
        if self._last is None:
            self._begin()
        elapsed, self._last = now - self._last, now
        if elapsed <= 0:
            return 0
        target = self.target_now(now)
        started = time.perf_counter()
        span = min(elapsed, MAX_STEP_S)
        counts = self.model.sample(self._rng, target * span)
        sent = self._record(counts, span)
        self.busy_s += time.perf_counter() - started
        self.hits_sent += sent
        self.expected_hits += target * elapsed
        self._window.append((now, sent, target * elapsed))
        while self._window and self._window[0][0] < now - WINDOW_S:
            self._window.popleft()
        self._sample_db_operations(now)
        return sent

    def _record(self, counts: np.ndarray, span: float) -> int:
        """The tick's hits counted (their visits, if drawn, as the count step's rows;
        else a row per page), then handed to the raw events: the hits sent."""
        when = self._wall()
        indexes = np.flatnonzero(counts)
        pages = [self._cells[i] for i in indexes.tolist()]
        hits = counts[indexes].tolist()
        if self._visitors is None:
            cells = []
            rows = pl.DataFrame({"site": [site for site, _ in pages],
                                 "page": [page for _, page in pages], "n": hits},
                                schema=_CELLS).with_columns(
                pl.lit(when, pl.Datetime("us", "UTC")).alias("time"),
                pl.lit(None, pl.String).alias("user_agent"))
        else:
            cells = [(site, page, n, self._visitors.draw(site, n))
                     for (site, page), n in zip(pages, hits, strict=True)]
            rows = visit_rows([(site, page, when, visits) for site, page, _, visits in cells])
        counted = self._step.count(rows)
        try:
            counted.into(self.recorder)
        except HitboardError as exc:
            self.errors += counted.total
            self.last_error = str(exc)
            return 0
        if self._dimensions is not None and counted.units:
            try:
                counted.into(None, self._dimensions)
            except HitboardError as exc:
                self.errors += 1
                self.last_error = f"dimensions: {exc}"
        if self._events is not None and cells:
            try:
                self._events(cells, when, span)
            except HitboardError as exc:
                self.errors += 1
                self.last_error = f"raw events: {exc}"
        return counted.total

    def _sample_db_operations(self, now: float) -> None:
        if self._ops and now - self._ops[-1][0] < 1.0:
            return
        self._ops.append((now, self.recorder.status().db_operations))
        while len(self._ops) > 2 and self._ops[0][0] < now - WINDOW_S:
            self._ops.popleft()

    # -- reporting ---------------------------------------------------------------------
    def status(self) -> RunnerStatus:
        window = list(self._window)
        span = window[-1][0] - window[0][0] if len(window) > 1 else 0.0
        achieved = sum(n for _, n, _ in window[1:]) / span if span else 0.0
        ops = list(self._ops)
        ops_span = ops[-1][0] - ops[0][0] if len(ops) > 1 else 0.0
        recorder = self.recorder.status()
        return RunnerStatus(
            running=self.running,
            rate=self.rate,
            target_now=self.target_now() if self.running else 0.0,
            achieved=achieved if self.running else 0.0,
            hits_sent=self.hits_sent,
            expected_hits=self.expected_hits,
            errors=self.errors,
            last_error=self.last_error or recorder.last_error,
            spiking=self._clock() < self._spike_until,
            pending_hits=recorder.pending_hits,
            db_operations_per_s=(ops[-1][1] - ops[0][1]) / ops_span if ops_span else 0.0,
            busy_s=self.busy_s,
        )
