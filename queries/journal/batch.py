"""A slot's batch and the writers it goes to: records fed to the recorders as they come,
then the batch's raw documents and numbered flushes written (steps (b) and (c) of
``pipeline``), each step skipped once done, so a retry resumes where it failed."""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass, field
from functools import partial
from urllib.parse import urlsplit

from ..counting import DimensionRecorder, HitRecorder
from ..dimensions import classify
from ..events import apart, buckets, custom
from ..events.writer import store_once
from ..quarantine import Quarantine
from ..stats import schema
from ..store.connection import atomic
from . import records
from .log import State

RECORDER_BOUND = 1 << 20    # far above a batch: the recorders never flush on their own


@dataclass
class Batch:
    """A batch in progress, fed as its records come (``seq`` 0 until its intent is
    saved); the steps done survive a failure, so a retry resumes."""
    seq: int
    start: int
    length: int = 0
    lines: int = 0
    began: float = field(default_factory=time.monotonic)
    steps: set[str] = field(default_factory=set)
    rows: tuple[list, list, list] = field(default_factory=lambda: ([], [], []))

    def add(self, rows: tuple[list, list, list], data: bytes) -> None:
        for mine, more in zip(self.rows, rows, strict=True):
            mine.extend(more)
        self.length += len(data)
        self.lines += data.count(b"\n")


class Writers:
    """A slot's recorders, guarded by its writer id (stable across processes), and
    where its counting stands."""

    def __init__(self, db, writer: str):
        self.db, self.writer = db, writer
        self.state: State | None = None         # the slot's, as last saved by this thread
        self.growing: Batch | None = None       # records fed, no intent saved yet
        self.batch: Batch | None = None         # intent saved, not done
        self.stats = HitRecorder(db, writer=writer, max_pending_docs=RECORDER_BOUND)
        self.dims = DimensionRecorder(db, writer=f"{writer}-d", max_pending_docs=RECORDER_BOUND)

    def feed(self, gen: int, start: int, data: bytes, quarantine: Quarantine
             ) -> tuple[list, list, list]:
        """Records (``data``, from byte ``start``): their page views counted into the
        recorders; their raw events and kept-apart events as rows to pack, their custom
        events as documents named by their records' places. A record that cannot be
        counted is set aside."""
        events, kept, customs = [], [], []
        offset = start
        for line in data.splitlines(keepends=True):
            try:
                kind, record = records.decode(line)
                if kind == records.PAGEVIEW:
                    events.append(buckets.row(self._pageview(record)))
                elif kind == records.APART:
                    kept.append(buckets.row(record))
                else:
                    name = f"{self.writer}.{gen:x}:{offset:x}"
                    customs.append({**record, "_id": name, "n": 1})
            except Exception as exc:
                quarantine.keep({"record": line[:300]}, exc, 1)
            offset += len(line)
        return events, kept, customs

    def write(self, gen: int, batch: Batch, quarantine: Quarantine) -> None:
        """Steps (b) and (c) of a batch, each skipped once done: the raw documents are
        named by the batch (stamped ``ingested`` as they are written, as late as
        possible, for the rollups), then the recorders write its numbered flush."""
        prefix = f"{self.writer}.{gen:x}.{batch.seq:x}"
        events, kept, customs = batch.rows
        for step, collection, rows in (("e", schema.EVENTS, events),
                                       ("a", apart.COLLECTION, kept),
                                       ("c", custom.COLLECTION, customs)):
            if step in batch.steps or not rows:
                continue
            if step == "c":
                docs = [{**doc, "ingested": _now()} for doc in rows]
            else:
                docs = buckets.pack(rows, _now())
                for i, doc in enumerate(docs):
                    doc["_id"] = f"{prefix}.{step}{i}"
            store_once(self.db[collection], docs, quarantine)
            batch.steps.add(step)
        writing = partial(atomic, self.db)
        self.dims.write_batch(batch.seq, writing)
        self.stats.write_batch(batch.seq, writing)

    def _pageview(self, hit: records.Pageview) -> dict:
        """Count a page view into the recorders; its raw event."""
        try:
            page_host = urlsplit(hit.referer or "").hostname
        except ValueError:
            page_host = None
        dims = classify(hit.site, hit.page, query=hit.query, referrer_url=hit.referrer,
                        agent=hit.agent, address=hit.address, vhost=page_host,
                        unknown_bots=hit.unknown_bots)
        self.stats.record(hit.site, hit.page, hit.time, bots=int(dims.bot))
        self.dims.record(hit.site, hit.page, hit.time, dims)
        return {"time": hit.time, "site": hit.site, "host": hit.address,
                "method": hit.method, "path": hit.page, "query": hit.query, "status": None,
                "bytes": 0, "referrer": hit.referrer if hit.referrer is not None
                else hit.referer, "user_agent": hit.agent}

    def close(self) -> None:
        self.stats.close(timeout=2.0)
        self.dims.close(timeout=2.0)


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)
