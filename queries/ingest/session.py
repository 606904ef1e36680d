"""The checkpoint that makes ``hitboard ingest`` count each log line exactly once, across
SIGTERM, SIGKILL or power loss, in batch and ``--follow`` mode.

One document in ``checkpoints`` per log path (and host)::

    {_id: "ingest:<hash>", host, path, writer, owner, process, seq, epochs, state,
     options, updated,
     position: {device, inode, head, epoch, offset, line},      # everything before: done
     ranges: [{device, inode, path, head, epoch, from, to, line, lines}],   # in flight
     totals: {lines, hits, rejected: {reason: lines},     # every batch committed, summed
              tolerated: {oddity: lines}}}

Every flush of a batch of lines takes four steps, see ``queries.ingest.run._flush``:

(a) ``begin``: ``seq + 1`` and the byte ranges of the batch are saved, ``state:
    "flushing"`` (a write-ahead intent);
(b) the batch's events are inserted, in buckets named by the pass (writer and epoch)
    and the byte offset of their first line (:mod:`queries.events.collection`);
(c) its hits are flushed by a HitRecorder whose guard id is ``writer``, numbered ``seq``;
(d) ``commit``: ``position`` moves to the end of the ranges, ``state`` becomes
    "done" and the batch's lines are added to ``totals``, in one write (so a batch
    completed by a later run is added once, by that run).

A kill before (a) has written nothing for the lines past ``position``: they are read
again. A kill after (a) and before (d) leaves the intent: the next run reads exactly
those bytes again (following a rotated file by its device and inode), feeds them, and
flushes them with the same ``seq`` and therefore the same increments: documents that
took that flush are skipped by the recorder's guard, and the pass's events from the
first byte read again on are deleted before they are written again (the run maps those
bytes in other chunks). Then (d). (a) and (d) are single-document writes, (b) is undone
and redone, and (c) is idempotent, so a crash between any two writes leaves every line
counted once.

An epoch numbers each pass over a file: a new file at the path (rotation, replacement),
a truncation, ``--from-start``. Event buckets carry it, so a truncated file's reused
offsets and a file counted again on purpose never collide with events already stored.

One process owns a checkpoint at a time: opening it takes ``owner`` and records the
process (its pid and start time), and (a) and (d) require ``owner``. A second run on
the path refuses while that process runs (:class:`IngestBusyError`), so two runs never
write events of the same bytes (cut into different chunks, they would be stored twice);
it takes the checkpoint over once the first has ended, killed or not. Checkpoints are
per host, so the process is always one of this host's; where process ids are not
comparable (containers of one host name sharing a store) a takeover can still happen,
and the first run then stops at its next flush.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import socket
import uuid
from collections import Counter
from contextlib import suppress
from functools import partial

from pymongo import ReturnDocument
from pymongo.errors import DuplicateKeyError, PyMongoError

from ..counting import DimensionRecorder, HitRecorder
from ..errors import HitboardError
from ..events.collection import stream_key
from ..processes import halt_point
from ..stats import schema
from ..store.connection import atomic
from .tail import FileId

# A batch ends after BATCH_LINES lines or once its flush would write BATCH_DOCUMENTS
# documents, whichever comes first. Each flush rewrites every (page, day) document its
# batch touched, so fewer, larger batches write far fewer documents; the documents bound
# keeps memory flat where a batch spans many days (a log in time order). A crash re-reads
# at most one batch. Events leave chunk by chunk meanwhile (a restart deletes and
# rewrites those past the position, so they need no intent).
BATCH_LINES = 500_000
BATCH_DOCUMENTS = 30_000
# Far above what a batch holds (it is checked after each chunk): the recorders never
# reach the bound where they would flush on their own.
RECORDER_BOUND = 4 * BATCH_LINES
FLUSHING, DONE = "flushing", "done"


class IngestTakenOverError(HitboardError):
    pass


class IngestBusyError(HitboardError):
    pass


def process_identity(pid: int) -> list | None:
    """[pid, start time] of a running process, None if there is none (or only its
    zombie): a pid alone may since name another process. The start time is Linux's
    (``/proc``, in clock ticks after boot); elsewhere a live pid is taken as the same
    process."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:          # alive, someone else's
        pass
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        state, started = fields[0], int(fields[19])   # fields 3 and 22 of stat
    except (OSError, IndexError, ValueError):
        return [pid, None]
    return None if state in (b"Z", b"X") else [pid, started]   # killed, not yet reaped


class LogSession:
    """One log path's checkpoint and recorder during a run (see the module doc)."""

    def __init__(self, db, path: str | os.PathLike, options: dict, host: str | None = None,
                 dimensions: bool = True):
        self.db = db
        self.path = os.path.abspath(path)
        self.host = host or socket.gethostname()
        key = hashlib.sha1(f"{self.host}\0{self.path}".encode()).hexdigest()[:24]
        self.id, self.writer, self.owner = f"ingest:{key}", f"ingest-{key}", uuid.uuid4().hex
        self.options = options
        self._stream: tuple[int | None, int] = (None, 0)  # (epoch, its stream key)
        doc = self._claim()
        self.seq, self.epochs, self.position = doc["seq"], doc["epochs"], doc["position"]
        self.interrupted: list[dict] = doc["ranges"] if doc["state"] == FLUSHING else []
        self.interrupted_options = doc.get("options")
        self.ranges: list[dict] = list(self.interrupted)   # read, not yet committed
        self._intent_saved = bool(self.interrupted)
        self.file: dict | None = None    # the file being read: identity, head, epoch
        self.batch: Counter = Counter()  # the batch's lines, hits and rejected lines
        self.offset = self.line = 0      # where the next line starts; lines before it
        self.recorder = HitRecorder(db, writer=self.writer, max_pending_docs=RECORDER_BOUND)
        # The dimensions and visitors, flushed in step (c) under the same number.
        self.dimensions = (DimensionRecorder(db, writer=f"{self.writer}-dims",
                                             max_pending_docs=2 * RECORDER_BOUND)
                           if dimensions else None)

    def _claim(self) -> dict:
        """Take the checkpoint (made if new), unless the process that holds it still
        runs: a compare-and-set on its ``owner``, tried again if another run took it
        between the read and the write."""
        checkpoints = self.db[schema.CHECKPOINTS]
        claim = {"owner": self.owner, "host": self.host, "path": self.path,
                 "writer": self.writer, "process": process_identity(os.getpid())}
        while True:
            doc = checkpoints.find_one({"_id": self.id})
            if doc is None:
                new = {"_id": self.id, **claim, "seq": 0, "epochs": 0, "state": DONE,
                       "position": None, "ranges": []}
                with suppress(DuplicateKeyError):
                    checkpoints.insert_one(new)
                    return new
                continue
            holder = doc.get("process")
            if holder is not None and process_identity(holder[0]) == holder:
                who = ("this run" if holder[0] == os.getpid()
                       else f"another `hitboard ingest` (process {holder[0]})")
                raise IngestBusyError(f"{who} is reading {self.path} already: stop it "
                                      "first (this one has written nothing)")
            taken = checkpoints.find_one_and_update(
                {"_id": self.id, "owner": doc.get("owner")}, {"$set": claim},
                return_document=ReturnDocument.AFTER)
            if taken is not None:
                return taken

    def pending_documents(self) -> int:
        """The documents the next flush writes: what ends a batch early."""
        docs = self.recorder.status().pending_documents
        if self.dimensions is not None:
            docs += self.dimensions.status().pending_documents
        return docs

    # -- reading -----------------------------------------------------------------------
    def start(self, fid: FileId, head: str, size: int, from_start: bool = False) -> int:
        """Start on the file now at the path; returns the offset to read from: the saved
        position if it is the same file (device, inode, first line) and not shorter, else
        0 in a new epoch."""
        pos = self.position
        if (not from_start and pos is not None and pos["offset"] <= size
                and (pos["device"], pos["inode"], pos["head"]) == (fid.device, fid.inode, head)):
            self.file = {"device": fid.device, "inode": fid.inode, "path": fid.path,
                         "head": head, "epoch": pos["epoch"]}
            self.offset, self.line = pos["offset"], pos["line"]
        else:
            self._new_epoch(fid, head, 0)
        return self.offset

    def reading(self, fid: FileId, start: int, head) -> None:
        """Lines of ``fid`` starting at byte ``start`` come next (``head()`` gives the
        file's head digest): the same epoch if they continue the last ones, else a new."""
        file = self.file
        if (file is None or (file["device"], file["inode"]) != (fid.device, fid.inode)
                or start != self.offset):
            self._new_epoch(fid, head(), start)
        elif not file["head"]:
            # The pass began on an empty file (a follow started after a rotation): its
            # first line is complete now, and tells this file at the next start.
            file["head"] = head()

    def replaying(self, span: dict) -> None:
        """The bytes of an interrupted flush's range come next."""
        self.file = {name: span[name] for name in ("device", "inode", "path", "head", "epoch")}
        self.offset, self.line = span["from"], span["line"]

    def counted(self, lines: int, hits: int, rejected: Counter, tolerated: Counter) -> None:
        """Mapped lines' figures, added to ``totals`` when their batch commits."""
        self.batch.update({"lines": lines, "hits": hits})
        self.batch.update({f"rejected.{reason}": n for reason, n in rejected.items()})
        self.batch.update({f"tolerated.{oddity}": n for oddity, n in tolerated.items()})

    def consumed(self, end: int, lines: int) -> None:
        """The lines up to byte ``end`` (``lines`` of them) were fed."""
        last = self.ranges[-1] if self.ranges else None
        if last is not None and last["epoch"] == self.file["epoch"] and last["to"] == self.offset:
            last["to"], last["lines"] = end, last["lines"] + lines
        else:
            self.ranges.append({**self.file, "from": self.offset, "to": end,
                                "line": self.line, "lines": lines})
        self.offset, self.line = end, self.line + lines

    def stream(self) -> int:
        """The key of this pass over the file, which its events' buckets carry
        (:mod:`queries.events.collection`)."""
        epoch = self.file["epoch"]
        if self._stream[0] != epoch:
            self._stream = (epoch, stream_key(f"{self.writer}:{epoch}"))
        return self._stream[1]

    def _new_epoch(self, fid: FileId, head: str, start: int) -> None:
        self.epochs += 1
        self.file = {"device": fid.device, "inode": fid.inode, "path": fid.path,
                     "head": head, "epoch": self.epochs}
        self.offset, self.line = start, 0

    # -- the flush protocol ------------------------------------------------------------
    def begin(self) -> None:
        """(a): save the intent with the next flush number (done already when
        completing an interrupted flush, whose number is reused)."""
        if self._intent_saved:
            return
        self.seq += 1
        self._save({"seq": self.seq, "epochs": self.epochs, "state": FLUSHING,
                    "ranges": self.ranges, "options": self.options})
        self._intent_saved = True
        halt_point("after-intent")

    def flush_hits(self) -> None:
        """(c): the batch's dimensions and hits, under number ``seq``. Each recorder
        computes its documents, then writes them in one turn of the embedded store's
        write lock (the next chunk's events are written between turns). A failure rolls
        back what it was writing, which the guards make safe: the recorders re-send
        what they hold, and a replay of the batch what they do not."""
        halt_point("after-events")
        writing = partial(atomic, self.db)
        if self.dimensions is not None:
            self.dimensions.flush(seq=self.seq, writing=writing)
        self.recorder.flush(seq=self.seq, writing=writing)

    def commit(self) -> None:
        """(d): everything up to the end of the ranges is written."""
        halt_point("after-hits")
        last = self.ranges[-1]
        self.position = {"device": last["device"], "inode": last["inode"],
                         "head": last["head"], "epoch": last["epoch"], "offset": last["to"],
                         "line": last["line"] + last["lines"]}
        self._save({"state": DONE, "ranges": [], "position": self.position,
                    "updated": dt.datetime.now(dt.UTC)},
                   {f"totals.{name}": n for name, n in self.batch.items()})
        self.ranges, self.interrupted, self._intent_saved = [], [], False
        self.batch = Counter()
        halt_point("after-commit")

    def _save(self, fields: dict, add: dict | None = None) -> None:
        update = {"$set": fields, **({"$inc": add} if add else {})}
        done = self.db[schema.CHECKPOINTS].update_one({"_id": self.id, "owner": self.owner},
                                                      update)
        if not done.matched_count:
            raise IngestTakenOverError(
                f"another `hitboard ingest` has taken over {self.path}; this one stops")

    def close(self) -> int:
        """Stop the recorder and let the checkpoint go; returns the hits it holds
        unwritten (lines read after the last flush: the next run reads them again)."""
        self.recorder.close(timeout=2.0)
        if self.dimensions is not None:
            self.dimensions.close(timeout=2.0)
        with suppress(PyMongoError):     # a run killed instead leaves a dead process
            self.db[schema.CHECKPOINTS].update_one({"_id": self.id, "owner": self.owner},
                                                   {"$set": {"process": None}})
        return self.recorder.status().pending_hits
