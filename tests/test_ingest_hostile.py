"""`hitboard ingest` given what is not a log, or a log no reader expects: a binary or JSON
file stops with one line and exit 2, nothing written; a 100 MB line is refused and the
rest read; a 10 GB log (sparse: no 10 GB on disk) is read through in bounded memory."""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import queries
from dashboard.cli import main
from queries.ingest.sniff import not_a_log
from queries.stats import schema


def line(second: int) -> str:
    t = dt.datetime(2026, 3, 14, 10, 0, tzinfo=dt.UTC) + dt.timedelta(seconds=second)
    return (f'10.0.0.1 - - [{t:%d/%b/%Y:%H:%M:%S} +0000] "GET /p{second % 3} HTTP/1.1" '
            '200 5 "-" "ua"\n')


def lines(start: int, stop: int) -> bytes:
    return "".join(line(i) for i in range(start, stop)).encode()


def binary(path: Path) -> Path:
    path.write_bytes(random.Random(7).randbytes(3 * 2**20))
    return path


def json_document(path: Path) -> Path:
    path.write_text(json.dumps([{"ip": "10.0.0.1", "path": f"/p{i}", "status": 200}
                                for i in range(20_000)], indent=2))
    return path


@pytest.mark.parametrize("make", [binary, json_document], ids=["binary", "json"])
def test_a_file_that_is_no_log_stops_with_one_line_and_exit_2_writing_nothing(tmp_path, make):
    good = tmp_path / "good.log"
    good.write_bytes(lines(0, 10))
    bad = make(tmp_path / "data.log")
    store = tmp_path / "store"
    result = CliRunner().invoke(main, ["ingest", str(good), str(bad), "--site", "s",
                                       "--store", str(store)])
    assert result.exit_code == 2, result.output
    assert result.output.count("\n") == 1
    assert result.output.startswith(f"Error: {bad} is not an access log (auto): none of its "
                                    "first ")
    assert "nothing was written" in result.output
    assert not store.exists()                 # not even the good file's lines


def test_a_log_in_another_format_than_the_one_asked_is_no_log_either(tmp_path):
    log = tmp_path / "a.log"
    log.write_bytes(lines(0, 5))
    assert "(5 wrong_format)" in not_a_log(log, "s", "common")
    assert not_a_log(log, "s", "combined") is None
    assert not_a_log(tmp_path / "a.log", "s") is None


def test_what_cannot_tell_is_no_reason_to_stop(tmp_path):
    """An empty file, and one whose first lines are log lines refused for their site."""
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    assert not_a_log(empty, "s") is None
    vhosts = tmp_path / "vhosts.log"
    vhosts.write_text("bad/host " + line(1))
    assert not_a_log(vhosts, "s") is None


def stored(store: Path) -> tuple[int, dict]:
    db = queries.connect(str(store), read_only=True)
    try:
        hits = sum(d["monthly"] for d in db[schema.MONTHLY].find({"metadata.page": "*"}))
        return hits, db[schema.CHECKPOINTS].find_one()["totals"]
    finally:
        db.client.close()


def test_a_100_mb_line_is_refused_counted_and_the_rest_read(tmp_path):
    log = tmp_path / "long.log"
    with log.open("wb") as out:
        out.write(lines(0, 100))
        for _ in range(100):
            out.write(b"A" * 2**20)
        out.write(b"\n")
        out.write(lines(100, 200))
    store = tmp_path / "store"
    result = CliRunner().invoke(main, ["ingest", str(log), "--site", "s", "--store",
                                       str(store)])
    assert result.exit_code == 0, result.output
    assert "lines     201\n" in result.stdout
    assert "refused   1 (1 too_long)" in result.stdout
    hits, totals = stored(store)
    assert hits == 200
    assert totals["lines"] == 201 and totals["rejected"] == {"too_long": 1}


# The process's own high-water mark (VmHWM, kB): its ru_maxrss would start from its
# parent's resident size at the fork (Linux keeps it across exec), a pytest worker's.
PEAK = """
import sys
from dashboard.cli import main
try:
    main(sys.argv[1:])
finally:
    with open("/proc/self/status") as status:
        peak = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    print("peak", peak, file=sys.stderr)
"""


def test_a_10_gb_log_is_streamed_in_bounded_memory(tmp_path):
    """Lines, a 10 GB hole (NULs, as a crash can leave: one line too long, refused),
    lines: the process's peak memory is that of a small log."""
    log = tmp_path / "big.log"
    with log.open("wb") as out:
        out.write(lines(0, 1_000))
        out.seek(10 * 2**30)
        out.write(b"\n" + lines(1_000, 2_000))
    assert log.stat().st_blocks * 512 < 2**20          # sparse: nothing of it on disk
    store = tmp_path / "store"
    done = subprocess.run([sys.executable, "-c", PEAK, "ingest", str(log), "--site", "s",
                           "--store", str(store)], capture_output=True, text=True,
                          timeout=600, env={**os.environ, "HITBOARD_INGEST_JOBS": "1"})
    assert done.returncode == 0, done.stderr
    assert "lines     2,001\n" in done.stdout
    assert "refused   1 (1 too_long)" in done.stdout
    assert stored(store)[0] == 2_000
    peak_kib = int(done.stderr.rsplit("peak ", 1)[1].split()[0])
    assert peak_kib < 400 * 1024
