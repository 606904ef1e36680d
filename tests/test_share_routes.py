"""``/share/<token>`` from a holder's and a stranger's side: the link alone decides the
site and the filter (another site, page or filter in the URL is ignored, never echoed),
an unknown or revoked link opens nothing, a password link opens with a JSON post and a
cookie scoped to its path, and the link's credential grants nothing anywhere else: every
route and callback answers its holder as it answers a stranger. Frame policies: the
link's on its pages, ``'self'`` on every other."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from clockkit import TEST_NOW
from dash._utils import split_callback_id
from dashkit import dashboard_app, seed
from dimkit import NEWS, ingest_sample

from dashboard.authority.principal import EXTENSION_KEY
from dashboard.authority.throttle import FailureThrottle
from dashboard.services import get_services
from queries import shares
from queries.accounts.users import add_user, remove_user
from queries.stats.sites import register

OTHER, SECRET = "other.example", "/secret-launch"
OPEN = ("/hit", "/healthz", "/signin", "/share/", "/api/v2/", "/unsubscribe/", "/assets/",
        "/_dash-component-suites/", "/_dash-dependencies")     # the gate's exempt paths
ROUTES = ("", "/data", "/live", "/history.csv")
SNOOPING = (f"?site={OTHER}&filter=page:{SECRET}&page={SECRET}&range=30d"
            f"&embed=true&theme=dark")


pytestmark = pytest.mark.usefixtures("frozen_clock")      # the same hours at any hour


@pytest.fixture(scope="module")
def shared_app(tmp_path_factory):
    """One app for the module (building one costs a second): each test starts with no
    link and no failed attempt (``app``)."""
    hour = TEST_NOW.replace(minute=0, second=0, microsecond=0) - dt.timedelta(hours=1)
    with dashboard_app(tmp_path_factory.mktemp("share") / "store", rollup_interval=0) as app:
        db = get_services(app.server).db
        ingest_sample(db, "s", tmp_path_factory.mktemp("log"))     # yesterday, every panel
        seed(db, "s", [(hour, "/a", 3), (hour, "/b", 4)])
        seed(db, OTHER, [(hour, SECRET, 5)])
        register(db, "s", "admin", tz="Europe/Paris")
        register(db, OTHER, "admin")
        yield app


@pytest.fixture
def app(shared_app):
    get_services(shared_app.server).db[shares.COLLECTION].delete_many({})
    shared_app.server.extensions[EXTENSION_KEY] = FailureThrottle()
    return shared_app


@pytest.fixture
def db(app):
    return get_services(app.server).db


def texts(client, token: str, query: str = "") -> dict[str, tuple[int, str]]:
    return {route: (r.status_code, r.get_data(as_text=True))
            for route in ROUTES
            for r in [client.get(f"/share/{token}{route}{query}")]}


def test_the_link_decides_the_site_and_filter_whatever_the_url_says(app, db):
    token, _ = shares.create(db, "s", "page:/a")
    client = app.server.test_client()
    answers = texts(client, token, SNOOPING)
    assert {route: status for route, (status, _) in answers.items()} == dict.fromkeys(
        ROUTES, 200)
    for route, (_, text) in answers.items():
        assert OTHER not in text and SECRET not in text, route
    assert "s · page:/a" in answers[""][1] and 'class="share theme-dark embed"' in answers[""][1]
    history = json.loads(answers["/data"][1])["history"]
    assert history["kpis"][0] == {"label": "Hits (people)", "value": "3"}
    assert "Europe/Paris" in history["period"]                    # the site's own zone
    assert {trace["name"] for trace in history["figure"]["data"]} == {"/a"}
    live = json.loads(answers["/live"][1])["live"]
    assert live["kpis"][2]["value"] == "3"                        # /a alone, today
    assert answers["/history.csv"][1].splitlines()[0] == "time,/a"


def test_the_panels_are_historys_of_the_links_scope(app, db):
    client = app.server.test_client()
    whole, _ = shares.create(db, "s")
    news, _ = shares.create(db, "s", "referrer:news.example")
    tables = {t["title"]: t["rows"] for t in client.get(
        f"/share/{whole}/data?range=30d&site={OTHER}").get_json()["history"]["panels"]["tables"]}
    assert [row[0] for row in tables["Pages"]][:2] == ["/", "/about"]
    assert ["news.example", str(NEWS)] in tables["Referrers"]
    assert SECRET not in json.dumps(tables)
    found = client.get(f"/share/{news}/data?range=30d").get_json()["history"]["panels"]
    assert {t["title"]: t["rows"] for t in found["tables"]}["Pages"] == [["/", str(NEWS)]]


def test_a_filter_live_cannot_honour_leaves_live_out(app, db):
    token, _ = shares.create(db, "s", "referrer:news.example")
    client = app.server.test_client()
    assert "Live counts pages alone" in client.get(f"/share/{token}").get_data(as_text=True)
    assert client.get(f"/share/{token}/live").get_json() == {"live": None}


def test_unknown_revoked_and_malformed_links_open_nothing(app, db):
    token, made = shares.create(db, "s")
    client = app.server.test_client()
    shares.revoke(db, made.prefix)
    for bad in (token, "x" * 32, "a.b", "%00", "é" * 3):
        for route in ROUTES:
            response = client.get(f"/share/{bad}{route}")
            assert response.status_code == 404, (bad, route)
            said = response.get_json()["error"] if response.is_json else response.text
            assert said.strip() == "This share link is unknown or was revoked."
            assert "frame-ancestors 'none'" in response.headers["Content-Security-Policy"]


def test_a_bad_range_is_a_400_naming_it(app, db):
    token, _ = shares.create(db, "s")
    client = app.server.test_client()
    assert client.get(f"/share/{token}/data?range=all&gran=day").status_code == 200
    bad = client.get(f"/share/{token}/data?range=custom&start=2026-13-01&end=2026-13-02")
    assert bad.status_code == 400 and "2026-13-01" in bad.get_json()["error"]
    zone = client.get(f"/share/{token}/data?tz=Mars/Olympus")
    assert zone.status_code == 400 and "Mars/Olympus" in zone.get_json()["error"]


def test_frame_policies(app, db):
    anywhere, _ = shares.create(db, "s")
    framed, _ = shares.create(db, "s", frame_ancestors=("https://blog.example.com",
                                                        "http://localhost:8000"))
    client = app.server.test_client()
    policy = client.get(f"/share/{anywhere}").headers["Content-Security-Policy"]
    assert policy.endswith("frame-ancestors *") and "script-src 'self'" in policy
    assert client.get(f"/share/{framed}/data").headers["Content-Security-Policy"] == (
        "frame-ancestors https://blog.example.com http://localhost:8000")
    for path in ("/", "/history?site=s", "/healthz", "/_dash-layout"):
        assert client.get(path).headers["Content-Security-Policy"] == "frame-ancestors 'self'"


# -- password links --------------------------------------------------------------------

PASSWORD = "correct horse battery"


def unlock(client, token, password, **headers):
    return client.post(f"/share/{token}/unlock", data=json.dumps({"password": password}),
                       content_type="application/json", headers=headers)


def test_a_password_link_shows_nothing_until_unlocked(app, db):
    token, _ = shares.create(db, "s", password=PASSWORD)
    client = app.server.test_client()
    page = client.get(f"/share/{token}").get_data(as_text=True)
    assert "needs a password" in page and ">s<" not in page and "s ·" not in page
    for route in ROUTES[1:]:
        assert client.get(f"/share/{token}{route}").status_code == 401
    other, _ = shares.create(db, "s", password="another password")
    assert unlock(client, other, "another password").status_code == 204
    assert client.get(f"/share/{token}/data").status_code == 401    # another link's cookie
    answer = unlock(client, token, PASSWORD)
    assert answer.status_code == 204
    cookie = answer.headers["Set-Cookie"]
    assert f"Path=/share/{token}" in cookie and "HttpOnly" in cookie
    assert "SameSite=Lax" in cookie and "Secure" not in cookie      # plain http
    assert client.get(f"/share/{token}/data").status_code == 200
    assert client.get(f"/share/{token}/history.csv").status_code == 200


def test_over_https_the_unlock_cookie_may_be_embedded(tmp_path, frozen_clock):
    with dashboard_app(tmp_path / "store", public_url="https://stats.example.com") as app:
        db = get_services(app.server).db
        seed(db, "s", [(frozen_clock, "/a", 1)])
        token, _ = shares.create(db, "s", password=PASSWORD)
        cookie = unlock(app.server.test_client(), token, PASSWORD).headers["Set-Cookie"]
    assert "Secure" in cookie and "SameSite=None" in cookie and "Partitioned" in cookie


def test_unlocking_takes_json_from_here_and_wrong_passwords_wait(app, db):
    token, _ = shares.create(db, "s", password=PASSWORD)
    client = app.server.test_client()
    form = client.post(f"/share/{token}/unlock", data={"password": PASSWORD})
    assert form.status_code == 415 and "Set-Cookie" not in form.headers
    elsewhere = unlock(client, token, PASSWORD, **{"Sec-Fetch-Site": "cross-site"})
    assert elsewhere.status_code == 403 and "Set-Cookie" not in elsewhere.headers
    assert [unlock(client, token, "wrong guess!").status_code for _ in range(5)] == [401] * 5
    waited = unlock(client, token, PASSWORD)
    assert waited.status_code == 429 and int(waited.headers["Retry-After"]) > 0
    assert "Set-Cookie" not in waited.headers


# -- the holder elsewhere ----------------------------------------------------------------

def _get_routes(app) -> list[str]:
    """Every GET route of the server without a variable part, beside the share's."""
    return sorted(rule.rule for rule in app.server.url_map.iter_rules()
                  if "GET" in rule.methods and not rule.arguments
                  and not rule.rule.startswith("/share/"))


def _callbacks(app):
    for key, spec in app.callback_map.items():
        if "callback" in spec:
            inputs = [{**item, "value": 1 if item["property"].startswith("n_") else None}
                      for item in spec["inputs"]]
            state = [{**item, "value": None} for item in spec["state"]]
            yield key, {"output": key, "outputs": split_callback_id(key), "inputs": inputs,
                        "state": state, "changedPropIds": [f"{i['id']}.{i['property']}"
                                                           for i in spec["inputs"]]}


@pytest.fixture(params=[False, True], ids=["no users", "users"])
def users_exist(request, db):
    """With no user reading is open to all; once one exists a stranger is refused."""
    if request.param:
        add_user(db, "ana", "admin", "a long enough password")
    yield request.param
    if request.param:
        remove_user(db, "ana")


def test_a_holder_meets_every_route_and_callback_as_a_stranger(app, db, users_exist):
    """The link's token and its unlock cookie, sent to every other route and callback
    (the cookie at ``/``, as a holder might forge it), change no answer: the share
    grants nothing outside ``/share/<token>``. Once users exist, strangers are refused
    (303 to sign in, or 401), and so is the holder."""
    token, _ = shares.create(db, "s", password=PASSWORD)
    holder, stranger = app.server.test_client(), app.server.test_client()
    cookie = unlock(holder, token, PASSWORD).headers["Set-Cookie"].split(";")[0]
    name, value = cookie.split("=", 1)
    holder.set_cookie(name, value, path="/")
    extra = {"Referer": f"http://localhost/share/{token}", "X-Share-Token": token}
    for path in _get_routes(app):
        mine = holder.get(f"{path}?share={token}", headers=extra).status_code
        assert mine == stranger.get(f"{path}?share={token}").status_code, path
        if users_exist and not path.startswith(OPEN):
            assert mine in (303, 401), path
    posted = 0
    for key, body in _callbacks(app):
        mine = holder.post("/_dash-update-component", data=json.dumps(body),
                           content_type="application/json", headers=extra)
        theirs = stranger.post("/_dash-update-component", data=json.dumps(body),
                               content_type="application/json")
        assert mine.status_code == theirs.status_code, key
        assert mine.status_code == 401 or not users_exist, key
        posted += 1
    assert posted >= 30


# -- /sites?edit=NAME --------------------------------------------------------------------

def _change(client, name: str, create: int = 0, revoke: tuple = (), **form):
    from dashkit import post_callback

    matched = [{"id": {"type": "sites-share-revoke", "index": prefix}, "property": "n_clicks",
                "value": 1} for prefix in revoke]
    fields = {"filter": "", "password": "", "origins": "", **form}
    return post_callback(
        client, ["sites-share-status.children", "sites-share-password.value"],
        inputs={"sites-share-create.n_clicks": create}, matched=(matched,),
        state={"sites-edit-name.data": name,
               **{f"sites-share-{k}.value": v for k, v in fields.items()}},
        changed=(f'{{"index":"{revoke[0]}","type":"sites-share-revoke"}}.n_clicks'
                 if revoke else "sites-share-create.n_clicks",), headers=None)


def _listed(client, name: str) -> str:
    from dashkit import post_callback

    response = post_callback(client, ["sites-share-list.children"],
                             inputs={"sites-edit-name.data": name,
                                     "sites-share-status.children": None})
    return json.dumps(response.get_json()["response"])


def test_the_sites_page_makes_lists_and_revokes_links(app, db):
    from dashkit import signed_in

    admin = signed_in(app.server.test_client())
    made = json.dumps(_change(admin, "s", create=1, filter="page:/a",
                              origins="https://blog.example.com, http://localhost:8000",
                              password="a long password").get_json())
    assert "Copy the link now" in made
    link = made.split("/share/", 1)[1].split('"', 1)[0]
    found = shares.find(db, link)
    assert found.filter == ("page", "/a") and found.locked
    assert found.frame_ancestors == ("https://blog.example.com", "http://localhost:8000")
    listed = _listed(admin, "s")
    assert found.prefix in listed and link not in listed
    assert "No share links" in _listed(admin, OTHER)
    assert found.prefix not in _listed(app.server.test_client(), "s")   # not to a visitor
    bad = json.dumps(_change(admin, "s", create=1, filter="colour:red").get_json())
    assert "unknown dimension" in bad and len(shares.listed(db)) == 1
    assert "Revoked" in json.dumps(_change(admin, "s", revoke=(found.prefix,)).get_json())
    assert shares.listed(db) == []
