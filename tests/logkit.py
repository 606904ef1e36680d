"""Small access logs written for a test, and ingested as ``hitboard ingest`` would."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from queries.ingest.run import Ingestor, ingest_file

AGENT = "Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0"


def write_log(path: Path, day: dt.datetime, lines) -> Path:
    """``lines`` of ``(visitor, minute after day, page)`` or ``(visitor, minute, page,
    agent)``: GETs answered 200, from 203.0.113.<visitor>."""
    path.write_text("".join(
        f'203.0.113.{who} - - [{day + dt.timedelta(minutes=minute):%d/%b/%Y:%H:%M:%S} '
        f'+0000] "GET {page} HTTP/1.1" 200 5 "-" "{agent[0] if agent else AGENT}"\n'
        for who, minute, page, *agent in lines))
    return path


def ingest(db, path: Path, site: str = "s"):
    """Ingest ``path`` into ``site``; returns the ingest's summary."""
    ingestor = Ingestor(db, site=site)
    try:
        ingest_file(ingestor, path, site)
    finally:
        ingestor.close()
    return ingestor.summary
