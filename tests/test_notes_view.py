"""The Live banner and its automatic note; the notes and the band on the page callbacks."""

import datetime as dt

import pytest
from dashkit import as_admin, page_module, seed

from dashboard import notes_view, reads
from dashboard.pages.history import notes as history_notes
from dashboard.pages.live import notes as live_notes
from dashboard.services import get_services
from queries import annotations as notes

pytestmark = pytest.mark.usefixtures("frozen_clock")   # the same days at any hour


def test_an_hour_above_the_usual_shows_a_banner_and_is_noted_once(app):
    db = get_services(app.server).db
    end = reads.now(60).replace(second=0)
    window = [end - dt.timedelta(minutes=m) for m in range(1, 61)]
    seed(db, "s", [(t - dt.timedelta(days=7 * w), "/a", 1) for w in range(1, 9) for t in window]
         + [(t, "/a", 4) for t in window])
    banner = live_notes.live_banner(1, "?site=s&tz=UTC")
    assert banner.className == "notice banner banner-above"
    assert banner.children.startswith(f"Traffic 4.0× the usual for {end:%A %H}:00 (240 hits")
    live_notes.live_banner(2, "?site=s&tz=UTC")
    found = notes.list_annotations(db, "s")
    assert [(n["kind"], n["author"]) for n in found] == [("anomaly", "hitboard")]
    assert found[0]["text"].startswith("traffic 4.0× the usual")


def test_no_banner_without_weeks_of_history(app):
    seed(get_services(app.server).db, "s", [(reads.now(60) - dt.timedelta(minutes=5), "/a", 50)])
    assert live_notes.live_banner(1, "?site=s&tz=UTC") is None
    assert live_notes.live_banner(1, "?site=nobody") is None


def test_history_shows_the_notes_of_its_range_and_of_the_previous_period(app):
    db = get_services(app.server).db
    now = dt.datetime.now(dt.UTC)
    seed(db, "s", [(now - dt.timedelta(days=d), "/a", 5) for d in range(1, 20)])
    notes.add_annotation(db, "s", now - dt.timedelta(days=2), "this week", "deploy")
    notes.add_annotation(db, "s", now - dt.timedelta(days=9), "last week")
    figure = page_module("history").render("?site=s&range=7d&compare=1&tz=UTC")["figure"]
    names = {t.name: t.hovertext for t in figure.data if t.name and t.name.startswith("Notes")}
    assert "this week" in names["Notes · Deploy"][0]
    assert "previous period" in names["Notes (previous period)"][0]
    assert "last week" in names["Notes (previous period)"][0]
    listed = history_notes.history_notes("?site=s&range=7d&tz=UTC")
    assert "this week" in str(listed) and "last week" not in str(listed)
    data, alert = history_notes.notes_csv(1, "?site=s&range=7d&tz=UTC")
    assert alert is None and data["content"].splitlines()[0] == "time,site,kind,author,text,id"
    assert "this week" in data["content"]


def test_adding_a_note_from_the_page_checks_its_input(app):
    add = notes_view.add_note("history", history_notes.chart_index,
                              history_notes.history_notes)
    seed(get_services(app.server).db, "s", [(dt.datetime.now(dt.UTC), "/a", 1)])
    refused = add(1, "2026-11-21 10:00", "fine", "note", "?site=s")
    assert "Sign in to add notes" in str(refused["status"].children)     # a visitor
    assert set(refused) == set(notes_view.note_outputs("history", listed=True))
    with as_admin(app.server):
        refused = add(1, None, "x", "note", "?site=s")
        assert "click the chart" in str(refused["status"].children)
        assert set(refused) == set(notes_view.note_outputs("history", listed=True))
        refused = add(1, "2026-11-21 10:00", "", "note", "?site=s")
        assert "empty" in str(refused["status"].children)
        refused = add(1, "tomorrow-ish", "x", "note", "?site=s")
        assert "invalid time" in str(refused["status"].children)
        added = add(1, "2026-11-21 10:00", "fine", "deploy", "?site=s&tz=Europe/Paris")
    assert added["status"] == "Note added." and added["text"] == ""
    stored = notes.list_annotations(get_services(app.server).db, "s")[0]
    assert stored["time"] == dt.datetime(2026, 11, 21, 9, tzinfo=dt.UTC)


def test_the_banner_shows_the_open_incident_of_the_alerts(app):
    """The checker's note is the banner: a stopped site says so until it is resolved."""
    from queries.notify.alerts import incidents

    db = get_services(app.server).db
    seed(db, "s", [(reads.now(60) - dt.timedelta(minutes=5), "/a", 1)])
    end = reads.now(60).replace(second=0)
    incident = incidents.open_incident(db, "s", None, "stopped", 15, end,
                                       "Traffic stopped: 0 hits in the last 15 minutes")
    banner = live_notes.live_banner(1, "?site=s&tz=UTC")
    assert banner.className == "notice banner banner-stopped"
    assert banner.children == "Traffic stopped: 0 hits in the last 15 minutes"
    assert live_notes.live_banner(1, "?site=s&tz=UTC&page=/other") is None
    incidents.resolve(db, incident, end + dt.timedelta(minutes=20))
    get_services(app.server).cache.clear()
    assert live_notes.live_banner(1, "?site=s&tz=UTC") is None


def test_the_banner_leaves_the_note_to_alerts_watching_that_direction(app):
    from queries.notify.alerts.rules import add_alert
    from queries.stats.sites import register

    db = get_services(app.server).db
    register(db, "s", "admin")
    add_alert(db, "s", "above", 15, email="ops@example.com")
    end = reads.now(60).replace(second=0)
    window = [end - dt.timedelta(minutes=m) for m in range(1, 61)]
    seed(db, "s", [(t - dt.timedelta(days=7 * w), "/a", 1) for w in range(1, 9) for t in window]
         + [(t, "/a", 4) for t in window])
    assert live_notes.live_banner(1, "?site=s&tz=UTC").className == "notice banner banner-above"
    assert notes.list_annotations(db, "s") == []
