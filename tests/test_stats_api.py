"""The Stats API's keys, credentials and refusals: ``hitboard api-key`` prints a key
once and stores its digest; a key reads its sites alone, 600 requests an hour; no
credential or a wrong one is a 401 (counted as a failure); every unknown name is a 400
naming it; filters no counter holds are counted from raw events, within their
retention; ``hitboard query`` answers the same JSON. A small store (the shared log's
first lines), built once."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
import time_machine
from click.testing import CliRunner
from dashkit import ADMIN_TOKEN, dashboard_app, page_module, post_callback
from pymongo.errors import PyMongoError

import queries
from dashboard.cli import main
from dashboard.services import get_services
from queries.accounts import keys
from queries.api import dates
from queries.api.errors import QueryError
from queries.events.expired import COLLECTION as EXPIRED

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "apache_combined_2015.log"
pytestmark = pytest.mark.skipif(not SHARED.exists(), reason=f"{SHARED} is not there")
SITE = "logs"
NOW = dt.datetime(2015, 5, 18, 12, tzinfo=dt.UTC)
DAY = ["2015-05-17", "2015-05-17"]
BASE = {"site_id": SITE, "metrics": ["hits", "visitors"], "date_range": DAY}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    folder = tmp_path_factory.mktemp("api")
    store = str(folder / "store")
    with time_machine.travel(NOW, tick=False):
        for site in (SITE, "other"):          # the same lines, a file of each site's
            log = folder / f"{site}.log"
            log.write_text("\n".join(SHARED.read_text().splitlines()[:1500]) + "\n")
            assert CliRunner().invoke(main, ["ingest", str(log), "--site", site, "--store",
                                             store]).exit_code == 0
        created = CliRunner().invoke(main, ["api-key", "create", "--name", "ci", "--site",
                                            SITE, "--store", store])
        assert created.exit_code == 0, created.output
        db = queries.connect(store)
        every = keys.create(db, "every", [])
        db.client.close()
    with time_machine.travel(NOW, tick=False), dashboard_app(store, rollup_interval=0,
                                                             max_body=4096) as app:
        yield app, store, created.stdout, every


def post(served, body, token=None, **extra):
    token = served[2].strip() if token is None else token
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    data = body if isinstance(body, str) else json.dumps(body)
    return served[0].server.test_client().post(
        "/api/v2/query", data=data, headers=headers,
        content_type=extra.get("content_type", "application/json"))


def results(served, body, token=None) -> list:
    answer = post(served, body, token)
    assert answer.status_code == 200, answer.get_json()
    return [(r["dimensions"], r["metrics"]) for r in answer.get_json()["results"]]


def test_a_key_is_printed_alone_once_and_stored_as_its_digest(served):
    _, store, printed, _ = served
    key = printed.strip()
    assert printed == key + "\n" and key.startswith("hbk_") and len(key) == 47
    listed = CliRunner().invoke(main, ["api-key", "list", "--format", "json", "--store",
                                       store])
    (ci,) = [k for k in json.loads(listed.stdout) if k["name"] == "ci"]
    assert key.startswith(ci["prefix"]) and ci["sites"] == SITE and key not in listed.stdout
    db = get_services(served[0].server).db
    assert key not in json.dumps([d for d in db[keys.COLLECTION].find()], default=str)
    again = CliRunner().invoke(main, ["api-key", "create", "--name", "ci", "--store", store])
    assert again.exit_code == 2 and "exists already" in again.output and "hbk_" not in \
        again.output


def test_a_key_reads_its_sites_the_admin_secret_and_an_unscoped_key_every_site(served):
    other = {**BASE, "site_id": "other"}
    (_, [hits, _]), = results(served, BASE)
    assert hits > 0
    assert post(served, other).status_code == 403
    assert results(served, other, ADMIN_TOKEN) == results(served, other, served[3]) \
        == results(served, BASE)
    # a key reads the API, nothing else: no note, no callback that changes state
    bearer = {"Authorization": f"Bearer {served[3]}"}
    client = served[0].server.test_client()
    note = client.post("/api/annotations", json={"text": "x"}, headers=bearer)
    assert note.status_code in (401, 403)
    created = post_callback(client, ["team-key-status.children", "team-keys-changed.data",
                                     "team-key-name.value"],
                            inputs={"team-key-create.n_clicks": 1},
                            state={"team-key-name.value": "x", "team-key-sites.value": []},
                            changed=("team-key-create.n_clicks",), headers=bearer)
    assert "Key x made" not in created.get_data(as_text=True)
    assert "x" not in [k.name for k in keys.listed(get_services(served[0].server).db)]


def test_no_credential_a_wrong_one_and_a_revoked_key_are_refused(served, tmp_path):
    assert post(served, BASE, "").status_code == 401
    assert post(served, BASE, "hbk_" + "x" * 43).status_code == 401
    assert post(served, BASE, "not-the-secret").status_code == 401
    db = get_services(served[0].server).db
    with time_machine.travel(NOW, tick=False):
        key = keys.create(db, "gone", [SITE])
    assert post(served, BASE, key).status_code == 200
    assert CliRunner().invoke(main, ["api-key", "revoke", "gone", "--store",
                                     served[1]]).exit_code == 0
    revoked = post(served, BASE, key)
    assert revoked.status_code == 401 and "revoked" in revoked.get_json()["error"]
    assert CliRunner().invoke(main, ["api-key", "revoke", "gone", "--store",
                                     served[1]]).exit_code == 2
    # the failures count: five from one address, then 429 whatever is sent
    for _ in range(2):
        post(served, BASE, "hbk_wrong")
    throttled = post(served, BASE)
    assert throttled.status_code == 429 and int(throttled.headers["Retry-After"]) > 0
    served[0].server.extensions["hitboard.authority"].forgive("127.0.0.1")


def test_a_key_makes_its_hour_s_requests_then_waits(served, monkeypatch):
    db = get_services(served[0].server).db
    with time_machine.travel(NOW, tick=False):
        key = keys.create(db, "busy", [SITE])
        monkeypatch.setattr(keys, "HOURLY_LIMIT", 2)
        assert [post(served, BASE, key).status_code for _ in range(3)] == [200, 200, 429]
        waited = post(served, BASE, key)
        assert waited.headers["Retry-After"] == "3600"       # 12:00 -> 13:00
    with time_machine.travel(NOW + dt.timedelta(hours=1), tick=False):
        assert post(served, BASE, key).status_code == 200
    (busy,) = [k for k in keys.listed(db) if k.name == "busy"]
    assert busy.last_used == NOW + dt.timedelta(hours=1)


@pytest.mark.parametrize(("body", "named"), [
    ({**BASE, "metrics": ["hitz"]}, 'Invalid metric "hitz"'),
    ({**BASE, "dimensions": ["visit:city"]}, 'Invalid dimension "visit:city"'),
    ({**BASE, "filters": [["like", "visit:os", ["x"]]]}, 'Invalid filter operator "like"'),
    ({**BASE, "filters": [["is", "visit:city", ["x"]]]}, '"visit:city"'),
    ({**BASE, "filters": [["matches", "event:page", ["(unclosed"]]]}, "(unclosed"),
    ({**BASE, "filters": [["matches", "event:page", ["a" * 201]]]}, "at most 200"),
    ({**BASE, "date_range": "yesterday"}, 'Invalid date range "yesterday"'),
    ({**BASE, "date_range": ["2015-05-17T00:00", "2015-05-18T00:00"]}, "has no offset"),
    ({**BASE, "date_range": ["2015-05-17", "2015-02-30"]}, 'Invalid date "2015-02-30"'),
    ({**BASE, "limit": 5}, 'Unexpected field "limit"'),
    ({**BASE, "include": {"colour": True}}, 'Unexpected field "colour"'),
    ({**BASE, "pagination": {"limit": 10_001}}, "10,000"),
    ({**BASE, "order_by": [["pageviews", "desc"]]}, '"pageviews"'),
    ({**BASE, "metrics": ["conversion_rate"]}, "conversion_rate"),
    ({**BASE, "metrics": ["hits"], "dimensions": ["event:page", "visit:entry_page"]},
     'cannot group by "visit:entry_page"'),
    ({**BASE, "dimensions": ["time", "time:day"]}, "one time dimension"),
    ({**BASE, "metrics": ["visits"], "dimensions": ["visit:os", "visit:device"]},
     "Metric `visits` cannot be queried with dimensions"),
    ({**BASE, "metrics": ["visits"], "filters": [["is", "event:page", ["/"]]]},
     "Metric `visits` cannot be queried with a filter on `event:page`"),
    ({**BASE, "metrics": ["views_per_visit"], "filters": [["is", "event:page", ["/"]]]},
     "Metric `views_per_visit` cannot be queried with a filter on `event:page`"),
    ({**BASE, "metrics": ["events"], "filters": [["is", "visit:os", ["Linux"]]]},
     "Metric `events` cannot be queried with a filter on `visit:os`"),
    ({**BASE, "metrics": ["hits"], "filters": [["is", "visit:entry_page", ["/"]]]},
     "Metric `hits` cannot be queried with a filter on `visit:entry_page`"),
    ({**BASE, "metrics": ["visits"], "filters": [["is", "visit:entry_page", ["/"]],
                                                 ["is", "visit:os", ["Linux"]]]},
     "a filter on visit:entry_page takes no other"),
    ({**BASE, "date_range": ["1970-01-01", "2100-12-31"], "dimensions": ["time:month"]},
     "over 1,000 month buckets"),
    ({**BASE, "date_range": ["0001-01-01", "2015-05-17"]}, 'Invalid date "0001-01-01"'),
    ("[1, 2", "JSON"),
])
def test_bad_input_is_a_400_naming_it(served, body, named):
    refused = post(served, body)
    assert refused.status_code == 400, refused.get_json()
    assert named in refused.get_json()["error"]


def test_an_unknown_site_not_json_and_too_large(served):
    unknown = post(served, {**BASE, "site_id": "nope"}, ADMIN_TOKEN)
    assert unknown.status_code == 400 and '"nope"' in unknown.get_json()["error"]
    assert post(served, BASE, content_type="text/plain").status_code == 415
    assert post(served, {**BASE, "pad": "x" * 5000}).status_code == 413


def test_filters_beyond_one_value_are_counted_from_raw_events(served):
    by_os = dict((dims[0], m) for dims, m in results(
        served, {**BASE, "dimensions": ["visit:os"]}))
    assert len(by_os) > 3
    one = results(served, {**BASE, "filters": [["is", "visit:os", ["Windows"]]]})
    assert one == [([], by_os["Windows"])]
    both = results(served, {**BASE, "metrics": ["hits"],
                            "filters": [["is", "visit:os", ["Windows", "Linux"]]]})
    assert both == [([], [by_os["Windows"][0] + by_os["Linux"][0]])]
    others = results(served, {**BASE, "metrics": ["hits"], "filters": [
        ["not", ["or", [["is", "visit:os", ["Windows"]], ["is", "visit:os", ["Linux"]]]]]]})
    total = results(served, {**BASE, "metrics": ["hits"]})[0][1][0]
    assert others == [([], [total - both[0][1][0]])]
    regex = results(served, {**BASE, "metrics": ["hits"], "dimensions": ["visit:os"],
                             "filters": [["matches", "visit:os", ["^(Windows|Linux)$"]]]})
    assert regex == [([os], [by_os[os][0]]) for os in sorted(
        ("Windows", "Linux"), key=lambda os: -by_os[os][0])]
    (page, [page_hits, _]), *_ = results(served, {**BASE, "dimensions": ["event:page"]})
    page_is = post(served, {**BASE, "filters": [["is", "event:page", page]]}).get_json()
    assert page_is["meta"]["source"] == "statistics"         # a page's own documents
    assert page_is["results"][0]["metrics"][0] == page_hits
    answer = post(served, {**BASE, "metrics": ["hits"],
                           "filters": [["contains", "event:page", ["/"]]]}).get_json()
    assert answer["meta"]["source"] == "raw events"
    assert answer["results"][0]["metrics"] == [total]


def test_a_range_whose_raw_events_are_gone_is_refused_naming_the_limit(served):
    db = get_services(served[0].server).db
    db[EXPIRED].insert_one({"_id": "gone", "site": SITE,
                            "hour": dt.datetime(2015, 5, 17, 10, tzinfo=dt.UTC)})
    try:
        refused = post(served, {**BASE, "filters": [["is_not", "visit:os", ["Linux"]]]})
        assert refused.status_code == 400
        assert "HITBOARD_EVENTS_TTL_DAYS" in refused.get_json()["error"]
        counters = post(served, {**BASE, "filters": [["is", "visit:os", ["Linux"]]]})
        assert counters.status_code == 200
    finally:
        db[EXPIRED].delete_one({"_id": "gone"})


def test_weeks_and_months_sum_their_days(served):
    body = {**BASE, "metrics": ["hits", "visits"], "date_range": ["2015-04-01", "2015-06-30"]}
    days = results(served, {**body, "dimensions": ["time:day"]})
    for dimension in ("time:week", "time:month"):
        found = results(served, {**body, "dimensions": [dimension]})
        assert [sum(m[i] for _, m in found) for i in (0, 1)] == \
            [sum(m[i] for _, m in days) for i in (0, 1)] != [0, 0]
    assert [d for (d,), _ in results(served, {**body, "dimensions": ["time:month"]})] == \
        ["2015-04-01", "2015-05-01", "2015-06-01"]


def test_order_pages_and_total_rows(served):
    body = {**BASE, "metrics": ["hits"], "dimensions": ["http:status"],
            "order_by": [["http:status", "asc"]], "pagination": {"limit": 2, "offset": 1},
            "include": {"total_rows": True}}
    everything = results(served, {**BASE, "metrics": ["hits"],
                                  "dimensions": ["http:status"]})
    answer = post(served, body).get_json()
    assert answer["meta"]["total_rows"] == len(everything) > 3
    assert [(r["dimensions"], r["metrics"]) for r in answer["results"]] == \
        sorted(everything)[1:3]


def test_openapi_and_hitboard_query_answer_the_same(served, tmp_path):
    spec = served[0].server.test_client().get("/api/v2/openapi.json").get_json()
    assert "hits" in json.dumps(spec["components"]["schemas"]["Query"])
    question = tmp_path / "q.json"
    question.write_text(json.dumps({**BASE, "dimensions": ["time:hour"]}))
    with time_machine.travel(NOW, tick=False):
        answered = CliRunner().invoke(main, ["query", str(question), "--store", served[1]])
        bad = CliRunner().invoke(main, ["query", "-", "--store", served[1]], input="{")
    assert answered.exit_code == 0, answered.output
    assert json.loads(answered.stdout)["results"] == post(
        served, {**BASE, "dimensions": ["time:hour"]}).get_json()["results"]
    assert bad.exit_code == 2 and "JSON" in bad.output


@pytest.mark.parametrize(("preset", "first", "last"), [
    ("day", "2015-05-18", "2015-05-19"), ("7d", "2015-05-12", "2015-05-19"),
    ("month", "2015-05-01", "2015-06-01"), ("6mo", "2014-12-01", "2015-06-01"),
    ("12mo", "2014-06-01", "2015-06-01"), ("year", "2015-01-01", "2016-01-01"),
    (["2015-05-01", "2015-05-03"], "2015-05-01", "2015-05-04"),
])
def test_date_ranges_in_the_site_s_zone(preset, first, last):
    zone = "America/New_York"
    start, end = dates.resolve(None, SITE, preset, zone, NOW)
    local = [t.astimezone(dates.validation.timezone(zone)) for t in (start, end)]
    assert [t.date().isoformat() for t in local] == [first, last]
    assert all(t.hour == 0 for t in local)


def test_a_date_time_range_keeps_its_instants():
    start, end = dates.resolve(None, SITE, ["2015-05-17T10:00:00+02:00",
                                            "2015-05-17T12:30:00Z"], "UTC", NOW)
    assert (start.isoformat(), end.isoformat()) == ("2015-05-17T08:00:00+00:00",
                                                    "2015-05-17T12:30:00+00:00")
    with pytest.raises(QueryError, match="is not after"):
        dates.resolve(None, SITE, ["2015-05-17T10:00:00Z", "2015-05-17T09:00:00Z"], "UTC",
                      NOW)


def test_the_team_page_lists_and_revokes_keys_for_an_admin_alone(served):
    def listing(headers=None) -> str:
        answer = post_callback(served[0].server.test_client(), ["team-keys-list.children"],
                               inputs={"team-keys-changed.data": None}, headers=headers)
        assert answer.status_code == 200
        return json.dumps(answer.get_json()["response"])

    def revoke(name: str, headers=None) -> str:
        button = {"index": name, "type": "team-key-revoke"}
        answer = post_callback(
            served[0].server.test_client(), ["team-key-status.children",
                                             "team-keys-changed.data"], inputs={},
            matched=([{"id": button, "property": "n_clicks", "value": 1}],),
            changed=(json.dumps(button, separators=(",", ":")) + ".n_clicks",),
            headers=headers)
        return json.dumps(answer.get_json()["response"])

    db = get_services(served[0].server).db
    with time_machine.travel(NOW, tick=False):
        keys.create(db, "to-revoke")
    assert "Sign in" in revoke("to-revoke") and "to-revoke" in [k.name for k in keys.listed(db)]
    assert "Key to-revoke revoked" in revoke("to-revoke", {"Authorization":
                                                           f"Bearer {ADMIN_TOKEN}"})
    assert "to-revoke" not in [k.name for k in keys.listed(db)]
    key = served[2].strip()
    shown = listing({"Authorization": f"Bearer {ADMIN_TOKEN}"})
    assert key[:12] in shown and key not in shown and '"ci"' in shown
    assert "hbk_" not in listing() and "Sign in" in listing()
    with served[0].server.test_request_context("/team"):
        assert "API keys" in json.dumps(page_module("team").layout().to_plotly_json(),
                                        default=str)


def test_a_key_the_store_cannot_check_is_a_503_and_no_failure(served, monkeypatch):
    def unreadable(_db, _token):
        raise PyMongoError("connection refused")

    monkeypatch.setattr(keys, "check", unreadable)
    answers = [post(served, BASE) for _ in range(6)]
    assert {a.status_code for a in answers} == {503}
    assert "try again" in answers[0].get_json()["error"]
    monkeypatch.undo()
    assert post(served, BASE).status_code == 200        # six, and never throttled


def test_goals_names_and_properties_are_breakdown_s(tmp_path):
    """Custom events (the shared log has none): ``event:goal``, ``event:name`` and
    ``event:props:NAME`` equal ``breakdown --by goal|event|prop``."""
    from clikit import rows, run
    from logkit import AGENT, write_log

    from queries.api import run_query
    from queries.custom.payload import custom_event
    from queries.events import custom as raw
    from queries.rollups.build import run_rollups

    day = dt.datetime(2015, 5, 17, tzinfo=dt.UTC)
    log = write_log(tmp_path / "access.log", day,
                    [(1, 600, "/pricing"), (2, 605, "/pricing"), (2, 610, "/blog/a")])
    store = str(tmp_path / "store")
    with time_machine.travel(NOW, tick=False):
        assert run(store, "ingest", str(log), "--site", "s").exit_code == 0
        assert run(store, "goals", "add", "s", "--event", "Signup").exit_code == 0
        assert run(store, "goals", "add", "s", "--page", "/blog/*").exit_code == 0
        db = queries.connect(store)
        writer = raw.writer(db)
        writer.add(raw.document(day + dt.timedelta(minutes=602), "s", "/pricing",
                                custom_event("Signup", {"plan": "pro"}, None),
                                "203.0.113.1", AGENT))
        writer.flush()
        run_rollups(db)
        span = ("--site", "s", "--start", "2015-05-17", "--end", "2015-05-18")
        for dimension, by in (("event:goal", ("goal",)), ("event:name", ("event",)),
                              ("event:props:plan", ("prop", "--prop", "plan"))):
            expected = [([r["value"]], [int(r["conversions"]), int(r["visitors"]),
                                        float(r["conversion_rate"])])
                        for r in rows(run(store, "breakdown", *span, "--by", *by))]
            answer = run_query(db, {"site_id": "s", "date_range": DAY[:1] * 2,
                                    "metrics": ["events", "visitors", "conversion_rate"],
                                    "dimensions": [dimension]}, 30)
            assert [(r["dimensions"], r["metrics"]) for r in answer["results"]] == \
                expected != [], dimension

        def asked(**body) -> list:
            found = run_query(db, {"site_id": "s", "date_range": DAY[:1] * 2,
                                   "metrics": ["events"], **body}, 30)
            return [(r["dimensions"], r["metrics"]) for r in found["results"]]

        by_hour = asked(dimensions=["time:hour"])
        assert len(by_hour) == 24 and [d for d, m in by_hour if m != [0]] == \
            [["2015-05-17 10:00:00"]] and sum(m[0] for _, m in by_hour) == 1
        assert asked(dimensions=["time:day"]) == [(["2015-05-17"], [1])]
        for page, events in (("/pricing", 1), ("/blog/a", 0)):
            assert asked(filters=[["is", "event:page", [page]]]) == [([], [events])]
        assert asked(metrics=["events", "pageviews"], dimensions=["time:day"],
                     filters=[["contains", "event:page", ["/pri"]]]) == \
            [(["2015-05-17"], [1, 2])]
        db.client.close()
