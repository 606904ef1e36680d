"""The access-log parser: formats, time zones, and the junk real logs hold."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from queries.dimensions.referrer import NOT_LOGGED
from queries.ingest.logformat import (
    MAX_TARGET,
    LineParser,
    LogRecord,
    Oddity,
    Reject,
    parse_line,
)
from queries.validation import decoded_path

LOG = Path(__file__).resolve().parents[2] / "shared" / "data" / "apache_combined_2015.log"
COMBINED = ('127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif?x=1 HTTP/1.0" '
            '200 2326 "http://www.example.com/start.html" "Mozilla/4.08 [en] (Win98; I ;Nav)"')
COMMON = '127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326'


def test_combined_line_gives_every_field_with_time_in_utc():
    record = parse_line(COMBINED)
    assert record == LogRecord(
        time=dt.datetime(2000, 10, 10, 20, 55, 36, tzinfo=dt.UTC), host="127.0.0.1",
        method="GET", path="/apache_pb.gif", query="x=1", protocol="HTTP/1.0", status=200,
        bytes=2326, referrer="http://www.example.com/start.html",
        user_agent="Mozilla/4.08 [en] (Win98; I ;Nav)", vhost=None, user="frank")
    assert record.time.utcoffset() == dt.timedelta(0)


def test_common_line_has_no_referrer_or_agent():
    """No referrer field: its referrer is not known (not "-", which is direct)."""
    record = parse_line(COMMON)
    assert (record.path, record.status, record.referrer, record.user_agent) == (
        "/apache_pb.gif", 200, NOT_LOGGED, None)
    dash = COMBINED.replace('"http://www.example.com/start.html"', '"-"')
    assert parse_line(dash).referrer is None
    assert parse_line(dash.replace("apache_pb.gif?x=1", "a\\\\b")).referrer is None  # loose pass
    assert parse_line(COMMON.replace("apache_pb.gif", "a\\\\b")).referrer == NOT_LOGGED


@pytest.mark.parametrize("prefix, vhost", [
    ("www.example.com:80 ", "www.example.com"),      # Apache vhost_combined: %v:%p
    ("example.org ", "example.org"),                  # Nginx $host
    ("[2001:db8::1]:443 ", "2001:db8::1"),
])
def test_vhost_prefix_is_detected_with_port_removed(prefix, vhost):
    for line in (prefix + COMBINED, prefix + COMMON):
        record = parse_line(line)
        assert (record.vhost, record.host, record.path) == (vhost, "127.0.0.1", "/apache_pb.gif")


@pytest.mark.parametrize("stamp, expected", [
    ("10/Oct/2000:13:55:36 -0700", dt.datetime(2000, 10, 10, 20, 55, 36)),
    ("10/Oct/2000:13:55:36 +0530", dt.datetime(2000, 10, 10, 8, 25, 36)),
    ("01/Jan/2001:00:30:00 +0100", dt.datetime(2000, 12, 31, 23, 30, 0)),
    ("29/Feb/2024:23:59:59 -1200", dt.datetime(2024, 3, 1, 11, 59, 59)),
])
def test_each_line_keeps_its_own_time_zone(stamp, expected):
    parser = LineParser()
    record = parser.parse(f'1.2.3.4 - - [{stamp}] "GET / HTTP/1.1" 200 1')
    assert record.time == expected.replace(tzinfo=dt.UTC)


@pytest.mark.parametrize("line, reason", [
    ("", Reject.EMPTY),
    ("   \n", Reject.EMPTY),
    ("this is not a log line", Reject.MALFORMED),
    ('1.2.3.4 - - [31/Feb/2000:13:55:36 +0000] "GET / HTTP/1.1" 200 1', Reject.BAD_TIME),
    ('1.2.3.4 - - [10/Foo/2000:13:55:36 +0000] "GET / HTTP/1.1" 200 1', Reject.BAD_TIME),
    ('1.2.3.4 - - [10/Oct/2000:13:55:36 +9900] "GET / HTTP/1.1" 200 1', Reject.BAD_TIME),
    ('1.2.3.4 - - [yesterday] "GET / HTTP/1.1" 200 1', Reject.BAD_TIME),
    ('1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "-" 408 -', Reject.NO_REQUEST),
    ('1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "\\x16\\x03\\x01\\x00\\xa5\\x01" 400 226 "-" "-"',
     Reject.BAD_REQUEST),
    ('1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET / HTTP/1.1 extra" 400 0', Reject.BAD_REQUEST),
    ('1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET /a FOO" 400 0', Reject.BAD_REQUEST),
    ('1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET /a b" 400 0', Reject.BAD_REQUEST),
    ('1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET" 400 0', Reject.BAD_REQUEST),
    ('1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "\x16\x03\x01 GET / HTTP/1.1" 400 0',
     Reject.BAD_REQUEST),
    ('1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "\ufffd\ufffd / HTTP/1.1" 400 0',
     Reject.BAD_REQUEST),
    ('1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "   " 408 0', Reject.NO_REQUEST),
    ('1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET foo HTTP/1.1" 400 0', Reject.BAD_TARGET),
    ('1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET  HTTP/1.1" 400 0', Reject.BAD_TARGET),
    ('1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "OPTIONS * HTTP/1.1" 200 0', Reject.BAD_TARGET),
    ('1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "CONNECT a.com:443 HTTP/1.1" 200 0',
     Reject.BAD_TARGET),
    ('1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET /' + "a" * 3000 + ' HTTP/1.1" 200 0',
     Reject.BAD_TARGET),
    ('1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET /a?' + "q" * MAX_TARGET + ' HTTP/1.1" '
     '200 0', Reject.BAD_TARGET),
    ('1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET / HTTP/1.1" 2000 0', Reject.BAD_STATUS),
    ('1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET / HTTP/1.1" 200 12k', Reject.BAD_SIZE),
])
def test_junk_is_rejected_with_a_reason(line, reason):
    assert parse_line(line) is reason
    assert str(reason) == reason.value


@pytest.mark.parametrize("line, check", [
    # IPv6 client addresses.
    ('2001:db8::ff00:42:8329 - - [10/Oct/2000:13:55:36 +0000] "GET /v6 HTTP/1.1" 200 5',
     lambda r: r.host == "2001:db8::ff00:42:8329" and r.path == "/v6"),
    ('::1 - - [10/Oct/2000:13:55:36 +0000] "GET / HTTP/1.1" 200 5', lambda r: r.host == "::1"),
    # "-" for status and size.
    ('1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET /a HTTP/1.1" - -',
     lambda r: r.status is None and r.bytes == 0),
    # HTTP/0.9-style request without a version.
    ('1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET /old" 200 5',
     lambda r: r.protocol == "" and r.path == "/old"),
    # Escaped quotes in the request and in the user agent.
    ('1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET /a\\"b HTTP/1.1" 200 5 "-" "x \\"y\\" z"',
     lambda r: r.path == '/a"b' and r.user_agent == 'x "y" z'),
    # An unterminated last quote (line 8899 of the test log): the agent runs to the end.
    ('1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET /a HTTP/1.1" 200 5 "-" "Googlebot/2.1',
     lambda r: r.user_agent == "Googlebot/2.1" and r.path == "/a"),
    # Absolute-form target (proxies): the page is its path.
    ('1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET http://h.com/p?q=1 HTTP/1.1" 200 5',
     lambda r: (r.path, r.query) == ("/p", "q=1")),
    # Nginx's extra "$http_x_forwarded_for" after the agent.
    ('1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET /n HTTP/1.1" 200 5 "-" "ua" "10.0.0.1"',
     lambda r: r.user_agent == "ua"),
    # A lowercase method, CRLF line end, an empty query string.
    ('1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "get /x? HTTP/1.1" 200 5\r\n',
     lambda r: (r.method, r.path, r.query) == ("GET", "/x", "")),
    # An authenticated user with odd characters.
    ('1.2.3.4 - j.doe@x [10/Oct/2000:13:55:36 +0000] "GET / HTTP/1.1" 200 5',
     lambda r: r.user == "j.doe@x"),
])
def test_tolerated_oddities_parse(line, check):
    record = parse_line(line)
    assert isinstance(record, LogRecord), record
    assert check(record)


def request(text: str) -> str:
    return f'1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "{text}" 200 5 "-" "ua"'


# Each oddity checked against GoAccess 1.7 (--log-format=COMBINED): it keeps the request
# of every one of these except tabs, HTTP/V1.0 and no protocol, which it counts as "-".
@pytest.mark.parametrize("text, method, path, protocol, oddity", [
    ("GET /facts/internet/bdgtti-1.01.html   HTTP/1.0", "GET",
     "/facts/internet/bdgtti-1.01.html", "HTTP/1.0", Oddity.SPACING),     # NASA, 1995
    ("GET  /two HTTP/1.0", "GET", "/two", "HTTP/1.0", Oddity.SPACING),
    ("GET\t/tab\tHTTP/1.0", "GET", "/tab", "HTTP/1.0", Oddity.SPACING),
    (" GET /lead HTTP/1.1", "GET", "/lead", "HTTP/1.1", Oddity.SPACING),
    ("GET /trail HTTP/1.0 ", "GET", "/trail", "HTTP/1.0", Oddity.SPACING),
    ("GET / HTTP/V1.0", "GET", "/", "HTTP/V1.0", Oddity.ODD_PROTOCOL),    # NASA, 1995
    ("GET /p http/1.1", "GET", "/p", "HTTP/1.1", Oddity.ODD_PROTOCOL),
    ("GET /p HTTP/1.0From:", "GET", "/p", "HTTP/1.0FROM:", Oddity.ODD_PROTOCOL),
    ("GET /old", "GET", "/old", "", Oddity.NO_PROTOCOL),
    ("GET /old  ", "GET", "/old", "", Oddity.NO_PROTOCOL),
    ("get /p HTTP/1.1", "GET", "/p", "HTTP/1.1", Oddity.LOWERCASE_METHOD),
    ("Get /p HTTP/1.1", "GET", "/p", "HTTP/1.1", Oddity.LOWERCASE_METHOD),
    ("GET /a b  c HTTP/1.1", "GET", "/a b  c", "HTTP/1.1", Oddity.SPACE_IN_TARGET),
    ("GET /p HTTP/1.0 HTTP/1.0", "GET", "/p HTTP/1.0", "HTTP/1.0", Oddity.SPACE_IN_TARGET),
    ("GET http://h.com/p?q=1 HTTP/1.1", "GET", "/p", "HTTP/1.1", Oddity.ABSOLUTE_TARGET),
    ("GET HTTPS://h.com HTTP/1.1", "GET", "/", "HTTP/1.1", Oddity.ABSOLUTE_TARGET),
])
def test_request_line_oddities_are_parsed_and_counted(text, method, path, protocol, oddity):
    parser = LineParser()
    record = parser.parse(request(text))
    assert (record.method, record.path, record.protocol) == (method, path, protocol)
    assert parser.tolerated == {oddity: 1}


GAPS = st.text(" \t", min_size=1, max_size=3)
WORD = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E, exclude_characters='"\\?%'),
               max_size=20)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(("GET", "get", "Post")), GAPS, WORD, GAPS,
       st.sampled_from(("HTTP/1.0", "http/1.1", "HTTP/V1.0")), st.text(" \t", max_size=2))
def test_any_spacing_between_the_parts_of_a_request_line_parses(method, gap, word, gap2,
                                                                protocol, end):
    parser = LineParser()
    record = parser.parse(request(f"{gap[1:]}{method}{gap}/{word}{gap2}{protocol}{end}"))
    assert (record.method, record.path, record.protocol) == (
        method.upper(), "/" + word, protocol.upper())
    assert sum(parser.tolerated.values()) == (record.method != method or gap != " "
                                              or gap2 != " " or end != ""
                                              or protocol != "HTTP/1.0")


@pytest.mark.parametrize("text", [
    "GET /p HTTP/1.1", "GET /p HTTP/2.0", "VERSION-CONTROL /p HTTP/1.1", "GET /a\\\"b HTTP/1.1"])
def test_plain_requests_are_no_oddity(text):
    parser = LineParser()
    assert isinstance(parser.parse(request(text)), LogRecord)
    assert not parser.tolerated


def test_an_odd_line_refused_for_another_reason_is_not_counted_as_tolerated():
    parser = LineParser()
    assert parser.parse(request("GET  /p HTTP/1.0").replace(" 200 ", " 2000 ")) is \
        Reject.BAD_STATUS
    assert parser.parse(request("GET  /p HTTP/1.0").replace("10/Oct", "31/Feb")) is \
        Reject.BAD_TIME
    assert not parser.tolerated


@pytest.mark.parametrize("text, path, query", [
    ("GET /nature%E2%80%99s-essence HTTP/1.1", "/nature\u2019s-essence", ""),
    ("GET /a%20b?x=%20y HTTP/1.1", "/a b", "x=%20y"),               # the query stays raw
    ("GET /a%2Fb%00%FF HTTP/1.1", "/a%2Fb%00%FF", ""),              # validation's rules
    ("GET /a%2525 HTTP/1.1", "/a%25", ""),                          # decoded once
    ("GET  /caf%C3%A9  HTTP/1.1", "/caf\u00e9", ""),                 # the tolerant pass too
])
def test_the_path_is_percent_decoded(text, path, query):
    record = parse_line(request(text))
    assert (record.path, record.query) == (path, query)


def test_the_page_length_limit_applies_once_decoded():
    near = "/" + "%C3%A9" * 1365 + "ab"                  # 8,193 raw, 1,368 decoded
    assert len(near) == MAX_TARGET + 1
    assert parse_line(request(f"GET {near[:-1]} HTTP/1.1")).path == "/" + "\u00e9" * 1365 + "a"
    assert parse_line(request(f"GET {near} HTTP/1.1")) is Reject.BAD_TARGET   # > MAX_TARGET
    limit = "/" + "%41" * 2047                           # 6,142 raw, 2,048 decoded
    assert parse_line(request(f"GET {limit} HTTP/1.1")).path == "/" + "A" * 2047
    assert parse_line(request(f"GET {limit}%41 HTTP/1.1")) is Reject.BAD_TARGET
    assert parse_line(request(f"GET  {limit}%41 HTTP/1.1")) is Reject.BAD_TARGET


def test_forced_format_rejects_the_other_one():
    assert parse_line(COMMON, "combined") is Reject.WRONG_FORMAT
    assert parse_line(COMBINED, "common") is Reject.WRONG_FORMAT
    assert isinstance(parse_line(COMBINED, "combined"), LogRecord)
    assert isinstance(parse_line(COMMON, "common"), LogRecord)
    with pytest.raises(ValueError, match="unknown log format"):
        LineParser("json")


def test_every_line_of_the_real_log_parses_and_agrees_with_a_split():
    if not LOG.exists():
        pytest.skip(f"{LOG} is not here")
    parser = LineParser()
    with open(LOG, encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, 1):
            record = parser.parse(line)
            assert isinstance(record, LogRecord), (number, record)
            fields = line.split(" ")
            assert record.host == fields[0]
            assert record.path == decoded_path(fields[6].split("?")[0])
            assert record.status == int(fields[8])
            assert record.time.strftime("%d/%b/%Y:%H:%M:%S") == fields[3][1:]


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_arbitrary_text_never_raises(text):
    result = parse_line(text)
    assert isinstance(result, LogRecord | Reject)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_arbitrary_bytes_inside_a_request_never_raise(junk):
    request = junk.decode("latin-1").replace("\n", " ")
    line = f'1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "{request}" 400 0 "-" "-"'
    result = parse_line(line)
    assert isinstance(result, LogRecord | Reject)
    if isinstance(result, LogRecord):
        assert result.path.startswith("/") and "\x00" not in result.path
