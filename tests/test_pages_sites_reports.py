"""The email reports section of ``/sites?edit=NAME`` (dashboard/pages/sites/
reports_section.py): the admin adds and removes a subscription and reads the delivery
log; a visitor sees neither recipients nor the log, and changes nothing."""

from __future__ import annotations

import json

import pytest
from accountkit import add_users, cheap_hashes, sign_in_as  # noqa: F401
from dashkit import ADMIN_TOKEN, dashboard_app, page_module, post_callback

from dashboard.services import get_services
from queries.notify.subscriptions import add_report, reports_of
from queries.stats.sites import register

ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
SHOW = ["sites-report-list.children", "sites-report-log.children"]
CHANGE = ["sites-report-status.children", "sites-report-to.value"]


@pytest.fixture(scope="module")
def app_server(tmp_path_factory):
    with dashboard_app(tmp_path_factory.mktemp("reports") / "store", notify_interval=0) as app:
        yield app.server


@pytest.fixture
def server(app_server):
    """The module's app, site ``blog`` registered afresh with no report."""
    db = get_services(app_server).db
    db["sites"].delete_one({"_id": "blog"})
    register(db, "blog", "admin")
    return app_server


def change(client, to, period="week", hour=8, headers=ADMIN, remove=None):
    matched = [[{"id": {"type": "sites-report-remove", "index": key},
                 "property": "n_clicks", "value": 1 if key == remove else 0}
                for key in ([remove] if remove else [])]]
    return post_callback(
        client, CHANGE, {"sites-report-add.n_clicks": 0 if remove else 1},
        {"sites-edit-name.data": "blog", "sites-report-period.value": period,
         "sites-report-to.value": to, "sites-report-hour.value": hour},
        changed=((json.dumps({"index": remove, "type": "sites-report-remove"},
                             separators=(",", ":")) + ".n_clicks",)
                 if remove else ("sites-report-add.n_clicks",)),
        headers=headers, matched=matched)


def shown(client, headers=ADMIN) -> str:
    response = post_callback(client, SHOW, {"sites-edit-name.data": "blog",
                                            "sites-report-status.children": None},
                             headers=headers)
    assert response.status_code == 200
    return response.get_data(as_text=True)


def test_the_admin_adds_a_report_sees_it_and_removes_it(server):
    client = server.test_client()
    db = get_services(server).db
    added = change(client, "ann@example.com", "month", 7)
    assert "Added: the monthly report to ann@example.com at 07:00" in added.get_data(
        as_text=True)
    assert [(r["period"], r["to"], r["hour"]) for r in reports_of(db, "blog")] == [
        ("month", "ann@example.com", 7)]
    page = shown(client)
    assert "ann@example.com" in page and "Nothing delivered yet" in page
    removed = change(client, None, remove="month ann@example.com")
    assert "Removed the monthly report" in removed.get_data(as_text=True)
    assert reports_of(db, "blog") == []


@pytest.mark.parametrize("to", ["ann", "a@example.com b@example.com", "<b>x</b>@x"])
def test_a_bad_address_is_a_message_and_stores_nothing(server, to):
    said = change(server.test_client(), to).get_data(as_text=True)
    assert "not one email address" in said
    assert reports_of(get_services(server).db, "blog") == []


def test_a_visitor_sees_no_recipient_and_changes_nothing(server):
    client = server.test_client()
    change(client, "ann@example.com")
    page = shown(client, headers={})
    assert "ann@example.com" not in page and "Sign in to see recipients" in page
    refused = change(client, "eve@example.com", headers={}).get_data(as_text=True)
    assert "eve@example.com" not in [r["to"] for r in reports_of(get_services(server).db,
                                                                  "blog")]
    assert "sign in" in refused.lower()


def test_the_section_is_on_the_sites_own_page_and_closed_to_a_visitor(server):
    for headers, disabled in ((ADMIN, False), ({}, True)):
        with server.test_request_context("/sites?edit=blog", headers=headers):
            page = page_module("sites").layout(edit="blog")
        found = {c.id: c for c in page._traverse() if isinstance(getattr(c, "id", None), str)}
        assert found["sites-report-add"].disabled is disabled
        assert found["sites-report-to"].disabled is disabled


def test_a_signed_in_viewer_is_not_asked_to_sign_in_to_see_recipients(tmp_path):
    with dashboard_app(tmp_path / "store", notify_interval=0) as app:
        db = get_services(app.server).db
        register(db, "blog", "admin")
        add_report(db, "blog", "week", "bob@example.com", 8)
        add_users(app.server, ("ann", "viewer", None))
        page = shown(sign_in_as(app.server.test_client(), "ann"), headers={})
    assert "bob@example.com" not in page and "Deliveries" not in page
    assert "Sign in" not in page and "shown to those who manage notifications" in page
