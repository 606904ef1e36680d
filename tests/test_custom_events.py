"""Custom events and goals counted by the rollup run (``queries.custom``), on every
backend: per name, page and property value with visitors and revenue; interactions that
un-bounce a visit; caps; goals over past data; a run repeated; expiry."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest
import re2
from logkit import AGENT, ingest, write_log

from queries.custom import reads
from queries.custom.payload import CustomEventError, custom_event
from queries.events import custom as raw
from queries.rollups.build import run_rollups
from queries.stats import goals, schema
from queries.stats.goals import Goal, GoalError, goal, matches
from queries.stats.sites import add_goal, register, remove_goal, site_settings
from queries.visits import cells, store
from queries.visits import reads as visit_reads
from queries.visits.build import CAUGHT_UP

T0 = dt.datetime(2026, 3, 1, 10, 0, tzinfo=dt.UTC)

BOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
RUN = [dt.datetime(2026, 3, 5, tzinfo=dt.UTC)]
DAY = (T0 - dt.timedelta(hours=10), T0 + dt.timedelta(hours=14))


LOGS: list = [None]


@pytest.fixture(autouse=True)
def _clock(tmp_path):
    RUN[0] = dt.datetime(2026, 3, 5, tzinfo=dt.UTC)
    LOGS[0] = tmp_path


def _write(db, views=(), events=(), agent=AGENT):
    """Pageviews ``(minutes after T0, page, visitor)`` as a log ``hitboard ingest``
    reads (raw events, visitor sketches...) and custom events ``(minutes, page, visitor,
    name, props, revenue)`` as the beacon keeps them, then a rollup run."""
    if views:
        ingest(db, write_log(LOGS[0] / f"access{RUN[0]:%H%M}.log", T0,
                             [(visitor, m, page, agent) for m, page, visitor in views]))
    custom = raw.writer(db, clock=lambda: RUN[0])
    for minutes, page, visitor, name, props, revenue in events:
        custom.add(raw.document(T0 + dt.timedelta(minutes=minutes), "s", page,
                                custom_event(name, props, revenue), f"203.0.113.{visitor}",
                                agent))
    custom.flush()
    RUN[0] += dt.timedelta(minutes=5)
    run_rollups(db, now=RUN[0])


def _visits(db):
    found = visit_reads.totals(db, "s", *DAY)
    return found.visits, found.bounces, found.duration_ms // 60_000, found.views


def test_a_custom_event_un_bounces_its_visit_and_lasts_it_without_a_pageview(db):
    _write(db, views=[(0, "/a", 1), (0, "/a", 2)],
           events=[(5, "/a", 1, "Signup", {}, None)])
    assert _visits(db) == (2, 1, 5, 2)          # visitor 1: no bounce, 5 minutes


def test_events_are_counted_per_name_page_and_prop_with_visitors_and_revenue(db):
    eur = {"currency": "EUR", "amount": "49.00"}
    _write(db, views=[(0, "/pricing", v) for v in (1, 2, 3)],
           events=[(1, "/pricing", 1, "Signup", {"plan": "pro"}, eur),
                   (2, "/pricing", 1, "Signup", {"plan": "pro"}, eur),
                   (3, "/pricing", 2, "Signup", {"plan": "free"}, None),
                   (4, "/docs", 3, "Download", {}, {"currency": "USD", "amount": 1.5})])
    found = reads.cells_over(db, "s", *DAY)
    signup = found[("Signup", cells.TOTAL, "")]
    assert (signup.events, signup.visitors, signup.revenue) == (3, 2, {"EUR": Decimal("98.00")})
    assert found[("Signup", cells.PAGE, "/pricing")].events == 3
    assert found[("Signup", "p:plan", "pro")].visitors == 1
    table = reads.events(db, "s", *DAY)
    assert table.to_dict("records") == [
        {"value": "Signup", "conversions": 3, "visitors": 2, "conversion_rate": 66.7,
         "revenue": "EUR 98.00", "visitors_error": 0},
        {"value": "Download", "conversions": 1, "visitors": 1, "conversion_rate": 33.3,
         "revenue": "USD 1.5", "visitors_error": 0}]
    plans = reads.props(db, "s", *DAY, "plan")
    assert plans[["value", "conversions", "visitors"]].values.tolist() == [
        ["pro", 2, 1], ["free", 1, 1]]


def test_a_bot_s_events_are_not_counted(db):
    _write(db, events=[(1, "/a", 1, "Signup", {}, None)], agent=BOT)
    assert reads.events(db, "s", *DAY).empty


def test_a_rollup_run_repeated_counts_each_event_once(db):
    _write(db, views=[(0, "/a", 1)], events=[(1, "/a", 1, "Signup", {}, None)])
    _write(db, events=[(25, "/a", 1, "Signup", {}, None)])     # a later run, same visit
    RUN[0] += dt.timedelta(minutes=5)
    run_rollups(db, now=RUN[0])
    assert reads.events(db, "s", *DAY)["conversions"].tolist() == [2]
    assert _visits(db) == (1, 0, 25, 1)


def test_ranges_in_a_half_hour_zone_count_the_quarters_inside(db):
    _write(db, views=[(0, "/a", 1)], events=[(10, "/a", 1, "Early", {}, None),
                                             (40, "/a", 1, "Late", {}, None)])
    half = T0 + dt.timedelta(minutes=30)                      # 16:00 in Asia/Kolkata
    assert reads.events(db, "s", half, DAY[1])["value"].tolist() == ["Late"]
    assert reads.events(db, "s", DAY[0], half)["value"].tolist() == ["Early"]


def test_names_and_values_past_the_caps_are_counted_under_other(db, monkeypatch):
    monkeypatch.setattr(cells, "MAX_NAMES", 2)
    monkeypatch.setattr(cells, "MAX_VALUES", 1)
    _write(db, views=[(0, "/a", 1)],
           events=[(1, "/a", 1, "A", {"k": "x"}, None), (2, "/a", 1, "A", {"k": "x"}, None),
                   (3, "/a", 1, "A", {"k": "y"}, None), (4, "/a", 1, "B", {}, None),
                   (4, "/a", 1, "B", {}, None), (5, "/a", 1, "C", {}, None)])
    counts = dict(reads.events(db, "s", *DAY)[["value", "conversions"]].values.tolist())
    assert counts == {"A": 3, "B": 2, "(other)": 1}
    values = dict(reads.props(db, "s", *DAY, "k")[["value", "conversions"]].values.tolist())
    assert values == {"x": 2, "(other)": 1}


def test_goals_count_events_and_pages_already_stored(db):
    register(db, "s", "admin")
    _write(db, views=[(0, "/blog/a", 1), (1, "/blog/b", 1), (2, "/blog/b/c", 2),
                      (3, "/checkout/x/y", 2), (4, "/", 3)],
           events=[(5, "/", 3, "Signup", {}, {"currency": "EUR", "amount": "10"})])
    for kind, value in (("event", "Signup"), ("page", "/blog/*"), ("page", "/checkout/**")):
        assert add_goal(db, "s", goal(kind, value))
    assert not add_goal(db, "s", goal("event", "Signup"))
    wanted = site_settings(db, "s").goals
    table = reads.goals(db, "s", *DAY, wanted, now=RUN[0])
    assert table.to_dict("records") == [
        {"value": "Signup", "conversions": 1, "visitors": 1, "conversion_rate": 33.3,
         "revenue": "EUR 10", "visitors_error": 0},
        {"value": "Visit /blog/*", "conversions": 2, "visitors": 1, "conversion_rate": 33.3,
         "revenue": "", "visitors_error": 0},
        {"value": "Visit /checkout/**", "conversions": 1, "visitors": 1,
         "conversion_rate": 33.3, "revenue": "", "visitors_error": 0}]
    assert remove_goal(db, "s", Goal("page", "/blog/*"))
    assert not remove_goal(db, "s", Goal("page", "/blog/*"))
    assert [g.value for g in site_settings(db, "s").goals] == ["Signup", "/checkout/**"]


def _log(db, lines):
    """Raw log ``lines`` ``(visitor, minutes after T0, method, path, status[, agent])``,
    ingested, then a rollup run."""
    path = LOGS[0] / f"raw{RUN[0]:%H%M}.log"
    path.write_text("".join(
        f'203.0.113.{who} - - [{T0 + dt.timedelta(minutes=m):%d/%b/%Y:%H:%M:%S} +0000] '
        f'"{method} {page} HTTP/1.1" {status} 5 "-" "{agent[0] if agent else AGENT}"\n'
        for who, m, method, page, status, *agent in lines))
    ingest(db, path)
    _write(db)


def _goal_rows(db, start, end, *wanted):
    register(db, "s", "admin")
    for kind, value in wanted:
        add_goal(db, "s", goal(kind, value))
    table = reads.goals(db, "s", start, end, site_settings(db, "s").goals, now=RUN[0])
    return {row["value"]: (row["visitors"], row["conversions"], row["conversion_rate"])
            for row in table.to_dict("records")}


def test_a_page_goal_converts_on_pageviews_not_on_any_hit_under_it(db):
    """API calls (a POST, an OPTIONS), a script, a 404 and a bot under ``/thermo/`` are
    hits of the range's people, not pageviews: they convert nobody."""
    _log(db, [(1, 0, "GET", "/thermo/", 200), (1, 1, "GET", "/thermo/", 200),
              (1, 2, "GET", "/thermo/", 200), (2, 3, "GET", "/thermo/room", 304),
              (3, 4, "POST", "/thermo/api", 200), (4, 5, "OPTIONS", "/thermo/api", 204),
              (5, 6, "GET", "/thermo/app.js", 200), (6, 7, "GET", "/thermo/gone", 404),
              (7, 8, "GET", "/thermo/", 200, BOT), (3, 9, "GET", "/", 200)])
    assert _goal_rows(db, *DAY, ("page", "/thermo/**")) == {
        "Visit /thermo/**": (2, 4, 33.3)}            # of 6 people: 1 to 6


@pytest.mark.parametrize("tz", ["Asia/Kolkata", "America/St_Johns"])
def test_goals_over_an_hour_of_a_half_hour_zone_count_its_quarters(db, tz):
    """16:00-17:00 in Kolkata (+05:30), 07:00-08:00 in St John's (-03:30): 10:30-11:30
    UTC, cutting two UTC hours in half. Conversions, visitors and rate are all of it."""
    _write(db, views=[(10, "/shop/a", 1), (40, "/shop/a", 2), (50, "/shop/b", 2),
                      (70, "/shop/b", 3), (95, "/shop/a", 4)],
           events=[(45, "/shop/a", 2, "Signup", {}, None),
                   (100, "/shop/a", 4, "Signup", {}, None)])
    zone = ZoneInfo(tz)
    start = (T0 + dt.timedelta(minutes=30)).astimezone(zone)
    assert start.minute == 0
    rows = _goal_rows(db, start, start + dt.timedelta(hours=1), ("page", "/shop/*"),
                      ("event", "Signup"))
    assert rows == {"Visit /shop/*": (2, 3, 100.0), "Signup": (1, 1, 50.0)}


def test_an_hour_s_page_goal_counts_the_pages_its_pageviews_rows_keep(db, monkeypatch):
    """Past ``MAX_PAGES`` pages an hour, those with the fewest pageviews count under
    ``(other)`` for page goals as for the pages panels: a goal's conversions never
    exceed the pageviews of the pages it matches."""
    monkeypatch.setattr(store, "MAX_PAGES", 1)
    _write(db, views=[(0, "/a", 1), (1, "/a", 2), (2, "/b", 3), (65, "/b", 3)])
    rows = _goal_rows(db, *DAY, ("page", "/a"), ("page", "/b"), ("page", "/**"))
    views = visit_reads.page_sums(db, "s", *DAY, "views")["pageviews"].to_dict()
    assert views == {"/a": 2, "/b": 1, "(other)": 1}
    assert {goal: n for goal, (_, n, _) in rows.items()} == {
        "Visit /a": 2, "Visit /b": 1, "Visit /**": 3}


def test_a_store_counted_before_pageview_cells_counts_its_page_goals_after_a_run(db):
    """Its next run cuts the visits of every kept event's hours again."""
    _write(db, views=[(0, "/blog/a", 1), (5, "/blog/b", 2)])
    db[store.VISITS].update_many({}, {"$unset": {"ev": "", "sums.ev": ""}})
    db[store.MONTHS].update_many({}, {"$unset": {"sums.ev": ""}})
    db[schema.CHECKPOINTS].delete_one({"_id": CAUGHT_UP})
    assert _goal_rows(db, *DAY, ("page", "/blog/*"))["Visit /blog/*"][:2] == (0, 0)
    _write(db)
    assert _goal_rows(db, *DAY)["Visit /blog/*"][:2] == (2, 2)


def test_custom_events_expire_with_the_events_and_their_counts_stay(db):
    _write(db, views=[(0, "/a", 1)], events=[(1, "/a", 1, "Signup", {}, None)])
    run_rollups(db, now=RUN[0] + dt.timedelta(days=40), retention=30)
    assert db[raw.COLLECTION].count_documents({}) == 0
    assert reads.events(db, "s", *DAY)["conversions"].tolist() == [1]


@pytest.mark.parametrize("name, props, revenue, message", [
    ("", None, None, "non-empty"),
    (5, None, None, "non-empty string"),
    ("x" * 121, None, None, "at most 120"),
    ("Sign\ud800up", None, None, "not valid Unicode"),
    ("Signup", ["plan"], None, "object of strings"),
    ("Signup", {f"k{i}": "v" for i in range(31)}, None, "at most 30"),
    ("Signup", {"plan": {"$gt": ""}}, None, "must be a string"),
    ("Signup", {"plan": "\x00"}, None, "control character"),
    ("Signup", {"": "x"}, None, "must not be empty"),
    ("Signup", None, {"currency": "eur", "amount": "1"}, "ISO 4217"),
    ("Signup", None, {"currency": "EUR", "amount": "1e9"}, "decimal number"),
    ("Signup", None, {"currency": "EUR", "amount": "NaN"}, "decimal number"),
    ("Signup", None, {"currency": "EUR"}, "revenue must be"),
])
def test_a_malformed_custom_event_is_refused_with_its_reason(name, props, revenue, message):
    with pytest.raises(CustomEventError, match=message):
        custom_event(name, props, revenue)


@pytest.mark.parametrize("kind, value, message", [
    ("event", "", "non-empty"), ("page", "blog/*", "starts with '/'"),
    ("visit", "/a", "event or a page"), ("page", "/a\n", "control character"),
    ("page", "/**/**/**/**/x", r"at most 3 '\*\*' \(this one has 4\)"),
    ("page", "/a/****/****", r"at most 3 '\*\*' \(this one has 4\)"),
])
def test_a_malformed_goal_is_refused(kind, value, message):
    with pytest.raises(GoalError, match=message):
        goal(kind, value)


@pytest.mark.parametrize("pattern, page, expected", [
    ("/blog/*", "/blog/a", True), ("/blog/*", "/blog/a/b", False),
    ("/checkout/**", "/checkout/a/b", True), ("/a.b", "/axb", False),
    ("/a", "/a", True), ("/a", "/ab", False), ("/*/x", "/y/x", True),
])
def test_page_patterns(pattern, page, expected):
    assert matches(pattern, page) is expected


def backtracking(pattern: str, page: str) -> bool:
    """The matcher before RE2 (Python's ``re``: exponential on some pages)."""
    regex = "".join(".*" if part == "**" else "[^/]*" if part == "*" else re.escape(part)
                    for part in re.split(r"(\*\*|\*)", pattern))
    return re.fullmatch(regex, page, re.DOTALL) is not None


PATTERNS = ["/", "/*", "/**", "/blog/*", "/blog/**", "/*/x", "/**/x", "/a*b", "/a**b",
            "/*.html", "/**.html", "/***", "/a/***/b", "/**/**/**", "/x*/**/y*",
            "/a.b", "/a+b?", "/(x)|[y]", "/a\\b", "/$^{2}", "/ü/*/é", "/a b/*",
            "/%2F*", "/*/*/*", "/a*a", "/a**a", "/a*/*a", "/checkout/**", "/*a*a*b"]
PAGES = ["/", "/a", "/ab", "/a/b", "/a/x/b", "/axb", "/a.b", "/a+b?", "/(x)|[y]",
         "/a\\b", "/$^{2}", "/blog", "/blog/", "/blog/a", "/blog/a/b", "/x", "/y/x",
         "/y/z/x", "/index.html", "/d/index.html", "/ü/ß/é", "/ü/ß/t/é", "/a b/c",
         "/%2Fz", "/a\nb", "/x1/y1", "/x1/q/y1/z", "//", "///", "/ab/b", "/aa", "/a/a",
         "/aba/a", "/checkout", "/checkout/", "/checkout/a/b", "/xaab", "/aab/b"]


def test_the_linear_matcher_answers_as_the_backtracking_one_did():
    for pattern in PATTERNS:
        for page in PAGES:
            assert matches(pattern, page) is backtracking(pattern, page), (pattern, page)


def test_page_patterns_run_on_re2_whatever_their_stars():
    assert isinstance(goals._pattern("/**/**/**/**/**/x"), re2._Regexp)   # an older store's
    assert matches("/**/**/**/**/**/x", "/" * 2046 + "a") is False
    assert matches("/**/**/**/**/**/x", "/" * 2046 + "x") is True
    assert matches("/**/**/**/**/**/x", "/a" * 1023 + "/x") is True
    assert matches("/**/**/**/**/**/x", "/a/b/c/x") is False


def test_an_engagement_lasts_a_one_page_visit_which_stays_a_bounce(db):
    _write(db, views=[(0, "/post", 1)])
    writer = raw.writer(db, clock=lambda: RUN[0])
    writer.add(raw.engagement_document(T0 + dt.timedelta(minutes=4), "s", "/post", 150_000,
                                       "203.0.113.1", AGENT))
    writer.flush()
    RUN[0] += dt.timedelta(minutes=5)
    run_rollups(db, now=RUN[0])
    found = visit_reads.totals(db, "s", *DAY)
    assert (found.visits, found.bounces, found.duration_ms) == (1, 1, 150_000)
    assert reads.events(db, "s", *DAY).empty                # no custom event


def test_page_goals_of_backfilled_history_convert_on_its_pageviews(db):
    """The load generator's past days (written without events): a page goal's
    conversions are the pageviews of its pages in any quarter; its visitors at most
    those, and over whole hours at most the range's people (whose sketches are kept
    per hour)."""
    from queries.counting.recorders import DimensionRecorder
    from queries.loadgen import TrafficModel, backfill_history

    now = dt.datetime(2026, 11, 21, 13, 45, tzinfo=dt.UTC)
    model = TrafficModel(sites=1, pages=8, seed=3)
    with DimensionRecorder(db) as dimensions:
        backfill_history(db, model, 0.05, 1, now=now, dimensions=dimensions)
    site = model.site_names[0]
    start = dt.datetime(2026, 11, 20, 10, 30, tzinfo=dt.UTC)     # 16:00 in Kolkata
    for first, hours in ((start, 1), (start - dt.timedelta(minutes=30), 13)):
        end = first + dt.timedelta(hours=hours)
        table = reads.goals(db, site, first, end, [Goal("page", "/**"),
                                                   Goal("page", "/blog/*")], now=now)
        views = visit_reads.page_sums(db, site, first, end, "views")["pageviews"]
        every, blog = table.to_dict("records")
        assert every["conversions"] == views.sum() > 0
        assert blog["conversions"] == sum(n for page, n in views.items()
                                          if matches("/blog/*", page)) > 0
        assert 0 < blog["visitors"] <= every["visitors"] <= every["conversions"]
        assert first.minute or every["visitors"] <= 1.03 * reads.people(db, site, first,
                                                                        end, now)
