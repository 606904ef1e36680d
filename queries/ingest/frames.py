"""A chunk of log lines as a Polars frame: split, parsed and looked up as columns.

The per-line work of an ingest runs in Polars (Rust, Arrow memory, the GIL released):
one pattern recognises every well-formed line, cut into its fields at its quotes and
spaces, times are parsed as a column, and whatever Python must decide (a site's or
page's validity, a user agent's class) is decided once per distinct value (``lookup``)
and joined back. Lines the pattern does not take (escapes, odd request lines, junk,
non-ASCII text) go through ``logformat.LineParser`` one by one, so their tolerance and
reasons are exactly its own; real logs hold few (4 of the shared log's 10,000 lines,
none of a 200,000-line long-tail log).

The pattern is ``logformat``'s strict one over printable ASCII (where Rust's and
Python's ``\\s``, ``\\S`` and ``\\d`` agree), with the times and sizes it takes bounded so
that Polars and Python read them alike (years 1900-2099, no leap second, zones under
±24 h, sizes of 18 digits at most); what falls outside is the line parser's.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from ..dimensions.referrer import NOT_LOGGED
from ..dimensions.tally import lookup
from ..validation import decoded_path
from .logformat import MAX_PATH, MAX_TARGET, LineParser, LogRecord, strip_port

# Printable ASCII and \t-\r without the backslash (escapes are the line parser's): NS
# is \S within it, ANY is ., QUOTED is [^"], TARGET is [^"\s\x00]; the words before
# the time hold no quote either (``_split`` cuts the line at its quotes).
_ANY = r"[\t-\r -\[\]-~]"
_NS = r"[!#-\[\]-~]"
_QUOTED = r'[\t-\r -!#-\[\]-~]'
_TARGET = r"[!#-\[\]-~]"
PATTERN = (
    rf"^(?:(?P<vhost>{_NS}+) )??(?P<host>{_NS}+) {_NS}+ {_NS}+ "
    r"\[(?P<stamp>(?:0[1-9]|[12][0-9]|3[01])/[A-Z][a-z]{2}/(?:19|20)[0-9]{2}:"
    r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9] "
    r"[+-](?:[01][0-9]|2[0-3])[0-5][0-9])\] "
    rf'"(?P<method>[A-Z]+) (?P<target>/{_TARGET}*) (?P<protocol>HTTP/[0-9](?:\.[0-9])?)" '
    r"(?P<status>[0-9]{3}|-) (?P<size>[0-9]{1,18}|-)"
    rf'(?: "(?P<referrer>{_QUOTED}*)" "(?P<agent>{_QUOTED}*)"(?: {_ANY}*)?)?[\t-\r ]*$'
)
TIME_FORMAT = "%d/%b/%Y:%H:%M:%S %z"
UTC = pl.Datetime("us", "UTC")
# A parsed line's columns (``LogRecord``'s, ``user`` aside), with ``reason`` (why the
# line was refused, null when parsed), ``undecodable`` (it held bytes that are not
# UTF-8), ``row`` (its place in the chunk) and ``offset`` (in the file); a size past
# 64 bits (which only the line parser takes) is ``huge``, in digits, its ``bytes`` null.
SCHEMA = {"row": pl.UInt32, "offset": pl.Int64, "reason": pl.String,
          "undecodable": pl.Boolean, "time": UTC, "host": pl.String, "method": pl.String,
          "path": pl.String, "query": pl.String, "status": pl.Int64, "bytes": pl.Int64,
          "referrer": pl.String, "user_agent": pl.String, "vhost": pl.String,
          "huge": pl.String}
_FIELDS = ("time", "host", "method", "path", "query", "status", "bytes", "referrer",
           "user_agent", "vhost")
BAD_TARGET = "bad_target"


def lines_frame(data: bytes, start: int) -> pl.DataFrame:
    """The lines of ``data`` (read from byte ``start``) as ``line`` and ``offset``
    columns: decoded (a byte that is not UTF-8 becomes U+FFFD) and split on newlines,
    each with the byte offset it starts at (``mapper.split_lines``'s lines)."""
    text = data.decode("utf-8", "replace")
    # Split by Python, in C: Polars' split of one string into a list held ~8x the chunk.
    lines = pl.Series("line", text.split("\n"), dtype=pl.String)
    sizes = (lines.str.len_bytes() if data.isascii()
             else pl.Series(data.split(b"\n")).bin.size()).cast(pl.Int64) + 1
    frame = pl.DataFrame({"line": lines, "offset": sizes.cum_sum() - sizes + start})
    return frame.head(-1) if not text or text.endswith("\n") else frame


def pairs_frame(lines: Sequence[tuple[str, int]]) -> pl.DataFrame:
    """``(line, offset)`` pairs (``mapper.split_lines``) as :func:`lines_frame` gives."""
    texts, offsets = zip(*lines, strict=True) if lines else ((), ())
    return pl.DataFrame({"line": list(texts), "offset": list(offsets)},
                        schema={"line": pl.String, "offset": pl.Int64})


def parse(lines: pl.DataFrame, parser: LineParser) -> pl.DataFrame:
    """Every line of ``lines`` in :data:`SCHEMA`'s columns, in their order: the
    well-formed ones parsed as columns, the others by ``parser`` (which counts the odd
    ones it tolerates)."""
    lines = lines.with_row_index("row").with_columns(
        pl.col("line").str.contains(PATTERN).alias("fast"))
    fields = _split(lines.filter("fast"))
    fields = fields.with_columns(
        pl.col("stamp").str.strptime(UTC, TIME_FORMAT, strict=False).alias("time"))
    fast = pl.col("time").is_not_null()
    if parser.format == "combined":
        fast &= pl.col("agent").is_not_null()
    elif parser.format == "common":
        fast &= pl.col("agent").is_null()
    fields = fields.with_columns(fast.alias("fast"))
    parsed = _columns(fields.filter("fast"))
    slow = pl.concat([lines.filter(~pl.col("fast")).select("row", "offset", "line"),
                      fields.filter(~pl.col("fast")).select("row", "offset", "line")])
    if slow.height:
        parsed = pl.concat([parsed, _parsed_one_by_one(slow, parser)]).sort("row")
    return parsed


def _split(lines: pl.DataFrame) -> pl.DataFrame:
    """The fields of lines :data:`PATTERN` matches, cut where their quotes and spaces
    are (a pattern's captures cost 6x its match): no quote before the request, one
    space between the words before the time, none inside the request's parts. Each cut
    is a step of its own (an expression used twice in one step is computed twice)."""
    field = pl.col("q").struct.field
    cut = lines.with_columns(pl.col("line").str.splitn('"', 7).alias("q")).select(
        "row", "offset", "line",
        field("field_0").alias("before"),     # [vhost ]host ident user [stamp]_
        field("field_1").str.splitn(" ", 3).alias("request"),
        field("field_2").str.strip_chars().str.splitn(" ", 2).alias("numbers"),
        field("field_3").alias("referrer"), field("field_5").alias("agent"))
    cut = cut.with_columns(pl.col("before").str.head(-30).str.splitn(" ", 4).alias("words"))
    words, request, numbers = (pl.col(name).struct.field for name in
                               ("words", "request", "numbers"))
    vhost = words("field_3").is_not_null()
    return cut.select(
        "row", "offset", "line",
        pl.when(vhost).then(words("field_0")).alias("vhost"),
        pl.when(vhost).then(words("field_1")).otherwise(words("field_0")).alias("host"),
        pl.col("before").str.slice(-28, 26).alias("stamp"),
        request("field_0").alias("method"), request("field_1").alias("target"),
        numbers("field_0").alias("status"), numbers("field_1").alias("size"),
        "referrer", "agent")


def _columns(fields: pl.DataFrame) -> pl.DataFrame:
    """The lines the pattern took, in :data:`SCHEMA`'s columns."""
    target, split = pl.col("target"), pl.col("split")
    fields = fields.with_columns(target.str.splitn("?", 2).alias("split"))
    out = fields.select(
        "row", "offset", "time", "host", "method",
        split.struct.field("field_0").alias("raw_path"),
        split.struct.field("field_1").fill_null("").alias("query"),
        pl.col("status").cast(pl.Int64, strict=False),
        pl.col("size").cast(pl.Int64, strict=False).fill_null(0).alias("bytes"),
        pl.when(pl.col("referrer").is_null()).then(pl.lit(NOT_LOGGED))
        .when(pl.col("referrer") == "-").then(None)
        .otherwise(pl.col("referrer")).alias("referrer"),
        pl.when(pl.col("agent") == "-").then(None).otherwise(pl.col("agent"))
        .alias("user_agent"),
        "vhost",
        (target.str.len_bytes() > MAX_TARGET).alias("long"),
        (target.str.len_bytes() > MAX_PATH).alias("decode"),
    ).with_columns(pl.col("decode") | pl.col("raw_path").str.contains("%", literal=True))
    if out.height == 0:
        return pl.DataFrame(schema=SCHEMA)
    decoded = pl.when(pl.col("decode")).then(
        lookup(out, ["raw_path", "long"], _page, pl.String, where=pl.col("decode")))
    out = out.with_columns(
        decoded.otherwise(pl.col("raw_path")).alias("path"),
        lookup(out, ["vhost"], _strip_port, pl.String),
    )
    return out.select(
        pl.col("row").cast(pl.UInt32), "offset",
        pl.when(pl.col("path").is_null()).then(pl.lit(BAD_TARGET)).alias("reason"),
        pl.lit(False).alias("undecodable"), *_FIELDS, pl.lit(None, pl.String).alias("huge"))


def _page(path: str, long: bool) -> str | None:
    """``logformat._page``: the page decoded, None (refused) when its target is longer
    than a request line or the page, decoded, longer than a page may be."""
    if long:
        return None
    page = decoded_path(path)
    return None if len(page) > MAX_PATH else page


def _strip_port(vhost: str | None) -> str | None:
    return None if vhost is None else strip_port(vhost)


def _parsed_one_by_one(slow: pl.DataFrame, parser: LineParser) -> pl.DataFrame:
    """The lines the pattern did not take, each parsed by ``parser``."""
    rows = []
    for row, offset, line in slow.select("row", "offset", "line").iter_rows():
        record = parser.parse(line)
        if isinstance(record, LogRecord):
            huge = str(record.bytes) if record.bytes >= 2**63 else None
            if huge:
                record = record._replace(bytes=None)
            rows.append((row, offset, None, "\ufffd" in line, *(
                getattr(record, name) for name in _FIELDS), huge))
        else:
            rows.append((row, offset, str(record), False, *([None] * len(_FIELDS)), None))
    return pl.DataFrame(rows, schema=SCHEMA, orient="row")
