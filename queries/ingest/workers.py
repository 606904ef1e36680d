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
after it).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

from .. import processes
from ..dimensions import agents
from ..errors import HitboardError
from ..events.collection import EventWriter
from ..store.connection import bulk_loading, connect
from . import gcmode
from .dimwriter import DimensionWriter, PackedUnits
from .mapper import LineMapper, Tally

_config: WorkerConfig | None = None
_worker: tuple[LineMapper, EventWriter | None] | None = None


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


def _start(config: WorkerConfig) -> None:
    global _config
    _config = config
    gcmode.enter()
    if config.dimensions:
        agents.prepare()


def _map(data: bytes, start: int, default_site: str, stream: int) -> Tally:
    mapper, events = _worker or _connected()
    tally = mapper.map_chunk(data, start, default_site, stream, events)
    if tally.units:         # pickled here, unpickled by the dimension recorder alone
        tally.units = PackedUnits.of(tally.units)
    return tally


def _connected() -> tuple[LineMapper, EventWriter | None]:
    """The worker's mapper and event writer, made with its first task: a forked worker
    starts before the ingest process has opened the store, and a store that cannot be
    opened is the ingest process's error to report, not a traceback of the worker."""
    global _worker
    config = _config
    db = connect(config.store, config.database)
    bulk_loading(db)
    events = (EventWriter(db, config.write_concern, keyed=True, batch_size=config.event_batch)
              if config.events else None)
    _worker = (LineMapper(config.site, config.format, config.dimensions), events)
    return _worker


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
        self.executor = processes.pool(jobs, _start, config, fork=self.forked)

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
            raise HitboardError(
                "an ingest worker process died (killed, or out of memory?); what was "
                "merged before is kept: run again to resume, or with --jobs 1") from None

    def close(self) -> None:
        """Stop the workers: tasks not started are dropped, those running end first
        (a second at most; lines not merged are read again by the next run)."""
        self.executor.shutdown(wait=True, cancel_futures=True)
        if self.dimensions is not None:
            self.dimensions.close()
