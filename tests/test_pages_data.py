"""dashboard/pages/data/page.py as plain functions: the store first, explain() and the shard
advice as sections of their own, few elements (Dash's renderer made its 550 take
seconds), and the shard advice says when it read the documents."""

import datetime as dt

import time_machine
from dash.development.base_component import Component
from dashkit import page_module
from dimkit import ingest_sample

from dashboard.services import get_services

T = dt.datetime(2026, 11, 20, 10, 30, tzinfo=dt.UTC)
# Elements the page's callbacks may send: the store's tables were ~240, explain()'s ~250.
MAX_ELEMENTS = 60


def elements(tree) -> int:
    """Dash components in a callback's output."""
    if isinstance(tree, Component):
        return 1 + elements(getattr(tree, "children", None))
    if isinstance(tree, list | tuple):
        return sum(elements(child) for child in tree)
    return 0


def test_the_slow_sections_say_what_they_are_doing_until_they_fill_in(app):
    layout = page_module("data").layout()
    text = str(layout.to_plotly_json())
    assert "Reading the store…" in text
    assert "Running and explaining each chart's queries…" in text
    assert "Simulating each shard key on the stats documents…" in text


def test_the_page_sends_few_elements_however_many_rows_it_shows(app, tmp_path):
    data = page_module("data")
    with time_machine.travel(T, tick=False):
        ingest_sample(get_services(app.server).db, "s", tmp_path,
                      start=T - dt.timedelta(hours=3))
        store = data.show("?site=s&tz=UTC")
        title, plans = data.show_plans("?site=s&tz=UTC")
        advice = data.show_shard_advice("?site=s&tz=UTC")
    assert title == "Chart queries of s: explain()"
    assert plans.id == "data-plans" and len(getattr(plans, "data-table")) > 2000
    assert "data-collections" in str(store)
    assert elements([store, plans, advice]) <= MAX_ELEMENTS


def test_the_shard_advice_says_when_it_read_the_documents(app, tmp_path):
    """Shared by every viewer for the history cache's minute: the note keeps the time of
    the documents it simulated, not the time of the page."""
    data = page_module("data")
    ingest_sample(get_services(app.server).db, "s", tmp_path, start=T - dt.timedelta(hours=3))

    def note(at):
        with time_machine.travel(at, tick=False):
            return data.show_shard_advice("?site=s&tz=Europe/Paris")[1].children

    first = note(T + dt.timedelta(seconds=5))
    assert first.startswith("Simulated on the documents as they were at 11:30:05 "
                            "(Europe/Paris)")
    assert note(T + dt.timedelta(seconds=40)) == first
    assert "11:31:10" in note(T + dt.timedelta(seconds=70))


def test_items_set_aside_are_listed_as_text_newest_first(app):
    """What a writer could not store shows on the Data page (and only then: no section
    when there is none), escaped: a stored value is never markup."""
    from queries.quarantine import Quarantine

    data = page_module("data")
    assert "Set aside" not in str(data.show("?tz=UTC"))
    kept = Quarantine(get_services(app.server).db, "HitRecorder")
    kept.keep({"document": "20261125/s/\ud800"}, UnicodeEncodeError(
        "utf-8", "\ud800", 0, 1, "surrogates not allowed"), 3)
    kept.keep({"document": "<script>alert(1)</script>"}, "a bad value", 1)
    shown = str(data.show("?tz=UTC"))
    assert "Set aside (not counted)" in shown and "data-quarantine" in shown
    assert shown.index("<script>") < shown.index("\\\\ud800")       # newest first
    assert "surrogates not allowed" in shown
