"""Goals and custom events in the CLI (``dashboard/cli/goals.py``): a site's goals added,
listed and removed; ``breakdown --by event|goal|prop``; one-line errors."""

from __future__ import annotations

import datetime as dt

import pytest
from clikit import rows, run
from logkit import AGENT, write_log

import queries
from queries.custom.payload import custom_event
from queries.events import custom as raw
from queries.rollups.build import run_rollups

DAY = dt.datetime(2015, 5, 17, tzinfo=dt.UTC)
# Two visitors see /pricing, one signs up (pro, EUR 49), the other reads /blog/a.
LINES = [(1, 600, "/pricing"), (2, 605, "/pricing"), (2, 610, "/blog/a")]
SPAN = ("--site", "s", "--start", "2015-05-17", "--end", "2015-05-18")


@pytest.fixture
def store(tmp_path):
    log = write_log(tmp_path / "access.log", DAY, LINES)
    path = str(tmp_path / "store")
    assert run(path, "ingest", str(log), "--site", "s").exit_code == 0
    db = queries.connect(path)
    try:
        writer = raw.writer(db)
        writer.add(raw.document(DAY + dt.timedelta(minutes=602), "s", "/pricing",
                                custom_event("Signup", {"plan": "pro"},
                                             {"currency": "EUR", "amount": "49.00"}),
                                "203.0.113.1", AGENT))
        writer.flush()
        run_rollups(db)
    finally:
        db.client.close()
    return path


def test_goals_are_added_listed_and_removed(store):
    assert run(store, "goals", "add", "s", "--event", "Signup").stdout == "added event Signup\n"
    assert run(store, "goals", "add", "s", "--page", "/blog/*").exit_code == 0
    again = run(store, "goals", "add", "s", "--event", "Signup")
    assert again.stdout == "already a goal: event Signup\n"
    assert rows(run(store, "goals", "list", "s")) == [
        {"kind": "event", "value": "Signup"}, {"kind": "page", "value": "/blog/*"}]
    assert run(store, "goals", "remove", "s", "--page", "/blog/*").exit_code == 0
    assert rows(run(store, "goals", "list", "s")) == [{"kind": "event", "value": "Signup"}]


def test_breakdown_by_goal_event_and_prop(store):
    run(store, "goals", "add", "s", "--event", "Signup")
    run(store, "goals", "add", "s", "--page", "/blog/*")
    assert rows(run(store, "breakdown", *SPAN, "--by", "goal")) == [
        {"value": "Signup", "conversions": "1", "visitors": "1", "conversion_rate": "50.0",
         "revenue": "EUR 49.00", "visitors_error": "0"},
        {"value": "Visit /blog/*", "conversions": "1", "visitors": "1",
         "conversion_rate": "50.0", "revenue": "", "visitors_error": "0"}]
    assert [r["value"] for r in rows(run(store, "breakdown", *SPAN, "--by", "event"))] == [
        "Signup"]
    on_page = rows(run(store, "breakdown", *SPAN, "--by", "event", "--page", "/pricing"))
    assert [(r["value"], r["conversions"]) for r in on_page] == [("Signup", "1")]
    assert rows(run(store, "breakdown", *SPAN, "--by", "event", "--page", "/blog/a")) == []
    plans = rows(run(store, "breakdown", *SPAN, "--by", "prop", "--prop", "plan"))
    assert [(r["value"], r["conversions"]) for r in plans] == [("pro", "1")]


@pytest.mark.parametrize("args, message", [
    (("goals", "add", "s"), "--event NAME or --page PATTERN"),
    (("goals", "add", "s", "--event", "A", "--page", "/a"), "--event NAME or --page"),
    (("goals", "add", "s", "--page", "blog"), "starts with '/'"),
    (("goals", "add", "s", "--page", "/**/**/**/**/x"), "at most 3 '**' (this one has 4)"),
    (("goals", "add", "nosuch", "--event", "A"), "not registered"),
    (("goals", "remove", "s", "--event", "Nope"), "no event goal 'Nope'"),
    (("breakdown", *SPAN, "--by", "prop"), "--prop NAME goes with --by prop"),
    (("breakdown", *SPAN, "--by", "event", "--prop", "plan"), "--prop NAME goes with"),
    (("breakdown", *SPAN, "--by", "goal", "--bots"), "no --bots"),
    (("breakdown", *SPAN, "--by", "goal", "--page", "/a"), "whole site: no --page"),
])
def test_what_cannot_be_done_is_one_line_and_a_non_zero_exit(store, args, message):
    result = run(store, *args)
    assert result.exit_code != 0 and message in result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1
