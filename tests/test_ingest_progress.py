"""What `hitboard ingest` shows as it goes (lines/s and the time left, on a terminal only)
and at the end (lines, hits, kept apart, tolerated, refused, seconds, peak memory)."""

from __future__ import annotations

import datetime as dt
import io
import itertools
import re
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from dashboard.cli import ingest_report, main
from queries.ingest import chunks


def line(second: int) -> str:
    t = dt.datetime(2026, 3, 14, 10, 0, tzinfo=dt.UTC) + dt.timedelta(seconds=second)
    return (f'10.0.0.1 - - [{t:%d/%b/%Y:%H:%M:%S} +0000] "GET /p{second % 3} HTTP/1.1" '
            '200 5 "-" "ua"\n')


@pytest.fixture
def log(tmp_path, monkeypatch):
    """400 lines and a junk one, read in 8 chunks."""
    path = tmp_path / "shop.log"
    path.write_text("".join(line(i) for i in range(400)) + "junk\n")
    monkeypatch.setattr(chunks, "CHUNK_BYTES", path.stat().st_size // 8 + 1)
    return path


@pytest.fixture
def ticking(monkeypatch):
    """A clock that moves one second each time it is read."""
    monkeypatch.setattr(ingest_report, "clock", itertools.count(1_000.0).__next__)


def test_on_a_terminal_the_progress_shows_lines_per_second_and_the_time_left(
        tmp_path, log, ticking, monkeypatch):
    monkeypatch.setattr(ingest_report, "is_terminal", lambda stream: True)
    result = CliRunner().invoke(main, ["ingest", str(log), "--store", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    shown = [part.split("\n")[0] for part in result.stderr.split("\r")[1:]]
    assert len(shown) >= 4                      # redrawn as the chunks come
    pattern = re.compile(r"shop\.log +\d+%  [\d,]+ lines  [\d,]+ lines/s  "
                         r"(\d+:\d\d left|done)\x1b\[K")
    for text in shown:
        assert pattern.fullmatch(text), text
    assert any(text.endswith(" left\x1b[K") for text in shown)
    assert shown[-1].startswith("shop.log  100%  401 lines  ")


def test_elsewhere_it_is_quiet_and_the_summary_says_it_all(tmp_path, log, ticking):
    result = CliRunner().invoke(main, ["ingest", str(log), "--store", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    assert "lines/s" not in result.stderr and "\r" not in result.stderr
    rows = dict(re.match(r"(kept apart|peak memory|\w+) +(.*)", row).groups()
                for row in result.stdout.splitlines())
    assert rows["lines"] == "401"
    assert rows["hits"] == "400 recorded on shop (400)"
    assert rows["kept apart"] == "0"
    assert rows["tolerated"] == "0"
    assert rows["refused"] == "1 (1 malformed)"
    assert re.fullmatch(r"[\d,]+\.\d\d", rows["seconds"])
    assert re.fullmatch(r"[\d,]+ MB", rows["peak memory"])


def test_the_time_left_comes_from_the_bytes_read_so_far():
    clock = iter([0.0, 10.0, 10.0, 10.0])
    stream = io.StringIO()
    ingest_report.clock, saved = clock.__next__, ingest_report.clock
    try:
        progress = ingest_report.Progress("a.log", 1_000, stream)
        progress.update(250, 5_000)
        assert progress.text() == "a.log   25%  5,000 lines  500 lines/s  0:30 left"
    finally:
        ingest_report.clock = saved
    assert stream.getvalue() == ""            # no terminal: nothing drawn


def test_durations_read_as_a_clock():
    assert ingest_report._duration(59.6) == "1:00"
    assert ingest_report._duration(3_725) == "1:02:05"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_peak_memory_sums_the_process_and_its_children_as_they_run():
    """A child holding 200 MB while it runs counts; what it shares of this process at
    the fork (which its ``ru_maxrss`` would report) does not count twice."""
    with ingest_report.TreeMemory(every=0.05) as memory:
        alone = ingest_report._tree_rss()
        child = subprocess.Popen([sys.executable, "-c", "import sys, time\n"
                                  "held = b'x' * (200 * 2**20)\n"
                                  "print('ready', flush=True)\ntime.sleep(30)"],
                                 stdout=subprocess.PIPE, text=True)
        try:
            assert child.stdout.readline() == "ready\n"
            with_child = ingest_report._tree_rss()
            for _ in range(200):                 # the sampler's next turns
                if memory.peak >= with_child * 0.95:
                    break
                time.sleep(0.05)
        finally:
            child.kill()
            child.wait()
    assert with_child - alone > 200 * 2**20
    assert memory.bytes() >= memory.peak >= with_child * 0.95
