"""An ingest's dimension recorders in a process of their own, beside the hit counters.

Once worker processes map the lines, the ingest process is a long log's bottleneck: it
merges the tallies and flushes the hit counters, and a dimension flush costs it as much
again (visitor sketches, ~14 updates per visitor and value; capped values; documents of
hundreds of fields). That is CPU-bound Python, so a thread would only queue on the GIL:
the dimension recorders (one per log, as the sessions have) live in a forked process,
the :class:`DimensionWriter`. Tallies' dimension units reach it as the workers pickled
them (:class:`PackedUnits`, never unpickled on the way), and a flush there computes its
documents while the ingest process flushes the hit counters, then writes them.

Step (c) of ``queries.ingest.session`` is then two writers' writes instead of one
transaction, which its argument allows: each document's guard makes a re-sent flush a
no-op wherever it was applied, and the checkpoint commits (d) only once both are done.
A writer that dies (killed, out of memory) is an error of the run, which stops: the next
run completes the flush.

Forked workers hand over a chunk's hit counts first and count its dimensions after, in a
thread (``workers``), sending the units here directly (:attr:`DimensionWriter.units`);
the ingest process only *claims* them for a log's recorder, in file order
(:class:`Deferred`). A flush waits for the units it claimed: the hit counters' flush
then starts sooner, and this process merges units as they come. A worker that dies
before sending them stops the run (``check_workers``), as one dying before its tally.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import queue
import threading
from collections import deque
from collections.abc import Callable
from contextlib import suppress
from functools import partial
from typing import NamedTuple

from ..counting import DimensionRecorder
from ..errors import HitboardError
from ..processes import as_child
from ..store.connection import atomic, bulk_loading, connect
from . import gcmode


class PackedUnits(NamedTuple):
    """A tally's dimension units (the DimensionRecorder's pending format), pickled once
    where they were made, with their keys: what a batch's size is counted from."""

    keys: list[tuple]
    data: bytes

    @classmethod
    def of(cls, units: dict) -> PackedUnits:
        return cls(list(units), pickle.dumps(units, pickle.HIGHEST_PROTOCOL))

    def unpack(self) -> dict:
        return pickle.loads(self.data)


class Deferred(NamedTuple):
    """A tally's units that its worker process sends here once counted: ``chunk`` names
    them (the pass and first byte of its lines), ``keys`` are their hour units
    (``mapper.hour_units``), what a batch's size is counted from."""

    chunk: tuple[int, int]
    keys: list[tuple]


class DimensionWriter:
    """A forked process holding the dimension recorders of an ingest, which it drives
    through a pipe, command after command; worker processes send it units on
    :attr:`units` (``(chunk, pickled units or None, error or None)``). Start it before
    the store opens (it connects itself, on its first recorder); :meth:`close` stops it.
    ``check_workers()``, called while a flush is awaited, raises the run's error once
    the units it waits for can no longer come."""

    def __init__(self, store: str, database: str | None):
        context = multiprocessing.get_context("fork")
        self._conn, child = context.Pipe()
        self.units = context.Queue()
        self.check_workers: Callable[[], None] = lambda: None
        self._process = context.Process(target=_serve, name="hitboard-dimensions",
                                        args=(child, self.units, os.getpid(), store,
                                              database),
                                        daemon=True)
        self._process.start()
        child.close()

    def open(self, writer: str, max_pending_docs: int) -> None:
        self._ask(("open", writer, max_pending_docs))

    def add(self, writer: str, units: PackedUnits) -> None:
        """Merge units into ``writer``'s recorder (no answer awaited: an error comes
        with the next flush's)."""
        self._send(("add", writer, units.data))

    def claim(self, writer: str, deferred: Deferred) -> None:
        """The units a worker sends for ``deferred.chunk`` are ``writer``'s, after those
        claimed before."""
        self._send(("claim", writer, deferred.chunk))

    def start_flush(self, writer: str, seq: int) -> Callable[[], None]:
        """Flush ``writer``'s recorder under ``seq``, there, while this process goes on;
        returns the function that waits for it (raising its error)."""
        self._send(("flush", writer, seq))
        return self._answer

    def release(self, writer: str) -> None:
        """Drop ``writer``'s recorder and what it holds unwritten (lines the next run
        reads again)."""
        self._ask(("close", writer))

    def close(self) -> None:
        with suppress(HitboardError):      # it died: nothing to stop
            self._send(("stop",))
        self._process.join(timeout=5)
        if self._process.is_alive():
            self._process.kill()
        self._conn.close()

    def _ask(self, command: tuple) -> None:
        self._send(command)
        self._answer()

    def _send(self, command: tuple) -> None:
        try:
            self._conn.send(command)
        except (BrokenPipeError, ConnectionResetError, OSError):
            raise self._died() from None

    def _answer(self) -> None:
        try:
            while not self._conn.poll(0.5):
                if not self._process.is_alive():
                    raise self._died()
                self.check_workers()
            error = self._conn.recv()
        except (EOFError, ConnectionResetError, OSError):
            raise self._died() from None
        if error is not None:
            raise HitboardError(f"the dimensions could not be written ({error}): run "
                                "again to resume")

    def _died(self) -> HitboardError:
        return HitboardError("the ingest's dimension process died (killed, or out of "
                             "memory?); what was flushed before is kept: run again to "
                             "resume, or with --jobs 1")


def _serve(conn, units, parent: int, store: str, database: str | None) -> None:
    """The writer process: commands and units, each read by a thread of its own into
    one queue, handled by :class:`_Server`."""
    as_child(parent)
    gcmode.enter()
    events: queue.SimpleQueue = queue.SimpleQueue()
    for kind, source in ((COMMAND, conn.recv), (UNITS, units.get)):
        threading.Thread(target=_feed, args=(kind, source, events), daemon=True).start()
    _Server(conn, store, database).run(events)


COMMAND, UNITS = "command", "units"


def _feed(kind: str, source, events: queue.SimpleQueue) -> None:
    """``(kind, item)`` for each item of ``source``, into ``events``."""
    while True:
        try:
            events.put((kind, source()))
        except (EOFError, OSError):       # the ingest process is gone
            events.put((COMMAND, ("stop",)))
            return


class _Server:
    """Commands in order, answering all but ``add`` and ``claim``. Units come as
    workers send them; a writer's claimed units are merged in the order claimed, as soon
    as they are there, and its flush waits for all of them."""

    def __init__(self, conn, store: str, database: str | None):
        self.conn, self.store, self.database = conn, store, database
        self.db = None
        self.recorders: dict[str, DimensionRecorder] = {}
        self.claims: dict[str, deque] = {}
        self.arrived: dict[tuple, tuple] = {}
        self.errors: dict[str, str] = {}
        self.commands: deque = deque()

    def run(self, events: queue.SimpleQueue) -> None:
        while True:
            kind, item = events.get()
            if kind == UNITS:
                chunk, data, error = item
                self.arrived[chunk] = (data, error)
                self._merge_claimed()
            elif item[0] == "stop":       # even behind a flush still waiting for units
                return
            else:
                self.commands.append(item)
            while self.commands and self._ready(self.commands[0]):
                self._handle(self.commands.popleft())

    def _ready(self, command: tuple) -> bool:
        """A flush waits for the units its writer claimed."""
        return command[0] != "flush" or not self.claims.get(command[1])

    def _merge_claimed(self) -> None:
        for writer, claimed in self.claims.items():
            while claimed and claimed[0] in self.arrived:
                data, error = self.arrived.pop(claimed.popleft())
                self._add(writer, data, error)

    def _add(self, writer: str, data: bytes | None, error: str | None = None) -> None:
        if error is not None:
            self.errors.setdefault(writer, f"a worker counting them: {error}")
        elif data is not None and writer not in self.errors:
            try:
                self.recorders[writer].add_pending(pickle.loads(data))
            except Exception as exc:          # the flush reports it
                self.errors[writer] = f"{type(exc).__name__}: {exc}"

    def _handle(self, command: tuple) -> None:
        """Carry out one command, answering all but ``add`` and ``claim``."""
        op, args = command[0], command[1:]
        if op == "add":
            self._add(*args)
            return
        if op == "claim":
            writer, chunk = args
            self.claims.setdefault(writer, deque()).append(chunk)
            self._merge_claimed()
            return
        error = None
        try:
            if op == "open":
                if self.db is None:
                    self.db = connect(self.store, self.database)
                    bulk_loading(self.db)
                writer, bound = args
                self.recorders[writer] = DimensionRecorder(self.db, writer=writer,
                                                           max_pending_docs=bound)
            elif op == "flush":
                writer, seq = args
                error = self.errors.pop(writer, None)
                if error is None:
                    self.recorders[writer].flush(seq=seq, writing=partial(atomic, self.db))
            elif op == "close":
                self.recorders.pop(args[0]).close(timeout=2.0)
                self.claims.pop(args[0], None)
                self.errors.pop(args[0], None)
        except Exception as exc:          # the ingest process reports it and stops
            error = f"{type(exc).__name__}: {exc}"
        self.conn.send(error)
