"""dashboard/pages/live/panels.py: Live's "Referrers, last hour" counts hits and visitors of the
same hour, so a referrer never shows more visitors than hits."""

from __future__ import annotations

import datetime as dt

import pytest
from dashkit import utc
from dimkit import CHROME, GOOGLEBOT

from dashboard import reads as dashboard_reads
from dashboard.pages.live import panels as live_panels
from dashboard.services import get_services
from queries.dimensions import reads
from queries.ingest.run import Ingestor, ingest_file
from queries.stats import schema
from queries.stats.writes import log_hit

NOW = utc(2026, 3, 14, 12, 20)
NEWS = "https://news.example/story"


def _ingest(db, tmp_path, lines) -> None:
    """``lines``: (time, address, referrer, agent), one request each, as a log."""
    rows = [f'{ip} - - [{when:%d/%b/%Y:%H:%M:%S +0000}] "GET / HTTP/1.1" 200 100 '
            f'"{referrer}" "{agent}"' for when, ip, referrer, agent in lines]
    log = tmp_path / "access.log"
    log.write_text("\n".join(rows) + "\n")
    ingest_file(Ingestor(db, site="s"), log, "s", from_start=True)


def _day_and_hour(db, tmp_path) -> None:
    """This morning: 40 visitors from news.example, once each. The last hour: 3 of them
    again, 6 hits, and a bot from news.example twice."""
    morning = [(utc(2026, 3, 14, 8, 0, i), f"81.0.0.{i + 1}", NEWS, CHROME)
               for i in range(40)]
    hour = [(NOW - dt.timedelta(minutes=m), f"81.0.0.{1 + m % 3}", NEWS, CHROME)
            for m in (5, 10, 15, 30, 40, 50)]
    bots = [(NOW - dt.timedelta(minutes=m), "66.249.66.1", NEWS, GOOGLEBOT) for m in (7, 9)]
    _ingest(db, tmp_path, morning + hour + bots)


def _row(panel, value: str) -> list[str]:
    for tr in panel.children[0].children[1].children:
        cells = tr.children
        label = cells[0].children[1]
        if getattr(label, "title", None) == value:
            return [str(label.children), cells[1].children, cells[2].children]
    raise AssertionError(f"no row {value!r}")


@pytest.mark.parametrize(("search", "hits", "visitors"),
                         [("?site=s", "6", "3"), ("?site=s&bots=1", "8", "4")])
def test_referrers_of_the_last_hour_count_that_hours_visitors(app, tmp_path, monkeypatch,
                                                               search, hits, visitors):
    _day_and_hour(get_services(app.server).db, tmp_path)
    monkeypatch.setattr(dashboard_reads, "now", lambda seconds: NOW)
    _cards, panel = live_panels.refresh_people(0, search)
    assert _row(panel, "news.example") == ["news.example", hits, visitors]


def test_recent_breakdown_is_the_windows_events_and_never_more_visitors_than_hits(db,
                                                                                  tmp_path):
    _day_and_hour(db, tmp_path)
    hour = (NOW - dt.timedelta(hours=1), NOW)
    frame = reads.recent_breakdown(db, "s", "referrer", *hour, humans=True)
    assert frame.values.tolist() == [["news.example", 6, 3]]
    assert frame.attrs["note"] == ""
    everyone = reads.recent_breakdown(db, "s", "browser", *hour)
    assert (everyone["visitors"] <= everyone["hits"]).all()
    assert everyone["hits"].sum() == 8
    # The counters' value sketches cover the whole day (40 visitors from news.example):
    # an hour's breakdown counts the visitors of its own hours from their raw events.
    counted = reads.breakdown(db, "s", "referrer", *hour, humans=True)
    assert counted.values.tolist() == [["news.example", 6, 3, 0]]     # 0: exact
    assert counted.attrs["exact"] and counted.attrs["visitors_exact"]


def test_without_raw_events_the_hour_has_hits_and_no_visitors(db, tmp_path):
    _day_and_hour(db, tmp_path)
    db[schema.EVENTS].delete_many({})
    frame = reads.recent_breakdown(db, "s", "referrer", NOW - dt.timedelta(hours=1), NOW,
                                   humans=True)
    assert frame["hits"].tolist() == [6] and frame["visitors"].isna().all()
    assert "visitors unknown" in frame.attrs["note"]


def test_a_busy_hour_reads_the_counters_not_its_raw_events(db, tmp_path, monkeypatch):
    """Live's reads of raw events refresh every few seconds: past MAX_SCANNED hits in the
    window they would cost too much, so the hour's hits come from the counters."""
    from queries.dimensions import page_reads

    _day_and_hour(db, tmp_path)
    monkeypatch.setattr(page_reads, "MAX_SCANNED", 5)      # the hour holds 8
    frame = reads.recent_breakdown(db, "s", "referrer", NOW - dt.timedelta(hours=1), NOW,
                                   humans=True)
    assert frame["hits"].tolist() == [6] and frame["visitors"].isna().all()
    assert "over 5 hits in this hour" in frame.attrs["note"]


def test_active_visitors_read_at_most_the_newest_max_scanned_hits(db, tmp_path,
                                                                  monkeypatch):
    from queries.dimensions import page_reads

    _day_and_hour(db, tmp_path)
    assert reads.active_visitors(db, "s", NOW, 60) == (4, True)      # 3 people and a bot
    assert reads.active_visitors(db, "s", NOW, 60, humans=True) == (3, True)
    monkeypatch.setattr(page_reads, "MAX_SCANNED", 3)   # the newest 3: minutes 5, 7, 9
    assert reads.active_visitors(db, "s", NOW, 60) == (2, False)


def test_a_busy_window_says_its_visitors_are_a_lower_bound(app, tmp_path, monkeypatch):
    from queries.dimensions import page_reads
    from queries.reads import live as live_reads

    _day_and_hour(get_services(app.server).db, tmp_path)
    monkeypatch.setattr(dashboard_reads, "now", lambda seconds: NOW)
    monkeypatch.setattr(page_reads, "MAX_SCANNED", 1)
    monkeypatch.setattr(live_panels, "MAX_SCANNED", 1)
    monkeypatch.setattr(live_panels, "ACTIVE_MINUTES", 60)     # 8 hits in the window
    monkeypatch.setattr(live_reads, "ACTIVE_MINUTES", 60)
    cards, _panel = live_panels.refresh_people(0, "?site=s&bots=1")
    notes = [card.children[2].children for card in cards]
    assert notes[0] == "last 60 minutes; at least: from the newest 1 hits"
    assert notes[1] == "last 60 seconds"           # none in the last minute: complete


def test_an_hour_whose_hits_mostly_have_no_raw_events_reads_the_counters(db, tmp_path):
    """Right after a backfill, the last hour's hits are counted and have no events: ten
    live ones must not read as the hour's referrers."""
    _day_and_hour(db, tmp_path)
    hour = (NOW - dt.timedelta(hours=1), NOW)
    for _ in range(100):                      # counted, as a backfill counts: no events
        log_hit(db, NOW - dt.timedelta(minutes=30), "s", "/")
    frame = reads.recent_breakdown(db, "s", "referrer", *hour, humans=True)
    assert frame["visitors"].isna().all()
    assert "raw events kept for only 8 of its 108 hits" in frame.attrs["note"]


def test_people_of_minutes_a_backfill_counted_are_unknown_not_a_few(app, tmp_path,
                                                                     monkeypatch):
    """Right after the demo's backfill: 100 hits counted in the last 5 minutes, without
    raw events, beside a visitor's 6 live ones. "Active visitors 1" stood beside "Last
    hour 1,483": the card says instead that its raw events hold too few of its hits; the
    last minute, live traffic's alone, keeps its figure."""
    db = get_services(app.server).db
    live_hits = [(NOW - dt.timedelta(seconds=s), "81.0.0.1", NEWS, CHROME)
                 for s in (5, 10, 20, 30, 40, 50)]
    _ingest(db, tmp_path, live_hits)
    for minutes in range(1, 5):
        for _ in range(25):              # counted, as a backfill counts: no events
            log_hit(db, NOW - dt.timedelta(minutes=minutes, seconds=30), "s", "/")
    monkeypatch.setattr(dashboard_reads, "now", lambda seconds: NOW)
    cards, _panel = live_panels.refresh_people(0, "?site=s")
    shown = {card.children[1].id: (card.children[1].children, card.children[2].children)
             for card in cards}
    assert shown["live-kpi-active"] == (
        "–", "last 5 minutes, humans; unknown: raw events kept for only 6 of its 106 hits")
    assert shown["live-kpi-visits"][0] == "–"
    assert shown["live-kpi-visitors-minute"] == ("1", "last 60 seconds, humans")


def test_event_coverage_compares_the_same_whole_minutes(db, tmp_path):
    """The counters count per minute: a window starting at 12:15:20 counts the events
    and the hits of 12:15:00 on, so steady live traffic covers it whole."""
    from queries.reads.live import event_coverage

    _ingest(db, tmp_path, [(NOW - dt.timedelta(minutes=4, seconds=50), "81.0.0.1", NEWS,
                            CHROME), (NOW, "81.0.0.2", NEWS, CHROME)])
    found = event_coverage(db, "s", NOW + dt.timedelta(seconds=20), (5, 1))
    assert found[5] == (2, 2) and found[5].complete
    assert found[1] == (1, 1)
    log_hit(db, NOW, "s", "/")
    assert not event_coverage(db, "s", NOW, (1,))[1].complete      # 1 of 2 hits
