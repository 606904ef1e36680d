"""Fuzzing the CLI's reads (report, top, breakdown, visitors, goals list, annotations,
site list) with seeded random ranges, zones (+05:30, -02:30, +05:45, +14:00), offsets,
dimensions, filters, pages and granularities, on one store that the demo's backfill and
logs fed together: a site backfilled by the load generator (counters and sketches, no raw
events) beside the same log kept apart, a log's site with hours and a day without hits,
and a live hour whose counters are ahead of its raw events (a hit counted, its event not
yet written). A read answers rows or a one-line error (exit 2), never a traceback, and
never prints a missing value as text (``nan``, ``<NA>``).

``HITBOARD_FUZZ_SEEDS=N`` runs N seeds (default 40); a seed that found a bug is kept in
``FOUND``, run every time."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import os
import random
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
import time_machine
from clikit import run
from clockkit import TEST_NOW

import queries
from dashboard.cli.dimensions import BY
from queries.custom.payload import custom_event
from queries.events import custom as raw
from queries.rollups.build import run_rollups

NOW = TEST_NOW.replace(second=0, microsecond=0)
DAY = NOW.replace(hour=0, minute=0) - dt.timedelta(days=2)
DEMO, LOG = "shop.example", "demo"
SITES = (DEMO, LOG, "nowhere")
ZONES = ("UTC", "Asia/Kolkata", "America/St_Johns", "Asia/Kathmandu", "Pacific/Kiritimati",
         "America/New_York", "Europe/Paris")
OFFSETS = ("+05:30", "-02:30", "+00:00", "-04:00")
PAGES = ("/", "/a", "/blog/x", "/blog/y/z", "/b.css", "/thermo/q", "/missing",
         "/?utm_source=news&utm_medium=mail&utm_campaign=spring")
AGENTS = ("Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0",
          "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
          "(KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
          "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
          "curl/8.5.0", "-")
REFERRERS = ("-", "https://news.example/a", "https://www.google.com/", "not a url")
FILTERS = ("referrer:news.example", "referrer:(direct)", "status:404", "status:200",
           "page:/a", "browser:Firefox", "device:mobile", "bot:bot", "country:unknown",
           "utm_source:news", "kind:page", "nope:x", "status:")
GRANULARITIES = ("minute", "hour", "day", "week", "month", "year")
METRICS = ("hits", "visitors", "visits", "pageviews", "bounce_rate", "visit_duration",
           "views_per_visit")
LENGTHS = (dt.timedelta(minutes=1), dt.timedelta(minutes=15), dt.timedelta(hours=1),
           dt.timedelta(minutes=90), dt.timedelta(days=1), dt.timedelta(days=3),
           dt.timedelta(days=40))
MISSING = {"nan", "NaN", "<NA>", "NaT", "None", "null"}
SEEDS = range(int(os.environ.get("HITBOARD_FUZZ_SEEDS", "40")))
FOUND = {      # seed: what it found (in 1,500 seeds), fixed
    529: "breakdown --by page reaching the live hour: a page counted and not yet in the raw "
         "events has <NA> visitors, whose truth the CSV writer tested (TypeError)",
    66: "breakdown --by notfound: the only 404 path, holding every hit of the dimension, "
        "had the site's visitors (16 hits, 71 visitors; 26 seeds of 1,500)",
}


def _log_lines(rng: random.Random) -> list[str]:
    """Combined-format lines from DAY to NOW: every 7th hour and its next empty, the
    last day's morning empty too, a burst in the live hour."""
    minutes = [m for m in range(int((NOW - DAY) / dt.timedelta(minutes=1)))
               if (m // 60) % 7 not in (2, 3) and not 48 * 60 <= m < 54 * 60
               and rng.random() < 0.12]
    minutes += range(int((NOW - DAY) / dt.timedelta(minutes=1)) - 25, int(
        (NOW - DAY) / dt.timedelta(minutes=1)) - 1)
    lines = []
    for m in sorted(minutes):
        at = DAY + dt.timedelta(minutes=m, seconds=rng.randrange(60))
        page = rng.choice(PAGES)
        status = 404 if page == "/missing" else rng.choice((200, 200, 200, 304, 500))
        method = rng.choice(("GET", "GET", "GET", "POST"))
        lines.append(f'198.51.100.{rng.randrange(1, 40)} - - [{at:%d/%b/%Y:%H:%M:%S} +0000] '
                     f'"{method} {page} HTTP/1.1" {status} {rng.randrange(1, 9999)} '
                     f'"{rng.choice(REFERRERS)}" "{rng.choice(AGENTS)}"')
    return lines


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> str:
    """The demo's backfill and logs in one store (see the module doc)."""
    tmp = tmp_path_factory.mktemp("cli-fuzz")
    path = str(tmp / "store")
    with time_machine.travel(TEST_NOW, tick=False):
        _fed(path, tmp)
    return path


def _fed(path: str, tmp: Path) -> None:
    def ok(*args):
        result = run(path, *args)
        assert result.exit_code == 0, result.output

    ok("loadgen", "--backfill-days", "2", "--duration", "0", "--sites", "1", "--pages", "6",
       "--rate", "1", "--seed", "7")
    text = "\n".join(_log_lines(random.Random(45))) + "\n"
    for site, name in ((LOG, "log.log"), (DEMO, "apart.log")):
        (tmp / name).write_text(text)
        ok("ingest", str(tmp / name), "--site", site, "--jobs", "1")
    late = tmp / "late.log"
    late.write_text(f'198.51.100.99 - - [{NOW - dt.timedelta(minutes=1):%d/%b/%Y:%H:%M:%S} '
                    f'+0000] "GET /late HTTP/1.1" 200 5 "-" "{AGENTS[0]}"\n')
    ok("ingest", str(late), "--site", LOG, "--no-events", "--jobs", "1")
    for site, goal in ((LOG, ("--page", "/blog/**")), (LOG, ("--event", "Signup")),
                       (DEMO, ("--page", "/products/*"))):
        ok("goals", "add", site, *goal)
    ok("annotate", "--site", LOG, "--at", (NOW - dt.timedelta(hours=5)).isoformat(),
       "--text", "deployed")
    db = queries.connect(path)
    try:
        writer = raw.writer(db)
        for minutes in (30, 600, 1500):
            writer.add(raw.document(NOW - dt.timedelta(minutes=minutes), LOG, "/a",
                                    custom_event("Signup", {"plan": "pro"},
                                                 {"currency": "EUR", "amount": "9.50"}),
                                    "198.51.100.3", AGENTS[0]))
        writer.flush()
        run_rollups(db)
    finally:
        db.client.close()


def _span(rng: random.Random) -> tuple[list[str], str]:
    """``--start``, ``--end`` and ``--tz``: local times in a zone, cut to a minute, a
    quarter, an hour or a day there (or not cut), or instants with an offset."""
    zone = rng.choice(ZONES)
    local = (NOW - rng.uniform(-0.1, 3.5) * dt.timedelta(days=1)).astimezone(ZoneInfo(zone))
    cut = rng.choice(("second", "minute", "quarter", "hour", "day"))
    local = local.replace(microsecond=0)
    if cut != "second":
        local = local.replace(second=0)
    if cut == "quarter":
        local = local.replace(minute=local.minute // 15 * 15)
    if cut in ("hour", "day"):
        local = local.replace(minute=0)
    if cut == "day":
        local = local.replace(hour=0)
    length = rng.choice(LENGTHS) if rng.random() < 0.8 else dt.timedelta(
        minutes=rng.randrange(-5, 6000))
    end = local + length
    if rng.random() < 0.25:
        offset = rng.choice(OFFSETS)
        sign = -1 if offset[0] == "-" else 1
        shift = sign * dt.timedelta(hours=int(offset[1:3]), minutes=int(offset[4:]))
        stamp = [(t.astimezone(dt.timezone(shift))).isoformat() for t in (local, end)]
    elif cut == "day" and rng.random() < 0.5:
        stamp = [t.date().isoformat() for t in (local, end)]
    else:
        stamp = [t.replace(tzinfo=None).isoformat() for t in (local, end)]
    return ["--start", stamp[0], "--end", stamp[1], "--tz", zone], zone


def command(rng: random.Random) -> list[str]:
    """One read, its options drawn by ``rng`` (some of them refused on purpose)."""
    site = rng.choices(SITES, (5, 5, 1))[0]
    span, _ = _span(rng)
    fmt = ["--format", rng.choice(("csv", "json"))]
    kind = rng.choices(("report", "breakdown", "top", "visitors", "goals", "annotations",
                        "site"), (6, 8, 2, 2, 1, 1, 1))[0]
    if kind == "report":
        return ["report", "--site", site, *span, *fmt, *_report(rng)]
    if kind == "breakdown":
        by = rng.choice(BY)
        args = ["breakdown", "--site", site, "--by", by, *span, *fmt,
                "-n", str(rng.choice((1, 3, 20, 1000)))]
        if rng.random() < 0.2:
            args += ["--page", rng.choice(PAGES[:6])]
        if rng.random() < 0.3:
            args += ["--bots"]
        if by == "prop" or rng.random() < 0.05:
            args += ["--prop", rng.choice(("plan", "nope"))]
        return args
    if kind == "top":
        return ["top", "--site", site, *span[:4], *fmt, "-n", str(rng.choice((1, 10)))]
    if kind == "visitors":
        return ["visitors", "--site", site, *span]
    if kind == "goals":
        return ["goals", "list", site, *fmt]
    if kind == "annotations":
        return ["annotations", "list", "--site", site]
    return ["site", "list", "--format", rng.choice(("text", "json"))]


def _report(rng: random.Random) -> list[str]:
    """``report``'s options, mostly a combination it serves (one in ten drawn freely)."""
    free = rng.random() < 0.1
    metric = rng.choices(METRICS, (6, 2, 1, 1, 1, 1, 1))[0]
    source = "rollup" if metric == "hits" and rng.random() < 0.25 or free and rng.random() < 0.2 \
        else "stats"
    offered = (GRANULARITIES if free else GRANULARITIES[1:] if source == "rollup"
               else GRANULARITIES[:3] if metric == "hits" else ("hour", "day")
               if metric == "visitors" else GRANULARITIES[1:])
    args = ["--metric", metric, "--source", source, "--granularity", rng.choice(offered)]
    if metric == "hits" and source == "stats" or free:
        if rng.random() < 0.4:
            args += ["--humans"]
        if rng.random() < 0.4:
            args += ["--filter", rng.choice(FILTERS)]
    if "--filter" not in args and metric not in ("visitors", "views_per_visit") or free:
        for _ in range(rng.choice((0, 0, 1, 2) if metric == "hits" or free else (0, 1))):
            args += ["--page", rng.choice(PAGES[:6])]
    return args


def check(result, args: list[str]) -> None:
    """Rows or a one-line error; never a traceback, never a missing value as text."""
    said = f"hitboard {' '.join(args)}\n{result.output[-2000:]}"
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(said) from result.exception
    assert result.exit_code in (0, 2), said
    assert "Traceback" not in result.output, said
    if result.exit_code == 2:
        assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1, said
        return
    if "json" in args:
        rows = json.loads(result.stdout)
    elif args[0] in ("report", "breakdown", "top", "goals"):
        rows = list(csv.DictReader(io.StringIO(result.stdout)))
    else:
        rows = [{"line": line} for line in result.stdout.split("\n")]
    cells = [value for row in rows for value in row.values()]
    assert not MISSING & {value for value in cells if isinstance(value, str)}, said
    assert not [value for value in cells if isinstance(value, float) and value != value], said
    numbers = [float(value) for row in rows for key, value in row.items()
               if key not in ("value", "page", "time", "revenue") and _number(value)]
    assert min(numbers, default=0) >= 0, said
    assert all(float(row["visitors"]) <= float(row["hits"]) for row in rows
               if _number(row.get("visitors")) and _number(row.get("hits"))), said


def _number(value) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return not isinstance(value, bool)


def reads(store: str, seed: int, n: int = 4) -> None:
    """``n`` reads drawn from ``seed``, each at a second of the live minute."""
    rng = random.Random(seed)
    for _ in range(n):
        args = command(rng)
        with time_machine.travel(TEST_NOW + dt.timedelta(seconds=rng.randrange(60)),
                                 tick=False):
            check(run(store, *args), args)


@pytest.mark.parametrize("seed", sorted(set(SEEDS) | set(FOUND)))
def test_reads_answer_rows_or_an_error(store, seed):
    reads(store, seed)


def test_the_live_hour_with_counters_ahead_of_its_events(store):
    """What the issue met: ``breakdown --by page`` over the live hour, once."""
    hour = NOW.replace(minute=0)
    args = ["breakdown", "--site", LOG, "--by", "page", "--start", hour.isoformat(),
            "--end", (hour + dt.timedelta(hours=1)).isoformat()]
    with time_machine.travel(TEST_NOW, tick=False):
        result = run(store, *args)
    check(result, args)
    rows = {row["value"]: row for row in csv.DictReader(io.StringIO(result.stdout))}
    assert rows["/late"]["visitors"] == "" and int(rows["/late"]["hits"]) == 1
