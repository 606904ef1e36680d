"""A slot's batch and the writers it goes to: records decoded as they come, then the
batch's page views counted by the count step (``queries.counting.count``, once, as
columns), its raw documents and numbered flushes written (steps (b) and (c) of
``pipeline``), each step skipped once done, so a retry resumes where it failed."""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass, field
from functools import partial
from urllib.parse import urlsplit

import polars as pl

from .. import validation
from ..counting import DimensionRecorder, HitRecorder
from ..counting.count import CountStep
from ..dimensions.tally import lookup
from ..errors import HitboardError
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
    saved); the steps done survive a failure, so a retry resumes. ``rows``: its raw
    events, hits kept apart, custom events and page views to count."""
    seq: int
    start: int
    length: int = 0
    lines: int = 0
    began: float = field(default_factory=time.monotonic)
    steps: set[str] = field(default_factory=set)
    counted: int = 0        # its page views counted so far
    rows: tuple[list, list, list, list] = field(default_factory=lambda: ([], [], [], []))

    def add(self, rows: tuple[list, list, list, list], data: bytes) -> None:
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
        self.steps = {flag: CountStep(unknown_bots=flag) for flag in (False, True)}
        self._names: dict[tuple[str, str], tuple[str, str]] = {}

    def feed(self, gen: int, start: int, data: bytes, quarantine: Quarantine
             ) -> tuple[list, list, list, list]:
        """Records (``data``, from byte ``start``) decoded: their raw events and
        kept-apart events as rows to pack, their custom events as documents named by
        their records' places, their page views to count. A record that cannot be
        counted is set aside."""
        events, kept, customs, views = [], [], [], []
        offset = start
        for line in data.splitlines(keepends=True):
            try:
                kind, record = records.decode(line)
                if kind == records.PAGEVIEW:
                    record = self._checked(record)
                    events.append(_event(record))
                    views.append(record)
                elif kind == records.APART:
                    kept.append(buckets.row(record))
                else:
                    name = f"{self.writer}.{gen:x}:{offset:x}"
                    customs.append({**record, "_id": name, "n": 1})
            except Exception as exc:
                quarantine.keep({"record": line[:300]}, exc, 1)
            offset += len(line)
        return events, kept, customs, views

    def write(self, gen: int, batch: Batch, quarantine: Quarantine) -> None:
        """Steps (b) and (c) of a batch, each skipped once done: its page views counted
        into the recorders, the raw documents named by the batch (stamped ``ingested``
        as they are written, as late as possible, for the rollups), then the recorders
        write its numbered flush."""
        prefix = f"{self.writer}.{gen:x}.{batch.seq:x}"
        events, kept, customs, views = batch.rows
        self.count_fed(batch)
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

    def count_fed(self, batch: Batch, least: int = 1) -> None:
        """The batch's page views fed since the last call counted, if ``least`` wait:
        a growing batch is counted a slice at a time, so little is left when it is
        written (Live's latency), never a call per feed (each costs a few ms)."""
        views = batch.rows[3]
        if len(views) - batch.counted >= least:
            self.count(views[batch.counted:])
            batch.counted = len(views)

    def count(self, views: list[records.Pageview]) -> None:
        """Page views through the count step into the recorders: as columns, one step
        per ``unknown_bots`` setting (a site's, when the hit came)."""
        if not views:
            return
        frame = pl.DataFrame(dict(zip(records.Pageview._fields, zip(*views, strict=True),
                                      strict=True)), schema=_VIEWS)
        frame = frame.with_columns(
            lookup(frame, ["referer"], _host, pl.String, name="vhost"),
            pl.col("page").alias("path"), pl.lit(None, pl.Int64).alias("status"),
            pl.col("address").alias("host"), pl.col("agent").alias("user_agent"))
        flags = frame["unknown_bots"]
        parts = (frame.partition_by("unknown_bots", as_dict=True).items() if flags.n_unique() > 1
                 else [((flags[0],), frame)])
        for (flag,), rows in parts:
            self.steps[flag].count(rows).into(self.stats, self.dims)

    def _checked(self, hit: records.Pageview) -> records.Pageview:
        """A page view with its site and page as a recorder names them (checked once
        per pair)."""
        names = self._names.get((hit.site, hit.page))
        if names is None:
            names = validation.site(hit.site), validation.page(hit.page)
            if len(self._names) >= RECORDER_BOUND:
                self._names.clear()
            self._names[hit.site, hit.page] = names
        if type(hit.time) is not dt.datetime or hit.time.tzinfo is not dt.UTC:
            raise HitboardError(f"a page view's time must be UTC, got {hit.time!r}")
        return hit if names == (hit.site, hit.page) else hit._replace(
            site=names[0], page=names[1])

    def close(self) -> None:
        self.stats.close(timeout=2.0)
        self.dims.close(timeout=2.0)


_VIEWS = {"time": pl.Datetime("us", "UTC"), "site": pl.String, "page": pl.String,
          "query": pl.String, "referrer": pl.String, "address": pl.String,
          "method": pl.String, "referer": pl.String, "agent": pl.String,
          "unknown_bots": pl.Boolean}


def _event(hit: records.Pageview) -> tuple:
    """A page view's raw event, as ``buckets.pack`` takes it."""
    return (hit.time, hit.site, hit.address, hit.method, hit.page, hit.query, None, 0,
            hit.referrer if hit.referrer is not None else hit.referer, hit.agent, None)


def _host(referer: str | None) -> str | None:
    """The host of the page that sent the beacon: its own (not a referrer)."""
    try:
        return urlsplit(referer or "").hostname
    except ValueError:
        return None


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)
