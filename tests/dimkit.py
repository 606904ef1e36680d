"""A small access log with every dimension the History panels show, ingested as
``hitboard ingest`` would (stats, dimension counters, visitor sketches, raw events)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from clockkit import TEST_NOW

import queries
from queries.ingest.run import Ingestor, ingest_file

CHROME = ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
          "Chrome/126.0 Safari/537.36")
IPHONE = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
          "(KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1")
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
# (count, path, status, referrer, agent): 'yesterday' at noon UTC, one address each line.
LINES = [
    (30, "/", 200, "https://news.example/story", CHROME),
    (20, "/about", 200, "https://search.example/?q=x", IPHONE),
    (10, "/", 200, "-", CHROME),
    (5, "/missing", 404, "-", CHROME),
    (8, "/style.css", 200, "-", CHROME),
    (15, "/", 200, "-", GOOGLEBOT),
]
NEWS = 30
BOTS = 15
TOTAL = sum(line[0] for line in LINES)


def write_log(path: Path, start: dt.datetime, step: dt.timedelta) -> Path:
    """The sample lines, each group's i-th line at ``start + (i % 60) * step``."""
    rows = []
    address = 0
    for count, page, status, referrer, agent in LINES:
        for i in range(count):
            address += 1
            when = start + (i % 60) * step
            ip = f"81.{address // 250}.{address % 250}.9"
            rows.append(f'{ip} - - [{when:%d/%b/%Y:%H:%M:%S +0000}] "GET {page} HTTP/1.1" '
                        f'{status} 100 "{referrer}" "{agent}"')
    path.write_text("\n".join(rows) + "\n")
    return path


def ingest_sample(db, site: str, tmp: Path, start: dt.datetime | None = None,
                  step: dt.timedelta = dt.timedelta(minutes=1)) -> dt.datetime:
    """Ingest the sample log from ``start`` (by default the day before ``TEST_NOW``, at
    noon UTC: yesterday for a test under ``frozen_clock``), a line of each group every
    ``step``."""
    if start is None:
        day = TEST_NOW.date() - dt.timedelta(days=1)
        start = dt.datetime.combine(day, dt.time(12), dt.UTC)
    log = write_log(tmp / f"access-{start:%Y%m%d%H%M%S}.log", start, step)
    ingestor = Ingestor(db, site=site)
    ingest_file(ingestor, log, site, from_start=True)
    assert queries.list_sites(db) == [site]
    return start
