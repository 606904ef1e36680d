"""Automatic notes: the load generator's start, rate change, spike, stop and backfill, and
each `hitboard ingest` run, write a note on the sites they touched."""

import datetime as dt

from click.testing import CliRunner

import queries
from dashboard.cli import main
from dashboard.loadgen.control import Config, LoadGenerator
from queries import annotations as notes

SMALL = Config(rate=200, sites=1, pages=3, diurnal=0.0)


def texts(db):
    return [(a["site"], a["kind"], a["text"], a["author"])
            for a in reversed(notes.list_annotations(db))]


def test_the_load_generator_notes_what_it_does(embedded_db):
    recorder = queries.HitRecorder(embedded_db, flush_interval=0.2)
    generator = LoadGenerator(embedded_db, recorder, max_rate=1_000)
    try:
        generator.start(SMALL)
        generator.start(Config(rate=300, sites=1, pages=3, diurnal=0.0))
        generator.set_rate(400)
        generator.spike()
        generator.stop()
        generator.backfill(2, SMALL, now=dt.datetime(2026, 11, 22, 12, tzinfo=dt.UTC),
                           wait=True)
    finally:
        generator.close()
        recorder.close()
    site = "shop.example"
    found = texts(embedded_db)
    assert found[:5] == [
        (site, "load-test", "load generator started: 200 hits/s on 3 pages", "hitboard"),
        (site, "load-test", "load generator: rate changed to 300 hits/s", "hitboard"),
        (site, "load-test", "load generator: rate changed to 400 hits/s", "hitboard"),
        (site, "spike", "load generator spike: ×10 for 30 s", "hitboard"),
        (site, "load-test", "load generator stopped", "hitboard")]
    assert found[5][:2] == (site, "backfill")
    assert found[5][2].startswith("backfilled 2 days of synthetic traffic (")


LINE = ('127.0.0.1 - - [21/Nov/2026:10:00:0{} +0000] "GET /a HTTP/1.1" 200 512 "-" '
        '"curl/8"\n')


def test_an_ingest_run_notes_its_lines(tmp_path):
    store = str(tmp_path / "store")
    log = tmp_path / "access.log"
    log.write_text("".join(LINE.format(i) for i in range(3)))
    result = CliRunner().invoke(main, ["ingest", str(log), "--site", "demo", "--store", store])
    assert result.exit_code == 0, result.output
    db = queries.connect(store)
    try:
        (site, kind, text, author), = texts(db)
    finally:
        db.client.close()
    assert (site, kind, author) == ("demo", "backfill", "hitboard")
    assert text == "ingested access.log: 3 lines"
