"""Visits recomputed from raw events by the rollup run (``queries.visits.build``), on
every backend: late and out-of-order events, visits across midnight and across runs, a
run repeated, what is not a pageview, a site's own timeout, the pages cap."""

from __future__ import annotations

import datetime as dt

import pytest
from logkit import ingest

from queries.events.writer import EventWriter
from queries.rollups.build import run_rollups
from queries.stats.sites import register, update_site
from queries.visits import reads, store

T0 = dt.datetime(2026, 3, 1, 23, 0, tzinfo=dt.UTC)
AGENT = "Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0"
BOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
RUN = [dt.datetime(2026, 3, 5, tzinfo=dt.UTC)]
MS = dt.timedelta(milliseconds=1)


def _write(db, *views, agent=AGENT, site="s"):
    """Events of ``(minutes after T0, page, visitor)``, then a rollup run."""
    writer = EventWriter(db, clock=lambda: RUN[0])
    for minutes, page, visitor in views:
        writer.add({"time": T0 + dt.timedelta(minutes=minutes), "site": site,
                    "host": f"203.0.113.{visitor}", "method": "GET", "path": page,
                    "query": "", "status": 200, "bytes": 1, "referrer": "-",
                    "user_agent": agent})
    writer.flush()
    RUN[0] += dt.timedelta(minutes=5)
    run_rollups(db, now=RUN[0])


def _totals(db, hours=48, site="s"):
    found = reads.totals(db, site, T0 - dt.timedelta(hours=2), T0 + dt.timedelta(hours=hours))
    return found.visits, found.bounces, found.duration_ms // 60_000, found.views


def _docs(db):
    """The visit documents as they read (``ver`` only counts their writes)."""
    return sorted(({k: v for k, v in d.items() if k != "ver"}
                   for d in db[store.VISITS].find()), key=lambda d: d["_id"])


@pytest.fixture(autouse=True)
def _clock():
    RUN[0] = dt.datetime(2026, 3, 5, tzinfo=dt.UTC)


def test_a_visit_across_midnight_counts_once_on_the_day_it_began(db):
    _write(db, (50, "/a", 1), (70, "/b", 1))             # 23:50, then 00:10 next day
    assert _totals(db) == (1, 0, 20, 2)
    day = reads.series(db, "s", T0 - dt.timedelta(hours=23), T0 + dt.timedelta(days=2),
                       "day")
    assert day["visits"].tolist() == [1, 0, 0] and day["pageviews"].tolist() == [1, 1, 0]


def test_a_later_run_extending_a_visit_rewrites_the_hour_it_began_in(db):
    _write(db, *[(m, "/p", 1) for m in range(0, 300, 20)])     # 5 hours, every 20 min
    assert _totals(db) == (1, 0, 280, 15)
    _write(db, (305, "/last", 1))                          # only the sixth hour is touched
    assert _totals(db) == (1, 0, 305, 16)
    exits = reads.pages(db, "s", T0, T0 + dt.timedelta(days=1), "exit")
    assert exits["value"].tolist() == ["/last"]


def test_a_late_pageview_between_two_visits_joins_them(db):
    _write(db, (0, "/a", 1), (50, "/b", 1))               # two visits: 50 min apart
    assert _totals(db) == (2, 2, 0, 2)
    _write(db, (25, "/late", 1))                           # arrives after, out of order
    assert _totals(db) == (1, 0, 50, 3)
    entries = reads.pages(db, "s", T0, T0 + dt.timedelta(days=1), "entry")
    assert entries["value"].tolist() == ["/a"]


def test_running_again_changes_nothing(db):
    _write(db, (0, "/a", 1), (10, "/b", 2), (100, "/c", 1))
    before = _docs(db)
    for _ in range(2):
        RUN[0] += dt.timedelta(minutes=5)
        run_rollups(db, now=RUN[0])
    store.write_hours(db, "s", {})
    assert _docs(db) == before and before and all("sums" in d for d in before)


def test_bots_and_assets_are_not_pageviews(db):
    _write(db, (0, "/a", 1), (1, "/style.css", 1), (2, "/a", 2))
    _write(db, (3, "/a", 3), agent=BOT)
    assert _totals(db) == (2, 2, 0, 2)          # two bounces: the asset is not a view


def test_a_site_s_own_timeout_cuts_its_visits(db):
    register(db, "s", "admin")
    update_site(db, "s", visit_minutes=10)
    _write(db, (0, "/a", 1), (15, "/b", 1))
    assert _totals(db)[0] == 2


def test_pages_past_the_cap_count_under_other(db, monkeypatch):
    monkeypatch.setattr(store, "MAX_PAGES", 2)
    _write(db, *[(i, page, i) for i, page in enumerate(["/a", "/a", "/b", "/b", "/c", "/d"])])
    entries = reads.pages(db, "s", T0, T0 + dt.timedelta(days=1), "entry")
    assert dict(zip(entries["value"], entries["visits"], strict=True)) == \
        {"/a": 2, "/b": 2, "(other)": 2}


def test_from_a_log_only_gets_answered_2xx_or_304_are_pageviews(db, tmp_path):
    log = tmp_path / "access.log"
    stamp = "[01/Mar/2026:23:{:02d}:00 +0000]"
    lines = [f'203.0.113.1 - - {stamp.format(m)} "{method} /p{m} HTTP/1.1" {status} 5 "-" '
             f'"{AGENT}"' for m, method, status in
             [(1, "GET", 200), (2, "GET", 304), (3, "POST", 200), (4, "GET", 404),
              (5, "HEAD", 200), (6, "GET", 301)]]
    log.write_text("\n".join(lines) + "\n")
    ingest(db, log)
    run_rollups(db, now=RUN[0])
    assert _totals(db) == (1, 0, 1, 2)


def test_recent_visits_are_those_begun_in_the_window_from_the_events_alone(db):
    from queries.visits.build import recent

    _write(db, (0, "/a", 1), (20, "/b", 1), (30, "/a", 2), (5, "/a", 3), (35, "/b", 3))
    now = T0 + dt.timedelta(minutes=40)        # a visit began at 0, one at 30, one at 5
    assert recent(db, "s", now, 30) == 1
    assert recent(db, "s", now, 40) == 3
    assert recent(db, "s", now - dt.timedelta(minutes=11), 30) == 2   # before 30's visit


def test_a_store_older_than_visits_gets_the_visits_of_its_kept_events_once(db):
    from queries.stats import schema
    from queries.visits.build import CAUGHT_UP

    _write(db, (0, "/a", 1), (10, "/b", 1), (100, "/c", 2))
    before = _docs(db)
    db[store.VISITS].delete_many({})          # as a store written before visits were counted
    db[schema.CHECKPOINTS].delete_one({"_id": CAUGHT_UP})
    RUN[0] += dt.timedelta(minutes=5)
    run_rollups(db, now=RUN[0])               # touches no hour: the catch-up does them all
    assert _docs(db) == before
    db[store.VISITS].delete_many({})
    run_rollups(db, now=RUN[0] + dt.timedelta(minutes=5))
    assert _docs(db) == []                    # once only


def test_two_writers_of_one_day_leave_the_sums_of_all_its_hours(db):
    """Each writer sums the day after its own hours and sets the sums only if no one
    wrote since: the last one's sums hold every hour, however the two interleave."""
    import threading

    day = 1_700_006_400_000 - 1_700_006_400_000 % store.DAY_MS

    def writer(hour: int, page: str) -> None:
        for visits in range(1, 16):
            store.refresh_sums(db, "s", store.write_hours(db, "s", {day + hour * 3_600_000: {
                "q": [[0, visits, 0, 0, visits, visits]],
                "entry": [[0, page, visits, 0, 0]]}}))

    threads = [threading.Thread(target=writer, args=(h, f"/{h}")) for h in (3, 7)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    doc = db[store.VISITS].find_one()
    assert doc["sums"]["entry"] == [["/3", 15, 0, 0], ["/7", 15, 0, 0]]
    assert db[store.MONTHS].find_one()["sums"]["entry"] == doc["sums"]["entry"]


def test_a_day_s_sums_are_the_same_whatever_order_its_hours_were_written_in(db):
    """Sketches united in another order are another byte string (of the same estimate):
    the day sums its hours in hour order, so pieces written in any order (rollup
    workers side by side) leave the same document."""
    from queries.visits import cells
    from queries.visits.sessions import Pageview

    day = 1_700_006_400_000 - 1_700_006_400_000 % store.DAY_MS

    def hour(h: int) -> dict:
        views = [Pageview(f"visitor {h} {i}", day + h * 3_600_000 + i, "/p", views=0,
                          event=("signup", (), None)) for i in range(30)]
        return store.hour_parts({}, {}, [day + h * 3_600_000], cells.tally(views))

    for site, hours in (("up", (2, 5, 9)), ("down", (9, 5, 2))):
        for h in hours:
            store.write_hours(db, site, hour(h))
        store.refresh_sums(db, site, [day])
    up, down = (db[store.VISITS].find_one({"site": site}) for site in ("up", "down"))
    assert up["sums"]["ev"] == down["sums"]["ev"]
    assert up["sums"]["ev"][0][3] == 90


def test_pages_over_whole_months_days_and_cut_hours_sum_as_their_quarters(embedded_db):
    """Entry pages of a range read month sums, day sums and the quarters of the hours it
    cuts: the same figures as summing every quarter of the range."""
    views = [(m + k, f"/{(m + k) % 5}", k) for m in range(0, 70 * 24 * 60, 1999)
             for k in range(3)]                                     # 70 days: all of April
    _write(embedded_db, *views)
    for lo, hi in ((T0 + dt.timedelta(hours=5, minutes=30), T0 + dt.timedelta(days=65)),
                   (T0, T0 + dt.timedelta(days=70)),
                   (T0 + dt.timedelta(days=4), T0 + dt.timedelta(days=4, hours=6))):
        for kind in ("entry", "exit"):
            found = reads.pages(embedded_db, "s", lo, hi, kind).set_index("value")["visits"]
            rows = reads.page_rows(embedded_db, "s", lo, hi, kind)
            quarters = rows.groupby("page")["visits"].sum()
            assert found.sort_index().to_dict() == quarters.sort_index().to_dict(), (lo, hi)
            assert found.sum() > 0
    assert embedded_db[store.MONTHS].count_documents({}) == 3       # March to May


def _entries_and_exits(db) -> tuple[list[str], list[str]]:
    span = (T0 - dt.timedelta(hours=1), T0 + dt.timedelta(days=1))
    return tuple(reads.pages(db, "s", *span, kind)["value"].tolist()
                 for kind in ("entry", "exit"))


def test_requests_of_one_second_in_a_log_keep_the_log_s_order(db, tmp_path):
    """A page and the pages it asks for in the same second (a directory listing and its
    icons): the visit enters where the log says it did, not at the first name."""
    log = tmp_path / "access.log"
    lines = [f'203.0.113.1 - - [01/Mar/2026:23:{m:02d}:{s:02d} +0000] "GET {page} HTTP/1.1" '
             f'200 5 "-" "{AGENT}"'
             for m, s, page in [(0, 0, "/images/"), (0, 0, "/icons/blank"),
                                (0, 0, "/icons/folder"), (5, 7, "/zeta"), (5, 7, "/alpha")]]
    log.write_text("\n".join(lines) + "\n")
    ingest(db, log)
    run_rollups(db, now=RUN[0])
    assert _entries_and_exits(db) == (["/images/"], ["/alpha"])


def test_events_a_writer_records_in_one_instant_keep_their_order(db):
    """The beacon's and the load generator's events (no log): the order written."""
    _write(db, (0, "/z", 1), (0, "/a", 1), (0, "/m", 1))
    assert _entries_and_exits(db) == (["/z"], ["/m"])


def test_buckets_of_the_beacon_s_journal_keep_the_order_they_were_written_in(db):
    """The journal names a batch's buckets ``<writer>.<gen>.<seq>.e<i>`` in hexadecimal,
    which do not sort as numbers (``...10.e0`` before ``...f.e0``): buckets not from a
    log are ordered by when they were written."""
    from queries.events import buckets
    from queries.stats import schema

    docs = []
    for seq, page, written in ((0xF, "/first", RUN[0]), (0x10, "/second", RUN[0] + MS)):
        (doc,) = buckets.pack([buckets.row({
            "time": T0, "site": "s", "host": "203.0.113.1", "method": "GET", "path": page,
            "query": "", "status": 200, "bytes": 1, "referrer": "-", "user_agent": AGENT})],
            written)
        docs.append({**doc, "_id": f"w1.0.{seq:x}.e0"})
    db[schema.EVENTS].insert_many(docs)
    run_rollups(db, now=RUN[0] + dt.timedelta(minutes=5))
    assert _entries_and_exits(db) == (["/first"], ["/second"])
