"""The line mapper: lines → a tally in the recorders' pending formats, events written."""

from __future__ import annotations

import datetime as dt
import io
from collections import defaultdict
from pathlib import Path

import pytest
from fakes import stored_count
from hypothesis import given, settings
from hypothesis import strategies as st
from mapperref import Captured, reference, same

from queries.counting import HitRecorder
from queries.dimensions.classify import RecordCoder
from queries.events.collection import stream_key
from queries.events.writer import EventWriter
from queries.ingest.chunks import read
from queries.ingest.mapper import LineMapper, split_lines

T = dt.datetime(2026, 3, 14, 10, 7, 30, tzinfo=dt.UTC)


def line(path: str, status: int = 200, agent: str = "Mozilla/5.0 (X11; Linux x86_64) "
         "Firefox/120.0", vhost: str = "") -> bytes:
    prefix = f"{vhost} " if vhost else ""
    return (f'{prefix}10.0.0.1 - - [{T:%d/%b/%Y:%H:%M:%S} +0000] "GET {path} HTTP/1.1" '
            f'{status} 5 "-" "{agent}"\n').encode()


def test_split_lines_gives_each_line_its_start_offset_and_splits_only_on_newlines():
    data = "a\r b\n\nc\u2028é\nlast".encode() + b"\xff\n"
    assert list(split_lines(data, 100)) == [("a\r b", 100), ("", 105), ("c\u2028é", 106),
                                            ("last\ufffd", 113)]
    assert list(split_lines(b"", 7)) == []
    assert list(split_lines(b"x\n", 0)) == [("x", 0)]
    assert list(split_lines(b"x\ny\n\nz", 0)) == [("x", 0), ("y", 2), ("", 4), ("z", 5)]


def test_a_tally_counts_hits_per_minute_rejects_with_reasons_and_dimensions_per_hour():
    lines = [line("/a"), line("/a", 404), line("/b", agent="Googlebot/2.1"), b"junk\n",
             line("*"), line("/a", vhost="bad$site")]
    tally = LineMapper().map(split_lines(b"".join(lines), 0), "s", 1, None)
    assert (tally.lines, tally.parsed) == (6, 3)
    assert tally.rejected == {"malformed": 1, "bad_target": 1, "bad_site": 1}
    assert tally.hits == {("s", "/a", 2026, 3, 14): {607: 2}, ("s", "/b", 2026, 3, 14): {607: 1}}
    assert tally.sites == {"s": 3} and tally.first == tally.last == T
    (key, (counts, pairs)), = tally.units.items()
    assert key == ("u", "s", 2026, 3, 14, 10)
    assert sum(counts.values()) == 3
    assert len({visitor for visitor, _ in pairs}) == 2      # two agents, one address
    assert sum(n for values, n in counts.items() if ("bot", "bot") in values) == 1


def test_a_tally_counts_the_odd_request_lines_of_its_own_lines_only():
    odd = line("/a").replace(b"GET /a HTTP/1.1", b"get  /a   http/1.0")
    mapper = LineMapper()
    tally = mapper.map(split_lines(odd + line("/b") + odd, 0), "s", 1, None)
    assert tally.tolerated == {"odd_protocol": 2} and tally.parsed == 3
    assert tally.hits == {("s", "/a", 2026, 3, 14): {607: 2}, ("s", "/b", 2026, 3, 14): {607: 1}}
    assert not mapper.map(split_lines(line("/b"), 0), "s", 1, None).tolerated


def test_the_site_option_beats_the_virtual_host_which_beats_the_default():
    data = line("/a", vhost="v.example") + line("/a")
    assert LineMapper().map(split_lines(data, 0), "d", 1, None).sites == {"v.example": 1,
                                                                          "d": 1}
    assert LineMapper(site="s").map(split_lines(data, 0), "d", 1, None).sites == {"s": 2}


def test_events_are_written_before_the_tally_returns_under_offset_ids(embedded_db):
    db = embedded_db
    data = line("/a") + line("/b")
    writer = EventWriter(db, keyed=True)
    mapper = LineMapper()
    tally = mapper.map(split_lines(data, 0), "s", stream_key("x"), writer)
    assert tally.events.written == 2 and writer.pending() == 0
    assert stored_count(db, "s") == 2
    again = mapper.map(split_lines(data, 0), "s", stream_key("x"), writer)   # a replay
    assert (again.events.written, again.events.present) == (0, 2)
    assert stored_count(db) == 2


def test_a_recorder_takes_a_tally_as_if_it_had_recorded_the_hits(embedded_db):
    db = embedded_db
    tally = LineMapper().map(split_lines(line("/a") * 3 + line("/b"), 0), "s", 1, None)
    with HitRecorder(db, writer="w") as merged, HitRecorder(db, writer="x") as direct:
        merged.add_pending(tally.hits)
        for page in ("/a", "/a", "/a", "/b"):
            direct.record("s", page, T)
        assert merged.status().pending_hits == direct.status().pending_hits == 4
        assert merged._pending == direct._pending


def test_a_mapper_keeps_its_coder_from_chunk_to_chunk_until_it_is_full(monkeypatch):
    """Inputs met in an earlier chunk are not classified again, and a full coder makes
    way for a new one: the tallies are the same either way."""
    chunk = b"".join([line("/a"), line("/b", 404), line("/c", agent="Googlebot/2.1")])
    mapper = LineMapper()
    first = mapper.map_chunk(chunk, 0, "s", 1, None)
    coder = mapper.step._coder
    assert mapper.map_chunk(chunk, 0, "s", 1, None).units == first.units
    assert mapper.step._coder is coder and not coder.full
    monkeypatch.setattr(RecordCoder, "MAX_ENTRIES", 3)
    assert coder.full
    assert mapper.map_chunk(chunk, 0, "s", 1, None).units == first.units
    assert mapper.step._coder is not coder


LOG = Path(__file__).resolve().parents[2] / "shared" / "data" / "apache_combined_2015.log"
TIME = "[14/Mar/2026:10:07:30 +0000]"
GOOD = f'10.0.0.1 - - {TIME} "GET /a?q=1 HTTP/1.1" 200 5 "http://r.example/" "curl/8.0"'
# Lines the pattern must leave to the line parser, or take as it would.
HOSTILE = [
    GOOD, GOOD + "\r", GOOD + " \t", GOOD + ' "1.2.3.4" 0.004', GOOD[:-1],
    GOOD.replace("curl/8.0", 'cu\\"rl'), GOOD.replace("curl/8.0", "-"),
    GOOD.replace("curl/8.0", ""), GOOD.replace('"http://r.example/"', '"-"'),
    GOOD.replace("GET /a?q=1 HTTP/1.1", "get  /a   http/1.0"),
    GOOD.replace("GET /a?q=1 HTTP/1.1", "GET http://h/x?y HTTP/1.1"),
    GOOD.replace("GET /a?q=1 HTTP/1.1", "GET /a b HTTP/1.1"),
    GOOD.replace("GET /a?q=1 HTTP/1.1", "GET /a"),
    GOOD.replace("GET /a?q=1 HTTP/1.1", "GET /a HTTP/1.1 x"),
    GOOD.replace("GET /a?q=1 HTTP/1.1", "-"), GOOD.replace("GET /a?q=1 HTTP/1.1", "*"),
    GOOD.replace("GET /a?q=1 HTTP/1.1", "\\x16\\x03\\x01"),
    GOOD.replace("/a?q=1", "/%7Euser/%E2%82%AC?x=%20"), GOOD.replace("/a?q=1", "/a%00b"),
    GOOD.replace("/a?q=1", "/" + "x" * 9000), GOOD.replace("/a?q=1", "/" + "%41" * 1500),
    GOOD.replace("/a?q=1", "/a?%zz"), GOOD.replace("/a?q=1", "/../etc"),
    GOOD.replace("/a?q=1", "/caf\u00e9"), GOOD.replace("curl/8.0", "\u00e9\u2028\x1c"),
    GOOD.replace("+0000", "+2400"), GOOD.replace("+0000", "+0099"),
    GOOD.replace("+0000", "-1359"), GOOD.replace("14/Mar", "31/Feb"),
    GOOD.replace("14/Mar", "14/MAR"), GOOD.replace("2026:10", "0000:10"),
    GOOD.replace("14/Mar/2026:10", "31/Dec/9999:23").replace("+0000", "-0100"),
    GOOD.replace("10:07:30", "24:07:30"), GOOD.replace("10:07:30", "10:07:60"),
    GOOD.replace(" 200 ", " 20 "), GOOD.replace(" 200 ", " - "),
    GOOD.replace(" 200 ", " \u0662\u0660\u0660 "), GOOD.replace(" 5 ", " - "),
    GOOD.replace(" 5 ", " 123456789012345678 "), GOOD.replace(" 5 ", " 5x "),
    GOOD.replace(" 5 ", " 99999999999999999999 "),
    "v.example:8080 " + GOOD, "[2001:db8::1]:443 " + GOOD, "bad$site " + GOOD,
    ":80 " + GOOD, "V.Example " + GOOD, "a b c " + GOOD, GOOD.replace("10.0.0.1", "::1"),
    GOOD.replace(" - - ", " - frank "), GOOD.replace('"', "'"), "", "  ", "junk",
    '10.0.0.1 - - ' + TIME + ' "GET /a HTTP/1.1" 200 5', "\x00" * 10,
]


def compare(data: bytes, **options) -> None:
    """Each chunk's tally and events equal the line-by-line reference's."""
    kept = frozenset(options.pop("apart", ()))
    mapper = LineMapper(**options)
    if kept:
        mapper._apart, mapper._apart_events = defaultdict(bool, dict.fromkeys(kept, True)), None
    with io.BytesIO(data) as handle:
        for start, _, chunk in read(handle, 0, len(data)):
            events = Captured()
            tally = mapper.map_chunk(chunk, start, "s", 1, events)
            expected, rows, _ = reference(chunk, start, "s", apart=kept, **options)
            assert same(tally, expected) == []
            assert events.rows == rows


@pytest.mark.skipif(not LOG.exists(), reason=f"{LOG} is not there")
@pytest.mark.parametrize("form", ["combined", "common"])
def test_the_shared_log_is_tallied_as_the_line_parser_reads_it_line_by_line(form):
    data = LOG.read_bytes()
    if form == "common":
        data = b"\n".join(line.rsplit(b' "', 2)[0] for line in data.splitlines()) + b"\n"
    compare(data)


def test_a_long_tail_sample_is_tallied_as_the_line_parser_reads_it(tmp_path):
    from bench.logs import make
    make("longtail", 20_000, tmp_path / "longtail.log")
    compare((tmp_path / "longtail.log").read_bytes())


@pytest.mark.parametrize("options", [{}, {"format": "combined"}, {"format": "common"},
                                     {"site": "fixed.example"}, {"unknown_bots": True},
                                     {"apart": ["v.example"]}])
def test_hostile_lines_are_tallied_as_the_line_parser_reads_them(options):
    data = "\n".join(HOSTILE).encode() + b"\n\xff\xfe " + GOOD.encode() + b"\xc3\n"
    compare(data + data.replace(b"/a", b"/b"), **options)


PIECES = [GOOD, " ", "\t", '"', "\\", "%", "?", "-", "\r", "\u00e9", "+0000", "HTTP/1.1",
          "GET", "/", "200", "99999999999999999999", "v.example ", TIME, "[", "]"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(PIECES), max_size=6).map("".join), max_size=8),
       st.binary(max_size=20))
def test_arbitrary_lines_are_tallied_as_the_line_parser_reads_them(lines, junk):
    compare("\n".join(lines).encode() + junk)


def test_a_chunk_without_lines_is_an_empty_tally():
    tally = LineMapper().map_chunk(b"", 0, "s", 1, None)
    assert (tally.lines, tally.hits, tally.units, tally.first) == (0, {}, {}, None)


def test_workers_are_not_forked_once_the_mappers_threads_run():
    """A child forked while Polars' pool runs would hang on its first frame."""
    from queries import processes
    LineMapper().map_chunk(line("/a") * 3, 0, "s", 1, None)
    assert not processes.can_fork()
