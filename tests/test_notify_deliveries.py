"""Deliveries against real protocols (queries/notify/deliveries.py): an email through an
SMTP server, a webhook signed and checked by its receiver, each send claimed once, a
failure retried after 1, 5 and 30 minutes then failed, a send cut off logged unknown."""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine
from notifykit import context, smtp_server, webhook_receiver

from queries.notify import channels, deliveries
from queries.notify.deliveries import DELIVERIES, deliver, delivery_log

AT = dt.datetime(2026, 3, 16, 7, 0, tzinfo=dt.UTC)


@pytest.fixture
def db(db):
    """Each backend's database (tests/conftest.py), with the deliveries' indexes."""
    deliveries.ensure_notify_indexes(db)
    return db


def _send(ctx, claim_id="c1", **fields):
    values = {"site": "s", "channel": "email", "to": "ann@example.com",
              "subject": "Report", "text": "plain"} | fields
    return deliver(ctx, claim_id=claim_id, **values)


@time_machine.travel(AT, tick=False)
def test_an_email_goes_once_with_both_parts_and_its_inline_image(db, tmp_path):
    with smtp_server() as (url, inbox):
        ctx = context(db, tmp_path, smtp_url=url, public_url="https://stats.example.org")
        fields = {"subject": "sité: week «report»", "html": "<p>hi <img src='cid:chart'></p>",
                  "images": {"chart": b"\x89PNG-not-really"},
                  "headers": {"List-Unsubscribe": "<https://stats.example.org/u/x>"}}
        assert _send(ctx, **fields) == "sent"
        assert _send(ctx, **fields) == "taken"          # the same claim: not again
    [mail] = inbox.messages
    assert inbox.envelopes == [("hitboard@stats.example.org", ["ann@example.com"])]
    assert mail["Subject"] == "sité: week «report»"
    assert mail["List-Unsubscribe"] == "<https://stats.example.org/u/x>"
    assert mail.get_body(("plain",)).get_content().strip() == "plain"
    assert "cid:chart" in mail.get_body(("html",)).get_content()
    [image] = [p for p in mail.walk() if p.get_content_type() == "image/png"]
    assert image["Content-ID"] == "<chart>" and image.get_content() == b"\x89PNG-not-really"
    assert [r["result"] for r in delivery_log(db)] == ["sent"]


@time_machine.travel(AT, tick=False)
def test_a_header_with_a_line_break_is_refused_not_sent(db, tmp_path):
    with smtp_server() as (url, inbox):
        ctx = context(db, tmp_path, smtp_url=url)
        assert _send(ctx, subject="site\r\nBcc: eve@example.com") == "failed"
    assert inbox.messages == []
    assert "not sendable" in delivery_log(db)[0]["error"]


@time_machine.travel(AT, tick=False)
def test_credentials_never_go_without_starttls(db, tmp_path):
    with smtp_server() as (url, inbox):
        ctx = context(db, tmp_path, smtp_url=url.replace("//", "//ann:pw@"))
        assert _send(ctx) == "queued"
    assert inbox.messages == []
    assert "STARTTLS" in delivery_log(db)[0]["error"]


def test_a_webhook_is_signed_and_sends_slack_text_or_the_full_json(db, tmp_path):
    with webhook_receiver("s3cret") as (url, hooks), time_machine.travel(AT, tick=False):
        ctx = context(db, tmp_path)
        db["sites"].insert_one({"_id": "s", "alerts": [{"webhook": url + "/a",
                                                        "secret": "s3cret"}]})
        assert _send(ctx, "w1", channel="webhook", to=url + "/a", text="Traffic stopped") \
            == "sent"
        assert _send(ctx, "w2", channel="webhook", to=url + "/a", text="t",
                     payload={"kind": "stopped", "site": "s"}) == "sent"
        assert _send(ctx, "w3", channel="webhook", to=url + "/b", text="unsigned") == "sent"
    assert [(h["body"], h["signed"]) for h in hooks.received] == [
        ({"text": "Traffic stopped"}, True), ({"kind": "stopped", "site": "s"}, True),
        ({"text": "unsigned"}, False)]
    assert hooks.received[0]["type"] == "application/json"


def test_a_failing_webhook_is_retried_after_1_5_and_30_minutes_then_failed(db, tmp_path):
    with webhook_receiver() as (url, hooks), \
            time_machine.travel(AT, tick=False) as clock:
        ctx = context(db, tmp_path)
        hooks.answers = [500, 302, 404, 503]
        assert _send(ctx, channel="webhook", to=url) == "queued"
        for wait in (1, 5, 30):
            clock.shift(dt.timedelta(minutes=wait) - dt.timedelta(seconds=1))
            assert deliveries.run_due(ctx, dt.datetime.now(dt.UTC)) == 0   # not yet
            clock.shift(dt.timedelta(seconds=1))
            assert deliveries.run_due(ctx, dt.datetime.now(dt.UTC)) == 1
        clock.shift(dt.timedelta(days=1))
        assert deliveries.run_due(ctx, dt.datetime.now(dt.UTC)) == 0
    [logged] = delivery_log(db)
    assert (logged["attempt"], logged["result"]) == (4, "failed")
    assert len(hooks.received) == 4            # the 302 was not followed
    tries = db[DELIVERIES].find_one()["tries"]
    assert [t["error"] for t in tries] == [f"webhook answered HTTP {n}"
                                           for n in (500, 302, 404, 503)]
    assert deliveries.counts(db) == {"failed": 1, "unknown": 0, "queued": 0}


def test_a_retry_that_succeeds_is_sent_once(db, tmp_path):
    with webhook_receiver() as (url, hooks), time_machine.travel(AT, tick=False) as clock:
        ctx = context(db, tmp_path)
        hooks.answers = [503]
        assert _send(ctx, channel="webhook", to=url) == "queued"
        clock.shift(dt.timedelta(minutes=1))
        now = dt.datetime.now(dt.UTC)
        assert deliveries.run_due(ctx, now) + deliveries.run_due(ctx, now) == 1
    assert len(hooks.received) == 2 and delivery_log(db)[0]["result"] == "sent"


def test_a_send_cut_off_after_its_claim_is_unknown_and_never_sent_again(db, tmp_path):
    with webhook_receiver() as (url, hooks), time_machine.travel(AT, tick=False) as clock:
        ctx = context(db, tmp_path)
        assert deliveries.claim(db, "cut")
        now = dt.datetime.now(dt.UTC)
        db[DELIVERIES].insert_one({"_id": "cut", "site": "s", "channel": "webhook",
                                   "to": url, "subject": "x", "at": now, "attempt": 1,
                                   "state": "sending", "attempt_at": now, "tries": [],
                                   "message": {"text": "x"}})     # a killed process's
        assert _send(ctx, "cut", channel="webhook", to=url, text="x") == "taken"
        clock.shift(deliveries.CUT_OFF + dt.timedelta(seconds=1))
        deliveries.run_due(ctx, dt.datetime.now(dt.UTC))
    assert hooks.received == []
    assert delivery_log(db)[0]["result"] == "unknown"
    assert deliveries.counts(db)["unknown"] == 1


@pytest.mark.parametrize("to", ["ann", "ann@example.com, bob@example.com",
                                "Ann <ann@example.com>", "ann@example.com\r\nBcc: x@y.z",
                                "ftp://example.com/x", "http://", "javascript:alert(1)"])
def test_a_malformed_target_is_refused(to):
    with pytest.raises(channels.InvalidTargetError):
        channels.channel_of(to)


def test_an_unknown_smtp_scheme_is_refused_naming_the_setting():
    from dashboard.settings import InvalidSettingError, resolve
    with pytest.raises(InvalidSettingError, match="smtp_url"):
        resolve({"smtp_url": "http://mail.example.com"}, environ={})


def test_notify_test_signs_a_webhook_and_the_log_shows_it(tmp_path):
    from click.testing import CliRunner
    from clikit import rows, run

    from dashboard.cli import main

    store = str(tmp_path / "cli-store")
    with webhook_receiver("k3y") as (url, hooks), \
            time_machine.travel(AT, tick=False) as clock:
        sent = run(store, "notify", "test", "--to", url + "/t", "--secret", "k3y")
        clock.shift(dt.timedelta(seconds=1))        # the log's order: newest first
        hooks.answers = [500]
        failed = run(store, "notify", "test", "--to", url + "/t")
        refused = CliRunner().invoke(main, ["notify", "test", "--to", "ftp://x",
                                            "--store", store])
    assert (sent.exit_code, sent.stdout.strip()) == (0, "sent")
    assert failed.exit_code == 1 and "queued: webhook answered HTTP 500" in failed.stdout
    assert refused.exit_code == 2 and "not an http(s) URL" in refused.output
    assert [h["signed"] for h in hooks.received] == [True, False]
    logged = rows(run(store, "notify", "log", "-n", "5"))
    assert [(r["channel"], r["result"], r["attempt"]) for r in logged] == [
        ("webhook", "queued", "1"), ("webhook", "sent", "1")]


def test_one_failing_step_of_the_scheduler_stops_no_other(monkeypatch, caplog):
    from queries.notify import jobs

    ran = []

    def broken(services, now):
        raise RuntimeError("store gone")

    monkeypatch.setattr(jobs, "steps", lambda: [("retries", broken),
                                                ("reports", lambda s, n: ran.append(n))])
    jobs.run_due(None, AT)
    assert ran == [AT] and "the retries step failed" in caplog.text


def test_removing_a_sites_data_removes_its_delivery_log(db, tmp_path):
    from queries import sitedata

    with webhook_receiver() as (url, hooks), time_machine.travel(AT, tick=False):
        ctx = context(db, tmp_path)
        hooks.answers = [500, 500]
        assert _send(ctx, claim_id="c1", channel="webhook", to=url) == "queued"
        assert _send(ctx, claim_id="c2", site="kept", channel="webhook", to=url) == "queued"
    assert sitedata.remove(db, "s")[DELIVERIES] == 1        # recipients and retries gone
    assert [d["site"] for d in delivery_log(db)] == ["kept"]
