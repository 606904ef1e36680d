"""The sign-in link in a browser's history: it carries a one-time code,
never the admin secret; the code signs in once, in whichever server process, and
expires within minutes; ``hitboard signin-link`` prints a fresh one."""

from __future__ import annotations

import datetime as dt
import http.client
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import time_machine
from click.testing import CliRunner
from dashkit import ADMIN_TOKEN, dashboard_app, free_port, signin_code
from test_faults_serve import WAIT, wait_until_serving

from dashboard.cli import main
from queries.signin_links import COLLECTION, LINK_SECONDS

HITBOARD = str(Path(sys.executable).parent / "hitboard")
NOW = dt.datetime(2026, 11, 21, 14, 0, tzinfo=dt.UTC)


def get(base: str, target: str) -> tuple[int, str]:
    """A GET without following redirects: its status and its Set-Cookie."""
    connection = http.client.HTTPConnection(urlsplit(base).netloc, timeout=10)
    try:
        connection.request("GET", target)
        response = connection.getresponse()
        response.read()
        return response.status, response.getheader("Set-Cookie") or ""
    finally:
        connection.close()


def target_of(link: str) -> str:
    parts = urlsplit(link)
    return f"{parts.path}?{parts.query}"


def printed_link(log: Path, process: subprocess.Popen) -> str:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline and process.poll() is None:
        for word in log.read_text(errors="replace").split():
            if "/signin?" in word:
                return word
        time.sleep(0.1)
    pytest.fail(f"no sign-in link printed: {log.read_text(errors='replace')}")


@pytest.mark.slow
def test_the_printed_link_signs_in_once_across_two_workers_and_a_new_one_is_printed(
        tmp_path):
    store, port = tmp_path / "store", free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("HITBOARD_")}
    env.update(HITBOARD_STORE=str(store), HITBOARD_ROLLUP_INTERVAL="0")
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        process = subprocess.Popen([HITBOARD, "serve", "--workers", "2", "--port", str(port)],
                                   env=env, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        link = printed_link(log, process)
        wait_until_serving(process, base)
        assert "token=" not in link and "code=" in link
        statuses = [get(base, target_of(link)) for _ in range(6)]    # either worker
        assert statuses[0][0] == 303 and "hitboard_session=" in statuses[0][1]
        assert [status for status, _ in statuses[1:]] == [401] * 5
        fresh = subprocess.run([HITBOARD, "signin-link", "--port", str(port)], env=env,
                               capture_output=True, text=True, timeout=WAIT)
        assert fresh.returncode == 0, fresh.stderr
        new_link = fresh.stdout.strip()
        assert new_link.startswith(f"{base}/signin?code=") and new_link != link
    finally:
        process.terminate()
        process.wait(WAIT)
    assert "Traceback" not in log.read_text(errors="replace")


def test_a_code_signs_in_once_when_workers_race_for_it(tmp_path):
    """Two server processes' apps on one store, eight requests at once with one code:
    one signs in. The claim is an atomic delete in the store."""
    with dashboard_app(tmp_path / "store", rollup_interval=0) as a, \
            dashboard_app(tmp_path / "store", rollup_interval=0) as b:
        for round_ in range(5):
            code = signin_code(a.server)
            statuses, start = [], threading.Barrier(8)

            def attempt(server, address, code=code, statuses=statuses, start=start):
                client = server.test_client()
                start.wait()
                statuses.append(client.get("/signin", query_string={"code": code},
                                           environ_base={"REMOTE_ADDR": address}
                                           ).status_code)

            threads = [threading.Thread(target=attempt, args=(
                (a, b)[i % 2].server, f"192.0.2.{8 * round_ + i}")) for i in range(8)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(WAIT)
            assert sorted(statuses) == [303] + [401] * 7


def test_a_code_expires_and_the_store_keeps_only_its_digest(tmp_path):
    with time_machine.travel(NOW, tick=False) as clock, \
            dashboard_app(tmp_path / "store", rollup_interval=0) as app:
        code = signin_code(app.server)
        stored = list(_db(app)[COLLECTION].find())
        assert len(stored) == 1 and code not in str(stored)
        clock.shift(dt.timedelta(seconds=LINK_SECONDS + 1))
        late = app.server.test_client().get("/signin", query_string={"code": code})
        assert late.status_code == 401 and "expired" in late.get_data(as_text=True)
        fresh = signin_code(app.server)
        assert _db(app)[COLLECTION].count_documents({}) == 1      # the expired one gone
        clock.shift(dt.timedelta(seconds=LINK_SECONDS - 1))
        assert app.server.test_client().get(
            "/signin", query_string={"code": fresh}).status_code == 303


def test_the_secret_in_a_url_signs_nobody_in_and_signin_link_never_prints_it(tmp_path,
                                                                              monkeypatch):
    monkeypatch.setenv("HITBOARD_ADMIN_TOKEN", ADMIN_TOKEN)
    monkeypatch.delenv("HITBOARD_PUBLIC_URL", raising=False)
    with dashboard_app(tmp_path / "store", rollup_interval=0) as app:
        client = app.server.test_client()
        refused = client.get("/signin", query_string={"token": ADMIN_TOKEN})
        assert refused.status_code == 400 and "Set-Cookie" not in refused.headers
        result = CliRunner().invoke(main, ["signin-link", "--store", str(tmp_path / "store"),
                                           "--port", "9005"])
        assert result.exit_code == 0, result.output
        assert ADMIN_TOKEN not in result.output
        link = next(word for word in result.output.split() if "/signin?" in word)
        assert link.startswith("http://127.0.0.1:9005/signin?code=")
        code = parse_qs(urlsplit(link).query)["code"][0]
        assert client.get("/signin", query_string={"code": code}).status_code == 303


def _db(app):
    from dashboard.services import get_services

    return get_services(app.server).db
