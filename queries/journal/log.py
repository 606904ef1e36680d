"""One process's journal: records appended to a file before their hits are answered.

A journal directory holds a *slot* per server process (``<dir>/<n>/``), claimed with an
exclusive ``flock`` on its ``lock`` file for the process's life, so a slot's files have
one writer and, once that process has died (killed or not), the next one to claim the
slot finds them as they were. A slot holds generations of records, ``<gen>.log``, one
line each, and ``state.json``: what the pipeline has counted (``State``).

Appends are group-committed: concurrent callers' records leave in one ``write`` (and one
``fsync`` with ``sync``), made by whichever caller finds no write in progress; each
caller returns once its own record is written, or raises :class:`JournalError` if the
write failed (then the file is cut back to before it: nothing half-written stays). A
written record is in the kernel's page cache, so it outlives a SIGKILL of every process;
``sync`` makes it outlive a power cut too. A process killed in the middle of a write
leaves at most a torn last line, never acknowledged, which readers leave out: every
process appends to a generation of its own, never to one a dead process left.
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
from dataclasses import asdict, dataclass
from pathlib import Path

from ..errors import HitboardError

STATE = "state.json"
SUFFIX = ".log"


class JournalError(HitboardError):
    """A record was not written (a full disk, a closed journal): the hit is refused."""


@dataclass
class State:
    """What the pipeline has done with a slot: every record of generation ``gen`` before
    byte ``done`` is counted; ``end``, when set, is the intent of flush ``seq``: the
    records of ``[done, end)`` are being counted under that number."""
    gen: int = 0
    done: int = 0
    seq: int = 0
    end: int | None = None


class Slot:
    """A journal slot held by this process (see the module doc)."""

    def __init__(self, path: Path, fd: int):
        self.path, self._fd = path, fd
        self.number = int(path.name)

    @classmethod
    def claim(cls, directory: Path) -> Slot:
        """The first slot no living process holds, made if there is none free."""
        directory.mkdir(parents=True, exist_ok=True)
        n = 0
        while True:
            slot = cls.try_claim(directory / str(n))
            if slot is not None:
                return slot
            n += 1

    @classmethod
    def try_claim(cls, path: Path) -> Slot | None:
        path.mkdir(parents=True, exist_ok=True)
        fd = os.open(path / "lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        return cls(path, fd)

    @classmethod
    def orphans(cls, directory: Path, own: Slot) -> list[Slot]:
        """Other slots holding records whose process has ended, claimed for draining."""
        found = []
        for path in sorted(directory.iterdir() if directory.is_dir() else ()):
            if path == own.path or not path.name.isdigit() or not any(path.glob("*" + SUFFIX)):
                continue
            slot = cls.try_claim(path)
            if slot is not None:
                found.append(slot)
        return found

    def state(self) -> State:
        try:
            return State(**json.loads((self.path / STATE).read_text()))
        except FileNotFoundError:
            return State()

    def save(self, state: State) -> None:
        """Replace the state in one rename: a kill leaves the old one or the new one."""
        tmp = self.path / (STATE + ".tmp")
        tmp.write_text(json.dumps(asdict(state)))
        os.replace(tmp, self.path / STATE)

    def file(self, gen: int) -> Path:
        return self.path / f"{gen:08d}{SUFFIX}"

    def generations(self) -> list[int]:
        return sorted(int(p.stem) for p in self.path.glob("*" + SUFFIX) if p.stem.isdigit())

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)          # the flock goes with it
            self._fd = None


class _Ticket:
    __slots__ = ("done", "error")

    def __init__(self):
        self.done, self.error = False, None


class JournalFile:
    """The generation ``gen`` of a slot, open for appending (see the module doc)."""

    def __init__(self, slot: Slot, gen: int, sync: bool = False):
        self.slot, self.gen, self.sync = slot, gen, sync
        self._fd = _create(slot.file(gen))
        self.size = 0
        self._cond = threading.Condition()
        self._queue: list[tuple[bytes, _Ticket]] = []
        self._writing = self._closed = False
        self.writes = 0                  # write calls made (fewer than records: groups)

    def append(self, record: bytes) -> None:
        """Write ``record`` (one line, ending in a newline) with whatever other callers
        append meanwhile; return once it is written, or raise :class:`JournalError`."""
        ticket = _Ticket()
        with self._cond:
            if self._closed:
                raise JournalError("the journal is closed")
            self._queue.append((record, ticket))
            while not ticket.done:
                if self._writing:
                    self._cond.wait()
                else:
                    self._write_group()
        if ticket.error is not None:
            raise JournalError(f"the journal could not be written: {ticket.error}")

    def _write_group(self) -> None:
        """Write every queued record at once, the lock released meanwhile (called with
        the lock held and no write in progress)."""
        group, self._queue = self._queue, []
        self._writing = True
        self._cond.release()
        error = None
        try:
            data = b"".join(record for record, _ in group)
            try:
                _write_all(self._fd, data)
                if self.sync:
                    os.fdatasync(self._fd)
            except OSError as exc:
                error = exc
                os.ftruncate(self._fd, self.size)    # nothing of the group stays
        finally:
            self._cond.acquire()
            self._writing = False
        self.writes += 1
        if error is None:
            self.size += len(data)
        for _, ticket in group:
            ticket.done, ticket.error = True, error
        self._cond.notify_all()

    def read(self, start: int, limit: int) -> bytes:
        """Whole records written from byte ``start``, at most about ``limit`` bytes
        (at least one record when there is one)."""
        end = self.size
        data = os.pread(self._fd, min(end - start, limit), start)
        if start + len(data) < end and not data.endswith(b"\n"):
            cut = data.rfind(b"\n")
            if cut < 0:             # one record longer than ``limit``: read it whole
                data = os.pread(self._fd, end - start, start)
                cut = data.find(b"\n")
            data = data[:cut + 1]
        return data

    def rotate(self, gen: int) -> bool:
        """Append to the new generation ``gen`` from now on, if no write is in progress
        (the pipeline has counted every record of the current one); True if done."""
        with self._cond:
            if self._writing or self._queue or self._closed:
                return False
            fd = _create(self.slot.file(gen))
            os.close(self._fd)
            self._fd, self.gen, self.size = fd, gen, 0
            return True

    def seal(self) -> None:
        """Refuse new records once those in progress are written (reads go on)."""
        with self._cond:
            self._closed = True
            while self._writing or self._queue:
                if self._writing:
                    self._cond.wait()
                else:
                    self._write_group()

    def close(self) -> None:
        self.seal()
        os.close(self._fd)


def read_file(path: Path, start: int, limit: int) -> bytes:
    """Whole records of a generation no process appends to any more, from ``start``."""
    with open(path, "rb") as file:
        file.seek(start)
        data = file.read(limit)
        if len(data) == limit and not data.endswith(b"\n"):
            data += file.readline()
    return data[:data.rfind(b"\n") + 1]


def _create(path: Path) -> int:
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
