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
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
from collections.abc import Callable
from contextlib import suppress
from functools import partial
from typing import NamedTuple

from ..dimensions import DimensionRecorder
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


class DimensionWriter:
    """A forked process holding the dimension recorders of an ingest, which it drives
    through a pipe, command after command. Start it before the store opens (it connects
    itself, on its first recorder); :meth:`close` stops it."""

    def __init__(self, store: str, database: str | None):
        context = multiprocessing.get_context("fork")
        self._conn, child = context.Pipe()
        self._process = context.Process(target=_serve, name="hitboard-dimensions",
                                        args=(child, os.getpid(), store, database),
                                        daemon=True)
        self._process.start()
        child.close()

    def open(self, writer: str, max_pending_docs: int) -> None:
        self._ask(("open", writer, max_pending_docs))

    def add(self, writer: str, units: PackedUnits) -> None:
        """Merge units into ``writer``'s recorder (no answer awaited: an error comes
        with the next flush's)."""
        self._send(("add", writer, units.data))

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


def _serve(conn, parent: int, store: str, database: str | None) -> None:
    """The writer's loop: commands in order; answers to all but ``add``."""
    as_child(parent)
    gcmode.enter()
    db, recorders, error = None, {}, None
    while True:
        try:
            command = conn.recv()
        except EOFError:
            return
        op, args = command[0], command[1:]
        if op == "stop":
            return
        try:
            if op == "open":
                if db is None:
                    db = connect(store, database)
                    bulk_loading(db)
                writer, bound = args
                recorders[writer] = DimensionRecorder(db, writer=writer,
                                                      max_pending_docs=bound)
            elif op == "add":
                writer, data = args
                if error is None:
                    recorders[writer].add_pending(pickle.loads(data))
                continue
            elif op == "flush":
                writer, seq = args
                if error is None:
                    recorders[writer].flush(seq=seq, writing=partial(atomic, db))
            elif op == "close":
                recorders.pop(args[0]).close(timeout=2.0)
        except Exception as exc:          # the ingest process reports it and stops
            error = error or f"{type(exc).__name__}: {exc}"
            if op == "add":
                continue
        conn.send(error)
        error = None
