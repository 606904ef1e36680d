"""Email reports (queries/notify/reports.py and the ``reports`` CLI) on five weeks of
ingested history: sent on schedule in the site's zone (week and month ends, Paris's DST
days, Kolkata's half hour), once whatever restarts, with the figures of ``hitboard
report`` and History's chart; RFC 8058's one-click unsubscribe."""

from __future__ import annotations

import csv
import datetime as dt
import io
import shutil

import pytest
import time_machine
from click.testing import CliRunner
from clikit import run
from dashkit import dashboard_app
from notifykit import context, smtp_server

import queries
from dashboard.cli import main
from dashboard.notify import notify_job
from queries.annotations import add_annotation
from queries.notify import periods, report_mail, reports
from queries.notify.deliveries import delivery_log
from queries.notify.subscriptions import add_report, all_reports
from queries.stats.sites import update_site

AGENT = "Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0"
FIRST = dt.datetime(2026, 2, 9, tzinfo=dt.UTC)       # a Monday; five weeks follow
PNG = b"\x89PNG\r\n\x1a\nfake"


def utc(*args) -> dt.datetime:
    return dt.datetime(*args, tzinfo=dt.UTC)


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """A store holding five weeks of a few visits a day on site ``s``, ingested."""
    folder = tmp_path_factory.mktemp("history")
    lines = []
    for d in range(35):
        for who in range(1 + d % 4):
            for k, page in enumerate(["/", "/blog/a", "/pricing"][: 1 + (who + d) % 3]):
                t = FIRST + dt.timedelta(days=d, hours=9 + who, minutes=3 * k)
                ref = "https://news.example/x" if who == 1 else "-"
                lines.append(f'203.0.113.{who + 1} - - [{t:%d/%b/%Y:%H:%M:%S} +0000] '
                             f'"GET {page} HTTP/1.1" 200 5 "{ref}" "{AGENT}"\n')
    (folder / "access.log").write_text("".join(lines))
    result = CliRunner().invoke(main, ["ingest", str(folder / "access.log"), "--site", "s",
                                       "--store", str(folder / "store")])
    assert result.exit_code == 0, result.output
    return folder / "store"


@pytest.fixture
def store(history, tmp_path):
    """A copy of the five weeks for one test."""
    return str(shutil.copytree(history, tmp_path / "store"))


@pytest.fixture
def db(store):
    database = queries.connect(store)
    yield database
    database.client.close()


@pytest.mark.parametrize(("period", "end", "tz", "start", "stop"), [
    # a week ends on Sunday at midnight, local: Monday 00:00 starts the next
    ("week", utc(2026, 3, 15, 22, 59), "Europe/Paris", utc(2026, 3, 1, 23), utc(2026, 3, 8, 23)),
    ("week", utc(2026, 3, 15, 23), "Europe/Paris", utc(2026, 3, 8, 23), utc(2026, 3, 15, 23)),
    # the week of the spring DST change has 167 hours, October's 169
    ("week", utc(2026, 3, 30, 6), "Europe/Paris", utc(2026, 3, 22, 23), utc(2026, 3, 29, 22)),
    ("week", utc(2026, 10, 26, 7), "Europe/Paris", utc(2026, 10, 18, 22),
     utc(2026, 10, 25, 23)),
    ("month", utc(2026, 3, 31, 21, 59), "Europe/Paris", utc(2026, 1, 31, 23),
     utc(2026, 2, 28, 23)),
    ("month", utc(2026, 3, 31, 22), "Europe/Paris", utc(2026, 2, 28, 23), utc(2026, 3, 31, 22)),
    ("month", utc(2026, 1, 31, 18, 30), "Asia/Kolkata", utc(2025, 12, 31, 18, 30),
     utc(2026, 1, 31, 18, 30)),
    ("week", utc(2026, 3, 16, 0), "UTC", utc(2026, 3, 9), utc(2026, 3, 16)),
])
def test_the_last_complete_period_in_the_sites_zone(period, end, tz, start, stop):
    assert periods.period_before(period, end, tz) == (start, stop)


@pytest.mark.parametrize(("period", "now", "tz", "due"), [
    ("week", utc(2026, 3, 30, 5, 59), "Europe/Paris", utc(2026, 3, 23, 7)),   # 07:59 CEST
    ("week", utc(2026, 3, 30, 6), "Europe/Paris", utc(2026, 3, 30, 6)),       # 08:00 CEST
    ("week", utc(2026, 10, 26, 7), "Europe/Paris", utc(2026, 10, 26, 7)),     # 08:00 CET
    ("week", utc(2026, 3, 16, 2, 30), "Asia/Kolkata", utc(2026, 3, 16, 2, 30)),
    ("week", utc(2026, 3, 16, 2, 29), "Asia/Kolkata", utc(2026, 3, 9, 2, 30)),
    ("month", utc(2026, 4, 1, 6), "Europe/Paris", utc(2026, 4, 1, 6)),
    ("month", utc(2026, 4, 1, 5, 59), "Europe/Paris", utc(2026, 3, 1, 7)),
])
def test_a_report_is_due_at_its_hour_local_on_monday_or_the_first(period, now, tz, due):
    assert periods.last_send(period, 8, now, tz) == due


def test_a_due_report_goes_once_across_runs_and_restarts(db, store):
    update_site(db, "s", tz="Europe/Paris")
    add_report(db, "s", "week", "ann@example.com", 8, now=utc(2026, 3, 1))
    add_report(db, "s", "week", "late@example.com", 8, now=utc(2026, 3, 16, 7, 30))
    with smtp_server() as (url, inbox):
        with time_machine.travel(utc(2026, 3, 16, 6, 59), tick=False):    # 07:59 CET
            first = context(db, store, lambda frame, granularity: PNG, smtp_url=url)
            reports.run_due(first, utc(2026, 3, 16, 6, 59))
            sent_before = [m["Subject"] for m in inbox.messages]
        with time_machine.travel(utc(2026, 3, 16, 7), tick=False):
            assert reports.run_due(first, utc(2026, 3, 16, 7)) == ["sent"]
            assert reports.run_due(first, utc(2026, 3, 16, 7, 1)) == []
            restarted = context(db, store, lambda frame, granularity: PNG, smtp_url=url)
            assert reports.run_due(restarted, utc(2026, 3, 16, 9)) == []
    assert sent_before == ["s: week of 2026-03-02 to 2026-03-08 report"]  # due since 2 Mar
    assert [m["Subject"] for m in inbox.messages[1:]] == [
        "s: week of 2026-03-09 to 2026-03-15 report"]
    assert [to for _, to in inbox.envelopes] == [["ann@example.com"], ["ann@example.com"]]


def test_the_email_has_the_figures_of_hitboard_report_and_the_chart(store):
    week = ("--site", "s", "--start", "2026-03-02", "--end", "2026-03-09")
    figures = {}
    for metric in ("pageviews", "visits"):
        out = run(store, "report", *week, "--granularity", "week", "--metric", metric)
        figures[metric] = int(next(csv.DictReader(io.StringIO(out.stdout)))[metric])
    figures["visitors"] = int(run(store, "visitors", *week, "--humans").stdout.split()[0])
    assert run(store, "reports", "add", "--site", "s", "--period", "week", "--to",
               "ann@example.com").exit_code == 0
    with smtp_server() as (url, inbox):
        sent = CliRunner().invoke(main, ["reports", "send", "--site", "s", "--period", "week",
                                         "--to", "ann@example.com", "--end", "2026-03-10",
                                         "--store", store], env={"HITBOARD_SMTP_URL": url})
    assert sent.exit_code == 0, sent.output
    [mail] = inbox.messages
    text = mail.get_body(("plain",)).get_content()
    html = mail.get_body(("html",)).get_content()
    assert mail["Subject"] == "s: week of 2026-03-02 to 2026-03-08 report"
    for label, key in (("Pageviews", "pageviews"), ("Visits", "visits"),
                       ("Visitors", "visitors")):
        assert f"{label}: {figures[key]:,} (" in text
        assert f"<b>{figures[key]:,}</b>" in html
    assert "news.example" in text and "/blog/a" in html
    [chart] = [p for p in mail.walk() if p.get_content_type() == "image/png"]
    assert chart.get_content()[:8] == b"\x89PNG\r\n\x1a\n" and "cid:chart" in html
    assert mail["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert mail["List-Unsubscribe"].strip().startswith("<http://127.0.0.1:8050/unsubscribe/")


def test_without_a_chart_the_email_says_so_and_the_log_says_why(db, store, caplog):
    def no_browser(frame, granularity):
        raise RuntimeError("Kaleido found no Chrome")

    ctx = context(db, store, no_browser)
    fields = reports.message(ctx, "s", "week", utc(2026, 3, 2), utc(2026, 3, 9), "UTC", None)
    assert fields["images"] is None and "chart is left out" in fields["text"]
    assert "chart is left out" in fields["html"] and "cid:" not in fields["html"]
    assert "Kaleido found no Chrome" in caplog.text


def test_names_are_text_in_the_html(db, store):
    add_annotation(db, "s", utc(2026, 3, 3, 12), "<script>x</script> & co")
    ctx = context(db, store)
    fields = reports.message(ctx, "s", "week", utc(2026, 3, 2), utc(2026, 3, 9), "UTC", None)
    assert "&lt;script&gt;x&lt;/script&gt; &amp; co" in fields["html"]
    assert "<script>" not in fields["html"] and "<script>x</script> & co" in fields["text"]


@pytest.mark.parametrize(("args", "said"), [
    (["--site", "s", "--period", "week", "--to", "ann"], "not one email address"),
    (["--site", "s", "--period", "week", "--to", "a@example.com,b@example.com"],
     "not one email address"),
    (["--site", "nope", "--period", "week", "--to", "a@example.com"], "not registered"),
    (["--site", "s", "--period", "year", "--to", "a@example.com"], "'year' is not one of"),
    (["--site", "s", "--period", "week", "--to", "a@example.com", "--hour", "24"],
     "0<=x<=23"),
])
def test_bad_input_is_refused_and_nothing_is_stored(store, args, said):
    result = run(store, "reports", "add", *args)
    assert result.exit_code == 2 and said in result.output
    assert run(store, "reports", "list").stdout == "site,period,to,hour\n"


def test_reports_list_remove_and_the_delivery_log(store):
    assert run(store, "reports", "add", "--site", "s", "--period", "month", "--to",
               "ann@example.com", "--hour", "7").exit_code == 0
    assert run(store, "reports", "list", "--site", "s").stdout.splitlines()[1:] == [
        "s,month,ann@example.com,7"]
    assert run(store, "reports", "remove", "--site", "s", "--period", "month", "--to",
               "ann@example.com").exit_code == 0
    assert run(store, "reports", "remove", "--site", "s", "--period", "month", "--to",
               "ann@example.com").exit_code == 2
    assert run(store, "notify", "log").stdout == (
        "at,site,channel,to,subject,attempt,result,error\n")


def test_one_click_unsubscribe_takes_only_rfc_8058s_form(store, db):
    kept, _ = add_report(db, "s", "week", "bob@example.com", now=utc(2026, 3, 1))
    gone, _ = add_report(db, "s", "month", "ann@example.com", now=utc(2026, 3, 1))
    with dashboard_app(store, notify_interval=0) as app:
        client = app.server.test_client()
        path = f"/unsubscribe/{gone['token']}"
        page = client.get(path)                    # a mail scanner opening the link
        assert page.status_code == 200 and b"<button" in page.data
        assert client.post(path, json={"List-Unsubscribe": "One-Click"}).status_code == 415
        assert client.post(path, data={"List-Unsubscribe": "One-Click", "x": "1"}
                           ).status_code == 400
        assert client.post(path, data="List-Unsubscribe=One-Click", headers={
            "Origin": "https://evil.example", "Content-Type": "text/plain"}).status_code == 415
        assert len(all_reports(db)) == 2           # nothing changed yet
        done = client.post(path, data={"List-Unsubscribe": "One-Click"})
        assert done.status_code == 200 and b"no longer gets" in done.data
        assert client.post(path, data={"List-Unsubscribe": "One-Click"}).status_code == 404
        assert client.get("/unsubscribe/" + "x" * 30).status_code == 404
        health = client.get("/healthz").get_json()["deliveries"]
    assert [r["token"] for r in all_reports(db)] == [kept["token"]]
    assert health == {"failed": 0, "unknown": 0, "queued": 0}


def test_the_servers_thread_and_notify_run_share_the_claims(store, db):
    add_report(db, "s", "week", "ann@example.com", now=utc(2026, 3, 1))
    with smtp_server() as (url, inbox):
        with time_machine.travel(utc(2026, 3, 16, 9), tick=False):
            with dashboard_app(store, notify_interval=3600, smtp_url=url) as app:
                notify_job(app.server).context.render_chart = None
                notify_job(app.server).run_now()
            result = CliRunner().invoke(main, ["notify", "run", "--store", store],
                                        env={"HITBOARD_SMTP_URL": url})
            assert result.exit_code == 0, result.output
        with dashboard_app(store, readonly=True) as app:
            assert notify_job(app.server) is None
    assert len(inbox.messages) == 1
    assert [r["result"] for r in delivery_log(db)] == ["sent"]


def test_one_chart_per_period_and_a_broken_subscription_blocks_no_other(db, store, caplog):
    for to in ("ann@example.com", "bob@example.com"):
        add_report(db, "s", "week", to, 8, now=utc(2026, 3, 1))
    db["sites"].insert_one({"_id": "broken", "reports": [{"period": "week", "hour": "8",
                                                          "to": "eve@example.com"}]})
    drawn = []
    with smtp_server() as (url, inbox), time_machine.travel(utc(2026, 3, 9, 9), tick=False):
        ctx = context(db, store, lambda frame, gran: drawn.append(gran) or PNG, smtp_url=url)
        assert reports.run_due(ctx, utc(2026, 3, 9, 9)) == ["sent", "sent"]
    assert drawn == ["day"] and len(inbox.messages) == 2
    assert "the week report of broken to eve@example.com could not be built" in caplog.text


@pytest.mark.parametrize(("key", "value", "before", "said"), [
    ("bounce_rate", 76.66, 76.68, "±0.0 pts"),
    ("bounce_rate", 70.0, 60.0, "+10.0 pts"),
    ("visit_duration", 999.6, 1000.0, "±0.0 %"),
    ("visits", 90, 100, "-10.0 %"),
])
def test_a_change_that_rounds_to_nothing_reads_plus_minus_zero(key, value, before, said):
    assert report_mail.change(key, value, before) == said


def test_top_pages_are_historys_people_on_pages_not_bots_or_static_files(store, db, tmp_path):
    """As History's Pages panel and the report's own referrers: a stylesheet and a page
    only a crawler reads stay out, however many their hits."""
    bot = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
    t = utc(2026, 3, 3, 15)
    lines = [f'198.51.100.{k % 50 + 1} - - [{t + dt.timedelta(seconds=k):%d/%b/%Y:%H:%M:%S}'
             f' +0000] "GET {page} HTTP/1.1" 200 5 "-" "{agent}"\n'
             for k, (page, agent) in enumerate([("/site.css", AGENT)] * 60
                                               + [("/crawled-only", bot)] * 60)]
    (tmp_path / "more.log").write_text("".join(lines))
    assert run(store, "ingest", str(tmp_path / "more.log"), "--site", "s").exit_code == 0
    fields = reports.message(context(db, store), "s", "week", utc(2026, 3, 2),
                             utc(2026, 3, 9), "UTC", None)
    pages = fields["text"].split("Top pages:")[1].split("Top referrers:")[0]
    assert "/blog/a" in pages
    assert "/site.css" not in pages and "/crawled-only" not in pages
    week = ("--site", "s", "--start", "2026-03-02", "--end", "2026-03-09")
    people = int(run(store, "visitors", *week, "--humans").stdout.split()[0])
    everyone = int(run(store, "visitors", *week).stdout.split()[0])
    assert people < everyone              # the crawler's address and agent are a visitor
    assert f"Visitors: {people:,} (" in fields["text"]       # people, as History counts
