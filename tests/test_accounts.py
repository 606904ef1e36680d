"""Accounts: ``hitboard user`` adds, changes, lists and removes users; a user signs in
with name and password on the sign-in page; the cookie holds across restarts and on a
read-only server and ends with the user's epoch; failures are throttled per account
name as per address; refusals say what and change nothing."""

from __future__ import annotations

import json

import pytest
from accountkit import PASSWORD, add_users, cheap_hashes, sign_in_as  # noqa: F401
from click.testing import CliRunner
from dashkit import ADMIN_TOKEN, dashboard_app

from dashboard.cli import main
from dashboard.services import get_services
from queries import accounts


def user_cli(store, *args, password=None):
    return CliRunner().invoke(main, ["user", *args, "--store", str(store)],
                              input=None if password is None else password + "\n")


def listed(store) -> list[dict]:
    result = user_cli(store, "list", "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_the_user_commands(tmp_path):
    store = tmp_path / "store"
    added = user_cli(store, "add", "ann", "--role", "viewer", "--site", "a", "--site", "b",
                     "--password-stdin", password=PASSWORD)
    assert added.exit_code == 0, added.output
    assert "added ann (viewer of a, b)" in added.output
    assert "now needs signing in" in added.output
    assert user_cli(store, "add", "root", "--role", "admin", "--password-stdin",
                    password=PASSWORD).exit_code == 0
    assert [(u["name"], u["role"], u["sites"]) for u in listed(store)] == [
        ("ann", "viewer", ["a", "b"]), ("root", "admin", None)]
    assert user_cli(store, "set", "ann", "--site", "c").exit_code == 0
    assert listed(store)[0]["sites"] == ["c"]
    assert user_cli(store, "set", "ann", "--all-sites").exit_code == 0
    assert listed(store)[0]["sites"] is None
    assert user_cli(store, "passwd", "ann", "--password-stdin",
                    password="another long one").exit_code == 0
    removed = user_cli(store, "remove", "ann")
    assert removed.exit_code == 0 and [u["name"] for u in listed(store)] == ["root"]
    assert "No user is left" in user_cli(store, "remove", "root").output


@pytest.mark.parametrize("args, password, said", [
    (("add", "ann", "--role", "viewer"), "short", "10 to 1,024 characters"),
    (("add", "ann", "--role", "viewer"), "x" * 1025, "10 to 1,024 characters"),
    (("add", "ann", "--role", "owner"), PASSWORD, "'owner' is not one of"),
    (("add", "ann", "--role", "admin"), PASSWORD, "exists already"),
    (("add", "a b", "--role", "admin"), PASSWORD, "a user name is"),
    (("add", "ann", "--role", "viewer", "--site", "no/such"), PASSWORD, "invalid site"),
    (("set", "bob", "--role", "admin"), None, "no user named bob"),
    (("passwd", "ann"), "short", "10 to 1,024"),
    (("remove", "bob"), None, "no user named bob"),
])
def test_refusals_exit_2_and_change_nothing(tmp_path, args, password, said):
    store = tmp_path / "store"
    assert user_cli(store, "add", "ann", "--role", "viewer", "--password-stdin",
                    password=PASSWORD).exit_code == 0
    before = listed(store)
    hashes = _hashes(store)
    result = user_cli(store, *args, *(("--password-stdin",) if password else ()),
                      password=password)
    assert result.exit_code == 2 and said in result.output, result.output
    assert listed(store) == before and _hashes(store) == hashes


def _hashes(store) -> list[str]:
    from dashboard.cli.common import open_db

    db = open_db(str(store))
    try:
        return [doc["hash"] for doc in db[accounts.users.COLLECTION].find()]
    finally:
        db.client.close()


@pytest.fixture
def app(tmp_path):
    with dashboard_app(tmp_path / "store", rollup_interval=0) as app:
        add_users(app.server, ("ann", "viewer", ["a"]), ("root", "admin", None))
        yield app


def test_signing_in_with_a_name_and_password(app):
    client = sign_in_as(app.server.test_client(), "ann", next="/history?site=a")
    assert client.signin.status_code == 200
    assert client.signin.get_json() == {"next": "/history?site=a"}
    cookie = client.signin.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Max-Age=604800" in cookie
    assert client.get("/history?site=a").status_code == 200
    away = sign_in_as(app.server.test_client(), "ann", next="//evil.example/")
    assert away.signin.get_json() == {"next": "/"}


WRONG = [{"name": "ann", "password": "wrong password"}, {"name": "nobody", "password": PASSWORD},
         {"name": "ann"}, {"secret": "not the secret"}]
MALFORMED = [("not json", 415), ('["name"]', 400), ('{"name": 1, "password": "x"}', 400),
             ('{"name": "ann", "role": "admin"}', 400)]


def test_a_wrong_or_malformed_sign_in_sets_nothing(app):
    """Each from its own address (five failures from one would be throttled)."""
    def post(n, **kwargs):
        return app.server.test_client().post("/signin", **kwargs,
                                             environ_base={"REMOTE_ADDR": f"192.0.2.{n}"})

    for n, body in enumerate(WRONG):
        response = post(n, json=body)
        assert response.status_code == 401 and "Set-Cookie" not in response.headers, body
    for n, (body, status) in enumerate(MALFORMED, start=10):
        response = post(n, data=body, content_type="text/plain" if status == 415 else
                        "application/json")
        assert response.status_code == status and "Set-Cookie" not in response.headers
    wrong = post(20, json={"name": "ann", "password": "x" * 12})
    missing = post(21, json={"name": "bob", "password": "x" * 12})      # the same answer
    assert (wrong.status_code, wrong.get_json()) == (missing.status_code, missing.get_json())


def test_the_admin_secret_signs_in_on_the_same_page(app):
    client = app.server.test_client()
    response = client.post("/signin", json={"secret": ADMIN_TOKEN, "next": "/sites"})
    assert response.status_code == 200 and response.get_json() == {"next": "/sites"}
    assert client.get("/sites").status_code == 200


def test_five_failures_for_one_name_from_many_addresses_then_429(app):
    for n in range(5):
        failed = app.server.test_client().post(
            "/signin", json={"name": "ann", "password": "wrong password"},
            environ_base={"REMOTE_ADDR": f"198.51.100.{n}"})
        assert failed.status_code == 401
    refused = sign_in_as(app.server.test_client(), "ann").signin
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) > 0
    assert "Set-Cookie" not in refused.headers
    assert sign_in_as(app.server.test_client(), "root").signin.status_code == 200


CHANGES = {
    "passwd": lambda db, name: accounts.set_password(db, name, "a new password"),
    "set": lambda db, name: accounts.set_user(db, name, sites=["a", "b"]),
    "sign out everywhere": accounts.bump_epoch,
    "remove": accounts.remove_user,
}


def test_the_epoch_signs_out_everywhere(app):
    add_users(app.server, *((name.replace(" ", "-"), "viewer", ["a"]) for name in CHANGES))
    for name, change in CHANGES.items():
        name = name.replace(" ", "-")
        client = sign_in_as(app.server.test_client(), name)
        assert client.get("/history?site=a").status_code == 200
        change(get_services(app.server).db, name)
        response = client.get("/history?site=a")
        assert response.status_code == 303, name
        assert response.headers["Location"].startswith("/signin")
        assert "hitboard_session=;" in response.headers.get("Set-Cookie", "")


def test_the_cookie_holds_after_a_restart_and_on_a_read_only_server(app, tmp_path):
    cookie = sign_in_as(app.server.test_client(), "ann").signin.headers["Set-Cookie"]
    value = cookie.split(";")[0].split("=", 1)[1]
    get_services(app.server).close()
    for readonly in (False, True):
        with dashboard_app(tmp_path / "store", rollup_interval=0, readonly=readonly,
                           admin_token="another secret after a restart") as again:
            client = again.server.test_client()
            client.set_cookie("hitboard_session", value)
            assert client.get("/history?site=a").status_code == 200
            forged = again.server.test_client()
            forged.set_cookie("hitboard_session", value[:-4] + "0000")
            assert forged.get("/history?site=a").status_code == 303


def test_a_viewer_changes_nothing_and_an_admin_user_may(app):
    viewer = sign_in_as(app.server.test_client(), "ann")
    note = {"site": "a", "text": "deployed", "kind": "deploy"}
    refused = viewer.post("/api/annotations", json=note)
    assert refused.status_code == 403
    admin = sign_in_as(app.server.test_client(), "root")
    assert admin.post("/api/annotations", json=note).status_code == 201
    listed_notes = admin.get("/api/annotations?site=a").get_json()["annotations"]
    assert [(n["text"], n["author"]) for n in listed_notes] == [("deployed", "root")]


def test_a_store_that_cannot_say_keeps_the_last_answer(app, monkeypatch):
    from pymongo.errors import ServerSelectionTimeoutError

    client = app.server.test_client()
    assert client.get("/history").status_code == 303

    def down(_db):
        raise ServerSelectionTimeoutError("the store is down")

    monkeypatch.setattr(accounts, "any_users", down)
    assert client.get("/history").status_code == 303            # still closed


def test_a_user_signs_itself_out_everywhere_from_the_top_bar(app):
    here, there = (sign_in_as(app.server.test_client(), "ann") for _ in range(2))
    assert there.get("/history?site=a").status_code == 200
    key = next(key for key, spec in app.callback_map.items()
               if [i["id"] for i in spec["inputs"]] == ["account-signout-all"])
    body = {"output": key, "outputs": {"id": "account-done", "property": key.split(".")[1]},
            "inputs": [{"id": "account-signout-all", "property": "n_clicks", "value": 1}],
            "state": [], "changedPropIds": ["account-signout-all.n_clicks"]}
    done = here.post("/_dash-update-component", json=body)
    assert done.status_code == 200 and "hitboard_session=;" in done.headers["Set-Cookie"]
    assert there.get("/history?site=a").status_code == 303


def test_users_on_every_backend(db):
    """The store's side of accounts, as every backend runs it (embedded, wire, mongomock)."""
    assert not accounts.any_users(db) and accounts.signing_key(db) is None
    accounts.add_user(db, "ann", "viewer", PASSWORD, ["b", "a"])
    key = accounts.signing_key(db)
    assert key and accounts.signing_key(db, create=True) == key
    with pytest.raises(accounts.UserError):
        accounts.add_user(db, "ann", "admin", PASSWORD)
    assert accounts.authenticate(db, "ann", PASSWORD).sites == frozenset({"a", "b"})
    assert accounts.authenticate(db, "ann", "not the password") is None
    changed = accounts.set_user(db, "ann", role="admin", all_sites=True)
    assert (changed.role, changed.sites, changed.epoch) == ("admin", None, 1)
    assert accounts.bump_epoch(db, "ann").epoch == 2
    accounts.remove_user(db, "ann")
    assert not accounts.any_users(db) and accounts.find_user(db, "ann") is None
