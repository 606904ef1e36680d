"""dashboard/pages/sites/page.py through Dash's callback endpoint, as the browser sends it: a
visitor sees the registry with its controls disabled and why; the admin adds a site
(the beacon counts it at once), changes it and removes it; bad input is a message in the
page, never a traceback, and changes nothing."""

from __future__ import annotations

import json

import pytest
from dash import dcc
from dashkit import ADMIN_TOKEN, dashboard_app, page_module, post_callback, signed_in

from dashboard.services import get_services
from queries.stats.sites import register, registered_sites, site_settings

ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


@pytest.fixture
def server(tmp_path):
    with dashboard_app(tmp_path / "store", rollup_interval=0) as app:
        yield app.server


def db(server):
    return get_services(server).db


def names(server) -> list[str]:
    return [s.name for s in registered_sites(db(server))]


def layout(server, query: str = "", headers=None):
    with server.test_request_context(f"/sites{query}", headers=headers or {}):
        return page_module("sites").layout(**_kwargs(query))


def _kwargs(query: str) -> dict:
    from urllib.parse import parse_qsl

    return dict(parse_qsl(query.removeprefix("?")))


def by_id(tree) -> dict:
    return {c.id: c for c in tree._traverse() if isinstance(getattr(c, "id", None), str)}


def answer(response) -> dict:
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()["response"]


def add(client, name, tz=None, origins="", agents="human", headers=ADMIN):
    return answer(post_callback(
        client, ["sites-add-status.children", "sites-changed.data", "sites-add-name.value",
                 "sites-add-origins.value"],
        inputs={"sites-add.n_clicks": 1, "sites-add-name.n_submit": None},
        state={"sites-add-name.value": name, "sites-add-tz.value": tz,
               "sites-add-origins.value": origins, "sites-add-agents.value": agents,
               "url.search": "?tz=UTC&theme=dark"},
        changed=("sites-add.n_clicks",), headers=headers))


def save(client, name, tz=None, origins="", agents="human", headers=ADMIN, minutes=30):
    return answer(post_callback(
        client, ["sites-save-status.children"], inputs={"sites-save.n_clicks": 1},
        state={"sites-edit-name.data": name, "sites-tz.value": tz,
               "sites-origins.value": origins, "sites-agents.value": agents,
               "sites-visit-minutes.value": minutes, "sites-source.value": None},
        changed=("sites-save.n_clicks",), headers=headers))


def remove(client, name, button="sites-unregister", typed="", headers=ADMIN):
    return answer(post_callback(
        client, ["sites-edit-status.children", "sites-settings.hidden"],
        inputs={"sites-unregister.n_clicks": int(button == "sites-unregister"),
                "sites-delete.n_clicks": int(button == "sites-delete")},
        state={"sites-edit-name.data": name, "sites-confirm.value": typed,
               "url.search": "?tz=UTC"},
        changed=(f"{button}.n_clicks",), headers=headers))


def listed(client, search="?tz=UTC", needle=None) -> str:
    return json.dumps(answer(post_callback(
        client, ["sites-list.children"],
        inputs={"url.search": search, "sites-changed.data": None, "sites-filter.value": needle},
    )))


def shown(response: dict, output: str) -> str:
    return json.dumps(response[output])


def test_a_visitor_sees_the_list_with_every_control_disabled_and_why(server):
    register(db(server), "blog", "admin")
    page = layout(server, "?tz=UTC")
    assert "Sign in to manage sites" in str(page)
    controls = by_id(page)
    for control in ("sites-add-name", "sites-add-tz", "sites-add-origins", "sites-add"):
        assert controls[control].disabled is True, control
    assert controls["sites-listing"].hidden is False and controls["sites-editing"].hidden
    assert '"blog"' in listed(server.test_client())        # reading needs nothing

    settings = by_id(layout(server, "?edit=blog"))
    for control in ("sites-tz", "sites-origins", "sites-save", "sites-unregister",
                    "sites-confirm", "sites-delete"):
        assert settings[control].disabled is True, control
    assert settings["sites-listing"].hidden and settings["sites-editing"].hidden is False


def test_signed_in_the_controls_are_open(server):
    cookie = signed_in(server.test_client()).get_cookie("hitboard_session").value
    register(db(server), "blog", "admin")
    headers = {"Cookie": f"hitboard_session={cookie}"}
    page = by_id(layout(server, "", headers))
    assert "Sign in" not in str(page)
    assert not page["sites-add"].disabled and not page["sites-add-name"].disabled
    settings = by_id(layout(server, "?edit=blog", headers))
    assert not settings["sites-save"].disabled and not settings["sites-unregister"].disabled


def test_a_read_only_server_says_to_use_the_command_line(tmp_path):
    with dashboard_app(tmp_path / "store"):
        pass                                    # the store exists
    with dashboard_app(tmp_path / "store", readonly=True) as app:
        page = layout(app.server, "", ADMIN)
        assert "read-only" in str(page) and "hitboard site" in str(page)
        assert by_id(page)["sites-add"].disabled is True


def test_a_sites_own_view_shows_its_settings_and_tracking_tag(server):
    register(db(server), "blog", "admin", tz="Europe/Paris", origins=["https://blog.example"],
             unknown_agents="bot")
    page = by_id(layout(server, "?edit=blog&tz=UTC&theme=dark", ADMIN))
    assert (page["sites-tz"].value, page["sites-origins"].value, page["sites-agents"].value) \
        == ("Europe/Paris", "https://blog.example", "bot")
    assert page["sites-edit-name"].data == "blog"
    assert page["sites-tag"].children.children == (
        '<script defer src="http://localhost/hit.js" data-site="blog"></script>')
    assert page["sites-back"].href == "/sites?tz=UTC&theme=dark"
    history = [c.href for c in page["sites-editing"]._traverse() if isinstance(c, dcc.Link)]
    assert "/history?site=blog&tz=UTC&theme=dark" in history


@pytest.mark.parametrize(("name", "said"), [
    ("nobody", "No site named 'nobody' is registered."),
    ("<img src=x onerror=alert(1)>", "invalid site '<img src=x onerror=alert(1)>'"),
])
def test_an_unknown_or_invalid_site_is_a_message_as_text(server, name, said):
    page = by_id(layout(server, f"?edit={name}", ADMIN))
    status = page["sites-edit-status"].children
    assert said in status.children and status.className == "notice notice-warning"
    assert page["sites-settings"].hidden is True


def test_the_admin_adds_a_site_and_the_beacon_counts_it_at_once(server):
    client = server.test_client()
    hit = {"site": "blog.example.com", "page": "/"}
    assert client.post("/hit", json=hit).status_code == 403     # remembered: not registered
    out = add(client, "blog.example.com", "Europe/Paris", "https://blog.example.com")
    assert "Registered blog.example.com" in shown(out, "sites-add-status")
    assert "/sites?tz=UTC&theme=dark&edit=blog.example.com" in shown(out, "sites-add-status")
    assert out["sites-add-name"]["value"] == "" and out["sites-add-origins"]["value"] == ""
    assert "blog.example.com" in listed(client)
    assert client.post("/hit", json=hit).status_code == 204
    assert client.post("/hit", json=hit, headers={"Origin": "https://evil.example"}
                       ).status_code == 403


@pytest.mark.parametrize(("name", "tz", "origins", "said"), [
    ("bad name!", None, "", "invalid site 'bad name!'"),
    ("", None, "", "type the site's name"),
    ("blog", "Nowhere/Atlantis", "", "unknown time zone 'Nowhere/Atlantis'"),
    ("blog", None, "<script>alert(1)</script>", "'<script>alert(1)</script>' is not an origin"),
])
def test_bad_input_is_a_message_and_registers_nothing(server, name, tz, origins, said):
    out = add(server.test_client(), name, tz, origins)
    status = out["sites-add-status"]["children"]
    assert status["props"]["className"] == "notice notice-error"
    assert said in status["props"]["children"]               # a string: rendered as text
    assert "sites-changed" not in out and "sites-add-name" not in out    # the form kept
    assert names(server) == []


def test_adding_a_registered_site_again_says_so(server):
    register(db(server), "blog", "admin", tz="Asia/Tokyo")
    out = add(server.test_client(), "blog", "UTC")
    assert "already registered" in shown(out, "sites-add-status")
    assert site_settings(db(server), "blog").tz == "Asia/Tokyo"


def test_saving_and_a_bad_origin(server):
    register(db(server), "blog", "admin")
    client = server.test_client()
    out = save(client, "blog", "Asia/Kolkata", "https://a.example\nhttps://b.example", "bot")
    assert "Saved. Time zone Asia/Kolkata" in shown(out, "sites-save-status")
    settings = site_settings(db(server), "blog")
    assert (settings.tz, settings.origins, settings.unknown_agents) == (
        "Asia/Kolkata", ("https://a.example", "https://b.example"), "bot")
    bad = save(client, "blog", "UTC", "a.example")
    assert "'a.example' is not an origin" in shown(bad, "sites-save-status")
    assert site_settings(db(server), "blog").tz == "Asia/Kolkata"          # nothing changed
    out = save(client, "blog", minutes=10)
    assert "a visit ends after 10 minutes" in shown(out, "sites-save-status")
    bad = save(client, "blog", minutes=-3)
    assert "a visit's timeout is 1 to 1440 minutes" in shown(bad, "sites-save-status")
    assert site_settings(db(server), "blog").visit_minutes == 10


def test_removing_the_registration_then_the_data(server):
    register(db(server), "blog", "admin")
    client = server.test_client()
    assert client.post("/hit", json={"site": "blog", "page": "/"}).status_code == 204
    refused = remove(client, "blog", "sites-delete", typed="blo")
    assert "to confirm deleting its data" in shown(refused, "sites-edit-status")
    assert "sites-settings" not in refused and names(server) == ["blog"]

    out = remove(client, "blog")
    assert "Unregistered blog" in shown(out, "sites-edit-status")
    assert out["sites-settings"]["hidden"] is True
    assert names(server) == []
    assert client.post("/hit", json={"site": "blog", "page": "/"}).status_code == 403
    again = remove(client, "blog", "sites-delete", typed="blog")
    assert "Deleted blog" in shown(again, "sites-edit-status")


def test_the_list_follows_the_filter_and_is_not_read_while_a_site_is_edited(server):
    for name in ("alpha", "beta"):
        register(db(server), name, "admin")
    client = server.test_client()
    text = listed(client, needle="alp")
    assert "alpha" in text and "beta" not in text
    response = post_callback(client, ["sites-list.children"],
                             inputs={"url.search": "?edit=alpha", "sites-changed.data": None,
                                     "sites-filter.value": None})
    assert answer(response) == {}                             # no_update: nothing sent
