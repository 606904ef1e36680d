"""The dimensions' acceptance checks on the shared log, against counts made independently
(a plain regex over the raw lines, as awk would), not through hitboard's parser."""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from pathlib import Path

import pytest

import queries
from queries.dimensions import agents, reads
from queries.ingest import run as ingest

LOG = Path(__file__).resolve().parents[2] / "shared" / "data" / "apache_combined_2015.log"
SITE = "www.semicomplete.com"
START = dt.datetime(2015, 5, 17, tzinfo=dt.UTC)
END = dt.datetime(2015, 5, 21, tzinfo=dt.UTC)
LINE = re.compile(r'^(\S+) \S+ \S+ \[(\d\d)/May/2015:(\d\d):[^\]]*\] "[^"]*" (\d{3}) \S+ '
                  r'"([^"]*)" "([^"\n]*)"?')  # one line lacks the closing quote
HOST = re.compile(r"^https?://([^/:?#]+)", re.IGNORECASE)
BOTWORD = re.compile(r"bot|crawler|spider", re.IGNORECASE)

pytestmark = pytest.mark.skipif(not LOG.exists(), reason=f"{LOG} is not there")


@pytest.fixture(scope="module")
def lines():
    out = []
    with open(LOG, encoding="utf-8", errors="replace") as handle:
        for raw in handle:
            match = LINE.match(raw)
            assert match, raw
            address, day, hour, status, referrer, agent = match.groups()
            out.append((address, day, status, referrer, agent, int(day) * 24 + int(hour)))
    return out


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    database = queries.connect(str(tmp_path_factory.mktemp("store")))
    queries.ensure_indexes(database)
    ingestor = ingest.Ingestor(database, site=SITE, events=True)
    ingest.ingest_file(ingestor, LOG, SITE)
    assert ingestor.summary.parsed == 10_000
    yield database
    database.client.close()


def _referrer(url: str) -> str:
    if url in ("", "-"):
        return "(direct)"
    host = HOST.match(url).group(1).lower()
    return "(internal)" if host.removeprefix("www.") == "semicomplete.com" else host


def test_status_counts_equal_an_independent_count(db, lines):
    expected = Counter(status for _, _, status, _, _, _ in lines)
    frame = reads.breakdown(db, SITE, "status", START, END)
    assert dict(zip(frame["value"], frame["hits"], strict=True)) == expected


def test_top_ten_referrers_equal_an_independent_count(db, lines):
    counts = Counter(_referrer(ref) for _, _, _, ref, _, _ in lines)
    expected = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:10]
    frame = reads.breakdown(db, SITE, "referrer", START, END, n=10)
    assert list(zip(frame["value"], frame["hits"], strict=True)) == expected


def test_visitors_per_day_and_overall_within_two_percent(db, lines):
    by_day: dict[int, set] = {}
    for address, day, _, _, agent, _ in lines:
        by_day.setdefault(int(day), set()).add((address, agent))
    for day, pairs in by_day.items():
        start = dt.datetime(2015, 5, day, tzinfo=dt.UTC)
        got = reads.visitors(db, SITE, start, start + dt.timedelta(days=1)).n
        assert abs(got - len(pairs)) <= 0.02 * len(pairs), (day, got, len(pairs))
    exact = len(set().union(*by_day.values()))
    got = reads.visitors(db, SITE, START, END).n
    assert abs(got - exact) <= 0.02 * exact, (got, exact)
    assert got < sum(len(p) for p in by_day.values())      # a union, not a sum
    series = reads.visitors_series(db, SITE, START, END, "day")
    assert list(series["visitors"]) == [
        reads.visitors(db, SITE, START + dt.timedelta(days=i), START + dt.timedelta(days=i + 1)).n
        for i in range(4)]


def test_visitors_in_another_zone_read_hours(db, lines):
    """A Paris day is 22:00 to 22:00 UTC: its visitors come from hourly sketches."""
    first, last = 17 * 24 + 22, 18 * 24 + 22
    exact = len({(a, ua) for a, _, _, _, ua, hour in lines if first <= hour < last})
    start = dt.datetime(2015, 5, 18, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    got = reads.visitors(db, SITE, start, start + dt.timedelta(days=1)).n
    assert abs(got - exact) <= 0.02 * exact, (got, exact)
    counted = reads.breakdown(db, SITE, "bot", start, start + dt.timedelta(days=1))
    assert int(counted["hits"].sum()) == sum(first <= h < last for *_, h in lines)


def test_lines_that_say_bot_are_bots(db, lines):
    said = [agent for _, _, _, _, agent, _ in lines if BOTWORD.search(agent)]
    assert len(said) > 1000
    caught = sum(agents.parse(agent).bot for agent in said)
    assert caught >= 0.95 * len(said)
    bots = reads.breakdown(db, SITE, "bot", START, END)
    stored = dict(zip(bots["value"], bots["hits"], strict=True))
    assert stored["bot"] >= caught
    assert stored["bot"] + stored["human"] == len(lines)
    assert reads.bot_share(db, SITE, START, END) == pytest.approx(stored["bot"] / len(lines))


def test_filtered_series_and_404_list(db, lines):
    per_day = Counter(int(day) for _, day, status, _, _, _ in lines if status == "404")
    series = reads.filtered_series(db, SITE, "status", "404", START, END, "day")
    assert list(series["hits"]) == [per_day[d] for d in (17, 18, 19, 20)]
    hourly = reads.filtered_series(db, SITE, "status", "404", START, END, "hour")
    assert int(hourly["hits"].sum()) == sum(per_day.values())
    top = reads.top_not_found(db, SITE, START, END, n=3)
    assert top["hits"].is_monotonic_decreasing and len(top) == 3


def _favicon_statuses() -> Counter:
    with open(LOG, encoding="utf-8", errors="replace") as handle:
        requests = [re.search(r'"[A-Z]+ ([^ ?"]+)[^"]* HTTP/[\d.]+" (\d{3})', raw)
                    for raw in handle]
    page = "/favicon.ico"
    expected = Counter(m.group(2) for m in requests if m and m.group(1) == page)
    assert sum(expected.values()) > 100
    return expected


def test_page_breakdown_equals_an_independent_count(db):
    expected = _favicon_statuses()
    frame = reads.breakdown(db, SITE, "status", START, END, page="/favicon.ico")
    assert dict(zip(frame["value"], frame["hits"], strict=True)) == expected
    assert "raw events" in frame.attrs["note"]


def test_pages_as_a_dimension_count_every_hit_and_leave_bots_out_by_request(db, lines):
    """The pages panel's source: hits per page equal an independent count, everyone and
    humans alone (bots by the counters' own split), with visitors per page."""
    with open(LOG, encoding="utf-8", errors="replace") as handle:
        paths = [re.search(r'"[A-Z]+ ([^ ?"]+)', raw) for raw in handle]
    assert all(paths)
    expected = Counter(m.group(1) for m in paths)
    ranked = sorted(expected.items(), key=lambda kv: (-kv[1], kv[0]))[:10]
    everyone = reads.breakdown(db, SITE, "page", START, END, n=10)
    assert list(zip(everyone["value"], everyone["hits"], strict=True)) == ranked
    assert (everyone["visitors"] > 0).all()
    humans = reads.breakdown(db, SITE, "page", START, END, humans=True)
    bots = reads.breakdown(db, SITE, "bot", START, END)
    assert int(humans["hits"].sum()) == int(bots.loc[bots["value"] == "human", "hits"].sum())
    robots = dict(zip(humans["value"], humans["hits"], strict=True)).get("/robots.txt", 0)
    assert robots < expected["/robots.txt"]          # crawlers ask for it most


def test_a_log_without_referrers_says_so_rather_than_direct(tmp_path):
    """The common-format form of the log has no referrer field, so its
    hits' referrers are unknown ("(not in the log)"), in the counters and in the raw
    events alike; a combined line's "-" is still "(direct)"."""
    head = LOG.read_text(encoding="utf-8").splitlines()[:400]
    common = [re.sub(r'^(.*" [0-9-]+ [0-9-]+) ".*$', r"\1", line) for line in head[:300]]
    (tmp_path / "mixed.log").write_text("\n".join(common + head[300:]) + "\n")
    database = queries.connect(str(tmp_path / "store"))
    queries.ensure_indexes(database)
    ingestor = ingest.Ingestor(database, site=SITE, events=True)
    ingest.ingest_file(ingestor, tmp_path / "mixed.log", SITE)
    dashes = sum(1 for line in head[300:] if LINE.match(line).group(5) in ("", "-"))
    counted = reads.breakdown(database, SITE, "referrer", START, END)
    found = dict(zip(counted["value"], counted["hits"], strict=True))
    assert found["(not in the log)"] == 300 and found["(direct)"] == dashes
    page = LINE.match(head[0]).group(0).split('"')[1].split()[1]
    from_events = reads.breakdown(database, SITE, "referrer", START, END, page=page)
    assert "(not in the log)" in set(from_events["value"])
    database.client.close()
