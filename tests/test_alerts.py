"""Alerts: one incident per excursion of a window out of the expected range, one alert
and one "back to normal" per channel, written as the ``anomaly`` note the charts and
Live's banner show; none under 4 weeks of history; muted while the load generator runs."""

from __future__ import annotations

import datetime as dt
import threading

import numpy as np
import pytest
from alertkit import recorded as recorded_sends
from alertkit import sent, services, steady
from dashkit import counted, dashboard_app, register_sites

import queries
from queries import annotations as notes
from queries.notify.alerts import check, incidents
from queries.notify.alerts.rules import active_from, add_alert
from queries.stats.generator_state import remember_running
from queries.stats.sites import register, register_synthetic

MINUTE = dt.timedelta(minutes=1)


@pytest.fixture
def recorded(monkeypatch):
    return recorded_sends(monkeypatch)


def anomalies(db, site):
    return [n for n in notes.list_annotations(db, site) if n["kind"] == "anomaly"]


def incident_docs(db, site):
    return list(db[notes.COLLECTION].find({"site": site, "kind": "anomaly"}))


def test_a_burst_through_hit_gives_one_alert_and_one_recovery(tmp_path, frozen_clock,
                                                              recorded):
    with dashboard_app(tmp_path / "store", rollup_interval=0) as app:
        register_sites(app, "blog")
        minute = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
        day = minute.replace(hour=0, minute=0)
        db = counted(app).db
        steady(db, "blog", day, 35)
        email = add_alert(db, "blog", "above", 15, email="ops@example.com")
        hook = add_alert(db, "blog", "above", 15, webhook="http://127.0.0.1:9/a",
                         fmt="json")
        client = app.server.test_client()
        for _ in range(60):
            assert client.get("/hit?site=blog&page=/a").status_code == 200
        served = counted(app)
        # The burst's minute (and the next, should the clock have crossed it) in the window.
        for later in (2, 3, 9, 15):                 # outside, still outside
            check.run_due(served, minute + later * MINUTE)
        assert sent(recorded) == [("alert", "ops@example.com"),
                                  ("alert", "http://127.0.0.1:9/a")]
        for later in (17, 19, 40, 75):              # back inside, and staying there
            check.run_due(served, minute + later * MINUTE)
        assert sent(recorded)[2:] == [("resolved", "ops@example.com"),
                                      ("resolved", "http://127.0.0.1:9/a")]
        (note,) = anomalies(db, "blog")
        assert note["time"] == minute + 2 * MINUTE
        assert note["text"].startswith("Traffic above the expected range: ")
        (doc,) = incident_docs(db, "blog")
        assert doc["direction"] == "above"
        assert doc["resolved"].replace(tzinfo=dt.UTC) == minute + 17 * MINUTE
        mail, posted = recorded[:2]
        assert mail["subject"] == "[hitboard] blog: traffic above the expected range"
        assert mail["payload"] is None and "expected 30–30 (median 30" in mail["text"]
        assert (posted["payload"]["event"], posted["payload"]["kind"]) == ("alert", "above")
        assert ("/history?site=blog&tz=UTC&range=custom&start="
                in posted["payload"]["links"]["history"])
        assert posted["payload"]["expected"]["median"] == 30
        assert {c["claim_id"].rsplit("/", 1)[1] for c in recorded} == {email["id"], hook["id"]}


def test_stopped_traffic_gives_one_alert_beside_a_second_worker(tmp_path, recorded,
                                                                monkeypatch):
    """Two workers (two connections to one store) run the checker every 30 s at once,
    both about to send before either does: one note, one alert."""
    together = threading.Barrier(2)
    compose = check.messages.message

    def both_compose(**kwargs):
        together.wait(timeout=60)
        return compose(**kwargs)

    monkeypatch.setattr(check.messages, "message", both_compose)
    store = str(tmp_path / "store")
    day = dt.datetime(2026, 3, 18, tzinfo=dt.UTC)
    first = queries.connect(store)
    queries.ensure_indexes(first)
    second = queries.connect(store)
    try:
        register(first, "shop", "admin")
        steady(first, "shop", day, 35, stop_at=12 * 60, weekdays_only=True)     # stops at 12:00
        add_alert(first, "shop", "stopped", 15, email="ops@example.com")
        moments = [day + dt.timedelta(hours=12, minutes=12, seconds=30 * k) for k in range(16)]
        for moment in moments:
            runs = [threading.Thread(target=check.run_due, args=(services(db), moment))
                    for db in (first, second)]
            for run in runs:
                run.start()
            for run in runs:
                run.join()
        assert sent(recorded) == [("alert", "ops@example.com")]
        (doc,) = incident_docs(first, "shop")
        assert doc["direction"] == "stopped" and doc["resolved"] is None
        assert doc["time"].replace(tzinfo=dt.UTC) == day + dt.timedelta(hours=12, minutes=15)
        assert incidents.open_incidents(first, "shop", moments[-1])[0]["_id"] == doc["_id"]
    finally:
        second.client.close()
        first.client.close()


def test_a_new_incident_in_the_same_direction_waits_an_hour(db, recorded):
    """On every backend: the registry's alerts, the incident's note and the claims."""
    day = dt.datetime(2026, 3, 18, tzinfo=dt.UTC)
    register(db, "shop", "admin")
    steady(db, "shop", day, 35, stop_at=12 * 60, weekdays_only=True)
    add_alert(db, "shop", "stopped", 5, email="ops@example.com")
    incident = incidents.open_incident(db, "shop", None, "stopped", 5,
                                       day + dt.timedelta(hours=11), "earlier")
    incidents.resolve(db, incident, day + dt.timedelta(hours=11, minutes=30))
    check.run_due(services(db), day + dt.timedelta(hours=12, minutes=10))
    assert sent(recorded) == []                         # 40 minutes after: quiet
    check.run_due(services(db), day + dt.timedelta(hours=12, minutes=31))
    assert sent(recorded) == [("alert", "ops@example.com")]


def test_no_alert_under_four_weeks_of_history(embedded_db, recorded):
    db = embedded_db
    day = dt.datetime(2026, 3, 18, tzinfo=dt.UTC)
    register(db, "shop", "admin")
    steady(db, "shop", day, 20, stop_at=12 * 60, weekdays_only=True)
    add_alert(db, "shop", "stopped", 15, email="ops@example.com")
    check.run_due(services(db), day + dt.timedelta(hours=13))
    assert sent(recorded) == [] and incident_docs(db, "shop") == []
    assert active_from(db, "shop") == day - dt.timedelta(days=20) + dt.timedelta(weeks=4)


def test_muted_while_the_load_generator_runs_unless_asked(embedded_db, recorded):
    db = embedded_db
    day = dt.datetime(2026, 3, 18, tzinfo=dt.UTC)
    site = "shop.example"
    register_synthetic(db, [site])
    steady(db, site, day, 35, stop_at=12 * 60, weekdays_only=True)
    add_alert(db, site, "stopped", 15, email="muted@example.com")
    remember_running(db, True, day)
    check.run_due(services(db), day + dt.timedelta(hours=13))
    assert sent(recorded) == [] and incident_docs(db, site) == []
    add_alert(db, site, "stopped", 15, email="told@example.com", during_loadgen=True)
    check.run_due(services(db), day + dt.timedelta(hours=13, minutes=1))
    assert sent(recorded) == [("alert", "told@example.com")]
    remember_running(db, False, day)
    check.run_due(services(db), day + dt.timedelta(hours=13, minutes=2))
    assert sent(recorded)[1:] == [("alert", "muted@example.com")]


def test_a_recovery_cut_off_after_its_incident_was_resolved_is_sent_by_the_next_run(
        embedded_db, recorded):
    """A worker killed between resolving the incident and sending: the next run sends
    the "back to normal" once, and only to the channel told of the start."""
    db = embedded_db
    day = dt.datetime(2026, 3, 18, tzinfo=dt.UTC)
    register(db, "shop", "admin")
    steady(db, "shop", day, 35, stop_at=12 * 60, weekdays_only=True)
    add_alert(db, "shop", "stopped", 15, email="ops@example.com")
    check.run_due(services(db), day + dt.timedelta(hours=12, minutes=20))
    add_alert(db, "shop", "stopped", 15, email="late@example.com")     # after the start
    (doc,) = incident_docs(db, "shop")
    back = np.zeros((1, 1440), dtype=np.int64)
    back[:, 12 * 60 + 30:] = 2                                          # back at 12:30
    queries.backfill(db, [queries.DayCounts("shop", day, ["/a"], back)])
    incidents.resolve(db, doc, day + dt.timedelta(hours=12, minutes=31))   # then killed
    for minutes in (32, 33):
        check.run_due(services(db), day + dt.timedelta(hours=12, minutes=minutes))
    assert sent(recorded) == [("alert", "ops@example.com"), ("resolved", "ops@example.com")]
