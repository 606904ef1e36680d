"""Access logs into hitboard: each parsed line is one hit (through a HitRecorder, into the
pre-aggregated statistics) and, unless disabled, one event.

Exactly once, even across a hard kill (SIGKILL, power loss): lines are read in batches
(``BATCH_LINES``; when following, ``FOLLOW_BATCH_LINES`` or a second's worth) and each
batch is flushed in four steps: (a) a write-ahead intent naming its byte ranges and flush number,
(b) its events, under ids derived from file and byte offset, (c) its hits, under the
recorder's guard with that number, (d) the new position, in the file's checkpoint. Events
may also leave earlier, every ``EVENT_CHUNK`` lines of a long batch: their ids make a
second write of them a no-op, so they need no intent. A
restart completes an interrupted flush by re-reading exactly those bytes and writing them
again under the same number and ids, which the guard and the ids make a no-op wherever
they were already applied; then it reads on from the saved position. The argument is in
``queries.ingest.session``. Nothing outside a batch is ever written: the recorder starts
no batch of its own, and lines read after the last flush are simply read again.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import time
from collections import Counter
from dataclasses import dataclass, field

from .. import validation
from ..dimensions.classify import from_record
from ..errors import HitboardError, InvalidPageError, InvalidSiteError
from ..events.collection import EventTotals, EventWriter, event_document
from .logformat import LineParser, LogRecord
from .session import BATCH_LINES, EVENT_CHUNK, LogSession
from .tail import Follower, file_id, find_file, head_digest, read_range

FOLLOW_BATCH_LINES = 2_000
PROGRESS_LINES = 2_000
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
    hits: int = 0
    sites: Counter = field(default_factory=Counter)
    first: dt.datetime | None = None
    last: dt.datetime | None = None
    events: EventTotals | None = None
    unwritten: int = 0                      # hits read but not flushed (read again later)
    recovered: int = 0                      # lines of interrupted flushes re-sent
    up_to_date: int = 0                     # files with nothing new to read
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


class Ingestor:
    """Parses lines and records them. ``site`` (if given) names every hit's site;
    otherwise a line's virtual host does, else the ``default_site`` passed with it."""

    def __init__(self, db, site: str | None = None, format: str = "auto",
                 events: bool = True, write_concern: str | None = None,
                 dimensions: bool = True):
        self.db = db
        self.site = None if site is None else validation.site(site)
        self.parser = LineParser(format)
        # At most EVENT_CHUNK events wait (written every EVENT_CHUNK lines and at each
        # flush), far below max_pending; each chunk is one insert_many (on the embedded
        # store one transaction: fewer, larger ones rewrite far fewer index pages).
        self.events = (EventWriter(db, write_concern, keyed=True, batch_size=EVENT_CHUNK)
                       if events else None)
        self.options = {"site": self.site, "format": format, "events": events}
        self.summary = IngestSummary(events=self.events.totals if self.events else None)
        self._valid_sites: dict[str, str | None] = {}
        self._sessions: list[LogSession] = []
        self.dimensions = dimensions

    def feed(self, raw: bytes, default_site: str, session: LogSession, offset: int) -> None:
        """One line, which starts at byte ``offset`` of the file ``session`` is reading."""
        summary = self.summary
        summary.lines += 1
        record = self.parser.parse(raw.decode("utf-8", "replace"))
        if not isinstance(record, LogRecord):
            summary.rejected[str(record)] += 1
            return
        site = self._site(self.site or record.vhost or default_site)
        if site is None:
            summary.rejected["bad_site"] += 1
            return
        try:
            session.recorder.record(site, record.path, record.time)
        except InvalidPageError:
            summary.rejected["bad_target"] += 1
            return
        if session.dimensions is not None:
            session.dimensions.record(site, record.path, record.time, from_record(site, record))
        summary.parsed += 1
        summary.hits += 1
        summary.sites[site] += 1
        if summary.first is None or record.time < summary.first:
            summary.first = record.time
        if summary.last is None or record.time > summary.last:
            summary.last = record.time
        if self.events is not None:
            event = event_document(record, site)
            event["_id"] = session.event_id(offset, record.time)
            self.events.add(event)

    def _site(self, name: str) -> str | None:
        if name not in self._valid_sites:
            try:
                self._valid_sites[name] = validation.site(name)
            except InvalidSiteError:
                self._valid_sites[name] = None
        return self._valid_sites[name]

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
        """Re-send an interrupted flush: the same bytes, number and event ids."""
        if session.interrupted_options != self.options:
            raise HitboardError(
                f"the run that was stopped while writing {session.path} used options "
                f"{session.interrupted_options}: run it again with them to complete that "
                "batch, then change them")
        complete = True
        for span in session.interrupted:
            handle = find_file(span["path"], span["device"], span["inode"], span["head"])
            if handle is None:
                complete = False
                self.summary.warnings.append(
                    f"{span['path']}: bytes {span['from']:,}-{span['to']:,} of an interrupted "
                    "flush cannot be read again (the file is gone): those lines' hits may "
                    "be counted in part")
                continue
            session.replaying(span)
            with handle:
                for line, end in read_range(handle, span["from"], span["to"]):
                    self.feed(line, default_site, session, end - len(line))
            self.summary.recovered += span["lines"]
        _flush(self, [session])
        if complete:
            self.summary.notes.append(
                f"{session.path}: completed the flush a stopped run left unfinished "
                f"(seq {session.seq}): nothing counted twice")

    def release(self, session: LogSession) -> None:
        """Done with ``session``: hits it still holds are counted as unwritten."""
        self._sessions.remove(session)
        self.summary.unwritten += session.close()

    def close(self) -> None:
        """Release every session still open (``ingest_file`` and ``follow`` release
        theirs)."""
        for session in list(self._sessions):
            self.release(session)


def _flush(ingestor: Ingestor, sessions: list[LogSession]) -> None:
    """The four steps of the module doc, for every session with lines read."""
    sessions = [s for s in sessions if s.ranges]
    for session in sessions:
        session.begin()                                        # (a)
    _flush_events(ingestor)                                    # (b)
    for session in sessions:
        session.flush_hits()                                   # (c)
    for session in sessions:
        session.commit()                                       # (d)


def _flush_events(ingestor: Ingestor) -> None:
    events = ingestor.events
    if events is not None and events.flush():
        raise HitboardError(
            f"{events.totals.failed:,} events could not be written ({events.totals.errors[-1]});"
            " stopped before counting their hits: run again to resume")


def ingest_file(ingestor: Ingestor, path: str | os.PathLike, default_site: str,
                progress=None, stop=None, from_start: bool = False) -> None:
    """Ingest one file from where the last run left it (all of it with ``from_start``);
    ``progress(bytes)`` is called now and then, ``stop()`` returning true ends early,
    after a flush of what was read."""
    session = ingestor.open(path, default_site, from_start)
    try:
        with open(session.path, "rb") as handle:
            stat = os.fstat(handle.fileno())
            start = session.start(file_id(session.path, stat), head_digest(handle),
                                  stat.st_size, from_start)
            _note_start(ingestor.summary, session, start, stat.st_size)
            done = end = start
            count = 0
            for count, (line, end) in enumerate(read_range(handle, start, stat.st_size), 1):
                ingestor.feed(line, default_site, session, end - len(line))
                if count % BATCH_LINES == 0:
                    session.consumed(end, BATCH_LINES)
                    _flush(ingestor, [session])
                elif count % EVENT_CHUNK == 0:
                    _flush_events(ingestor)
                if count % PROGRESS_LINES == 0:
                    if progress is not None:
                        progress(end - done)
                        done = end
                    if stop is not None and stop():
                        break
            if end != session.offset:
                session.consumed(end, count % BATCH_LINES)
            _flush(ingestor, [session])
        if progress is not None:
            progress(stat.st_size - done)
    finally:
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
    try:
        for path in paths:
            session = ingestor.open(path, default_sites[path], from_start)
            sessions.append(session)
            follower = Follower(path)
            followers.append(follower)
            follower.seek(session.start(follower.id, follower.head(), follower.size(),
                                        from_start))
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
        _flush(ingestor, sessions)
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
            for line in lines:
                ingestor.feed(line, default_sites[session.path], session, offset)
                offset += len(line)
            session.consumed(offset, len(lines))
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
