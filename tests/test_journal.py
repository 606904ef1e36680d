"""The beacon's journal (``queries.journal``): appends grouped and whole, a failed write
refused and left out, and every record counted exactly once whatever step of a batch
the counting process dies at (a real ``os._exit`` in a child process, as SIGKILL), from
its own slot or adopted from a dead process's."""

from __future__ import annotations

import datetime as dt
import errno
import os
import subprocess
import sys
import textwrap
import threading
from collections import Counter

import pytest
from dash.testing.wait import until
from fakes import stored_count

import queries
from queries.dimensions import reads
from queries.events import apart, custom
from queries.journal import log as journal_log
from queries.journal import pipeline as journal_pipeline
from queries.journal import records
from queries.journal.log import JournalError, JournalFile, Slot
from queries.journal.pipeline import Pipeline
from queries.stats import schema

T0 = dt.datetime(2026, 3, 18, 23, 58, tzinfo=dt.UTC)     # batches cross a UTC midnight
PAGES = ("/", "/a", "/b.c")
SITE = "j"


def pageview(i: int) -> bytes:
    return records.pageview(records.Pageview(
        T0 + dt.timedelta(seconds=i), SITE, PAGES[i % 3], "utm_source=x" if i % 5 else "",
        "https://news.example/" if i % 2 else None, f"10.0.0.{i % 7}", "POST",
        "https://j.example/", "Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0", False))


def custom_event(i: int) -> bytes:
    return records.document(records.CUSTOM, custom.document(
        T0 + dt.timedelta(seconds=i), SITE, "/", ("Signup", (("n", str(i)),), None),
        "10.0.0.1", "ua"))


def kept_apart(i: int) -> bytes:
    return records.document(records.APART, {
        "time": T0 + dt.timedelta(seconds=i), "site": SITE, "host": "10.0.0.2",
        "method": "GET", "path": "/kept", "query": "", "status": None, "bytes": 0,
        "referrer": None, "user_agent": "ua"})


def record(i: int) -> bytes:
    return (custom_event if i % 10 == 3 else kept_apart if i % 10 == 7 else pageview)(i)


def truth(n: int) -> tuple[Counter, int, int]:
    """The page views per page, custom events and kept-apart hits of records 0..n-1."""
    pages = Counter(PAGES[i % 3] for i in range(n) if i % 10 not in (3, 7))
    return pages, sum(i % 10 == 3 for i in range(n)), sum(i % 10 == 7 for i in range(n))


def assert_counted_once(store, n: int) -> None:
    pages, customs, kept = truth(n)
    db = queries.connect(str(store))
    try:
        top = queries.top_pages(db, SITE, T0 - dt.timedelta(hours=1),
                                T0 + dt.timedelta(hours=2))["hits"].to_dict()
        assert top == dict(pages)
        whole = sum(d["monthly"] for d in db[schema.MONTHLY].find(
            {"metadata.site": SITE, "metadata.page": "*"}))
        assert whole == pages.total()
        assert stored_count(db, SITE) == pages.total()
        assert db[custom.COLLECTION].count_documents({}) == customs
        assert sum(b["n"] for b in db[apart.COLLECTION].find()) == kept
        referrers = reads.breakdown(db, SITE, "referrer", T0.replace(minute=0),
                                    T0.replace(minute=0) + dt.timedelta(hours=3))
        assert int(referrers["hits"].sum()) == pages.total()
    finally:
        db.client.close()


def count_all(store, directory) -> None:
    """A new process's pipeline on the same journal: it counts what was left."""
    db = queries.connect(str(store))
    pipeline = Pipeline(db, directory, flush_interval=0.05)
    try:
        assert pipeline.wait_counted(), pipeline.last_error
        assert pipeline.problems() == []
    finally:
        pipeline.close()
        db.client.close()


def test_concurrent_appends_are_grouped_and_each_written_whole(tmp_path):
    slot = Slot.claim(tmp_path)
    file = JournalFile(slot, 1)
    lines = [record(i) for i in range(800)]

    def send(part):
        for line in part:
            file.append(line)

    threads = [threading.Thread(target=send, args=(lines[i::8],)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    written = slot.file(1).read_bytes()
    assert sorted(written.splitlines(keepends=True)) == sorted(lines)
    assert file.size == len(written) and file.writes <= len(lines)
    assert file.read(0, 1 << 20) == written
    file.close()
    slot.release()


def test_a_write_that_fails_is_refused_and_leaves_nothing(tmp_path, monkeypatch):
    slot = Slot.claim(tmp_path)
    file = JournalFile(slot, 1)
    file.append(record(0))

    def full(fd, data):
        os.write(fd, data[:10])                   # part of it reached the file
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(journal_log, "_write_all", full)
    with pytest.raises(JournalError, match="No space left"):
        file.append(record(1))
    monkeypatch.undo()
    file.append(record(2))
    assert slot.file(1).read_bytes() == record(0) + record(2)
    file.close()


def test_a_second_process_takes_another_slot_and_a_freed_one_again(tmp_path):
    first, second = Slot.claim(tmp_path), Slot.claim(tmp_path)
    assert (first.number, second.number) == (0, 1)
    first.release()
    assert Slot.claim(tmp_path).number == 0


# A child process appends records, then dies (os._exit: no cleanup, as SIGKILL) right
# after the ``nth`` call of one step of the counting, or in the middle of a write.
CHILD = textwrap.dedent("""
    import os, sys, time
    from queries import connect
    from queries.counting import DimensionRecorder, HitRecorder
    from queries.journal import batch, log, pipeline
    from queries.journal.log import Slot
    sys.path.insert(0, sys.argv[4])
    from test_journal import record
    store, directory, step, n = sys.argv[1], sys.argv[2], sys.argv[3], 400
    owner, name, when = {
        "after-intent": (Slot, "save", lambda state: state.end is not None),
        "after-events": (batch, "store_once", None),
        "mid-hits": (HitRecorder, "_write_collection", None),
        "mid-dims": (DimensionRecorder, "_write_collection", None),
        "after-hits": (HitRecorder, "write_batch", None),
        "after-done": (Slot, "save", lambda state: state.end is None),
        "appending": (log, "_write_all", None),
    }[step]
    real, calls = getattr(owner, name), []

    def dying(*args, **kwargs):
        if step == "appending":                 # the 150th record torn, never answered
            calls.append(1)
            if len(calls) == 150:
                os.write(args[0], args[1][:len(args[1]) // 2])
                os._exit(0)
            return real(*args, **kwargs)
        out = real(*args, **kwargs)
        if when is None or when(args[-1]):
            calls.append(1)
            if len(calls) == 2:
                os._exit(0)
        return out

    setattr(owner, name, dying)
    db = connect(store)
    journal = pipeline.Pipeline(db, directory, flush_interval=0.05)
    for i in range(n):
        journal.append(record(i))
        if i % 100 == 99:
            journal.wait_counted(5)
    journal.wait_counted(5)
    print("survived", flush=True)
    os._exit(3)
""")


@pytest.mark.parametrize("step", ["after-intent", "after-events", "mid-hits", "mid-dims",
                                  "after-hits", "after-done", "appending"])
def test_a_process_killed_at_any_step_leaves_every_record_counted_once(tmp_path, step):
    store, directory = tmp_path / "store", tmp_path / "journal"
    queries.connect(str(store)).client.close()
    child = subprocess.run([sys.executable, "-c", CHILD, str(store), str(directory), step,
                            os.path.dirname(__file__)],
                           capture_output=True, text=True, timeout=120)
    assert child.returncode == 0, child.stdout + child.stderr
    written = b"".join(slot.read_bytes() for slot in directory.glob("*/*.log"))
    n = written.count(b"\n")                     # appended whole: acknowledged
    assert n >= (149 if step == "appending" else 100)
    count_all(store, directory)
    assert_counted_once(store, n)
    assert list(directory.glob("*/*.log")) == [directory / "0" / "00000002.log"]


def test_a_dead_process_slot_is_adopted_by_the_next_one(tmp_path):
    store, directory = tmp_path / "store", tmp_path / "journal"
    db = queries.connect(str(store))
    first = Pipeline(db, directory, flush_interval=3600)
    second = Pipeline(db, directory, flush_interval=3600)
    for i in range(50):
        (first if i % 2 else second).append(record(i))
    for pipeline in (first, second):            # both processes die, nothing counted
        pipeline._stop.set()
        pipeline._wake.set()
        pipeline._thread.join(5)
        pipeline.slot.release()
    count_all(store, directory)
    db.client.close()
    assert_counted_once(store, 50)
    # Only the new process's own (empty) file is left: the dead ones' are counted, gone.
    assert len(list(directory.glob("*/*.log"))) == 1


def test_a_large_counted_generation_gives_way_to_a_new_one(tmp_path, monkeypatch):
    monkeypatch.setattr(journal_pipeline, "ROTATE_BYTES", 2_000)
    store, directory = tmp_path / "store", tmp_path / "journal"
    db = queries.connect(str(store))
    pipeline = Pipeline(db, directory, flush_interval=0.02)
    for i in range(120):
        pipeline.append(record(i))
    assert pipeline.wait_counted()
    until(lambda: pipeline.file.gen > 1 and pipeline.file.size == 0, timeout=30)
    pipeline.close()
    db.client.close()
    assert [p.name for p in directory.glob("0/*.log")] == [f"{pipeline.file.gen:08d}.log"]
    assert_counted_once(store, 120)
