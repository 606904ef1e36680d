"""Fault injection against the wire-protocol server: the recorder loses no hit and counts
none twice when the server is killed, answers too slowly, or a reply is lost after the
write was applied; SIGTERM flushes what a process holds.

Every wait is bounded so a regression fails the test instead of hanging CI.
"""

from __future__ import annotations

import datetime as dt
import logging
import select
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter

import pytest
from faultkit import WAIT, FaultyProxy, connect, counted, drain, expected, start_server, wait_for
from pymongo.errors import PyMongoError

import queries
from queries.status import as_dict

DAY = dt.datetime(2026, 3, 14, 15, 9, tzinfo=dt.UTC)
PAGES = ("/", "/pricing", "/docs/a.b")


@pytest.fixture
def server(tmp_path):
    server = start_server(tmp_path)
    yield server
    server.stop()


class Traffic:
    """Records hits from threads until stopped, counting per page what was accepted."""

    def __init__(self, recorder, site: str, pages=PAGES, threads: int = 1, pause: float = 0.001):
        self.recorder, self.site, self.pages, self.pause = recorder, site, pages, pause
        self.sent = Counter()
        self.refusals: list[queries.RecorderOverloadedError] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(n,), daemon=True)
                         for n in range(threads)]

    def start(self) -> Traffic:
        for thread in self._threads:
            thread.start()
        return self

    def _run(self, worker: int) -> None:
        i = 0
        while not self._stop.is_set():
            page = self.pages[i % len(self.pages)] if self.pages else f"/w{worker}/{i}"
            try:
                self.recorder.record(self.site, page, DAY + dt.timedelta(seconds=i % 600))
            except queries.RecorderOverloadedError as exc:
                with self._lock:
                    self.refusals.append(exc)
            else:
                with self._lock:
                    self.sent[page] += 1
            i += 1
            time.sleep(self.pause)

    def stop(self) -> Counter:
        self._stop.set()
        for thread in self._threads:
            thread.join(WAIT)
            assert not thread.is_alive(), "a recording thread is stuck"
        return self.sent


@pytest.fixture
def proxy(server):
    proxy = FaultyProxy(server.port)
    yield proxy
    proxy.close()


def test_server_killed_while_recording_then_restarted_counts_every_hit_once(server, caplog):
    caplog.set_level(logging.WARNING, logger="queries.counting.engine")
    db = connect(server.port, serverSelectionTimeoutMS=100)
    recorder = queries.HitRecorder(db, flush_interval=0.05, max_backoff=0.8,
                                   preallocate_next_day=False)
    traffic = Traffic(recorder, "kill").start()
    wait_for(lambda: recorder.status().hits_written > 100, "hits written before the kill")

    server.kill()
    wait_for(lambda: recorder.status().failures >= 1, "the first failed flush")
    failures = recorder.status().failures
    time.sleep(2.4)
    retries_while_down = recorder.status().failures - failures
    held = recorder.status().pending_hits

    server.start()
    flushes = recorder.status().flushes
    wait_for(lambda: recorder.status().flushes >= flushes + 3, "flushes after the restart")
    sent = traffic.stop()
    recorder.close()

    stats = as_dict(recorder.status())
    # Kept the increments while the server was down, retried them, and reported it.
    assert held > 0
    assert retries_while_down >= 1
    # Exponential backoff: retrying every flush_interval (plus a 0.1 s server selection)
    # would have failed 15 times or more in those 2.4 s.
    assert retries_while_down <= 8
    assert stats["last_error"]
    assert any("hit flush failed" in r.getMessage() for r in caplog.records)
    # Every hit accepted is written, exactly once, in both granularities.
    assert stats["hits_accepted"] == stats["hits_written"] == sum(sent.values())
    assert stats["pending_hits"] == 0
    daily, monthly = counted(db, "kill")
    assert daily == monthly == expected(sent)
    db.client.close()


def _recorder(db) -> queries.HitRecorder:
    return queries.HitRecorder(db, flush_interval=3600, preallocate_next_day=False)


def test_reply_lost_after_the_update_was_applied_is_not_counted_twice(server, proxy):
    _lose_a_reply_then_retry(server, proxy, _recorder)


def test_reply_lost_is_not_counted_twice_with_a_process_id_drawn_as_digits(server, proxy,
                                                                           monkeypatch):
    """A process's guard id was 12 hex digits of a uuid4, all decimal in 1 draw of 281:
    the wire server's SQLite engine reads ``flushes.<digits>`` as an array index and never
    finds it, so the guard's ``$ne`` matched the documents that had taken the flush and the
    retry counted them twice."""
    def drawn_as_digits(db) -> queries.HitRecorder:
        with monkeypatch.context() as patch:   # only while drawn: pymongo draws lsids too
            patch.setattr(uuid, "uuid4", lambda: uuid.UUID("1234567890" * 3 + "12"))
            return _recorder(db)

    _lose_a_reply_then_retry(server, proxy, drawn_as_digits)


def _lose_a_reply_then_retry(server, proxy, make_recorder) -> None:
    db = connect(proxy.port)
    direct = connect(server.port)
    recorder = make_recorder(db)
    sent = Counter()
    for i in range(300):
        page = PAGES[i % len(PAGES)]
        recorder.record("lost", page, DAY + dt.timedelta(minutes=i % 7))
        sent[page] += 1

    proxy.cut_after_next_update()
    with pytest.raises(PyMongoError):
        recorder.flush()
    daily, monthly = counted(direct, "lost")
    # The cut update was applied on the server although the client saw an error.
    assert 300 in (daily["*"], monthly["*"])
    assert recorder.status().pending_hits == 300
    assert recorder.status().hits_written == 0

    recorder.flush()
    recorder.close()
    assert recorder.status().hits_written == 300
    daily, monthly = counted(direct, "lost")
    assert daily == monthly == expected(sent)
    db.client.close()
    direct.client.close()


def test_slow_server_slows_callers_and_bounds_memory_then_refuses(server, proxy):
    limit, threads = 50, 3
    # Pending plus failed documents stay under twice ``limit``: a new (site, page, day)
    # adds at most 4 documents past the check made under the recorder's lock.
    bound = 2 * limit + 4
    # Operations time out after 1 s; the monitor's heartbeat (connectTimeoutMS) waits
    # longer, or on a loaded machine it declares the server lost first and the writes
    # fail as "operation cancelled" instead of timing out.
    db = connect(proxy.port, socketTimeoutMS=1000, connectTimeoutMS=10_000,
                 serverSelectionTimeoutMS=1000)
    recorder = queries.HitRecorder(db, flush_interval=0.2, max_pending_docs=limit,
                                   max_backoff=0.4, preallocate_next_day=False)
    peaks = Counter()
    phase = "slow"
    sampling = threading.Event()

    def sample() -> None:
        while not sampling.is_set():
            peaks[phase] = max(peaks[phase], recorder.status().pending_documents)
            time.sleep(0.001)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()

    # Slow but answering: callers wait for flushes (backpressure); nothing is refused.
    proxy.latency = 0.05
    slow = Traffic(recorder, "slow", pages=(), threads=threads, pause=0).start()
    wait_for(lambda: recorder.status().backpressure_flushes >= 5, "backpressure flushes")
    sent = slow.stop()
    assert slow.refusals == []

    # Slower than the client's socket timeout: writes fail, hits pile up to the bound,
    # then record() refuses them with an error instead of growing without limit.
    phase = "failing"
    proxy.latency = 3.0
    stuck = Traffic(recorder, "slow", pages=(), threads=threads, pause=0).start()
    wait_for(lambda: stuck.refusals, "a refused hit")
    sent += stuck.stop()
    stats = as_dict(recorder.status())
    assert stats["refused"] >= 1
    assert stats["failures"] >= 1
    assert "hit refused" in str(stuck.refusals[0])
    assert "timed out" in stats["last_error"]

    # Back to speed: everything accepted is written exactly once; refused hits are not.
    phase = "recovering"
    proxy.latency = 0.0
    drain(recorder)
    recorder.close()
    sampling.set()
    sampler.join(WAIT)
    assert recorder.status().hits_written == recorder.status().hits_accepted == sum(
        sent.values())
    daily, monthly = counted(db, "slow")
    assert daily == monthly == expected(sent)
    assert max(peaks.values()) <= bound, f"pending documents peaked at {dict(peaks)}"
    db.client.close()


SIGTERM_SCRIPT = """
import datetime as dt, sys, time
import queries
from queries.status import as_dict
from queries.status import as_dict
recorder = queries.HitRecorder(queries.connect(sys.argv[1]), flush_interval=3600,
                               preallocate_next_day=False)
for i in range(int(sys.argv[2])):
    recorder.record("sigterm", f"/p{i % 5}", dt.datetime(2026, 3, 14, 15, i % 60,
                                                         tzinfo=dt.UTC))
print("recorded", flush=True)
time.sleep(120)
"""


def test_sigterm_flushes_the_pending_hits_of_a_process(server):
    db = connect(server.port)
    process = subprocess.Popen([sys.executable, "-c", SIGTERM_SCRIPT,
                                f"{server.uri}faults", "500"], stdout=subprocess.PIPE)
    try:
        ready, _, _ = select.select([process.stdout], [], [], WAIT)
        assert ready and process.stdout.readline() == b"recorded\n"
        assert counted(db, "sigterm") == (Counter(), Counter())
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=WAIT) == 128 + signal.SIGTERM
    finally:
        process.kill()
        process.wait()
        process.stdout.close()
    sent = Counter({f"/p{i}": 100 for i in range(5)})
    daily, monthly = counted(db, "sigterm")
    assert daily == monthly == expected(sent)
    db.client.close()
