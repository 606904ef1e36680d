"""The Team page: an admin lists, adds, changes and removes users (each change signing
the user out); anyone else sees why not, and its posts change nothing."""

from __future__ import annotations

import json

import pytest
from accountkit import PASSWORD, add_users, cheap_hashes, sign_in_as  # noqa: F401
from dashkit import dashboard_app, post_callback, seed, signed_in, utc

from dashboard.services import get_services
from queries import accounts


@pytest.fixture
def app(tmp_path):
    with dashboard_app(tmp_path / "store", rollup_interval=0) as app:
        seed(get_services(app.server).db, "a", [(utc(2026, 11, 21, 14), "/x", 1)])
        add_users(app.server, ("root", "admin", None), ("ann", "viewer", ["a"]))
        yield app


def users_of(app) -> list[tuple]:
    return [(u.name, u.role, u.sites) for u in accounts.list_users(get_services(app.server).db)]


def show(client):
    return post_callback(client, ["team-list.children", "team-user.options",
                                  "team-add-sites.options", "team-sites.options"],
                         inputs={"url.pathname": "/team", "team-changed.data": None})


def add(client, name, password=PASSWORD, role="viewer", sites=("a",)):
    return post_callback(client, ["team-add-status.children", "team-changed.data",
                                  "team-add-password.value"],
                         inputs={"team-add.n_clicks": 1},
                         state={"team-add-name.value": name, "team-add-role.value": role,
                                "team-add-sites.value": list(sites),
                                "team-add-password.value": password},
                         changed=("team-add.n_clicks",))


def change(client, button, name, **state):
    values = {"team-user.value": name, "team-role.value": None, "team-sites.value": None,
              "team-all-sites.value": [], "team-password.value": None,
              "team-confirm.value": None}
    values.update({f"team-{k.replace('_', '-')}.value": v for k, v in state.items()})
    buttons = ("team-save", "team-passwd", "team-signout", "team-remove")
    return post_callback(client, ["team-change-status.children", "team-changed.data",
                                  "team-password.value"],
                         inputs={f"{b}.n_clicks": int(b == button) for b in buttons},
                         state=values, changed=(f"{button}.n_clicks",))


def said(response) -> str:
    assert response.status_code == 200, response.get_data(as_text=True)
    return json.dumps(response.get_json()["response"])


def test_an_admin_manages_users_on_the_page(app):
    admin = sign_in_as(app.server.test_client(), "root")
    listing = said(show(admin))
    assert "ann" in listing and "root" in listing and "every site" in listing
    assert "Added bob (viewer)" in said(add(admin, "bob"))
    assert ("bob", "viewer", frozenset({"a"})) in users_of(app)
    assert "exists already" in said(add(admin, "bob"))
    assert "10 to 1,024" in said(add(admin, "carl", password="short"))
    ann = sign_in_as(app.server.test_client(), "ann")
    assert ann.get("/history?site=a").status_code == 200
    assert "Saved ann" in said(change(admin, "team-save", "ann", role="admin"))
    assert ("ann", "admin", frozenset({"a"})) in users_of(app)
    assert ann.get("/history?site=a").status_code == 303         # signed out everywhere
    assert "New password" in said(change(admin, "team-passwd", "bob",
                                         password="a new long password"))
    assert sign_in_as(app.server.test_client(), "bob",
                      "a new long password").signin.status_code == 200
    assert "type bob to remove it" in said(change(admin, "team-remove", "bob"))
    assert "Removed bob" in said(change(admin, "team-remove", "bob", confirm="bob"))
    assert [u[0] for u in users_of(app)] == ["ann", "root"]


@pytest.mark.parametrize("who", ["viewer", "secret"])
def test_only_admins_see_and_change_users(app, who):
    client = (sign_in_as(app.server.test_client(), "ann") if who == "viewer"
              else signed_in(app.server.test_client()))
    before = users_of(app)
    listing = said(show(client))
    if who == "viewer":
        assert "You may not manage users" in listing and "root" not in listing
        assert "You may not manage users" in said(add(client, "eve"))
        assert "You may not" in said(change(client, "team-remove", "root", confirm="root"))
        assert users_of(app) == before
    else:                          # the admin secret is a full admin
        assert "root" in listing
        assert "Added eve" in said(add(client, "eve"))
