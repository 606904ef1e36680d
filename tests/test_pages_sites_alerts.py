"""The alerts section of ``/sites?edit=NAME`` (dashboard/pages/sites/alerts_section.py):
the admin adds an alert (a webhook's secret shown once), sees when alerts start and
removes it; a visitor sees no recipient and changes nothing; bad input is a message."""

from __future__ import annotations

import json

import pytest
from dashkit import ADMIN_TOKEN, dashboard_app, post_callback

from dashboard.services import get_services
from queries.notify.alerts.rules import alerts_of
from queries.stats.sites import register

ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
SHOW = ["sites-alert-list.children"]
CHANGE = ["sites-alert-status.children", "sites-alert-to.value"]


@pytest.fixture(scope="module")
def app_server(tmp_path_factory):
    with dashboard_app(tmp_path_factory.mktemp("alerts") / "store") as app:
        yield app.server


@pytest.fixture
def server(app_server):
    """The module's app, site ``blog`` registered afresh with no alert."""
    db = get_services(app_server).db
    db["sites"].delete_one({"_id": "blog"})
    register(db, "blog", "admin")
    return app_server


def change(client, to, kind="stopped", minutes=15, how="email", page="", headers=ADMIN,
           remove=None):
    matched = [[{"id": {"type": "sites-alert-remove", "index": key},
                 "property": "n_clicks", "value": 1 if key == remove else 0}
                for key in ([remove] if remove else [])]]
    return post_callback(
        client, CHANGE, {"sites-alert-add.n_clicks": 0 if remove else 1},
        {"sites-edit-name.data": "blog", "sites-alert-kind.value": kind,
         "sites-alert-for.value": minutes, "sites-alert-page.value": page,
         "sites-alert-channel.value": how, "sites-alert-to.value": to,
         "sites-alert-json.value": ["json"] if how == "webhook" else [],
         "sites-alert-loadgen.value": []},
        changed=((json.dumps({"index": remove, "type": "sites-alert-remove"},
                             separators=(",", ":")) + ".n_clicks",)
                 if remove else ("sites-alert-add.n_clicks",)),
        headers=headers, matched=matched)


def shown(client, headers=ADMIN) -> str:
    response = post_callback(client, SHOW, {"sites-edit-name.data": "blog",
                                            "sites-alert-status.children": None},
                             headers=headers)
    assert response.status_code == 200
    return response.get_data(as_text=True)


def test_the_admin_adds_an_alert_sees_it_and_removes_it(server):
    client = server.test_client()
    db = get_services(server).db
    added = change(client, "https://hooks.example.com/<b>", "above", 30, "webhook",
                   "/pricing").get_data(as_text=True)
    (alert,) = alerts_of(db, "blog", secrets_too=True)
    assert (alert["kind"], alert["for"], alert["page"], alert["webhook"], alert["format"]) == (
        "above", 30, "/pricing", "https://hooks.example.com/<b>", "json")
    assert "Added: above the range for 30 minutes" in added and alert["secret"] in added
    page = shown(client)
    assert "hooks.example.com" in page
    assert "No traffic yet" in page and alert["secret"] not in page
    removed = change(client, None, remove=alert["id"]).get_data(as_text=True)
    assert "Removed the alert" in removed and alerts_of(db, "blog") == []


@pytest.mark.parametrize("to, how, minutes, reason", [
    ("ann", "email", 15, "not one email address"),
    ("a@example.com, b@example.com", "email", 15, "not one email address"),
    ("javascript:alert(1)", "webhook", 15, "not an http(s) URL"),
    ("ops@example.com", "email", 0, "is outside 1"),
    ("ops@example.com", "email", 2000, "is outside 1"),
])
def test_bad_input_is_a_message_and_stores_nothing(server, to, how, minutes, reason):
    said = change(server.test_client(), to, how=how, minutes=minutes).get_data(as_text=True)
    assert reason in said
    assert alerts_of(get_services(server).db, "blog") == []


def test_a_visitor_sees_no_recipient_and_changes_nothing(server):
    client = server.test_client()
    change(client, "ops@example.com")
    assert "ops@example.com" in shown(client)
    page = shown(client, headers={})
    assert "Sign in to see recipients" in page and "ops@example.com" not in page
    refused = change(client, "eve@example.com", headers={}).get_data(as_text=True)
    assert "eve@example.com" not in str(alerts_of(get_services(server).db, "blog"))
    assert "notify" in refused or "sign in" in refused.lower()
