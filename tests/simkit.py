"""The fault layer of the seeded simulator (tests/test_simulation.py): the pymongo
Database and Collection a writer is handed, wrapped so that each call may fail the way a
network or a server fails, as a seeded schedule says (``random.Random(seed)``).

Faults of one call: the reply lost after the write was applied (``AutoReconnect``), the
request lost before it, a timeout (``NetworkTimeout``, applied or not), a connection
reset halfway through an unordered bulk (a prefix applied), and a full disk (the embedded
store's ``OperationFailure`` code 14031, before anything is applied) lasting a few calls.
A restart of the store is the schedule's (``Backend.restart``): the embedded client is
closed and opened again under the writers' feet, the wire server's connections dropped.
"""

from __future__ import annotations

import contextlib
import random
import threading
from dataclasses import dataclass, field

from pymongo.errors import AutoReconnect, NetworkTimeout, OperationFailure

import queries
from queries.store.embedded.failures import OUT_OF_DISK_SPACE

WRITES = frozenset({"bulk_write", "insert_one", "insert_many", "update_one", "update_many",
                    "replace_one", "delete_one", "delete_many", "find_one_and_update",
                    "find_one_and_replace", "find_one_and_delete"})
READS = frozenset({"find", "find_one", "count_documents", "aggregate", "distinct"})
CALL_FAULTS = ("lost_reply", "lost_request", "timeout", "reset", "disk_full")


class Killed(BaseException):
    """The process was killed (SIGKILL) at this call: nothing after it runs, no
    ``except Exception`` or ``finally`` of hitboard's writes anything more (see
    ``Backend.process``)."""


def disk_full() -> OperationFailure:
    """What a writer sees of the embedded store on a full disk (``failures.store_failure``)."""
    return OperationFailure("embedded store: database or disk is full", code=OUT_OF_DISK_SPACE)


@dataclass
class Faults:
    """Which calls fail, drawn from the schedule's ``rng``; ``steps`` is the schedule's
    log (printed with the seed when a check fails). ``armed`` is off while a writer is
    set up and during the final heal."""

    rng: random.Random
    rate: float = 0.15
    kinds: tuple[str, ...] = CALL_FAULTS
    armed: bool = False
    full_for: int = 0            # calls the disk stays full
    steps: list[str] = field(default_factory=list)
    injected: int = 0
    kill_in: int | None = None   # calls until the current process is killed

    def note(self, text: str) -> None:
        self.steps.append(text)

    def draw(self, op: str, coll: str) -> str | None:
        if not self.armed:
            return None
        if self.kill_in is not None:
            self.kill_in -= 1
            if self.kill_in <= 0:
                self.kill_in = None
                self.note(f"  killed at {coll}.{op}")
                return "kill"
        if self.full_for > 0:
            self.full_for -= 1
            if op in WRITES:
                self.injected += 1
                self.note(f"  fault disk_full on {coll}.{op}")
                return "disk_full"
        if self.rng.random() >= self.rate:
            return None
        kind = self.rng.choice(self.kinds)
        if op in READS:
            kind = "lost_request"      # a read fails, whatever the fault: nothing applied
        if kind == "disk_full":
            self.full_for = self.rng.randint(0, 4)
        self.injected += 1
        self.note(f"  fault {kind} on {coll}.{op}")
        return kind


class FaultyCollection:
    """A pymongo Collection whose calls fail as ``faults`` draws."""

    def __init__(self, backend: Backend, name: str, options: dict | None = None,
                 process: int = 0):
        self._backend, self._name, self._options = backend, name, options or {}
        self._process = process

    @property
    def _real(self):
        db = self._backend.db
        if self._options:
            return db.get_collection(self._name, **self._options)
        return db[self._name]

    @property
    def name(self) -> str:
        return self._name

    @property
    def database(self):
        return self._backend.faulty

    def with_options(self, **options):
        return FaultyCollection(self._backend, self._name, {**self._options, **options},
                                self._process)

    def __getattr__(self, attr: str):
        real = getattr(self._real, attr)
        if attr not in WRITES and attr not in READS:
            return real
        return lambda *args, **kwargs: self._call(attr, real, args, kwargs)

    def _call(self, op: str, real, args, kwargs):
        backend = self._backend
        if self._process in backend.dead:     # a killed process: its cleanup, its threads
            if threading.current_thread() is threading.main_thread():
                raise Killed(f"{self._name}.{op} after the kill")
            raise AutoReconnect("simulated: this process was killed")
        kind = backend.faults.draw(op, self._name)
        if kind is None:
            return real(*args, **kwargs)
        if kind == "kill":
            backend.dead.add(self._process)
            raise Killed(f"{self._name}.{op}")
        rng = backend.faults.rng
        if kind == "lost_request":
            raise AutoReconnect(f"simulated: request lost ({op})")
        if kind == "disk_full":
            raise disk_full()
        if kind == "timeout" and rng.random() < 0.5:
            raise NetworkTimeout(f"simulated: timed out before {op} was applied")
        if kind == "reset" and op in ("bulk_write", "insert_many") and len(args[0]) > 1:
            args = (args[0][:rng.randrange(1, len(args[0]))], *args[1:])
        with contextlib.suppress(Exception):    # the reply, an error or not, is lost
            real(*args, **kwargs)
        if kind == "timeout":
            raise NetworkTimeout(f"simulated: timed out after {op} was applied")
        raise AutoReconnect(f"simulated: reply lost after {op} was applied ({kind})")


class FaultyDatabase:
    """The Database a writer is handed: collections are :class:`FaultyCollection`, the
    rest (``client``, ``name``...) the real database's, whichever client is current."""

    def __init__(self, backend: Backend, process: int = 0):
        self._backend, self._process = backend, process

    def __getitem__(self, name: str) -> FaultyCollection:
        return FaultyCollection(self._backend, name, process=self._process)

    def get_collection(self, name: str, **options) -> FaultyCollection:
        return FaultyCollection(self._backend, name, options, self._process)

    def __getattr__(self, attr: str):
        return getattr(self._backend.db, attr)


class Backend:
    """A store the writers share: ``db`` the real database (a new client after a
    restart), ``faulty`` what writers are given. ``kind``: "embedded" (a directory) or
    "wire" (a URI of the shared in-memory emulator, a database of its own)."""

    def __init__(self, kind: str, where: str, database: str | None, faults: Faults):
        self.kind, self.where, self.database, self.faults = kind, where, database, faults
        self.db = self._open()
        queries.ensure_indexes(self.db)
        self.faulty = FaultyDatabase(self)
        self.dead: set[int] = set()
        self._processes = 0

    def process(self) -> FaultyDatabase:
        """The database of a new simulated process: once a call of it is ``Killed``,
        every later call of it (its threads, its cleanup) fails unapplied."""
        self._processes += 1
        return FaultyDatabase(self, self._processes)

    def _open(self):
        return queries.connect(self.where, database=self.database)

    def restart(self) -> None:
        """The server restarted: the embedded client closed and opened again (what it
        committed kept); on the wire, the emulator keeps its memory and the client's
        connections are dropped (a new client)."""
        self.faults.note("  restart the store")
        old, self.db = self.db, self._open()
        old.client.close()

    def close(self) -> None:
        if self.kind == "wire":
            self.db.client.drop_database(self.db.name)
        self.db.client.close()
