"""``hitboard alerts add|list|remove``: alerts stored beside the site's goals, the day
they start said, and every refusal a one-line message (exit 2) that stores nothing."""

from __future__ import annotations

import datetime as dt

import pytest
from alertkit import steady
from clikit import rows, run

import queries
from queries.notify.alerts.rules import all_alerts
from queries.stats.sites import register


@pytest.fixture
def store(tmp_path, frozen_clock):
    """A site ``s`` with 10 days of traffic before today (``frozen_clock``'s day)."""
    path = str(tmp_path / "store")
    db = queries.connect(path)
    try:
        queries.ensure_indexes(db)
        register(db, "s", "admin")
        register(db, "new", "admin")
        today = frozen_clock.replace(hour=0, minute=0, second=0, microsecond=0)
        steady(db, "s", today, 10)
    finally:
        db.client.close()
    return path


def stored(path) -> list[dict]:
    db = queries.connect(path)
    try:
        return all_alerts(db, secrets_too=True)
    finally:
        db.client.close()


def test_add_list_remove(store, frozen_clock):
    first = frozen_clock.date() - dt.timedelta(days=10)
    added = run(store, "alerts", "add", "--site", "s", "--kind", "stopped",
                "--email", "ops@example.com")
    assert added.exit_code == 0, added.output
    assert f"s's alerts start on {first + dt.timedelta(weeks=4):%Y-%m-%d}" in added.output
    hooked = run(store, "alerts", "add", "--site", "new", "--kind", "above", "--for", "60",
                 "--page", "/pricing", "--webhook", "https://hooks.example.com/x",
                 "--during-loadgen", "--format", "json")
    assert hooked.exit_code == 0, hooked.output
    secret = [a for a in stored(store) if a["site"] == "new"][0]["secret"]
    assert "webhook secret (shown once;" in hooked.output and secret in hooked.output
    assert "new has no traffic yet" in hooked.output
    listed = rows(run(store, "alerts", "list"))
    assert [(r["site"], r["page"], r["kind"], r["for"], r["channel"], r["to"], r["format"],
             r["during_loadgen"]) for r in listed] == [
        ("new", "/pricing", "above", "60", "webhook", "https://hooks.example.com/x", "json",
         "True"),
        ("s", "*", "stopped", "15", "email", "ops@example.com", "", "False")]
    assert secret not in run(store, "alerts", "list", "--format", "json").output
    assert [r["site"] for r in rows(run(store, "alerts", "list", "--site", "s"))] == ["s"]
    removed = run(store, "alerts", "remove", listed[0]["id"])
    assert removed.exit_code == 0 and "removed alert" in removed.output
    assert [a["site"] for a in stored(store)] == ["s"]
    again = run(store, "alerts", "remove", listed[0]["id"])
    assert again.exit_code == 2 and "no alert" in again.output


@pytest.mark.parametrize("args, reason", [
    (("--site", "nobody", "--kind", "above", "--email", "a@example.com"), "unknown site"),
    (("--site", "s", "--kind", "sideways", "--email", "a@example.com"), "sideways"),
    (("--site", "s", "--kind", "above", "--for", "0", "--email", "a@example.com"),
     "outside 1–1,440"),
    (("--site", "s", "--kind", "above", "--for", "1441", "--email", "a@example.com"),
     "outside 1–1,440"),
    (("--site", "s", "--kind", "above", "--email", "a@example.com,b@example.com"),
     "not one email address"),
    (("--site", "s", "--kind", "above", "--email", "a@example.com\r\nBcc: b@example.com"),
     "not one email address"),
    (("--site", "s", "--kind", "above", "--webhook", "ftp://example.com/x"),
     "not an http(s) URL"),
    (("--site", "s", "--kind", "above"), "one channel"),
    (("--site", "s", "--kind", "above", "--email", "a@example.com", "--format", "json"),
     "give --webhook"),
    (("--site", "s", "--kind", "above", "--email", "a@example.com", "--webhook",
      "https://example.com/x"), "one channel"),
])
def test_bad_input_stores_nothing(store, args, reason):
    result = run(store, "alerts", "add", *args)
    assert result.exit_code == 2 and reason in result.output, result.output
    assert stored(store) == []
