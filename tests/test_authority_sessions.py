"""Signing in: the secret `hitboard serve` makes and prints, the same in
every worker; the sign-in link's cookie (HttpOnly, SameSite=Lax, Secure behind https)
and its clean redirect; sign in and out from the page; forged, expired and throttled
credentials; open admin and a server without a secret."""

from __future__ import annotations

import datetime as dt
from urllib.parse import parse_qs, quote, urlsplit

import pytest
import time_machine
from click.testing import CliRunner
from dashkit import (
    ADMIN_TOKEN,
    account_state,
    dashboard_app,
    post_callback,
    signed_in,
    signin_code,
)

from dashboard import create_server
from dashboard.authority.sessions import (
    SESSION_SECONDS,
    Session,
    check_session,
    session_value,
)
from dashboard.authority.throttle import FailureThrottle, client_key
from dashboard.cli import main
from dashboard.cli import serve as serve_cli
from dashboard.services import get_services

COOKIE = "hitboard_session"
NOW = dt.datetime(2026, 11, 21, 14, 0, tzinfo=dt.UTC)


@pytest.fixture
def server(tmp_path):
    with dashboard_app(tmp_path / "store", rollup_interval=0) as app:
        yield app.server


def can_add_notes(client) -> int:
    return client.post("/api/annotations", json={"text": "x"}).status_code


def cookie_header(response) -> str:
    return next(v for v in response.headers.getlist("Set-Cookie") if v.startswith(COOKIE))


# -- the sign-in link --------------------------------------------------------------------

def test_the_link_sets_a_lax_http_only_cookie_and_leaves_a_clean_url(server):
    client = server.test_client()
    response = client.get("/signin", query_string={"code": signin_code(server),
                                                   "next": "/loadgen"})
    assert response.status_code == 303 and response.headers["Location"] == "/loadgen"
    assert response.headers["Cache-Control"] == "no-store"
    assert response.headers["Referrer-Policy"] == "no-referrer"
    flags = cookie_header(response)
    assert "HttpOnly" in flags and "SameSite=Lax" in flags and "Path=/" in flags
    assert "Secure" not in flags                                # plain http
    assert ADMIN_TOKEN not in flags                             # an HMAC, not the secret
    assert can_add_notes(client) == 201


HOSTILE = ["//evil.example/x", "https://evil.example", "/\\evil.example", "/\t/evil.example",
           "javascript:x", "\\\\evil.example", "/\r\nLocation: //evil.example", " /history",
           "/history#@evil.example", "/\u2215\u2215evil.example", "http:/evil.example",
           "/signin?code=again", "/" + "a" * 2_001, ""]


@pytest.mark.parametrize("target", HOSTILE)
def test_the_link_never_redirects_elsewhere(server, target):
    response = server.test_client().get("/signin", query_string={"code": signin_code(server),
                                                                 "next": target})
    assert response.headers["Location"] == "/"


def test_the_link_lands_on_the_page_this_browser_last_showed(server):
    """Signing in landed on Live, whatever page the link was opened from: without
    ``next`` it lands on the page the browser last showed (a cookie the pages keep), a
    path of this server only."""
    client = server.test_client()
    page = "/history?site=s&range=30d&filter=referrer%3A(direct)"
    client.set_cookie("hitboard_here", quote(page, safe=""))
    response = client.get("/signin", query_string={"code": signin_code(server)})
    assert response.status_code == 303 and response.headers["Location"] == page
    response = client.get("/signin", query_string={"code": signin_code(server),
                                                   "next": "/loadgen"})
    assert response.headers["Location"] == "/loadgen"           # next= wins


@pytest.mark.parametrize("target", HOSTILE)
def test_the_page_remembered_never_sends_elsewhere(server, target):
    client = server.test_client()
    client.set_cookie("hitboard_here", quote(target, safe=""))
    response = client.get("/signin", query_string={"code": signin_code(server)})
    assert response.headers["Location"] == "/"


def test_a_wrong_link_sets_nothing(server):
    client = server.test_client()
    response = client.get("/signin", query_string={"code": "not-it"})
    assert response.status_code == 401 and "Set-Cookie" not in response.headers
    page = client.get("/signin")                # no code: the sign-in page
    assert page.status_code == 200 and "<h1>Sign in to " in page.get_data(as_text=True)
    secret = client.get("/signin", query_string={"token": ADMIN_TOKEN})  # the old link
    assert secret.status_code == 400 and "Set-Cookie" not in secret.headers
    assert "hitboard signin-link" in secret.get_data(as_text=True)
    assert can_add_notes(client) == 401


@pytest.mark.parametrize("settings, secure", [
    ({"public_url": "https://stats.example.com"}, True),
    ({"trusted_proxies": 1}, True),                    # X-Forwarded-Proto: https believed
    ({}, False),                                       # not believed
])
def test_the_cookie_is_secure_behind_https(tmp_path, settings, secure):
    with dashboard_app(tmp_path / "store", rollup_interval=0, **settings) as app:
        response = app.server.test_client().get(
            "/signin", query_string={"code": signin_code(app.server)},
            headers={"X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.5"})
    assert ("Secure" in cookie_header(response)) is secure


# -- cookies that are not this server's ------------------------------------------------

def test_a_forged_cookie_counts_as_a_failure_and_is_cleared(server):
    client = server.test_client()
    client.set_cookie(COOKIE, session_value("another-servers-secret"))
    response = client.post("/api/annotations", json={"text": "x"})
    assert response.status_code == 401
    assert cookie_header(response).startswith(f"{COOKIE}=;")   # the browser forgets it
    assert client.get_cookie(COOKIE) is None
    for _ in range(4):
        client.set_cookie(COOKIE, "1.forged")
        client.post("/api/annotations", json={"text": "x"})
    assert signed_in_status(client) == 429                     # five failures: throttled


@pytest.mark.parametrize("value", ["", "abc", "123", "123.", "\u0661\u0662.00",
                                   "9" * 13 + ".00", "1795600000.zz"])
def test_anything_but_this_servers_signature_is_forged(value):
    assert check_session(value, ADMIN_TOKEN) is Session.FORGED
    assert check_session(session_value(ADMIN_TOKEN), ADMIN_TOKEN) is Session.VALID


def signed_in_status(client) -> int:
    return client.get("/signin",
                      query_string={"code": signin_code(client.application)}).status_code


def test_a_session_lasts_a_week_then_asks_again_without_counting_a_failure(server):
    with time_machine.travel(NOW, tick=False) as clock:
        client = signed_in(server.test_client())
        old = client.get_cookie(COOKIE).value
        clock.shift(dt.timedelta(seconds=SESSION_SECONDS - 60))
        assert can_add_notes(client) == 201
        clock.shift(dt.timedelta(seconds=120))
        assert can_add_notes(client) == 401
        assert client.get_cookie(COOKIE) is None                # cleared
        for _ in range(6):                                      # ours, only too old:
            stale = server.test_client()                        # not a failure
            stale.set_cookie(COOKIE, old)
            assert can_add_notes(stale) == 401
        assert signed_in_status(server.test_client()) == 303


def test_a_new_secret_signs_every_browser_out(tmp_path):
    with dashboard_app(tmp_path / "a", rollup_interval=0, admin_token="first-secret-abcdef") as a:
        value = signed_in(a.server.test_client()).get_cookie(COOKIE)
    with dashboard_app(tmp_path / "a", rollup_interval=0, admin_token="second-secret-abcd") as b:
        client = b.server.test_client()
        client.set_cookie(COOKIE, value.value)
        assert can_add_notes(client) == 401


# -- from the page: Sign in, Sign out --------------------------------------------------

def account(client, typed):
    return post_callback(client, ["account-status.children", "account-done.data"],
                         inputs={"account-signin.n_clicks": 1, "account-secret.n_submit": None},
                         state={"account-secret.value": typed},
                         changed=("account-signin.n_clicks",))


def test_the_sign_in_link_pasted_in_the_top_bar_signs_in_where_one_is(server):
    """The box took only the admin secret, which `hitboard serve` never prints: the link
    it prints, pasted whole, signs in (the page then reloads where it is), once."""
    client = server.test_client()
    link = f"http://127.0.0.1:8050/signin?code={signin_code(server)}"
    right = account(client, f"  {link}\n")
    assert "Signed in." in right.get_data(as_text=True) and can_add_notes(client) == 201
    again = account(server.test_client(), link)                 # used: signs nobody in
    assert "used already" in again.get_data(as_text=True)
    assert "not this server's admin secret" in account(
        server.test_client(), "http://x/elsewhere?code=" + signin_code(server)
    ).get_data(as_text=True)                                    # not a sign-in link


def test_signing_in_and_out_from_the_page(server):
    client = server.test_client()
    wrong = account(client, "guess")
    assert "not this server's admin secret" in wrong.get_data(as_text=True)
    assert client.get_cookie(COOKIE) is None
    right = account(client, ADMIN_TOKEN)
    assert "Signed in." in right.get_data(as_text=True)
    assert "HttpOnly" in cookie_header(right) and "SameSite=Lax" in cookie_header(right)
    assert can_add_notes(client) == 201
    out = post_callback(client, ["account-done.data"], inputs={"account-signout.n_clicks": 1},
                        changed=("account-signout.n_clicks",))
    assert out.status_code == 200 and client.get_cookie(COOKIE) is None
    assert can_add_notes(client) == 401


# -- open admin, no secret ---------------------------------------------------------------

def test_open_admin_lets_everyone_in_and_says_so(tmp_path):
    with dashboard_app(tmp_path / "store", rollup_interval=0, open_admin=True) as app:
        client = app.server.test_client()
        assert can_add_notes(client) == 201
        assert account_state(client) == "open"


def test_without_a_secret_nobody_changes_anything(tmp_path):
    """``gunicorn "dashboard:create_server()"`` without HITBOARD_ADMIN_TOKEN: locked."""
    with dashboard_app(tmp_path / "store", rollup_interval=0, admin_token=None) as app:
        client = app.server.test_client()
        refused = client.post("/api/annotations", json={"text": "x"},
                              headers={"Authorization": "Bearer anything"})
        assert refused.status_code == 403 and "no admin secret" in refused.get_json()["error"]
        assert client.get("/signin", query_string={"code": "x"}).status_code == 403
        assert account_state(client) == "none"


# -- hitboard serve -------------------------------------------------------------------------

def serve(monkeypatch, tmp_path, *args, env=()):
    """``hitboard serve`` with two gunicorn workers simulated: each builds the server from
    the settings the command handed down, as a forked worker does."""
    servers = []

    def workers(settings):
        for _ in range(2):
            servers.append(create_server(settings))

    monkeypatch.setattr(serve_cli, "run_gunicorn", workers)
    for name in ("HITBOARD_ADMIN_TOKEN", "HITBOARD_OPEN_ADMIN", "HITBOARD_PUBLIC_URL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env:
        monkeypatch.setenv(name, value)
    result = CliRunner().invoke(main, ["serve", "--store", str(tmp_path / "store"), *args])
    assert result.exit_code == 0, result.output
    return result.output, servers


def close(servers):
    for server in servers:
        get_services(server).close()


def test_serve_makes_a_secret_and_prints_a_link_that_signs_in_once_in_any_worker(
        tmp_path, monkeypatch):
    """The link carries a one-time code, not the secret; whichever
    worker a request lands on, it signs in once."""
    output, servers = serve(monkeypatch, tmp_path, "--port", "9001")
    try:
        link = next(word for word in output.split() if "/signin?code=" in word)
        assert link.startswith("http://127.0.0.1:9001/signin?code=")
        code = parse_qs(urlsplit(link).query)["code"][0]
        assert len(code) >= 40
        secret = get_services(servers[0]).settings.admin_token
        assert secret == get_services(servers[1]).settings.admin_token      # the same
        assert secret not in output
        first, second = (server.test_client() for server in servers)
        target = urlsplit(link).path + "?" + urlsplit(link).query
        assert first.get(target).status_code == 303 and can_add_notes(first) == 201
        assert second.get(target).status_code == 401 and can_add_notes(second) == 401
    finally:
        close(servers)
    again, servers = serve(monkeypatch, tmp_path)
    close(servers)
    assert code not in again                                  # a new one at each start


def test_serve_prints_the_public_url_and_never_a_configured_token(tmp_path, monkeypatch):
    output, servers = serve(monkeypatch, tmp_path, env=[
        ("HITBOARD_PUBLIC_URL", "https://stats.example.com/"),
        ("HITBOARD_ADMIN_TOKEN", "short")])
    close(servers)
    assert "https://stats.example.com/" in output and "short" not in output.replace(
        "shorter", "")
    assert "WARNING: HITBOARD_ADMIN_TOKEN is shorter than 16" in output
    output, servers = serve(monkeypatch, tmp_path, env=[("HITBOARD_PUBLIC_URL",
                                                         "https://stats.example.com")])
    close(servers)
    assert "https://stats.example.com/signin?code=" in output
    output, servers = serve(monkeypatch, tmp_path, env=[("HITBOARD_OPEN_ADMIN", "1")])
    close(servers)
    assert "WARNING: HITBOARD_OPEN_ADMIN is on" in output and "signin" not in output
    output, servers = serve(monkeypatch, tmp_path, "--readonly")
    close(servers)
    assert "signin" not in output and "sign in" not in output


def test_a_bad_public_url_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(serve_cli, "run_gunicorn", lambda settings: None)
    monkeypatch.setenv("HITBOARD_PUBLIC_URL", "stats.example.com")
    result = CliRunner().invoke(main, ["serve", "--store", str(tmp_path)])
    assert result.exit_code == 2 and "expected http(s)://host[:port]" in result.output


# -- the throttle --------------------------------------------------------------------------

class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_five_failures_wait_until_the_oldest_leaves_the_window():
    clock = Clock()
    throttle = FailureThrottle(clock=clock)
    for _ in range(4):
        throttle.fail("192.0.2.1")
        clock.now += 60
    assert throttle.retry_after("192.0.2.1") == 0
    throttle.fail("192.0.2.1")
    assert throttle.retry_after("192.0.2.1") == 900 - 240
    assert throttle.retry_after("192.0.2.2") == 0                # per address
    clock.now += 900 - 240
    assert throttle.retry_after("192.0.2.1") == 0                # the oldest left
    throttle.fail("192.0.2.1")
    assert throttle.retry_after("192.0.2.1") == 60
    throttle.forgive("192.0.2.1")
    assert throttle.retry_after("192.0.2.1") == 0


def test_the_throttle_remembers_a_bounded_number_of_addresses():
    throttle = FailureThrottle(max_clients=100, clock=Clock())
    for i in range(10_000):
        throttle.fail(f"10.{i // 65536}.{i // 256 % 256}.{i % 256}")
    assert len(throttle) == 100


def test_a_locked_out_address_stays_locked_out_while_10050_others_fail_once_each():
    clock = Clock()
    throttle = FailureThrottle(clock=clock)                 # 10,000 addresses remembered
    for _ in range(5):
        throttle.fail("192.0.2.1")
    locked = throttle.retry_after("192.0.2.1")
    assert locked == 900
    for i in range(10_050):                                 # rotation: one guess each
        if i % 100 == 0:
            clock.now += 1                                  # 101 s in all
        if throttle.retry_after(f"10.0.{i // 256}.{i % 256}") == 0:
            throttle.fail(f"10.0.{i // 256}.{i % 256}")
    assert len(throttle) == 10_000
    assert throttle.retry_after("192.0.2.1") == locked - 101    # no fresh guesses
    assert throttle.retry_after("10.0.0.1") == 0                # one remembered: its own 1
    assert throttle.retry_after("198.51.100.7") > 0             # past the table: the
    clock.now += 900                                            # others' 5 are spent
    assert throttle.retry_after("192.0.2.1") == 0
    assert throttle.retry_after("198.51.100.7") == 0
    assert len(throttle) == 0


def test_an_ipv6_host_counts_as_its_64():
    assert client_key("2001:db8:1:2:aaaa::1") == client_key("2001:db8:1:2:bbbb::2")
    assert client_key("2001:db8:1:3::1") != client_key("2001:db8:1:2::1")
    assert client_key("::ffff:192.0.2.7") == client_key("192.0.2.7") == "192.0.2.7"
    assert client_key(None) == "?"


def test_the_throttle_is_per_forwarded_address_behind_a_trusted_proxy(tmp_path):
    with dashboard_app(tmp_path / "store", rollup_interval=0, trusted_proxies=1) as app:
        for _ in range(5):
            app.server.test_client().get("/signin", query_string={"code": "x"},
                                         headers={"X-Forwarded-For": "198.51.100.1"})
        blocked, other = (app.server.test_client().get(
            "/signin", query_string={"code": signin_code(app.server)},
            headers={"X-Forwarded-For": address}) for address in ("198.51.100.1",
                                                                  "198.51.100.2"))
        assert blocked.status_code == 429 and other.status_code == 303
