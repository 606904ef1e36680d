"""Fuzzing every URL parameter the dashboard reads: the shell's (site, page, tz, theme),
the live page's window, the historical page's range, granularity, mode, comparison and
dates. Layouts and callbacks answer with a message, never an exception; over HTTP, the
pages and every callback that reads the URL answer 200 (or 204: nothing to update) with
no traceback in the response."""

from __future__ import annotations

import datetime as dt
import json
from urllib.parse import urlencode

import pytest
import time_machine
from clockkit import TEST_NOW
from dash._pages import _parse_query_string
from dashkit import dashboard_app, page_module, seed
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dashboard import shell
from dashboard.pages.history.url import MODES
from dashboard.ranges import GRANULARITIES, PRESETS
from dashboard.rollup_job import rollup_job
from dashboard.services import get_services
from queries.events.writer import EventWriter

FUZZ = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])
PAGES = ("live", "history", "rollups", "data", "loadgen", "sources")
PATHS = ("/", "/history", "/rollups", "/data", "/loadgen", "/sources", "/nowhere")
DATES = ("2026-01-01", "2026-13-45", "0001-01-01", "9999-12-31", "2026-01-01T25:00",
         "2026-03-29T02:30", "2026-01-01T00:00+05:00", "2025-12-31T23:59:59.999999", "-1",
         "1e9", "today", "2026-W01", "")
PLAUSIBLE = {
    "site": ("s", "nope", "", "bad site", "$where", "*", "a.b"),
    "page": ("/a", "/b", "*", "/$where", "a.b", '{"$gt": ""}', "", "/" + "x" * 3000),
    "tz": ("UTC", "Europe/Paris", "Asia/Kolkata", "Pacific/Kiritimati", "Mars/Olympus", "",
           "../../etc/passwd", "+05:00", "UTC\x00", "Etc/GMT+14", "localtime", "utc"),
    "theme": ("light", "dark", "neon", ""),
    "window": ("15", "60", "180", "0", "-1", "1e9", "abc"),
    "range": (*PRESETS, "", "forever", "7D"),
    "gran": (*GRANULARITIES, "second", "week", ""),
    "mode": (*MODES, "pie"),
    "compare": ("1", "0", "yes", ""),
    "days": ("1", "7", "30", "0", "-7", "365", "1e9", ""),
    "metric": ("hits", "visits", "bounce_rate", "pie", ""),
    "start": DATES,
    "end": DATES,
}
text = st.text(st.characters(exclude_categories=("Cs",)), max_size=20)
pair = st.sampled_from(sorted(PLAUSIBLE)).flatmap(
    lambda key: st.tuples(st.just(key), st.sampled_from(PLAUSIBLE[key]) | text))
searches = (st.lists(pair | st.tuples(text, text), max_size=8)
            .map(lambda pairs: "?" + urlencode(pairs))
            | text.map(lambda raw: "?" + raw))
REGRESSIONS = ("?site=s&tz=Mars/Olympus", "?site=s&range=custom&start=2026-13-45&end=x",
               "?site=s&range=12m&gran=minute", "?site=s&page=%7B%22%24gt%22%3A%22%22%7D",
               "?site=s&tz=UTC%00", "?%zz=%&&==&page", "?site=s&range=custom&start=9999-12-31"
               "&end=0001-01-01", "?site=s&window=-1&theme=neon&page=*")
NOW = TEST_NOW.replace(second=0, microsecond=0)


def with_regressions(**more):
    def decorate(test):
        for search in REGRESSIONS:
            test = example(search=search, **more)(test)
        return test
    return decorate


@pytest.fixture(scope="module")
def module_clock():
    """``frozen_clock`` for the module's one app (a fixture of each test's own scope
    cannot serve it): the pages read "now" at ``NOW``, where the hits are."""
    with time_machine.travel(TEST_NOW, tick=True):
        yield TEST_NOW


@pytest.fixture(scope="module")
def app(tmp_path_factory, module_clock):
    """Hits on site "s" over the last 10 days, and raw events rolled up."""
    with dashboard_app(tmp_path_factory.mktemp("fuzz") / "store", rollup_interval=0) as app:
        db = get_services(app.server).db
        seed(db, "s", [(NOW - dt.timedelta(hours=7 * h), page, h + 1)
                       for h in range(36) for page in ("/a", "/b", "/$where", "/a.b")])
        writer = EventWriter(db)
        for minutes in range(30):
            writer.add({"time": NOW - dt.timedelta(minutes=minutes), "site": "s",
                        "host": "10.0.0.1", "method": "GET", "path": "/a", "query": "",
                        "status": 200, "bytes": 100, "referrer": None, "user_agent": "t"})
        writer.close()
        rollup_job(app.server).run_now()
        yield app


def no_traceback(output) -> None:
    text = str(output)
    assert "Traceback" not in text and 'File "' not in text, text[:500]


@FUZZ
@given(search=searches)
@with_regressions()
def test_layouts_and_callbacks_never_raise(app, search):
    with app.server.test_request_context("/"):
        for name in PAGES:
            no_traceback(page_module(name).layout(**_parse_query_string(search)))
        live, history = page_module("live"), page_module("history")
        no_traceback(live.refresh(1, search))
        no_traceback(live.choose_window("15", search))
        rendered = history.render(search)
        no_traceback(rendered)
        no_traceback(history.download(1, rendered["plotted"]))
        no_traceback(shell.sync_shell(set(), search, None, None, None, None))
        no_traceback(shell.sync_shell({"shell-tz", "shell-theme"}, search, "s", ["/a"],
                                      "Asia/Tokyo", "dark"))
        no_traceback(shell.nav_links("/history", search))


@FUZZ
@given(search=searches, start=st.sampled_from(DATES) | text, end=st.sampled_from(DATES) | text,
       preset=st.sampled_from((*PRESETS, "forever")) | text)
@example(search="?site=s", start="2026-13-45", end="2026-01-01", preset="custom")
@example(search="?site=s", start="9999-12-31", end="9999-12-31", preset="custom")
def test_history_controls_never_raise(app, search, start, end, preset):
    """The date picker and presets as a crafted request may send them."""
    history = page_module("history")
    with app.server.test_request_context("/"):
        for trigger in ("history-dates", "history-range", "history-mode"):
            no_traceback(history.apply_controls(trigger, preset, start, end, "auto", "lines",
                                                [], search))


@pytest.mark.parametrize("search, reason", [
    ("?site=s&tz=Mars/Olympus", "Mars/Olympus"),
    ("?site=s&range=custom&start=2026-13-45&end=2026-01-01", "2026-13-45"),
    ("?site=s&range=custom", "needs a start and an end"),
    ("?site=s&range=12m&gran=minute", "too many to draw"),
])
def test_bad_parameters_become_a_message_with_the_reason(app, search, reason):
    with app.server.test_request_context("/"):
        alert = page_module("history").render(search)["alert"]
    assert alert.className == "notice notice-error" and reason in alert.children


def _click(x: str) -> dict:
    return {"points": [{"x": x}]}


def _callbacks_reading_the_url(app) -> list[tuple[str, dict]]:
    client = app.server.test_client()
    assert client.get("/").status_code == 200      # Dash registers page callbacks now
    return [(key, spec) for key, spec in app.callback_map.items()
            if "callback" in spec and any(
                (i["id"], i["property"]) in (("url", "search"), ("_pages_location", "search"))
                for i in spec["inputs"] + spec["state"])]


def _outputs(key: str):
    def spec(item):
        component, prop = item.rsplit(".", 1)
        return {"id": component, "property": prop}

    if key.startswith(".."):
        return [spec(item) for item in key[2:-2].split("...")]
    return spec(key)


def _rendered(app) -> dict:
    """Every component of the shell and the pages by id: the browser sends their values."""
    with app.server.test_request_context("/"):
        trees = [shell.layout(), *(page_module(name).layout() for name in PAGES)]
    return {getattr(c, "id", None): c for tree in trees for c in tree._traverse()}


def _value(components: dict, item: dict, search: str, path: str):
    if item["property"] == "search":
        return search
    if item["property"] == "pathname":
        return path
    if item["property"] == "clickData":
        return _click("2026-01-05T10:00")
    return getattr(components.get(item["id"]), item["property"], None)


def _body(key: str, spec: dict, search: str, path: str, components: dict) -> str:
    def values(items):
        return [{"id": i["id"], "property": i["property"],
                 "value": _value(components, i, search, path)} for i in items]

    inputs = values(spec["inputs"])
    return json.dumps({"output": key, "outputs": _outputs(key), "inputs": inputs,
                       "state": values(spec["state"]),
                       "changedPropIds": [f"{i['id']}.{i['property']}" for i in inputs
                                          if i["property"] == "search"]})


@settings(FUZZ, max_examples=20)     # each example posts every callback reading the URL
@given(search=searches, path=st.sampled_from(PATHS))
@with_regressions(path="/history")
def test_http_pages_and_callbacks_answer_without_a_traceback(app, search, path):
    client = app.server.test_client()
    page = client.get(path + search)
    assert page.status_code == 200
    no_traceback(page.get_data(as_text=True))
    components = _rendered(app)
    for key, spec in _callbacks_reading_the_url(app):
        body = _body(key, spec, search, path, components)
        response = client.post("/_dash-update-component", data=body,
                               content_type="application/json")
        assert response.status_code in (200, 204), (key, response.data[:300])
        no_traceback(response.get_data(as_text=True))


def test_the_http_fuzz_reaches_every_callback_that_reads_the_url(app):
    outputs = " ".join(key for key, _spec in _callbacks_reading_the_url(app))
    for shown in ("_pages_content.children", "live-graph.figure", "history-graph.figure",
                  "rollups-graph.figure", "data-content.children", "shell-nav.children",
                  "live-recent.children", "history-plotted.data", "history-drill.data"):
        assert shown in outputs
