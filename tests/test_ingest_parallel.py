"""``hitboard ingest --parse-workers``: lines parsed and classified in a second process
give exactly what the single-process path gives (counts, rejects, events, dimensions),
a parsing process that dies stops the ingest instead of hanging it, and a crash
mid-flush stays exactly-once with no process left behind."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from faultkit import expected
from test_ingest_faults import CRASH, LINE, append, checkpoint, ingest_cli, sent, stored_counts

import queries
from queries import ingest, schema
from queries.errors import HitboardError

LOG = Path(__file__).resolve().parents[2] / "shared" / "data" / "apache_combined_2015.log"
JUNK = [
    b"garbage\n",
    b"\n",
    b'1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "\\x16\\x03" 400 0 "-" "-"\n',
    b'1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "OPTIONS * HTTP/1.1" 200 0 "-" "-"\n',
    b'1.2.3.4 - - [99/Foo/2000:13:55:36 +0000] "GET / HTTP/1.1" 200 0 "-" "-"\n',
    b'bad_vhost!:80 1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET /v HTTP/1.1" 200 1 "-" "-"\n',
    b'shop.example:443 1.2.3.4 - - [10/Oct/2000:13:55:37 +0000] "GET /v?q=1 HTTP/1.1" '
    b'404 7 "http://ref.example/" "Mozilla/5.0 (X11; Linux x86_64) Firefox/115.0"\n',
    b'1.2.3.4 - - [10/Oct/2000:13:55:38 +0200] "GET /caf\xc3\xa9 HTTP/1.1" 200 3 "-" "-"\n',
    b"\xff\xfe not utf-8\n",
]


def mixed_log(path: Path) -> int:
    """Real lines (the shared log, else made-up ones) with junk and odd lines between."""
    if LOG.exists():
        real = LOG.read_bytes().splitlines(keepends=True)[:3_000]
    else:
        real = [f'10.0.0.{i % 7} - - [17/May/2015:10:{i // 60 % 60:02d}:{i % 60:02d} +0000] '
                f'"GET /p{i % 11}?utm_source=x HTTP/1.1" 200 {i} "-" "agent {i % 5}"\n'.encode()
                for i in range(3_000)]
    lines = []
    for i, line in enumerate(real):
        lines.append(line)
        if i % 97 == 0:
            lines.append(JUNK[i // 97 % len(JUNK)])
    path.write_bytes(b"".join(lines))
    return len(lines)


def snapshot(db) -> dict:
    """Everything an ingest writes, less what differs by when it ran."""
    out = {}
    for name in db.list_collection_names():
        if name == schema.CHECKPOINTS or name.startswith("annotations"):
            continue
        docs = []
        for doc in db[name].find({}):
            doc.pop("ingested", None)
            doc.pop("updated", None)
            doc.pop("owners", None)         # a random id per recorder
            if name.startswith("visitors"):  # sketch ids end with the recorder's id
                doc["_id"] = doc["_id"].rsplit("/", 1)[0]
            docs.append(doc)
        out[name] = sorted(docs, key=lambda d: (str(d["_id"]), repr(d)))
    return out


def run(tmp_path: Path, log: Path, workers: int) -> tuple[ingest.IngestSummary, dict]:
    db = queries.connect(str(tmp_path / f"store-{workers}"))
    try:
        queries.ensure_indexes(db)
        ingestor = ingest.Ingestor(db, workers=workers)
        try:
            ingest.ingest_file(ingestor, log, "fallback")
        finally:
            ingestor.close()
        return ingestor.summary, snapshot(db)
    finally:
        db.client.close()


@pytest.fixture
def small_batches(monkeypatch):
    """Every path of the pipeline on a small file: chunks that end mid-batch, several
    batches and event chunks, a window smaller than the file."""
    monkeypatch.setattr(ingest, "PARALLEL_FROM_BYTES", 0)
    monkeypatch.setattr(ingest, "PARSE_CHUNK_LINES", 37)
    monkeypatch.setattr(ingest, "PARSE_WINDOW", 3)
    monkeypatch.setattr(ingest, "BATCH_LINES", 1_000)
    monkeypatch.setattr(ingest, "EVENT_CHUNK", 300)


def test_a_parse_worker_gives_what_one_process_gives(tmp_path, small_batches):
    log = tmp_path / "mixed.log"
    total = mixed_log(log)
    alone, stored_alone = run(tmp_path, log, workers=0)
    paired, stored_paired = run(tmp_path, log, workers=1)
    assert alone.lines == paired.lines == total
    assert alone.rejected and sum(alone.rejected.values()) >= 8     # junk was rejected
    assert "bad_site" in alone.rejected and "bad_target" in alone.rejected
    for name in ("parsed", "rejected", "hits", "sites", "first", "last", "unwritten"):
        assert getattr(paired, name) == getattr(alone, name), name
    assert paired.events.written == alone.events.written == alone.parsed
    assert stored_paired.keys() == stored_alone.keys()
    assert {"events", "stats.daily", "dims.hourly"} <= stored_alone.keys()
    for name in stored_alone:
        assert stored_paired[name] == stored_alone[name], name


def _dying_parse(lines, default_site):
    os._exit(3)


def test_a_parse_worker_that_dies_stops_the_ingest(tmp_path, small_batches, monkeypatch):
    log = tmp_path / "mixed.log"
    mixed_log(log)
    monkeypatch.setattr(ingest, "_parse_chunk", _dying_parse)
    db = queries.connect(str(tmp_path / "store"))
    try:
        queries.ensure_indexes(db)
        ingestor = ingest.Ingestor(db, workers=1)
        started = time.monotonic()
        with pytest.raises(HitboardError, match="log-parsing process died"):
            ingest.ingest_file(ingestor, log, "fallback")
        ingestor.close()
        assert time.monotonic() - started < 30
        assert ingestor.summary.lines == 0                  # nothing was counted
        assert db[schema.EVENTS].count_documents({}) == 0
    finally:
        db.client.close()


def marked_processes(mark: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if mark.encode() in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize("step", ["after-events", "mid-hits"])
def test_a_crash_mid_flush_with_a_parse_worker_counts_each_line_once(tmp_path, step):
    lines = 2_000
    log = tmp_path / "access.log"
    append(log, 0, lines)
    store = str(tmp_path / "store")
    args = ["--site", "logs", "--store", store, str(log)]
    script = CRASH.replace("step, nth, *argv", "ingest.PARALLEL_FROM_BYTES = 0\n"
                           "ingest.PARSE_CHUNK_LINES = 64\nstep, nth, *argv")
    mark = f"HITBOARD_TEST_MARK={uuid.uuid4().hex}"
    crash = subprocess.run(
        [sys.executable, "-c", script, step, {"after-events": "2", "mid-hits": "3"}[step],
         "ingest", "--parse-workers", "1", *args],
        capture_output=True, timeout=60, text=True,
        env={**os.environ, mark.split("=")[0]: mark.split("=")[1]})
    assert crash.returncode == 137, crash.stderr
    deadline = time.monotonic() + 10
    while marked_processes(mark) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert marked_processes(mark) == []                    # the parser did not outlive it
    db = queries.connect(store, read_only=True)
    left = checkpoint(db)
    db.client.close()
    assert left["state"] == "flushing" and left["position"]["line"] == 500

    rerun = ingest_cli("--parse-workers", "1", *args)
    assert rerun.exit_code == 0, rerun.output
    assert "completed the flush a stopped run left unfinished" in rerun.output
    daily, monthly, events = stored_counts(store)
    assert daily == monthly == expected(sent(lines))
    assert events == lines
    assert log.stat().st_size == lines * LINE
