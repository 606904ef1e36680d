"""The server's periodic rollup job, fed by the /hit beacon."""

from __future__ import annotations

import datetime as dt
import time

import pytest
from dashkit import dashboard_app

from dashboard.rollup_job import rollup_job
from dashboard.services import get_services
from queries.rollups import reads as rollup_reads

pytestmark = pytest.mark.usefixtures("frozen_clock")   # the same days at any hour


def test_the_server_rolls_up_beacon_hits_on_its_own(tmp_path):
    with dashboard_app(tmp_path / "store", rollup_interval=1, events_ttl_days=7,
                       beacon_sites="blog") as app:
        services = get_services(app.server)
        assert rollup_job(app.server).retention == 7
        client = app.server.test_client()
        for page in ("/a", "/b", "/a"):
            assert client.get(f"/hit?site=blog&page={page}").status_code == 200
        hour = dt.datetime.now(dt.UTC).replace(minute=0, second=0, microsecond=0)
        job = rollup_job(app.server)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:    # the hour in progress, rolled up by the job
            services.recorder.flush()
            rolled = rollup_reads.rollup_series(services.db, "blog", hour - dt.timedelta(hours=1),
                                                hour + dt.timedelta(hours=2), "hour")
            # The buckets are written before the run ends (checkpoint, expiry, sketch
            # compaction) and records itself: wait for both.
            if int(rolled["*"].sum()) == 3 and job.last is not None:
                break
            time.sleep(0.2)
        assert int(rolled["*"].sum()) == 3
        assert job.last is not None


def test_read_only_servers_run_no_job(tmp_path):
    with dashboard_app(tmp_path / "store"):
        pass
    with dashboard_app(tmp_path / "store", readonly=True) as app:
        assert rollup_job(app.server) is None
