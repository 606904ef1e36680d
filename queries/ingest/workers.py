"""Worker processes that map a large log's lines (``queries.ingest.mapper``) in parallel.

Parsing, classifying and writing raw events take nearly all of an ingest's time and are
independent from line to line, so a worker process maps each chunk of lines, writes its
events through its own connection (the embedded store takes writers from several
processes; MongoDB, from anywhere), and returns the chunk's tally. The ingest process
only reads lines, merges tallies in file order and flushes its recorders under its
checkpoint (the dimension recorders in a process forked with the workers, see
``dimwriter``), so the exactly-once argument of ``queries.ingest.session`` is unchanged:
a worker's events may be written before their batch's intent, as events always could
(a restart deletes the events past its position before reading on).

Workers are ``queries.processes``' (spawned, or forked before the store opens; deaf
to Ctrl-C, dying with the ingest process even when it is killed, so no orphan writes
after it). Forked ones hand over a chunk's tally before counting its dimensions, which
a thread of theirs then sends to the dimension process (:class:`_Counting`): the ingest
process merges the hit counts and flushes them meanwhile.
"""

from __future__ import annotations

import os
import pickle
import queue
import sys
import threading
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures.process import BrokenProcessPool
from contextlib import suppress
from dataclasses import dataclass

from .. import processes
from ..dimensions import agents
from ..errors import HitboardError
from ..events import apart
from ..events.writer import EventWriter
from ..store.connection import bulk_loading, connect
from . import gcmode
from .dimwriter import Deferred, DimensionWriter, PackedUnits
from .mapper import LineMapper, Tally, hour_units

NICENESS = 10              # of a worker's counting thread (see ``_Counting``)
_config: WorkerConfig | None = None
_units = None               # the dimension process's queue of units, when forked with it
_worker: tuple[LineMapper, EventWriter | None, _Counting | None] | None = None


@dataclass(frozen=True)
class WorkerConfig:
    """What a worker needs to map lines as the ingest process would."""

    store: str
    database: str | None
    site: str | None
    format: str
    events: bool
    write_concern: str | None
    dimensions: bool
    event_batch: int
    unknown_bots: bool = False


def _start(config: WorkerConfig, units=None) -> None:
    global _config, _units
    _config, _units = config, units
    gcmode.enter()
    if config.dimensions:
        agents.prepare()


def _map(data: bytes, start: int, default_site: str, stream: int) -> Tally:
    mapper, events, counting = _worker or _connected()
    tally = mapper.map_chunk(data, start, default_site, stream, events)
    if tally.slices is not None:
        chunk = (stream, start)
        counting.add(chunk, tally.slices)
        tally.slices, tally.units = None, Deferred(chunk, hour_units(tally.hits))
    elif tally.units:       # pickled here, unpickled by the dimension recorder alone
        tally.units = PackedUnits.of(tally.units)
    return tally


def _connected() -> tuple[LineMapper, EventWriter | None, _Counting | None]:
    """The worker's mapper and event writer, made with its first task: a forked worker
    starts before the ingest process has opened the store, and a store that cannot be
    opened is the ingest process's error to report, not a traceback of the worker."""
    global _worker
    config = _config
    db = connect(config.store, config.database)
    bulk_loading(db)
    events = (EventWriter(db, config.write_concern, keyed=True, batch_size=config.event_batch)
              if config.events else None)
    defer = config.dimensions and _units is not None
    mapper = LineMapper(config.site, config.format, config.dimensions, defer_dimensions=defer,
                        unknown_bots=config.unknown_bots)
    mapper.keep_apart(db, apart.writer(db, concern=config.write_concern, keyed=True,
                                       batch_size=config.event_batch)
                      if config.events else None)
    _worker = (mapper, events, _Counting(mapper, _units) if defer else None)
    return _worker


class _Counting:
    """A worker's thread counting the dimensions of the chunks it has handed over, in
    order, and sending their units to the dimension process. It runs at ``NICENESS``:
    the mapping and the ingest process's merging and flushing of the hit counts come
    first. At most ``BACKLOG`` chunks wait (their lines are held meanwhile): the worker
    maps no further ahead, so no chunks are left to count once the mapping ends.
    Paired runs (``bench/ingest_dimensions.py --paired``) against neither: 100,000 lines
    in time order 0.90x the time, 500,000 0.94x, the repeated file 0.99x; niceness with a
    backlog of 2 left the repeated file's last chunks to count after the mapping (1.06x)."""

    BACKLOG = 1

    def __init__(self, mapper: LineMapper, units):
        self.mapper, self.units = mapper, units
        self.chunks: queue.Queue = queue.Queue(maxsize=self.BACKLOG)
        self.thread = threading.Thread(target=self._run, name="hitboard-counting",
                                       daemon=True)
        self.thread.start()

    def add(self, chunk: tuple[int, int], slices: list) -> None:
        self.chunks.put((chunk, slices))

    def close(self) -> None:
        """End the thread once the chunks given are sent (a worker's thread ends with
        its process)."""
        self.chunks.put(None)
        self.thread.join()

    def _run(self) -> None:
        if sys.platform == "linux":      # where a thread has a niceness of its own
            with suppress(OSError):
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICENESS)
        while (item := self.chunks.get()) is not None:
            chunk, slices = item
            try:
                units = self.mapper.count_dimensions(slices)
                data = pickle.dumps(units, pickle.HIGHEST_PROTOCOL) if units else None
                self.units.put((chunk, data, None))
            except Exception as exc:         # the flush that waits for them says so
                self.units.put((chunk, None, f"{type(exc).__name__}: {exc}"))


def _died() -> HitboardError:
    return HitboardError("an ingest worker process died (killed, or out of memory?); what "
                         "was merged before is kept: run again to resume, or with --jobs 1")


class WorkerPool:
    """``jobs`` worker processes; :meth:`map` returns tallies in the order of its tasks.
    Once the lines are mapped, the processes may serve other work (``executor``): the
    ingest's rollups (``queries.rollups.parallel``)."""

    def __init__(self, config: WorkerConfig, jobs: int, fork: bool = False):
        """``fork``: forked if :func:`queries.processes.can_fork` (the caller has opened
        no store), else spawned."""
        self.config, self.jobs = config, jobs
        self.forked = fork and processes.can_fork()
        # The dimension recorders' process (see ``dimwriter``), forked first: no thread
        # runs yet. A spawned pool's ingest keeps its recorders.
        self.dimensions = (DimensionWriter(config.store, config.database)
                           if self.forked and config.dimensions else None)
        units = None if self.dimensions is None else self.dimensions.units
        self.executor = processes.pool(jobs, _start, config, units, fork=self.forked)
        if self.dimensions is not None:
            self.dimensions.check_workers = self._check_alive

    def _check_alive(self) -> None:
        """Raise the run's error once a worker has died (the pool then takes no task)."""
        try:
            self.executor.submit(int)
        except BrokenProcessPool:
            raise _died() from None

    def map(self, tasks: Iterable[tuple[object, tuple]]) -> Iterator[tuple[object, Tally]]:
        """``(label, (data, start, default_site, stream))`` tasks → ``(label, tally)``,
        in order, with at most four tasks per worker in flight (memory stays bounded
        however far the workers run ahead of the merging)."""
        pending: deque = deque()
        try:
            for label, args in tasks:
                pending.append((label, self.executor.submit(_map, *args)))
                if len(pending) >= 4 * self.jobs:
                    label, future = pending.popleft()
                    yield label, future.result()
            while pending:
                label, future = pending.popleft()
                yield label, future.result()
        except BrokenProcessPool:
            raise _died() from None

    def close(self) -> None:
        """Stop the workers: tasks not started are dropped, those running end first
        (a second at most; lines not merged are read again by the next run)."""
        self.executor.shutdown(wait=True, cancel_futures=True)
        if self.dimensions is not None:
            self.dimensions.close()
