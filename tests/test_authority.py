"""Authority over state changes, from a stranger's side: every
state-changing callback and route is refused without credentials and runs with them
(the sign-in cookie or the admin token as a bearer token); no other callback changes
anything, whatever a visitor posts; the pages say that actions need signing in."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from dash._utils import split_callback_id
from dashkit import (
    ADMIN_TOKEN,
    account_state,
    dashboard_app,
    page_module,
    post_callback,
    seed,
    signed_in,
    signin_code,
)

from dashboard.authority import ACTIONS, Principal, requires
from dashboard.loadgen.control import get_generator
from dashboard.rollup_job import rollup_job
from dashboard.services import get_services
from queries import annotations as notes
from queries import shares
from queries.accounts import keys
from queries.stats.catalog import list_sites
from queries.stats.sites import register, registered_sites

NOW = dt.datetime(2026, 11, 21, 14, 0, tzinfo=dt.UTC)
LOADGEN_ACTIONS = ("lg-start", "lg-stop", "lg-spike", "lg-backfill-confirm")
SIGN_IN = "Sign in to "


@pytest.fixture
def app(tmp_path):
    with dashboard_app(tmp_path / "store", rollup_interval=0) as app:
        seed(get_services(app.server).db, "s", [(NOW, "/a", 3)])
        register(get_services(app.server).db, "reg", "admin")
        yield app
        get_generator(app.server).stop()


@pytest.fixture
def server(app):
    return app.server


def loadgen(client, action, headers=None):
    return post_callback(
        client, ["lg-feedback.children", "lg-action.data"],
        inputs={f"{a}.n_clicks": 1 if a == action else None for a in LOADGEN_ACTIONS},
        state={"lg-rate.value": 1, "lg-sites.value": 1, "lg-pages.value": 3,
               "lg-zipf.value": 1.1, "lg-options.value": [], "lg-days.value": 1},
        changed=(f"{action}.n_clicks",), headers=headers)


def run_now(client, headers=None):
    return post_callback(client, ["rollups-ran.data"], inputs={"rollups-run.n_clicks": 1},
                         changed=("rollups-run.n_clicks",), headers=headers)


def add_note(client, prefix, headers=None):
    return post_callback(
        client, [f"{prefix}-note-status.children", f"{prefix}-graph.figure",
                 f"{prefix}-note-text.value"] + (["history-notes.children"]
                                                 if prefix == "history" else []),
        inputs={f"{prefix}-note-add.n_clicks": 1},
        state={f"{prefix}-note-time.value": "2026-11-21 14:00",
               f"{prefix}-note-text.value": prefix, f"{prefix}-note-kind.value": "deploy",
               "url.search": "?site=s&tz=UTC"},
        changed=(f"{prefix}-note-add.n_clicks",), headers=headers)


def present_key(client, key, headers=None):
    button = {"g": "present-generator", "s": "present-spike"}[key]
    return post_callback(client, ["present-toast.children"],
                         inputs={"present-spike.n_clicks": int(key == "s"),
                                 "present-generator.n_clicks": int(key == "g")},
                         changed=(f"{button}.n_clicks",), headers=headers)


def sites_add(client, headers=None):
    return post_callback(
        client, ["sites-add-status.children", "sites-changed.data", "sites-add-name.value",
                 "sites-add-origins.value"],
        inputs={"sites-add.n_clicks": 1, "sites-add-name.n_submit": None},
        state={"sites-add-name.value": "new.example", "sites-add-tz.value": None,
               "sites-add-origins.value": "", "sites-add-agents.value": "human",
               "url.search": ""},
        changed=("sites-add.n_clicks",), headers=headers)


def sites_save(client, headers=None):
    return post_callback(
        client, ["sites-save-status.children"], inputs={"sites-save.n_clicks": 1},
        state={"sites-edit-name.data": "reg", "sites-tz.value": "Asia/Tokyo",
               "sites-origins.value": "", "sites-agents.value": "human",
               "sites-visit-minutes.value": 30, "sites-source.value": None},
        changed=("sites-save.n_clicks",), headers=headers)


def sites_remove(client, button, name, headers=None):
    return post_callback(
        client, ["sites-edit-status.children", "sites-settings.hidden"],
        inputs={"sites-unregister.n_clicks": int(button == "sites-unregister"),
                "sites-delete.n_clicks": int(button == "sites-delete")},
        state={"sites-edit-name.data": name, "sites-confirm.value": name, "url.search": ""},
        changed=(f"{button}.n_clicks",), headers=headers)


def sites_goal(client, headers=None):
    return post_callback(
        client, ["sites-goal-status.children", "sites-goal-value.value"],
        inputs={"sites-goal-add.n_clicks": 1, "sites-goal-value.n_submit": None},
        matched=([],),
        state={"sites-edit-name.data": "reg", "sites-goal-kind.value": "event",
               "sites-goal-value.value": "Signup"},
        changed=("sites-goal-add.n_clicks",), headers=headers)


def sites_share(client, headers=None):
    return post_callback(
        client, ["sites-share-status.children", "sites-share-password.value"],
        inputs={"sites-share-create.n_clicks": 1}, matched=([],),
        state={"sites-edit-name.data": "s", "sites-share-filter.value": "page:/a",
               "sites-share-password.value": "", "sites-share-origins.value": ""},
        changed=("sites-share-create.n_clicks",), headers=headers)


def team_key_create(client, headers=None):
    return post_callback(
        client, ["team-key-status.children", "team-keys-changed.data", "team-key-name.value"],
        inputs={"team-key-create.n_clicks": 1},
        state={"team-key-name.value": "ci", "team-key-sites.value": ["reg"]},
        changed=("team-key-create.n_clicks",), headers=headers)


def said(response) -> str:
    assert response.status_code == 200, response.get_data(as_text=True)
    return json.dumps(response.get_json()["response"])


def state_of(server) -> dict:
    status = get_generator(server).status()
    job = rollup_job(server)
    return {"running": status.running, "backfilled": status.backfill.total,
            "rolled up": job.last is not None,
            "notes": notes.list_annotations(get_services(server).db),
            "sites": {site.name: (site.tz, site.origins, site.unknown_agents, site.goals)
                      for site in registered_sites(get_services(server).db)},
            "counted": list_sites(get_services(server).db),
            "shares": [(x.site, x.filter_text) for x in shares.listed(get_services(server).db)],
            "keys": [k.name for k in keys.listed(get_services(server).db)]}


# -- every state-changing callback, with and without credentials --------------------------

WRITES = {
    "loadgen start": (lambda c, h: loadgen(c, "lg-start", h), "Started.",
                      lambda s: s["running"]),
    "loadgen backfill": (lambda c, h: loadgen(c, "lg-backfill-confirm", h), "Backfill started.",
                         lambda s: s["backfilled"] > 0),
    "rollups run now": (run_now, '"error": null', lambda s: s["rolled up"]),
    "History add note": (lambda c, h: add_note(c, "history", h), "Note added.",
                         lambda s: [n["text"] for n in s["notes"]] == ["history"]),
    "Live add note": (lambda c, h: add_note(c, "live", h), "Note added.",
                      lambda s: [n["text"] for n in s["notes"]] == ["live"]),
    "presenter g": (lambda c, h: present_key(c, "g", h), "Load generator started",
                    lambda s: s["running"]),
    "Sites add": (sites_add, "Registered new.example", lambda s: "new.example" in s["sites"]),
    "Sites save": (sites_save, "Saved.", lambda s: s["sites"]["reg"][0] == "Asia/Tokyo"),
    "Sites add goal": (sites_goal, "Added the goal Signup",
                       lambda s: [g.value for g in s["sites"]["reg"][3]] == ["Signup"]),
    "Sites unregister": (lambda c, h: sites_remove(c, "sites-unregister", "reg", h),
                         "Unregistered reg", lambda s: "reg" not in s["sites"]),
    "Sites share link": (sites_share, "Copy the link now",
                         lambda s: s["shares"] == [("s", "page:/a")]),
    "Sites delete data": (lambda c, h: sites_remove(c, "sites-delete", "s", h),
                          "Deleted s and its data", lambda s: "s" not in s["counted"]),
    "Team create key": (team_key_create, "shown this once", lambda s: "ci" in s["keys"]),
}


@pytest.mark.parametrize("name", WRITES)
def test_a_visitor_is_refused_and_nothing_changes(server, name):
    post, _done, _changed = WRITES[name]
    before = state_of(server)
    answer = said(post(server.test_client(), None))
    assert SIGN_IN in answer and "top right" in answer
    assert state_of(server) == before


@pytest.mark.parametrize("name", WRITES)
@pytest.mark.parametrize("how", ["cookie", "bearer"])
def test_the_admin_acts_signed_in_or_with_the_token(server, name, how):
    post, done, changed = WRITES[name]
    client = signed_in(server.test_client()) if how == "cookie" else server.test_client()
    headers = {"Authorization": f"Bearer {ADMIN_TOKEN}"} if how == "bearer" else None
    assert done in said(post(client, headers))
    get_generator(server).wait_backfill(30)
    assert changed(state_of(server))


@pytest.mark.parametrize("name", WRITES)
def test_a_wrong_token_is_refused(server, name):
    post, _done, _changed = WRITES[name]
    before = state_of(server)
    answer = said(post(server.test_client(), {"Authorization": "Bearer guess-1234"}))
    assert "Signing in failed" in answer
    assert state_of(server) == before


def test_stop_and_spike_need_the_admin_too(server):
    generator = get_generator(server)
    generator.start()
    client = server.test_client()
    for action in ("lg-spike", "lg-stop"):
        assert SIGN_IN in said(loadgen(client, action))
    assert SIGN_IN in said(present_key(client, "s"))
    assert generator.status().running and not generator.status().spiking
    admin = signed_in(server.test_client())
    assert "Spike" in said(loadgen(admin, "lg-spike"))
    assert "Stopped." in said(loadgen(admin, "lg-stop"))


def test_the_guarded_callbacks_are_exactly_the_state_changing_ones(app):
    guarded = {_outputs(key): spec["callback"].__wrapped__.hitboard_action
               for key, spec in app.callback_map.items()
               if hasattr(getattr(spec.get("callback"), "__wrapped__", None),
                          "hitboard_action")}
    assert guarded == {
        "lg-feedback.children...lg-action.data": "loadgen",
        "present-toast.children": "loadgen",
        "rollups-ran.data": "rollups",
        "history-note-status.children...history-graph.figure...history-note-text.value..."
        "history-notes.children": "notes",
        "live-note-status.children...live-graph.figure...live-note-text.value": "notes",
        "sites-add-status.children...sites-changed.data...sites-add-name.value..."
        "sites-add-origins.value": "sites",
        "sites-save-status.children": "sites",
        "sites-edit-status.children...sites-settings.hidden": "sites",
        "sites-goal-status.children...sites-goal-value.value": "sites",
        "sites-share-status.children...sites-share-password.value": "shares",
        "sites-alert-status.children...sites-alert-to.value": "notify",
        "team-add-status.children...team-changed.data...team-add-password.value": "users",
        "team-change-status.children...team-changed.data...team-password.value": "users",
        "team-key-status.children...team-keys-changed.data...team-key-name.value": "users",
        "team-key-status.children...team-keys-changed.data": "users",
        "sites-report-status.children...sites-report-to.value": "notify",
    }


def _outputs(key: str) -> str:
    return "...".join(part.split("@")[0] for part in key.strip(".").split("..."))


def test_no_callback_changes_anything_for_a_visitor(app, server):
    """Every server-side callback of every page, posted by a stranger with its buttons
    clicked: the generator, the rollups and the notes stay as they were."""
    client = server.test_client()
    before = state_of(server)
    posted = 0
    for key, spec in app.callback_map.items():
        if "callback" not in spec:            # drawn in the browser: nothing to post
            continue
        inputs = [{**item, "value": _poke(item)} for item in spec["inputs"]]
        state = [{**item, "value": _poke(item)} for item in spec["state"]]
        body = {"output": key, "outputs": split_callback_id(key), "inputs": inputs,
                "state": state, "changedPropIds": [f"{i['id']}.{i['property']}"
                                                   for i in spec["inputs"]]}
        response = client.post("/_dash-update-component", data=json.dumps(body),
                               content_type="application/json")
        posted += response.status_code in (200, 204)
    assert posted >= 30
    assert state_of(server) == before


def _poke(item: dict):
    prop = item["property"]
    if prop.startswith("n_"):
        return 1
    return {"search": "?site=s&tz=UTC", "pathname": "/"}.get(prop)


# -- the API ---------------------------------------------------------------------------

def api_post(client, token=None, **headers):
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return client.post("/api/annotations", json={"site": "s", "text": "deployed"},
                       headers=headers)


def test_the_api_with_a_good_a_wrong_and_no_token(server):
    client = server.test_client()
    assert api_post(client).status_code == 401
    assert api_post(client, "wrong-token").status_code == 401
    assert api_post(client, ADMIN_TOKEN).status_code == 201
    assert api_post(signed_in(server.test_client())).status_code == 201   # a browser
    assert len(notes.list_annotations(get_services(server).db)) == 2


def test_five_failures_in_15_minutes_and_the_address_waits(server):
    client = server.test_client()
    for _ in range(5):
        assert api_post(client, "guess").status_code == 401
    blocked = api_post(client, ADMIN_TOKEN)             # even the right token, now
    assert blocked.status_code == 429
    assert 0 < int(blocked.headers["Retry-After"]) <= 900
    assert "try again in 15 minutes" in blocked.get_json()["error"]
    assert client.get("/signin",
                      query_string={"code": signin_code(server)}).status_code == 429
    other = server.test_client()
    assert api_post(other, ADMIN_TOKEN, **{"X-Forwarded-For": "192.0.2.9"}).status_code == 429
    assert notes.list_annotations(get_services(server).db) == []
    assert client.get("/api/annotations").status_code == 200     # reading stays open


# -- what a visitor sees -----------------------------------------------------------------

def by_id(layout) -> dict:
    return {c.id: c for c in layout._traverse() if isinstance(getattr(c, "id", None), str)}


def test_pages_tell_a_visitor_that_actions_need_signing_in(server):
    with server.test_request_context("/loadgen"):
        loadgen_page = page_module("loadgen").layout()
        rollups_page = page_module("rollups").layout()
        history_page = page_module("history").layout()
        sites_page = page_module("sites").layout()
        site_page = page_module("sites").layout(edit="reg")
    assert "Sign in to drive the load generator" in str(loadgen_page)
    controls = by_id(loadgen_page)
    for control in ("lg-rate", "lg-sites", "lg-pages", "lg-zipf", "lg-days", *LOADGEN_ACTIONS,
                    "lg-backfill"):
        assert controls[control].disabled is True, control
    assert "Sign in to run the rollups now" in str(rollups_page)
    assert by_id(rollups_page)["rollups-run"].disabled is True
    assert "Sign in to add notes" in str(history_page)
    form = by_id(history_page)
    assert all(form[f"history-note-{part}"].disabled is True
               for part in ("time", "text", "kind", "add"))
    assert "Sign in to manage sites" in str(sites_page)
    assert by_id(sites_page)["sites-add"].disabled is True
    site = by_id(site_page)
    assert all(site[c].disabled is True for c in ("sites-save", "sites-unregister",
                                                  "sites-confirm", "sites-delete"))


def test_signed_in_the_same_pages_are_open(server):
    client = signed_in(server.test_client())
    cookie = client.get_cookie("hitboard_session").value
    with server.test_request_context("/", headers={"Cookie": f"hitboard_session={cookie}"}):
        loadgen_page = page_module("loadgen").layout()
        rollups_page = page_module("rollups").layout()
        site_page = page_module("sites").layout(edit="reg")
    assert "Sign in" not in str(loadgen_page) and "Sign in" not in str(rollups_page)
    assert "Sign in" not in str(site_page)
    assert not any(by_id(site_page)[c].disabled for c in ("sites-save", "sites-unregister",
                                                          "sites-confirm"))
    assert not any(by_id(loadgen_page)[c].disabled for c in LOADGEN_ACTIONS)
    assert not by_id(rollups_page)["rollups-run"].disabled
    assert account_state(client) == "admin"
    assert account_state(server.test_client()) == "visitor"


def test_principals_and_actions_are_named_once():
    admin = Principal("admin", "session", frozenset(ACTIONS))
    assert all(admin.can(action) for action in ACTIONS) and admin.signed_in
    assert not Principal("visitor").can("notes")
    with pytest.raises(KeyError):
        admin.can("delete everything")
    with pytest.raises(KeyError):
        requires("delete everything")
