"""The writers a simulated schedule drives, each behind the fault layer (``simkit``),
each keeping the truth's ledgers (``simtruth``) as its callers would know them: a hit is
taken when ``record`` returns, acknowledged when a later ``flush`` returns; an event
when ``add`` returns, acknowledged when a flush does. A writer killed (abandoned without
close or flush, its thread stopped) leaves what it held in doubt."""

from __future__ import annotations

import datetime as dt
import random

from pymongo.errors import PyMongoError
from simkit import Backend
from simtruth import Hit, Ledger

from queries.counting import DimensionRecorder, HitRecorder, exithooks
from queries.errors import HitboardError
from queries.events.writer import EventWriter

SITES = ("blog", "shop")
PAGES = ("/", "/a", "/b.c", "/d/$e")
START = dt.datetime(2026, 3, 31, 23, 58, tzinfo=dt.UTC)   # a UTC midnight and month end


class SimClock:
    """The writers' clock: moved by the schedule, forward and back across midnight."""

    def __init__(self, now: dt.datetime = START):
        self.now = now

    def __call__(self) -> dt.datetime:
        return self.now

    def jump(self, rng: random.Random) -> str:
        self.now = START + dt.timedelta(seconds=rng.randrange(-300, 300))
        return f"  clock -> {self.now:%Y-%m-%d %H:%M:%S}"

    def tick(self, rng: random.Random) -> None:
        self.now += dt.timedelta(seconds=rng.randrange(0, 40))


def kill(writer) -> None:
    """A writer abandoned as a SIGKILL leaves it: its thread stopped, nothing flushed."""
    writer._stop.set()
    if isinstance(writer, HitRecorder | DimensionRecorder):
        writer._closed = True
        exithooks._LIVE.discard(writer)


class Counted:
    """One recorder and the hits it took since its last flush that returned."""

    def __init__(self, make, ledger: Ledger):
        self.make, self.ledger = make, ledger
        self.writer = make()
        self.taken: list[Hit] = []

    def record(self, hit: Hit) -> None:
        raise NotImplementedError

    def take(self, hit: Hit) -> None:
        try:
            self.record(hit)
        except HitboardError:           # refused (overloaded): the caller knows
            return
        self.taken.append(hit)

    def flush(self) -> bool:
        try:
            self.writer.flush()
        except PyMongoError:
            return False
        self.ledger.acked += self.taken
        self.taken = []
        return True

    def kill_and_restart(self) -> None:
        kill(self.writer)
        self.ledger.doubt += self.taken
        self.taken = []
        self.writer = self.make()

    def heal(self) -> None:
        """Faults off: what it holds is written, as a close does."""
        self.writer.close()
        assert self.writer.status().pending_hits == 0, "a healthy close left hits"
        self.ledger.acked += self.taken
        self.taken = []


class CountedHits(Counted):
    def record(self, hit: Hit) -> None:
        now = hit.ts == self.writer._clock()     # "now": the writer reads its clock
        self.writer.record(hit.site, hit.page, None if now else hit.ts, bots=int(hit.bot))


class CountedDims(Counted):
    def record(self, hit: Hit) -> None:
        from queries.dimensions.classify import Dimensions

        self.writer.record(hit.site, hit.page, hit.ts,
                           Dimensions(hit.dims, f"{hit.site}|{hit.ts:%H}", hit.bot))


class CountedEvents(Counted):
    """The beacon's event writer (a thread, here idle: flushed by the schedule), with
    small batches so a flush spans several."""

    def record(self, hit: Hit) -> None:
        self.writer.add({"time": hit.ts, "site": hit.site, "path": hit.page, "status": 200})

    def flush(self) -> bool:
        try:
            self.writer.flush()
        except PyMongoError:
            return False
        if self.writer.pending():
            return False
        self.ledger.acked += self.taken
        self.taken = []
        return True

    def heal(self) -> None:
        self.writer.flush()
        assert not self.writer.pending(), "a healthy flush left events"
        self.writer.close()
        self.ledger.acked += self.taken
        self.taken = []


class Tap:
    """The load generator's recorder, seen from the schedule: what ``add_pending`` took
    (the count step's hits per page, UTC day and minute)."""

    def __init__(self, counted: CountedHits):
        self.counted = counted

    def add_pending(self, pending: dict, bots: dict | None = None) -> None:
        self.counted.writer.add_pending(pending, bots)
        for key, minutes in pending.items():
            site, page, year, month, day = key
            robots = (bots or {}).get(key, {})
            for minute, n in minutes.items():
                ts = dt.datetime(year, month, day, minute // 60, minute % 60, tzinfo=dt.UTC)
                self.counted.taken += [Hit(site, page, ts, i < robots.get(minute, 0))
                                       for i in range(n)]

    def status(self):
        return self.counted.writer.status()


def recorders(backend: Backend, clock: SimClock, truth, rng: random.Random) -> list[Counted]:
    """A hit recorder, a dimension recorder and an event writer, as the beacon holds
    them; sometimes two of each on the same store (two processes)."""
    db = backend.faulty
    copies = 2 if rng.random() < 0.3 else 1
    writers: list[Counted] = []
    for _ in range(copies):
        writers.append(CountedHits(lambda: HitRecorder(db, flush_interval=3600, clock=clock),
                                   truth.stats))
        writers.append(CountedDims(
            lambda: DimensionRecorder(db, flush_interval=3600, clock=clock), truth.dims))
        writers.append(CountedEvents(
            lambda: EventWriter(db, flush_interval=3600, batch_size=3, clock=clock),
            truth.events))
    return writers
