"""Access logs into hitboard: each parsed line is one hit (through a HitRecorder, into the
pre-aggregated statistics) and, unless disabled, one event.

Lines are mapped chunk by chunk (``mapper``: parsed, classified, their events written)
into tallies that are merged, in file order, into the log's recorders, all in this
process: the mapping's own threads use the other cores. The next chunk is mapped in a
thread of its own (``_Ahead``) while this one merges a tally and flushes a batch (the
store's writes and compression release the interpreter); the merging, the flushes and
every write of the protocol below stay in this thread, in the order they had when
nothing ran beside them.

Exactly once, even across a hard kill (SIGKILL, power loss): lines are read in batches
(``BATCH_LINES`` or ``BATCH_DOCUMENTS``; when following, ``FOLLOW_BATCH_LINES`` or a
second's worth) and each batch is flushed in four steps: (a) a write-ahead intent naming
its byte ranges and flush number, (b) its events, in buckets named by file and byte
offset, (c) its hits, under the recorder's guard with that number, (d) the new position,
in the file's checkpoint.
(b) happens as each chunk is mapped, before (a) even, so events need no intent: a
restart first deletes the events of every byte it will read again (``resuming``), then
completes an interrupted flush by re-reading exactly those bytes and writing them again
under the same number, which the guard makes a no-op wherever it was already applied;
then it reads on from the saved position. The argument is in ``queries.ingest.session``.
Nothing outside a batch is ever written to the counters: the recorders start no batch
of their own, and lines read after the last flush are simply read again.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import time
from collections import Counter, deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial

from pymongo.errors import PyMongoError

from .. import validation
from ..errors import HitboardError, InvalidSiteError
from ..events import apart
from ..events.collection import forget
from ..events.writer import EventTotals, EventWriter
from ..processes import halt_point
from ..quarantine import transient
from . import chunks
from .mapper import LineMapper, Tally, split_lines
from .session import BATCH_DOCUMENTS, BATCH_LINES, LogSession
from .tail import Follower, file_id, find_file, head_digest, read_range

FOLLOW_BATCH_LINES = 2_000
FOLLOW_MAX_BACKOFF = 30.0   # seconds between a follower's tries while the store fails
EVENT_BATCH = 100_000       # events inserted at a time: a chunk's (``chunks``) at once
_SUFFIXES = re.compile(r"(\.(log|txt|gz|\d+))+$")


def site_from_filename(path: str | os.PathLike) -> str:
    """``/var/log/www.example.com.access.log.1`` → ``www.example.com.access``."""
    name = _SUFFIXES.sub("", os.path.basename(os.fspath(path)))
    try:
        return validation.site(name)
    except InvalidSiteError:
        raise InvalidSiteError(
            f"cannot name a site after {os.path.basename(os.fspath(path))!r}: give --site NAME"
        ) from None


@dataclass
class IngestSummary:
    lines: int = 0
    parsed: int = 0
    rejected: Counter = field(default_factory=Counter)
    tolerated: Counter = field(default_factory=Counter)   # parsed despite an odd request
    hits: int = 0
    sites: Counter = field(default_factory=Counter)
    apart: Counter = field(default_factory=Counter)   # lines kept apart (Sources), per site
    first: dt.datetime | None = None
    last: dt.datetime | None = None
    events: EventTotals | None = None
    unwritten: int = 0                      # hits read but not flushed (read again later)
    recovered: int = 0                      # lines of interrupted flushes re-sent
    up_to_date: int = 0                     # files with nothing new to read
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


class Ingestor:
    """Maps lines into tallies (see ``mapper``) and merges them into each log's
    recorders. ``site`` (if given) names every hit's site; otherwise a line's virtual
    host does, else the ``default_site`` passed with it. ``unknown_bots``: lines without
    a user agent are bots (by default people)."""

    def __init__(self, db, site: str | None = None, format: str = "auto",
                 events: bool = True, write_concern: str | None = None,
                 dimensions: bool = True, unknown_bots: bool = False):
        self.db = db
        self.mapper = LineMapper(site, format, dimensions, unknown_bots=unknown_bots)
        self.events = (EventWriter(db, write_concern, keyed=True, batch_size=EVENT_BATCH)
                       if events else None)
        self.mapper.keep_apart(db, apart.writer(db, concern=write_concern, keyed=True,
                                                batch_size=EVENT_BATCH) if events else None)
        self.options = {"site": self.mapper.site, "format": format, "events": events}
        self.summary = IngestSummary(events=EventTotals() if events else None)
        self._sessions: list[LogSession] = []
        self.dimensions = dimensions

    def map_here(self, lines, default_site: str, session: LogSession) -> None:
        """Map ``(line, offset)`` pairs of ``session``'s file in this process and merge."""
        self.merge(self.mapper.map(lines, default_site, session.stream(), self.events),
                   session)

    def merge(self, tally: Tally, session: LogSession) -> None:
        """A tally's figures into the summary and its hits into ``session``'s recorders;
        refused (and the run stopped) when some of its events could not be written."""
        summary = self.summary
        if tally.events is not None:
            _add_totals(summary.events, tally.events)
            if tally.events.failed:
                raise HitboardError(
                    f"{summary.events.failed:,} events could not be written "
                    f"({summary.events.errors[-1]}); stopped before counting their hits: "
                    "run again to resume")
        session.recorder.add_pending(tally.hits, tally.bots)
        if session.dimensions is not None and tally.units:
            session.dimensions.add_pending(tally.units)
        session.counted(tally.lines, tally.parsed, tally.rejected, tally.tolerated)
        summary.lines += tally.lines
        summary.parsed += tally.parsed
        summary.hits += tally.parsed
        summary.rejected.update(tally.rejected)
        summary.tolerated.update(tally.tolerated)
        summary.sites.update(tally.sites)
        summary.apart.update(tally.apart)
        if tally.first is not None and (summary.first is None or tally.first < summary.first):
            summary.first = tally.first
        if tally.last is not None and (summary.last is None or tally.last > summary.last):
            summary.last = tally.last
        halt_point("counted")

    def map_chunk(self, chunk: chunks.Chunk, default_site: str, stream: int) -> Tally:
        """A chunk of a file (``chunks.read``) mapped, its events written in the pass
        ``stream``; a line too long to read is one line refused."""
        if chunk.data is None:
            return Tally(lines=1, rejected=Counter({chunks.TOO_LONG: 1}))
        return self.mapper.map_chunk(chunk.data, chunk.start, default_site, stream,
                                     self.events)

    def open(self, path: str, default_site: str, from_start: bool = False) -> LogSession:
        """The checkpoint of ``path``, an interrupted flush completed first."""
        session = LogSession(self.db, path, self.options, dimensions=self.dimensions)
        self._sessions.append(session)
        try:
            if session.interrupted:
                self._complete(session, default_site)
            if from_start and session.position is not None:
                self.summary.notes.append(f"{session.path}: ingesting it again from the "
                                          "start (--from-start): its lines count again")
        except BaseException:
            self.release(session)
            raise
        return session

    def _complete(self, session: LogSession, default_site: str) -> None:
        """Re-send an interrupted flush: the same bytes and number, the events again."""
        if session.interrupted_options != self.options:
            raise HitboardError(
                f"the run that was stopped while writing {session.path} used options "
                f"{session.interrupted_options}: run it again with them to complete that "
                "batch, then change them")
        complete = True
        for span in session.interrupted:
            handle = find_file(span["path"], span["device"], span["inode"], span["head"])
            session.replaying(span)
            if handle is None:
                complete = False
                self.summary.warnings.append(
                    f"{span['path']}: bytes {span['from']:,}-{span['to']:,} of an interrupted "
                    "flush cannot be read again (the file is gone): those lines' hits may "
                    "be counted in part")
                # Lines past the flush were mapped (their events written) but never
                # counted, and will not be read again: their events leave too.
                self.resuming(session, span["to"])
                continue
            self.resuming(session, span["from"])
            with handle:
                self.map_here(((line.decode("utf-8", "replace"), end - len(line))
                               for line, end in read_range(handle, span["from"], span["to"])),
                              default_site, session)
            self.summary.recovered += span["lines"]
        _flush([session])
        if complete:
            self.summary.notes.append(
                f"{session.path}: completed the flush a stopped run left unfinished "
                f"(seq {session.seq}): nothing counted twice")

    def resuming(self, session: LogSession, offset: int) -> int:
        """``offset``, where ``session`` reads on from: the events its pass wrote from
        there on (mapped before a stop, their hits not counted) are removed first, since
        those lines are mapped again, perhaps cut into other chunks."""
        if self.events is not None:
            forget(self.db, session.stream(), offset)
        return offset

    def release(self, session: LogSession) -> None:
        """Done with ``session``: hits it still holds are counted as unwritten."""
        self._sessions.remove(session)
        self.summary.unwritten += session.close()

    def close(self) -> None:
        """Release every session still open (``ingest_file`` and ``follow`` release
        theirs)."""
        for session in list(self._sessions):
            self.release(session)


def _add_totals(total: EventTotals, part: EventTotals) -> None:
    total.written += part.written
    total.unacknowledged += part.unacknowledged
    total.present += part.present
    total.failed += part.failed
    total.errors.extend(part.errors[:max(0, 10 - len(total.errors))])


def _flush(sessions: list[LogSession]) -> None:
    """Steps (a), (c) and (d) of the module doc, for every session with lines read:
    (b), the events, left with their tallies, before those were merged."""
    sessions = [s for s in sessions if s.ranges]
    for session in sessions:
        session.begin()                                        # (a)
    for session in sessions:
        session.flush_hits()                                   # (c)
    for session in sessions:
        session.commit()                                       # (d)


class _Ahead:
    """Maps chunks one ahead, in a thread of its own: :meth:`tallies` yields each chunk
    with its tally while the next one is mapped (its events written). :meth:`close`
    waits for a mapping under way; it returns whether a chunk was mapped but never
    yielded, whose events must then leave (``Ingestor.resuming``)."""

    def __init__(self, ingestor: Ingestor, default_site: str, stream: int):
        self.map = partial(_map_chunk, ingestor, default_site, stream)
        self.pool = ThreadPoolExecutor(1, thread_name_prefix="hitboard-map")
        self.pending: deque = deque()

    def tallies(self, chunk_list):
        for chunk in chunk_list:
            self.pending.append((chunk, self.pool.submit(self.map, chunk)))
            if len(self.pending) > 1:
                chunk, future = self.pending.popleft()
                yield chunk, future.result()
        while self.pending:
            chunk, future = self.pending.popleft()
            yield chunk, future.result()

    def close(self) -> bool:
        self.pool.shutdown(wait=True)
        left, self.pending = bool(self.pending), deque()
        return left


def _map_chunk(ingestor: Ingestor, default_site: str, stream: int,
               chunk: chunks.Chunk) -> Tally:
    return ingestor.map_chunk(chunk, default_site, stream)


def ingest_file(ingestor: Ingestor, path: str | os.PathLike, default_site: str,
                progress=None, stop=None, from_start: bool = False, mapped=None) -> None:
    """Ingest one file from where the last run left it (all of it with ``from_start``);
    ``progress(bytes, lines)`` is called after each chunk (bytes and lines read since the
    last call), ``stop()`` returning true ends early, after a flush of what was read.
    ``mapped()`` is called once the lines read are mapped, their events written, before
    the last flush: work on the events alone (the rollups) may start then, while this
    process flushes."""
    session = ingestor.open(path, default_site, from_start)
    ahead = None
    try:
        with open(session.path, "rb") as handle:
            stat = os.fstat(handle.fileno())
            start = ingestor.resuming(session, session.start(
                file_id(session.path, stat), head_digest(handle), stat.st_size, from_start))
            _note_start(ingestor.summary, session, start, stat.st_size)
            ahead = _Ahead(ingestor, default_site, session.stream())
            done, unflushed = start, 0
            for chunk, tally in ahead.tallies(chunks.read(handle, start, stat.st_size)):
                # A full batch is flushed once the next tally comes (the file's last
                # batch after ``mapped``), while the chunk after it is mapped.
                if (unflushed >= BATCH_LINES
                        or session.pending_documents() >= BATCH_DOCUMENTS):
                    _flush([session])
                    unflushed = 0
                ingestor.merge(tally, session)
                session.consumed(chunk.end, tally.lines)
                unflushed += tally.lines
                if progress is not None:
                    progress(chunk.end - done, tally.lines)
                    done = chunk.end
                if stop is not None and stop():
                    break
            if ahead.close():            # stopped: the chunk mapped ahead is read again
                ingestor.resuming(session, session.offset)
            if mapped is not None:
                mapped()
            _flush([session])
        if progress is not None:
            progress(stat.st_size - done, 0)
    finally:
        if ahead is not None:
            ahead.close()
        ingestor.release(session)


def _note_start(summary: IngestSummary, session: LogSession, start: int, size: int) -> None:
    if not start:
        return
    where = f"line {session.line:,} (byte {start:,})"
    if start == size:
        summary.up_to_date += 1
        summary.notes.append(f"{session.path}: already ingested up to {where}; "
                             "use --from-start to ingest it again")
    else:
        summary.notes.append(f"{session.path}: resuming after {where}, where the last run "
                             "stopped")


def follow(ingestor: Ingestor, paths: list[str], default_sites: dict[str, str], stop,
           poll: float = 0.25, flush_every: float = 1.0, on_flush=None,
           from_start: bool = False) -> None:
    """Tail ``paths`` until ``stop`` (a ``threading.Event``) is set: ingest new lines,
    flushing every ``flush_every`` seconds or ``FOLLOW_BATCH_LINES`` lines. The last
    flush happens after ``stop``, so a SIGTERM loses nothing."""
    sessions: list[LogSession] = []
    followers: list[Follower] = []
    if ingestor.events is not None:
        ingestor.events.patience = stop     # a full disk is waited out, not a failure
    try:
        for path in paths:
            session = ingestor.open(path, default_sites[path], from_start)
            sessions.append(session)
            follower = Follower(path)
            followers.append(follower)
            follower.seek(ingestor.resuming(session, session.start(
                follower.id, follower.head(), follower.size(), from_start)))
        _follow(ingestor, sessions, followers, default_sites, stop, poll, flush_every,
                on_flush)
    finally:
        for follower in followers:
            follower.close()
        for session in sessions:
            ingestor.release(session)


def _follow(ingestor, sessions, followers, default_sites, stop, poll, flush_every,
            on_flush) -> None:
    def flush():
        """A batch's flush, tried again with backoff while the store fails (a full disk,
        a server gone): the same intent and numbers, so nothing counts twice."""
        delay = poll
        while True:
            try:
                _flush(sessions)
                break
            except PyMongoError as exc:
                if not transient(exc) or stop.wait(delay):
                    raise
                delay = min(FOLLOW_MAX_BACKOFF, delay * 2)
        if on_flush is not None:
            on_flush()

    last_flush, unflushed = time.monotonic(), 0
    while not stop.is_set():
        got = 0
        for session, follower in zip(sessions, followers, strict=True):
            lines = follower.read(FOLLOW_BATCH_LINES)
            if not lines:
                continue
            offset = follower.offset - sum(map(len, lines))
            session.reading(follower.id, offset, follower.head)
            ingestor.map_here(split_lines(b"".join(lines), offset),
                              default_sites[session.path], session)
            session.consumed(follower.offset, len(lines))
            got += len(lines)
            unflushed += len(lines)
            if unflushed >= FOLLOW_BATCH_LINES:   # keeps a batch under BATCH_LINES
                flush()
                last_flush, unflushed = time.monotonic(), 0
        if time.monotonic() - last_flush >= flush_every:
            flush()
            last_flush, unflushed = time.monotonic(), 0
        if not got:
            stop.wait(poll)
    flush()
