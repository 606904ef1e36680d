"""``hitboard ingest``: the real log counted right, junk reported, exit codes, follow mode
across rotation and restart."""

from __future__ import annotations

import csv
import datetime as dt
import io
import os
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes import stored_count, stored_events

import queries
from dashboard.cli import main
from dashboard.state import ShellState, parse_search
from queries.dimensions import reads
from queries.ingest import chunks
from queries.ingest import run as ingest
from queries.stats import schema
from queries.validation import decoded_path

LOG = Path(__file__).resolve().parents[2] / "shared" / "data" / "apache_combined_2015.log"
WAIT = 15.0


def independent_counts(path: Path) -> tuple[Counter, Counter]:
    """Per UTC day and per path, by splitting on spaces (the file is all +0000); paths
    decoded as ingestion stores them."""
    days, paths = Counter(), Counter()
    with path.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            fields = line.split(" ")
            assert fields[3].endswith("+0000]") or fields[4] == "+0000]"
            day = dt.datetime.strptime(fields[3][1:12], "%d/%b/%Y").date().isoformat()
            days[day] += 1
            paths[decoded_path(fields[6].split("?")[0])] += 1
    return days, paths


@pytest.fixture(scope="module")
def ingested(tmp_path_factory):
    if not LOG.exists():
        pytest.skip(f"{LOG} is not here")
    store = str(tmp_path_factory.mktemp("ingest") / "store")
    result = CliRunner().invoke(main, ["ingest", str(LOG), "--site", "demo", "--store", store])
    return store, result


def test_real_log_summary_and_exit_code(ingested):
    _, result = ingested
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "lines     10,000" in out and "parsed    10,000" in out
    assert "refused   0" in out and "hits      10,000 recorded on demo" in out
    assert "kept apart 0\ntolerated 0\n" in out
    assert "events    10,000 written" in out
    assert "first     2015-05-17T10:05:00+00:00" in out
    assert "last      2015-05-20T21:05:59+00:00" in out
    assert "\nseconds   " in out and "\npeak memory " in out


def test_report_per_day_equals_an_independent_count(ingested):
    store, _ = ingested
    days, _ = independent_counts(LOG)
    result = CliRunner().invoke(main, [
        "report", "--site", "demo", "--granularity", "day", "--start", "2015-05-17",
        "--end", "2015-05-21", "--store", store])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert {r["time"][:10]: int(r["hits"]) for r in rows} == dict(days)


def test_per_path_hits_and_events_equal_an_independent_count(ingested):
    store, _ = ingested
    _, paths = independent_counts(LOG)
    db = queries.connect(store, read_only=True)
    try:
        top = queries.top_pages(db, "demo", dt.datetime(2015, 5, 17, tzinfo=dt.UTC),
                                dt.datetime(2015, 5, 21, tzinfo=dt.UTC), n=100_000)
        assert top["hits"].to_dict() == dict(paths)
        assert len(paths) == 1368
        per_path = Counter()
        for doc in stored_events(db, "demo"):
            per_path[doc["path"]] += 1
        assert per_path == paths
        sample = next(e for e in stored_events(db, "demo") if e["path"] == "/favicon.ico")
        assert sample["time"].tzinfo is not None and sample["query"] == ""
        assert all(b["ingested"].tzinfo is not None for b in db[schema.EVENTS].find())
    finally:
        db.client.close()


def write(path: Path, lines: list[str], mode: str = "w") -> None:
    with path.open(mode) as handle:
        handle.writelines(line + "\n" for line in lines)


def line(second: int, path: str = "/p", vhost: str = "") -> str:
    t = dt.datetime(2026, 3, 14, 10, 0, tzinfo=dt.UTC) + dt.timedelta(seconds=second)
    return (f'{vhost}10.0.0.1 - - [{t:%d/%b/%Y:%H:%M:%S} +0000] "GET {path} HTTP/1.1" '
            '200 5 "-" "ua"')


def test_rejects_are_counted_by_reason_and_do_not_fail(tmp_path):
    log = tmp_path / "shop.log"
    write(log, [line(1), "garbage", line(2, "/x?y=1"), '1.2.3.4 - - [10/Oct/2000:13:55:36 '
                '+0000] "\\x16\\x03" 400 0 "-" "-"', ""])
    store = str(tmp_path / "store")
    result = CliRunner().invoke(main, ["ingest", str(log), "--store", store])
    assert result.exit_code == 0, result.output
    assert "refused   3 (1 malformed, 1 bad_request, 1 empty)" in result.stdout
    assert "on shop (2)" in result.stdout           # the site named after the file


def test_odd_request_lines_are_parsed_and_counted_as_tolerated(tmp_path):
    log = tmp_path / "nasa.log"
    write(log, [line(1).replace("GET /p HTTP/1.1", "GET /facts   HTTP/1.0"),   # NASA, 1995
                line(2).replace("HTTP/1.1", "HTTP/V1.0"), line(3).replace("HTTP/1.1", "HTTP/V1.0"),
                line(4)])
    result = CliRunner().invoke(main, ["ingest", str(log), "--store", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    assert "tolerated 3 (2 odd_protocol, 1 spacing)\nrefused   0" in result.stdout
    db = queries.connect(str(tmp_path / "s"), read_only=True)
    assert ingest_totals(db)["tolerated"] == {"odd_protocol": 2, "spacing": 1}
    db.client.close()


def test_bytes_that_are_not_utf8_are_stored_replaced_and_counted(tmp_path):
    log = tmp_path / "latin.log"
    log.write_bytes(line(1, "/caf\xe9").encode("latin-1") + b"\n"
                    + line(2).replace('"ua"', '"agent \xff"').encode("latin-1") + b"\n"
                    + line(3).encode() + b"\n")
    store = str(tmp_path / "s")
    result = CliRunner().invoke(main, ["ingest", str(log), "--store", store])
    assert result.exit_code == 0, result.output
    assert "tolerated 2 (2 undecodable_bytes)\n" in result.stdout
    db = queries.connect(store, read_only=True)
    assert ingest_totals(db)["tolerated"] == {"undecodable_bytes": 2}
    pages = set(db[schema.DAILY].distinct("metadata.page"))
    assert "/caf\ufffd" in pages
    assert not any(0xD800 <= ord(c) <= 0xDFFF for page in pages for c in page)
    db.client.close()


def ingest_totals(db) -> dict:
    (checkpoint,) = db[schema.CHECKPOINTS].find({"_id": {"$regex": "^ingest:"}})
    return checkpoint["totals"]


def test_escaped_paths_are_stored_counted_and_matched_decoded(tmp_path):
    log = tmp_path / "shop.log"
    stamp = "[14/Mar/2026:10:00:00 +0000]"
    requests = [("/nature%E2%80%99s-essence", 200)] * 3 + [
        ("/nature\u2019s-essence", 200), ("/caf%C3%A9%20menu", 404),
        ("/img/logo%2Epng", 200), ("/latin%E9", 200)]
    write(log, [f'10.0.0.1 - - {stamp} "GET {path} HTTP/1.1" {status} 5 "-" "ua"'
                for path, status in requests])
    store = str(tmp_path / "store")
    assert CliRunner().invoke(main, ["ingest", str(log), "--store", store]).exit_code == 0
    db = queries.connect(store, read_only=True)
    try:
        nature = "/nature\u2019s-essence"
        assert queries.list_pages(db, "shop") == [
            "/caf\u00e9 menu", "/img/logo.png", "/latin%E9", nature]
        # The dashboard's URL names the page escaped; its query string is decoded once.
        shell = ShellState.from_query(parse_search("?site=shop&page=/nature%E2%80%99s-essence"))
        assert shell.pages == (nature,)
        start = dt.datetime(2026, 3, 14, tzinfo=dt.UTC)
        day = queries.series(db, "shop", start, start + dt.timedelta(days=1), "day",
                             pages=shell.pages)
        assert day[nature].tolist() == [4]
        window = (start, start + dt.timedelta(days=1))
        assert breakdown(db, "page", window) == {nature: 4, "/caf\u00e9 menu": 1,
                                                 "/img/logo.png": 1, "/latin%E9": 1}
        assert breakdown(db, "notfound", window) == {"/caf\u00e9 menu": 1}
        assert breakdown(db, "kind", window) == {"page": 6, "asset": 1}
        assert {e["path"] for e in stored_events(db, "shop")} == set(queries.list_pages(
            db, "shop"))
    finally:
        db.client.close()


def breakdown(db, by: str, window) -> dict:
    frame = reads.breakdown(db, "shop", by, *window)
    return dict(zip(frame["value"], frame["hits"], strict=True))


def test_nothing_parsed_exits_2(tmp_path):
    """Log lines, every one refused (no site can be named after its virtual host)."""
    log = tmp_path / "junk.log"
    write(log, [line(1, vhost="bad/host "), line(2, vhost="bad/host ")])
    result = CliRunner().invoke(main, ["ingest", str(log), "--store", str(tmp_path / "s")])
    assert result.exit_code == 2
    assert "refused   2 (2 bad_site)" in result.output
    assert "no line could be parsed" in result.output


def test_vhost_names_the_site_and_a_bad_file_name_needs_site(tmp_path):
    log = tmp_path / "vhosts.log"
    write(log, [line(1, vhost="a.example:80 "), line(2, vhost="b.example "),
                line(3, vhost="bad/host ")])
    store = str(tmp_path / "store")
    result = CliRunner().invoke(main, ["ingest", str(log), "--store", store, "--no-events"])
    assert result.exit_code == 0, result.output
    assert "1 bad_site" in result.stdout and "events    not kept" in result.stdout
    db = queries.connect(store)
    assert set(queries.list_sites(db)) == {"a.example", "b.example"}
    assert stored_count(db) == 0
    db.client.close()
    odd = tmp_path / "weird name!.log"
    write(odd, [line(1)])
    result = CliRunner().invoke(main, ["ingest", str(odd), "--store", store])
    assert result.exit_code == 2 and "give --site NAME" in result.output


def test_site_from_filename():
    assert ingest.site_from_filename("/var/log/www.example.com.access.log.1") == \
        "www.example.com.access"
    assert ingest.site_from_filename("apache_combined_2015.log") == "apache_combined_2015"
    with pytest.raises(queries.InvalidSiteError):
        ingest.site_from_filename("/tmp/é.log")


def test_a_batch_ends_early_once_its_flush_would_write_many_documents(
        embedded_db, tmp_path, monkeypatch):
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 2_000)           # ~20 lines a chunk
    monkeypatch.setattr(ingest, "BATCH_DOCUMENTS", 200)
    log = tmp_path / "access.log"       # 100 pages a day for 3 days, in time order
    write(log, [line(day * 86_400 + i, f"/p{i}") for day in range(3) for i in range(100)])
    ingestor = ingest.Ingestor(embedded_db, site="logs")
    try:
        ingest.ingest_file(ingestor, log, "logs")
    finally:
        ingestor.close()
    # a day is ~200 documents (daily and monthly, dimensions apart): a flush or so a day
    seq = embedded_db[schema.CHECKPOINTS].find_one()["seq"]
    assert 2 <= seq <= 4
    assert hits(embedded_db) == 300


# -- follow ----------------------------------------------------------------------------
def wait_until(predicate, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


class Following:
    """``ingest.follow`` on a thread, stopped like SIGTERM stops the command."""

    def __init__(self, db, log: Path):
        self.ingestor = ingest.Ingestor(db, site="logs")
        self.stop = threading.Event()
        self.flushes = 0
        self.thread = threading.Thread(target=ingest.follow, args=(
            self.ingestor, [str(log)], {str(log): "logs"}, self.stop),
            kwargs={"poll": 0.01, "flush_every": 0.05, "on_flush": self._flushed})
        self.thread.start()

    def _flushed(self):
        self.flushes += 1

    def end(self):
        self.stop.set()
        self.thread.join(WAIT)
        assert not self.thread.is_alive()
        self.ingestor.close()


def hits(db) -> int:
    doc = db[schema.MONTHLY].find_one({"_id": "202603/logs*"})
    return doc["monthly"] if doc else 0


def test_follow_across_rotation_and_restart_counts_each_line_once(embedded_db, tmp_path):
    log = tmp_path / "access.log"
    write(log, [line(i) for i in range(10)])
    run = Following(embedded_db, log)
    wait_until(lambda: hits(embedded_db) == 10, "the first 10 lines")
    write(log, [line(i) for i in range(10, 15)], "a")
    log.rename(tmp_path / "access.log.1")                # logrotate: rename, then create
    write(tmp_path / "access.log.1", [line(i) for i in range(15, 17)], "a")  # late writes
    write(log, [line(i) for i in range(17, 20)])
    wait_until(lambda: hits(embedded_db) == 20, "lines before and after rotation")
    with log.open("a") as handle:                        # half a line: not counted yet
        handle.write(line(20)[:30])
    time.sleep(0.2)
    assert hits(embedded_db) == 20
    with log.open("a") as handle:
        handle.write(line(20)[30:] + "\n")
    wait_until(lambda: hits(embedded_db) == 21, "the completed line")
    run.end()

    write(log, [line(i) for i in range(21, 25)], "a")    # written while stopped
    run = Following(embedded_db, log)
    wait_until(lambda: hits(embedded_db) == 25, "the lines written while stopped")
    run.end()
    assert hits(embedded_db) == 25                        # nothing counted twice
    assert stored_count(embedded_db, "logs") == 25
    saved = embedded_db[schema.CHECKPOINTS].find_one({"_id": {"$regex": "^ingest:"}})
    assert saved["state"] == "done" and saved["path"] == str(log)
    assert saved["position"]["inode"] == os.stat(log).st_ino
    assert saved["position"]["offset"] == log.stat().st_size


def test_follow_waits_out_a_full_disk_and_counts_each_line_once(embedded_db, tmp_path):
    """The store fills up while a log is followed: the flush is tried again, same intent
    and numbers, until there is room; the follower never stops and counts once."""
    log = tmp_path / "access.log"
    write(log, [line(i) for i in range(10)])
    run = Following(embedded_db, log)
    wait_until(lambda: hits(embedded_db) == 10, "the first lines")
    writer = embedded_db.client.store._writer
    writer.execute(f"PRAGMA max_page_count={writer.execute('PRAGMA page_count').fetchone()[0]}")
    write(log, [line(i, f"/new{i}") for i in range(10, 400)], "a")
    time.sleep(0.5)
    assert run.thread.is_alive() and hits(embedded_db) == 10
    writer.execute("PRAGMA max_page_count=1073741823")
    wait_until(lambda: hits(embedded_db) == 400, "every line once there is room")
    run.end()
    assert stored_count(embedded_db, "logs") == 400


def test_follow_starts_over_when_the_file_is_replaced(embedded_db, tmp_path):
    log = tmp_path / "access.log"
    write(log, [line(i, "/old") for i in range(5)])
    run = Following(embedded_db, log)
    wait_until(lambda: hits(embedded_db) == 5, "the old file")
    run.end()
    # Truncated and rewritten in place (same inode): the saved offset no longer fits.
    write(log, [line(100 + i, "/new") for i in range(3)])
    run = Following(embedded_db, log)
    wait_until(lambda: hits(embedded_db) == 8, "the new content from its start")
    run.end()
