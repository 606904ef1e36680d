"""Fuzzing the /hit beacon through the Flask test client: whatever the query string, body,
content type or method, the answer is 2xx or 4xx with a reason, never 500, and a hit is
recorded exactly when the input is a valid one."""

from __future__ import annotations

import json
from urllib.parse import parse_qsl, urlencode

import pytest
from dashkit import dashboard_app, register_sites
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dashboard.routes.beacon import MAX_BODY
from dashboard.services import get_services
from queries import validation
from queries.errors import HitboardError
from queries.journal import records

FUZZ = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])
METHODS = ("GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS")
CONTENT_TYPES = (None, "application/json", "text/plain;charset=UTF-8",
                 "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
                 "application/octet-stream", "text/html; charset=latin-1")
TRICKY = ("blog", "/", "/a", "*", "/$where", "$where", "a.b", "/a.b", '{"$gt": ""}',
          "bad site", "a" * 3000, "\x00", "/%00", "/a?utm=1", "../etc/passwd", "",
          "/caf%C3%A9", "%2A", "/%25%41", "/%ED%A0%80")
text = st.text(st.characters(exclude_categories=("Cs",)), max_size=30)
keys = st.sampled_from(("site", "page", "referrer", "page[$ne]", "site[$gt]", "$where",
                        "page.x", "", "x")) | text
values = st.sampled_from(TRICKY) | text
json_leaf = (st.none() | st.booleans() | st.integers() | st.integers(min_value=10**30)
             | st.floats(allow_nan=False) | values)
json_value = st.recursive(json_leaf, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
    st.sampled_from(("$gt", "$ne", "$where", "site", "page")) | text, inner, max_size=4),
    max_leaves=20)
json_object = st.fixed_dictionaries({}, optional={
    "site": values | json_value, "page": values | json_value, "$where": json_value,
    "extra": json_value})


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    with dashboard_app(tmp_path_factory.mktemp("fuzz") / "store", rollup_interval=0) as app:
        register_sites(app, "blog", "a.b")     # every other site is refused (403)
        yield app


@pytest.fixture
def client(app, monkeypatch):
    """The test client, with every page view the beacon journals kept in ``client.hits``."""
    journal = get_services(app.server).journal
    client = app.server.test_client()
    client.hits = []
    real = journal.append

    def spy(record: bytes) -> None:
        kind, hit = records.decode(record)
        if kind == records.PAGEVIEW:
            client.hits.append((hit.site, hit.page))
        return real(record)

    monkeypatch.setattr(journal, "append", spy)
    return client


def valid_hit(pairs) -> tuple[str, str] | None:
    """The hit that (key, value) pairs ask for when they are a valid beacon, else None."""
    given = {}
    for key, value in pairs:
        given.setdefault(key, []).append(value)
    if not {"site", "page"} <= set(given) <= {"site", "page", "referrer"} \
            or any(len(v) != 1 for v in given.values()):
        return None
    referrer = given.get("referrer", [""])[0]
    site, page = given["site"][0], given["page"][0]
    if not (isinstance(site, str) and isinstance(page, str)):
        return None
    path, _, query = page.partition("?")
    try:
        if referrer is not None:
            validation.text(referrer, "referrer", 2048)
        validation.text(query, "query", 2048)
        for key, value in parse_qsl(query):
            if key.startswith("utm_"):
                validation.text(value, key)
        page = validation.page(validation.decoded_path(path))
    except HitboardError:
        return None
    if site not in ("blog", "a.b") or page == validation.WHOLE_SITE:
        return None
    return site, page


def answer(client, method: str, expected, **request) -> None:
    """Send one request; check the status, the reason, and what was recorded."""
    client.hits.clear()
    response = client.open("/hit", method=method, **request)
    status = response.status_code
    assert status < 500, response.data[:300]
    if method == "OPTIONS":                       # a CORS preflight: nothing counted
        assert status == 204 and client.hits == []
        return
    if method == "HEAD":                          # a reachability check: nothing counted
        assert status == 200 and client.hits == []
        return
    if method not in ("GET", "HEAD", "POST"):
        assert status == 405 and client.hits == []
        return
    if status >= 400:
        assert client.hits == []
        if method != "HEAD":
            assert response.get_json()["error"]
    else:
        assert status == (204 if method == "POST" else 200)
        assert len(client.hits) == 1
    if expected is not ...:
        assert client.hits == ([] if expected is None else [expected]), response.data[:300]


@FUZZ
@given(pairs=st.lists(st.tuples(keys, values), max_size=5),
       method=st.sampled_from(("GET", "HEAD", "GET", "PUT", "OPTIONS")))
@example(pairs=[("site", "blog"), ("page[$ne]", "")], method="GET")
@example(pairs=[("site", "blog"), ("page", "/a"), ("page", "/b")], method="GET")
@example(pairs=[("site", "blog"), ("page", "/$where")], method="GET")
@example(pairs=[("site", "blog"), ("page", "/caf%C3%A9%2A")], method="GET")
def test_query_strings(client, pairs, method):
    answer(client, method, valid_hit(pairs), query_string=urlencode(pairs))


@FUZZ
@given(raw=st.binary(max_size=200))
@example(raw=b"site=blog&page=%FF%FE")
@example(raw=b"site=blog&page=/a&%")
def test_raw_query_bytes(client, raw):
    # WSGI hands the raw query string over as latin-1 text, as a real server does.
    answer(client, "GET", ..., environ_overrides={"QUERY_STRING": raw.decode("latin-1")})


@FUZZ
@given(body=json_object, content_type=st.sampled_from(CONTENT_TYPES),
       method=st.sampled_from(("POST", "POST", "POST", "GET", "PATCH", "DELETE")))
@example(body={"site": "blog", "page": {"$gt": ""}}, content_type=None, method="POST")
@example(body={"site": "blog", "page": '{"$gt": ""}'}, content_type=None, method="POST")
def test_json_objects(client, body, content_type, method):
    data = json.dumps(body).encode()
    if method == "POST":
        expected = valid_hit(body.items()) if len(data) <= MAX_BODY else None
    else:
        expected = ...   # GET reads the query string, not the body
    answer(client, method, expected, data=data, content_type=content_type)


@FUZZ
@given(body=st.binary(max_size=300) | json_value.map(lambda v: json.dumps(v).encode())
       | st.integers(1, 4000).map(lambda depth: b"[" * depth)
       | st.integers(1, 1500).map(lambda depth: b'{"site":' * depth),
       content_type=st.sampled_from(CONTENT_TYPES))
@example(body=b"[" * 3000, content_type=None)        # deeper than json's recursion limit
@example(body=b'{"site": "blog", "page": "/\xff"}', content_type="application/json")
@example(body=b"x" * (MAX_BODY + 1), content_type=None)
def test_arbitrary_bodies(client, body, content_type):
    answer(client, "POST", ..., data=body, content_type=content_type)
