"""The gate once a user exists: every route and every callback, called as a visitor and
as a viewer of another site, answers 401 (a page: 303 to the sign-in page) or 403, and
nothing of the site; the exempt paths stay open; with no user nothing changes."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from accountkit import add_users, cheap_hashes, sign_in_as  # noqa: F401
from dash._utils import split_callback_id
from dashkit import dashboard_app, seed

from dashboard.services import get_services
from queries import annotations as notes
from queries.stats.sites import register

NOW = dt.datetime(2026, 11, 21, 14, 0, tzinfo=dt.UTC)
SECRET_SITE, SECRET_PAGE = "secret.example", "/only-on-the-secret-site"
EXEMPT = {"/hit", "/hit.js", "/healthz", "/signin", "/_dash-dependencies"}


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    with dashboard_app(tmp_path_factory.mktemp("gate") / "store", rollup_interval=0) as app:
        db = get_services(app.server).db
        seed(db, SECRET_SITE, [(NOW, SECRET_PAGE, 7)])
        seed(db, "open.example", [(NOW, "/a", 2)])
        register(db, SECRET_SITE, "admin")
        notes.add_annotation(db, SECRET_SITE, NOW, "a secret note")
        yield app


@pytest.fixture(scope="module")
def users(app):
    from argon2 import PasswordHasher

    from queries.accounts import passwords

    cheap, passwords.HASHER = passwords.HASHER, PasswordHasher(time_cost=1, memory_cost=8,
                                                               parallelism=1)
    add_users(app.server, ("other", "viewer", ["open.example"]), ("root", "admin", None))
    passwords.HASHER = cheap
    return app


def routes(server) -> list[str]:
    """A path for every route the server declares (variables filled in)."""
    paths = []
    for rule in server.url_map.iter_rules():
        path = rule.rule
        for name in rule.arguments:
            path = path.replace(f"<{name}>", "x").replace(f"<path:{name}>", "x")
        paths.append(path.replace("<path:x>", "x"))
    return sorted(set(paths))


def bodies(app, search: str):
    """A request for every server-side callback, its buttons clicked, naming the site
    (but Sign out's, which would end the session under test)."""
    for key, spec in app.callback_map.items():
        if "callback" not in spec or any(i["id"].startswith("account-signout")
                                         for i in spec["inputs"]):
            continue
        body = {"output": key, "outputs": split_callback_id(key),
                "inputs": [{**item, "value": _poke(item, search)} for item in spec["inputs"]],
                "state": [{**item, "value": _poke(item, search)} for item in spec["state"]],
                "changedPropIds": [f"{i['id']}.{i['property']}" for i in spec["inputs"]]}
        yield key, body


def _poke(item: dict, search: str):
    prop = item["property"]
    if prop.startswith("n_"):
        return 1
    if item["id"] in ("shell-site", "sites-edit-name"):
        return SECRET_SITE
    return {"search": search, "pathname": "/", "href": f"http://localhost/{search}"}.get(prop)


def shows_the_site(text: str) -> bool:
    """Whether ``text`` holds anything of the site: its pages, notes, or its name other
    than as the request's own query echoed back (links keeping the address's query)."""
    text = text.replace(f"site={SECRET_SITE}", "")
    return SECRET_SITE in text or SECRET_PAGE in text or "a secret note" in text


def test_a_visitor_meets_only_the_sign_in_page(users):
    client = users.server.test_client()
    for path in routes(users.server):
        if path in EXEMPT or path.startswith(("/assets/", "/_dash-component-suites/",
                                              "/share/", "/api/v2/", "/unsubscribe/")):
            continue
        for method in ("GET", "POST"):
            response = client.open(path + f"?site={SECRET_SITE}", method=method,
                                   json={"site": SECRET_SITE})
            page = method == "GET" and not path.startswith(("/_", "/api/"))
            assert response.status_code == (303 if page else 401), (method, path)
            if page:        # the body is Flask's link to the sign-in page, nothing more
                assert response.headers["Location"].startswith("/signin?next=/")
            else:
                assert not shows_the_site(response.get_data(as_text=True)), (method, path)
    posted = 0
    for key, body in bodies(users, f"?site={SECRET_SITE}"):
        response = client.post("/_dash-update-component", data=json.dumps(body),
                               content_type="application/json")
        assert response.status_code == 401, key
        posted += 1
    assert posted >= 30


def test_the_exempt_paths_stay_open(users):
    from queries import shares

    client = users.server.test_client()
    token, _ = shares.create(get_services(users.server).db, SECRET_SITE)
    assert client.get(f"/share/{token}").status_code == 200           # a share link's page
    assert client.get(f"/share/{token}/data").status_code not in (303, 401)   # its data
    assert client.get("/healthz").status_code == 200
    assert client.get("/hit.js").status_code == 200
    assert client.get("/signin").status_code == 200
    assert client.get("/_dash-dependencies").status_code == 200
    assert client.get("/share/no-such-token").status_code != 303      # its own credential
    assert client.get("/api/v2/query").status_code != 303
    assert client.get("/unsubscribe/no-such-token").status_code not in (303, 401)  # an email's


def test_a_viewer_of_another_site_meets_nothing_of_it(users):
    client = sign_in_as(users.server.test_client(), "other")
    assert client.signin.status_code == 200
    for path in ("/", "/history", "/live", "/sites", "/data"):
        refused = client.get(f"{path}?site={SECRET_SITE}")
        assert refused.status_code == 403 and not shows_the_site(refused.get_data(True))
    assert client.get(f"/sites?edit={SECRET_SITE}").status_code == 403
    assert client.get(f"/api/annotations?site={SECRET_SITE}").status_code == 403
    assert not shows_the_site(client.get("/api/annotations").get_data(as_text=True))
    answered = {}
    for key, body in bodies(users, f"?site={SECRET_SITE}"):
        response = client.post("/_dash-update-component", data=json.dumps(body),
                               content_type="application/json")
        answered[key] = response.status_code
        assert response.status_code in (200, 204, 403), (key, response.status_code)
        assert not shows_the_site(response.get_data(as_text=True)), key
    assert sum(status == 403 for status in answered.values()) >= 10


def test_a_viewer_sees_its_own_site_and_only_it(users):
    client = sign_in_as(users.server.test_client(), "other")
    assert not shows_the_site(client.get("/_dash-layout").get_data(as_text=True))
    body = dict(bodies(users, ""))
    shell = next(key for key in body if key.startswith("..url.search"))
    for item in body[shell]["inputs"]:
        if item["id"] == "shell-site":
            item["value"] = None
    answer = client.post("/_dash-update-component", data=json.dumps(body[shell]),
                         content_type="application/json")
    assert answer.status_code == 200, answer.get_data(as_text=True)
    shown = answer.get_json()["response"]["shell-site"]
    assert [option["value"] for option in shown["options"]] == ["open.example"]
    assert shown["value"] == "open.example"             # the site it opens on: its own


def test_with_no_user_nothing_changes(tmp_path):
    with dashboard_app(tmp_path / "store", rollup_interval=0) as app:
        client = app.server.test_client()
        assert client.get("/history").status_code == 200
        assert client.get("/_dash-layout").status_code == 200
        assert client.get("/api/annotations").status_code == 200


def test_an_api_key_opens_no_page_callback_or_other_api(users):
    from queries.accounts import keys

    token = keys.create(get_services(users.server).db, "script", ["open.example"])
    client = users.server.test_client()
    auth = {"Authorization": f"Bearer {token}"}
    assert client.get("/history?site=open.example", headers=auth).status_code == 303
    assert client.get("/_dash-layout", headers=auth).status_code == 401
    assert client.get("/api/annotations?site=open.example", headers=auth).status_code == 401
