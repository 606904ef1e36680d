"""``hitboard loadgen``: backfill and live traffic from the command line."""

import datetime as dt
import re

import pytest
from click.testing import CliRunner

import queries
from dashboard.cli import main

pytestmark = pytest.mark.usefixtures("frozen_clock")   # the same days at any hour


def _run(*args):
    return CliRunner().invoke(main, ["loadgen", *args], catch_exceptions=False)


def _stored(store, sites, days):
    db = queries.connect(store)
    try:
        end = dt.datetime.now(dt.UTC) + dt.timedelta(minutes=1)
        start = end - dt.timedelta(days=days + 1)
        return {s: int(queries.daily_series(db, s, start, end)["*"].sum()) for s in sites}, \
            queries.synthetic_sites(db)
    finally:
        db.client.close()


def test_backfill_only_writes_exactly_the_hits_it_reports(tmp_path):
    store = str(tmp_path / "store")
    result = _run("--store", store, "--rate", "1", "--duration", "0", "--pages", "3",
                  "--backfill-days", "2")
    assert result.exit_code == 0, result.output
    assert "sites: shop.example, blog.example (3 pages each)" in result.output
    hits = int(re.search(r"backfilled 2 days \+ today: ([\d,]+) hits", result.output)
               .group(1).replace(",", ""))
    stored, synthetic = _stored(store, ["shop.example", "blog.example"], 2)
    assert sum(stored.values()) == hits > 0
    assert synthetic == ["blog.example", "shop.example"]


def test_live_run_reports_rates_and_every_hit_is_written(tmp_path):
    store = str(tmp_path / "store")
    result = _run("--store", store, "--rate", "300", "--duration", "1.5", "--sites", "1",
                  "--pages", "4", "--diurnal", "0")
    assert result.exit_code == 0, result.output
    assert re.search(r"target +300/s +achieved", result.output)
    sent, written = (int(n.replace(",", "")) for n in
                     re.search(r"sent ([\d,]+) hits .*written ([\d,]+), errors 0",
                               result.output).groups())
    assert sent == written > 0
    stored, _ = _stored(store, ["shop.example"], 0)
    assert stored["shop.example"] == sent


@pytest.mark.parametrize("args, text", [
    (["--rate", "0"], "rate must be from 1 to 20,000"),
    (["--rate", "50000"], "rate must be from 1 to 20,000"),
    (["--sites", "0"], "sites must be an integer"),
    (["--zipf", "9"], "the Zipf exponent must be from 0 to 5"),
])
def test_bad_options_give_a_one_line_error(tmp_path, args, text):
    result = _run("--store", str(tmp_path / "store"), "--duration", "0", *args)
    assert result.exit_code == 2
    assert f"Error: {text}" in result.output


def test_a_real_site_is_refused(tmp_path):
    store = str(tmp_path / "store")
    db = queries.connect(store)
    queries.log_hit(db, dt.datetime.now(dt.UTC), "shop.example", "/")
    db.client.close()
    result = _run("--store", store, "--duration", "0")
    assert result.exit_code == 2
    assert "holds real traffic" in result.output
