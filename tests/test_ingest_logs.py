"""The logs a store has ingested, as the Data page lists them: lines, hits, the lines
not read (by reason) and the odd ones read, summed over runs, and whether a run reads the
file now."""

from __future__ import annotations

import datetime as dt

from queries.ingest import run as ingest
from queries.ingest.logs import log_ingests
from queries.ingest.session import LogSession
from queries.stats import schema

GOOD = ('10.0.0.1 - - [14/Mar/2026:10:00:{s:02d} +0000] "GET /p HTTP/1.1" 200 5 "-" "ua"\n')


def write(path, good: int, junk: int) -> None:
    with path.open("a") as log:
        log.writelines(GOOD.format(s=i % 60) for i in range(good))
        log.writelines("not a log line\n" for _ in range(junk))
        log.write(GOOD.format(s=0).replace("HTTP/1.1", "HTTP/V1.0"))       # odd, parsed
        log.write('10.0.0.1 - - [99/Xyz/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 5\n')


def run(db, path) -> None:
    ingestor = ingest.Ingestor(db, site="logs")
    try:
        ingest.ingest_file(ingestor, path, "logs")
    finally:
        ingestor.close()


def test_lines_hits_and_lines_not_read_add_up_over_runs(embedded_db, tmp_path, frozen_clock):
    log = tmp_path / "access.log"
    write(log, good=30, junk=2)
    run(embedded_db, log)
    write(log, good=5, junk=1)               # appended: the next run reads on
    run(embedded_db, log)
    [found] = log_ingests(embedded_db)
    assert (found.path, found.lines, found.hits) == (str(log), 42, 37)
    assert found.rejected == {"malformed": 3, "bad_time": 2}
    assert found.tolerated == {"odd_protocol": 2}
    assert found.running is False and found.pid is None and not found.interrupted
    assert frozen_clock <= found.updated <= dt.datetime.now(dt.UTC)      # marked by the run


def test_a_run_reading_now_is_named_and_another_hosts_is_not_guessed(embedded_db,
                                                                    tmp_path):
    session = LogSession(embedded_db, tmp_path / "now.log", {})
    try:
        [now] = log_ingests(embedded_db)
        assert now.running is True and now.pid is not None and now.lines == 0
    finally:
        session.close()
    assert log_ingests(embedded_db)[0].running is False
    embedded_db[schema.CHECKPOINTS].update_one({"_id": session.id},
                                               {"$set": {"host": "elsewhere"}})
    assert log_ingests(embedded_db)[0].running is None
