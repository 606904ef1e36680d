"""The beacon's pipeline: what the journal holds, counted exactly once.

Request threads append records (``Pipeline.append``); one thread counts them in batches
of at most ``BATCH_BYTES``, every ``flush_interval`` seconds, as ``hitboard ingest``
counts a log (``queries.ingest.session``), each batch in four steps:

(a) the intent: the batch's end and its flush number ``seq`` saved in the slot's state;
(b) its page views counted (``queries.counting.count``, the batch's as columns, into
    the recorders' memory); its raw events, custom events and hits kept apart inserted
    under ``_id`` s made of the slot's writer, generation and the batch (or record)
    they come from, so that sending them again stores each once;
(c) its dimensions and hits flushed by recorders whose guard id is the slot's writer,
    numbered ``seq``;
(d) the state's ``done`` moved to the batch's end.

A process killed anywhere leaves its slot's files and state as they were: the next
process to claim the slot (or, once no process holds it, to adopt it as an orphan)
sends the intended batch again with the same number, so documents that took it skip it,
then counts the rest. Appends go to a new generation at every start, after those a
dead process left, which are counted first and then deleted.

A record that cannot be counted (it should never happen: the beacon checked it) is set
aside (``queries.quarantine``), never stopping the thread; a store failure is retried
with backoff, the batch resumed where it failed. Past ``max_backlog`` bytes waiting,
``accepting()`` is False and the beacon answers 503 rather than acknowledge more.
"""

from __future__ import annotations

import hashlib
import logging
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..quarantine import Quarantine, transient
from .batch import Batch, Writers
from .log import JournalError, JournalFile, Slot, State, read_file

log = logging.getLogger(__name__)
BATCH_BYTES = 4 << 20
# Records are decoded every FEED_INTERVAL seconds, a little at a time beside the requests,
# and counted (the count step, then written) once a flush interval, as the recorders flush.
FEED_INTERVAL = 0.05
COUNT_SLICE = 256          # page views of a growing batch counted together, before it is due
ROTATE_BYTES = 16 << 20     # a generation fully counted and this large gives way to a new one
MAX_BACKLOG = 256 << 20     # bytes of records waiting, past which hits are refused


@dataclass(frozen=True)
class JournalStatus:
    """The journal as ``/healthz`` reports it."""
    slot: int
    generation: int
    records_counted: int       # by this process (a dead one's included once adopted)
    backlog_bytes: int         # written, not counted yet
    hits_written: int          # page views its recorder wrote
    appends: int               # groups written: fewer than the records when they overlap
    last_error: str


class Pipeline:
    """A journal slot of this process and the thread counting its records (and those of
    slots whose process has died). ``directory`` holds the slots; ``sync`` makes every
    group of records ``fdatasync`` before its hits are answered."""

    def __init__(self, db, directory: str | Path, sync: bool = False,
                 flush_interval: float = 1.0, max_backlog: int = MAX_BACKLOG,
                 host: str | None = None):
        self.db, self.directory = db, Path(directory).resolve()
        self.flush_interval, self.max_backlog = flush_interval, max_backlog
        self._host = host or socket.gethostname()
        self.slot = Slot.claim(self.directory)
        state = self.slot.state()
        self.file = JournalFile(self.slot, max([state.gen, *self.slot.generations()]) + 1, sync)
        self.quarantine = Quarantine(db, "Journal")
        self.counted = self.restarts = 0
        self.last_error = ""
        self._older = 0             # bytes waiting in generations before the file's
        self._done = state.done if state.gen == self.file.gen else 0
        self._live = False      # dead processes' records all counted: on to this one's
        self._hurry = False     # count what is fed now, not at the flush interval
        self._stop, self._wake = threading.Event(), threading.Event()
        self._closed = False
        self.writers = Writers(db, self._writer(self.slot))
        self._thread = self._start_thread()

    # -- the request side ----------------------------------------------------------------
    def append(self, record: bytes) -> None:
        """Journal one record (``records``); returns once it is written. Raises
        :class:`JournalError` if it is not: the hit must be refused."""
        self.file.append(record)

    def wait_counted(self, timeout: float = 30.0) -> bool:
        """Wait until every record appended before the call is counted (a clean
        shutdown, a test); False if ``timeout`` passed first."""
        gen, size = self.file.gen, self.file.size
        deadline = time.monotonic() + timeout
        while not self._live or (self.file.gen == gen and self._done < size):
            if time.monotonic() > deadline or not self._thread.is_alive():
                return False
            self._hurry = True
            self._wake.set()
            time.sleep(0.005)
        return True

    def status(self) -> JournalStatus:
        return JournalStatus(self.slot.number, self.file.gen, self.counted, self.backlog(),
                             self.writers.stats.status().hits_written, self.file.writes,
                             self.last_error)

    def backlog(self) -> int:
        """Bytes of records not counted yet."""
        return self._older + self.file.size - self._done

    def accepting(self) -> bool:
        return not self._closed and self._thread.is_alive() and self.backlog() < self.max_backlog

    def problems(self) -> list[str]:
        found = []
        if not self._closed and not self._thread.is_alive():
            found.append("Journal: its counting thread is down")
        elif self.last_error and self.backlog():
            found.append(f"Journal: {self.backlog():,} bytes of hits not counted yet "
                         f"({self.last_error})")
        if self.backlog() >= self.max_backlog:
            found.append(f"Journal: {self.backlog():,} bytes of hits wait to be counted "
                         f"({self.last_error or 'not keeping up'})")
        return found

    # -- the counting thread -------------------------------------------------------------
    def _start_thread(self) -> threading.Thread:
        thread = threading.Thread(target=self._run, name="hitboard-journal", daemon=True)
        thread.start()
        return thread

    def revive(self) -> bool:
        if self._closed or self._thread.is_alive():
            return False
        self.restarts += 1
        log.error("the journal's counting thread had stopped: started again")
        self._thread = self._start_thread()
        return True

    def _run(self) -> None:
        delay = self.flush_interval
        for orphan in Slot.orphans(self.directory, self.slot):
            self._drain(orphan, delay)
        while not self._stop.is_set():
            worked = self._step(self.slot, self.writers)
            if worked is None:              # failed: wait, then resume the batch
                delay = min(30.0, max(delay * 2, self.flush_interval))
            else:
                delay = min(FEED_INTERVAL, self.flush_interval)
            behind = worked and self.backlog() >= BATCH_BYTES
            if not behind and self._pause(delay):
                break

    def _pause(self, delay: float) -> bool:
        """Wait ``delay`` seconds, less if woken; True once stopped."""
        self._wake.wait(delay)
        self._wake.clear()
        return self._stop.is_set()

    def _finish(self, own: Writers) -> None:
        """At close: count what was appended before it, for a few tries."""
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline:
            self._hurry = True
            worked = self._step(self.slot, own)
            if worked is False:
                return
            if worked is None:
                time.sleep(0.2)
        log.error("%d bytes of journaled hits are counted at the next start: %s",
                  self.backlog(), self.last_error)

    def _drain(self, slot: Slot, delay: float) -> None:
        """Count every record of a dead process's slot, then let it go."""
        writers = Writers(self.db, self._writer(slot))
        try:
            while not self._stop.is_set():
                worked = self._step(slot, writers)
                if worked is False:
                    for gen in slot.generations():
                        slot.file(gen).unlink()
                    return
                if worked is None and self._stop.wait(delay):
                    return
        finally:
            writers.close()
            slot.release()

    def _step(self, slot: Slot, writers: Writers) -> bool | None:
        """Count one batch of ``slot``: True if one was counted, False if nothing
        waits, None if it failed (its state kept: the next step resumes it)."""
        try:
            return self._count_next(slot, writers)
        except Exception as exc:
            self.last_error = f"{type(exc).__name__}: {str(exc)[:200]}"
            if transient(exc):
                log.warning("journaled hits not counted yet, trying again: %s", exc)
            else:
                log.exception("journaled hits not counted yet, trying again")
            return None

    def _count_next(self, slot: Slot, writers: Writers) -> bool:
        """One step: feed the live file's new records (and count them once due), or
        count one whole batch of a generation a dead process left."""
        state = writers.state = writers.state or slot.state()
        live = slot is self.slot and state.gen == self.file.gen
        self._live = self._live or live
        if writers.batch is None and state.end is None and live:
            return self._grow(slot, writers, state)
        if writers.batch is None:
            gens = [gen for gen in slot.generations() if gen >= state.gen]
            if state.gen not in gens:           # its file is gone: counted, rotated
                if not gens:
                    return False
                state = State(gens[0], 0, state.seq)
                self._save(slot, writers, state)
            if slot is self.slot:
                self._older = sum(slot.file(g).stat().st_size for g in gens
                                  if g != self.file.gen) - state.done
            limit = BATCH_BYTES if state.end is None else state.end - state.done
            data = read_file(slot.file(state.gen), state.done, limit)[:limit]
            if not data:
                return self._next_generation(slot, writers, state, gens)
            if state.end is None:
                state.seq, state.end = state.seq + 1, state.done + len(data)
                self._save(slot, writers, state)                        # (a)
            batch = writers.batch = Batch(state.seq, state.done)
            batch.add(writers.feed(state.gen, state.done, data, self.quarantine), data)
        return self._complete(slot, writers, state)

    def _grow(self, slot: Slot, writers: Writers, state: State) -> bool:
        """Feed the live file's records written since the last step; once a flush
        interval has passed (or a full batch is fed, or someone waits), save the intent
        and count them. True if a batch was counted."""
        growing = writers.growing
        if growing is None:
            growing = writers.growing = Batch(0, state.done)
        start = growing.start + growing.length
        if growing.length < BATCH_BYTES:
            data = self.file.read(start, BATCH_BYTES - growing.length)
            if data:
                growing.add(writers.feed(state.gen, start, data, self.quarantine), data)
                writers.count_fed(growing, COUNT_SLICE)
        if not growing.length:
            self._rotate_if_large(slot, writers, state)
            return False
        if not (self._hurry or growing.length >= BATCH_BYTES
                or time.monotonic() - growing.began >= self.flush_interval):
            return False
        state.seq, state.end = state.seq + 1, growing.start + growing.length
        self._save(slot, writers, state)                                # (a)
        growing.seq = state.seq
        writers.batch, writers.growing = growing, None
        if self.file.size == state.end:
            self._hurry = False
        return self._complete(slot, writers, state)

    def _complete(self, slot: Slot, writers: Writers, state: State) -> bool:
        """Steps (b) to (d) of the batch whose intent is saved."""
        batch = writers.batch
        writers.write(state.gen, batch, self.quarantine)                          # (b), (c)
        state.done, state.end = batch.start + batch.length, None
        self._save(slot, writers, state)                                # (d)
        writers.batch = None
        if slot is self.slot and state.gen == self.file.gen:
            self._done = state.done
        self.counted += batch.lines
        self.last_error = ""
        return True

    def _save(self, slot: Slot, writers: Writers, state: State) -> None:
        slot.save(state)
        writers.state = state

    def _next_generation(self, slot: Slot, writers: Writers, state: State,
                         gens: list[int]) -> bool:
        """Every record of a generation a dead process left is counted: on to the next
        one, the counted file deleted."""
        later = [gen for gen in gens if gen > state.gen]
        if not later:
            return False
        self._save(slot, writers, State(later[0], 0, state.seq))
        slot.file(state.gen).unlink(missing_ok=True)
        if slot is self.slot and later[0] == self.file.gen:
            self._done, self._older = 0, 0
        return True

    def _rotate_if_large(self, slot: Slot, writers: Writers, state: State) -> None:
        """The live file counted to its end and grown large: a new generation."""
        if state.done >= ROTATE_BYTES and self.file.rotate(state.gen + 1):
            self._done = 0
            self._save(slot, writers, State(self.file.gen, 0, state.seq))
            slot.file(state.gen).unlink(missing_ok=True)

    def _writer(self, slot: Slot) -> str:
        """The guard id of a slot's writes: the same for every process that holds it."""
        key = hashlib.blake2b(f"{self._host}\0{self.directory}".encode(),
                              digest_size=6).hexdigest()
        return f"j{key}-{slot.number}"

    # -- life ----------------------------------------------------------------------------
    def close(self) -> None:
        """Refuse new records, count those written (for a few seconds), stop."""
        if self._closed:
            return
        self._closed = True
        self.file.seal()
        self._stop.set()
        self._wake.set()
        self._thread.join(10.0)
        self._finish(self.writers)
        self.writers.close()
        self.file.close()
        self.slot.release()


__all__ = ["JournalError", "Pipeline"]
