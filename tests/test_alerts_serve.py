"""A site whose traffic has stopped, beside a real ``hitboard serve`` with two workers
(each running the scheduler's thread every second) and ``hitboard notify run`` repeated
every 30 s: one signed ``stopped`` webhook, one incident note."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import time_machine
from alertkit import steady
from clikit import run
from clockkit import server_clock
from dashkit import free_port
from notifykit import webhook_receiver
from test_faults_serve import WAIT, wait_until_serving

import queries
from queries import annotations as notes
from queries.notify.alerts.rules import add_alert
from queries.stats.sites import register


@pytest.mark.slow
def test_stopped_traffic_alerts_once_beside_two_workers_and_notify_run(tmp_path):
    store, port = tmp_path / "store", free_port()
    env = {**os.environ, "HITBOARD_STORE": str(store), "HITBOARD_ROLLUP_INTERVAL": "0",
           "HITBOARD_NOTIFY_INTERVAL": "1", "HITBOARD_WORKERS": "2"}
    env.pop("HITBOARD_HOST", None)
    log = (tmp_path / "serve.log").open("wb")
    server = subprocess.Popen([str(Path(sys.executable).parent / "hitboard"), "serve",
                               "--port", str(port)], env=env, stdout=log,
                              stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    with webhook_receiver(None) as (url, hooks):
        try:
            wait_until_serving(server, base)
            now = server_clock(base + "/healthz")   # the server's clock, not ours
            db = queries.connect(str(store))
            try:
                register(db, "blog", "admin")
                # Five past weeks of the same weekday, and nothing since midnight.
                steady(db, "blog", now.replace(hour=0, minute=0, second=0), 35, stop_at=0,
                       weekdays_only=True)
                hooks.secret = add_alert(db, "blog", "stopped", 15, webhook=url + "/hook",
                                         fmt="json")["secret"]
                deadline = time.monotonic() + WAIT
                while not hooks.received and time.monotonic() < deadline:
                    time.sleep(0.1)           # the workers' threads run every second
                for k in range(1, 4):         # and a cron every 30 s beside them
                    with time_machine.travel(now + dt.timedelta(seconds=30 * k), tick=False):
                        assert run(str(store), "notify", "run").exit_code == 0
                incidents = [n for n in notes.list_annotations(db, "blog")
                             if n["kind"] == "anomaly"]
            finally:
                db.client.close()
        finally:
            server.kill()
            server.wait(WAIT)
    assert [(h["body"]["event"], h["body"]["kind"], h["signed"]) for h in hooks.received] \
        == [("alert", "stopped", True)]
    assert len(incidents) == 1 and incidents[0]["text"].startswith("Traffic stopped")
