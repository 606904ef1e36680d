"""Apache/Nginx access-log lines → :class:`LogRecord`, or a :class:`Reject` saying why not.

Formats: *common* (``%h %l %u %t "%r" %>s %b``) and *combined* (common plus
``"%{Referer}i" "%{User-agent}i"``), each with or without a virtual-host prefix
(Apache's ``vhost_combined`` writes ``%v:%p`` first). ``auto`` recognises all four on every
line, so a file mixing them is fine; extra fields after the user agent (Nginx's
``"$http_x_forwarded_for"``, Apache's ``%D``) are ignored.

Speed: one compiled regular expression validates and splits a well-formed line (the fast
path); the date is sliced with a month table and cached per distinct timestamp instead of
``strptime``. Lines it refuses (escaped quotes, an unterminated last quote, ``\\xhh``
escapes of binary junk, an odd request line) go to a tolerant second pass that either
parses them or names the reason. Pure: no I/O, no database.

The request line is read as tolerantly as GoAccess reads it, and a little more: spaces or
tabs around and between its parts, a lower-case method or protocol, a target with spaces
inside (the text between the method and the protocol), an absolute-form target, an odd
``HTTP/...`` token (``HTTP/V1.0``) or none (HTTP/0.9). Each such line is counted under
its :class:`Oddity` in :attr:`LineParser.tolerated`. Junk stays refused: binary, a TLS
handshake on port 80, ``-``, a last token that is no protocol after a target
(``GET /a HTTP/1.1 extra``), a target that is no path (``*``, ``host:443``, ``foo``).

The page (``LogRecord.path``) is percent-decoded (``validation.decoded_path``); its
length limit applies once decoded, as stored, to a target no longer than a server's
request line (``MAX_TARGET``).
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Sequence
from enum import StrEnum
from typing import NamedTuple

from ..dimensions.referrer import NOT_LOGGED
from ..validation import MAX_PAGE, decoded_path

FORMATS = ("auto", "combined", "common")
MAX_PATH = MAX_PAGE         # a page, decoded
MAX_TARGET = 8192           # a raw target (path and query): Apache's and Nginx's request line
_MONTHS = {m: i for i, m in enumerate(
    ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1)}
_TIME_CACHE_SIZE = 50_000


class Reject(StrEnum):
    """Why a line was not parsed: short, stable strings fit for a summary."""

    EMPTY = "empty"
    MALFORMED = "malformed"          # not host ident user [time] "request" status size
    BAD_TIME = "bad_time"            # the [time] field is not a valid date
    NO_REQUEST = "no_request"        # "-": the client sent nothing (e.g. a 408)
    BAD_REQUEST = "bad_request"      # not METHOD TARGET [HTTP/x]: binary junk, TLS on port 80
    BAD_TARGET = "bad_target"        # the target is no path: "*", "host:443", too long, NUL
    BAD_STATUS = "bad_status"
    BAD_SIZE = "bad_size"
    WRONG_FORMAT = "wrong_format"    # a forced --format that this line does not have


class Oddity(StrEnum):
    """What was odd about a request line the tolerant pass accepted: one per line, the
    first that applies in this order."""

    ABSOLUTE_TARGET = "absolute_target"  # GET http://host/path HTTP/1.1 (proxies)
    NO_PROTOCOL = "no_protocol"          # GET /path (HTTP/0.9)
    ODD_PROTOCOL = "odd_protocol"        # HTTP/V1.0, http/1.1, HTTP/9.9
    LOWERCASE_METHOD = "lowercase_method"
    SPACE_IN_TARGET = "space_in_target"  # GET /a b HTTP/1.1
    SPACING = "spacing"                  # several spaces, tabs, leading or trailing ones


class LogRecord(NamedTuple):
    time: dt.datetime          # aware, UTC
    host: str                  # client address (IPv4, IPv6 or name)
    method: str
    path: str                  # the page: the request path without its query, decoded
    query: str                 # "" when there is none
    protocol: str              # "" for an HTTP/0.9-style request without a version
    status: int | None         # None for "-"
    bytes: int                 # 0 for "-"
    referrer: str | None       # None for "-"; NOT_LOGGED in the common format (no field)
    user_agent: str | None
    vhost: str | None          # the virtual host prefix, port removed
    user: str | None


# The virtual-host prefix is tried last (``??``): most logs have none, and a line matches
# with it or without it, never both (four fields before the date, or three).
_STRICT = re.compile(
    r'(?:(\S+) )??(\S+) \S+ (\S+) '
    r'\[(\d\d/[A-Z][a-z][a-z]/\d{4}:\d\d:\d\d:\d\d [+-]\d{4})\] '
    r'"([A-Z]+) (/[^"\s\x00]*) (HTTP/\d(?:\.\d)?)" '
    r'(\d{3}|-) (\d+|-)'
    r'(?: "([^"]*)" "([^"]*)"(?: .*)?)?\s*\Z'
)
_new = tuple.__new__   # a NamedTuple without its Python-level __new__ (a record per line)
# Quoted text with backslash escapes, as an unrolled loop: runs of plain characters are
# matched at once (4x faster than an alternation per character on a user agent).
_ESCAPED_TEXT = r'([^"\\]*(?:\\.[^"\\]*)*)'
_QUOTED = '"' + _ESCAPED_TEXT + '"'
_LOOSE = re.compile(
    r'(?:(\S+) )?(\S+) \S+ (\S+) \[([^\]]*)\] ' + _QUOTED + r' (\S+) (\S+)'
    r'(?: ' + _QUOTED + ' "' + _ESCAPED_TEXT + r'"?(?: .*)?)?\s*\Z'
)
_METHOD = re.compile(r"[ \t]*([A-Za-z][A-Za-z_-]{0,31})[ \t]+")
_PROTOCOL = re.compile(r"HTTP/\S+", re.IGNORECASE)
_PLAIN_REQUEST = re.compile(r"[A-Z][A-Z_-]* /\S* HTTP/\d(?:\.\d)?")   # no oddity
_PLAIN_PROTOCOL = re.compile(r"HTTP/\d(?:\.\d)?")
_TIME = re.compile(r"\d\d/[A-Z][a-z][a-z]/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}")
_ESCAPE = re.compile(r"\\(.)")
_UNESCAPE = {'"': '"', "\\": "\\", "n": "\n", "t": "\t"}


class _Rejected(Exception):
    def __init__(self, reason: Reject):
        self.reason = reason


class LineParser:
    """Parses lines of one format (``auto`` accepts every supported one).

    ``parse(line)`` returns a :class:`LogRecord` or a :class:`Reject`; it never raises.
    Keeps a bounded cache of parsed timestamps: logs repeat each second many times.
    ``tolerated`` counts the lines parsed despite an odd request line, by :class:`Oddity`
    (the caller reads and clears it).
    """

    def __init__(self, format: str = "auto"):
        if format not in FORMATS:
            raise ValueError(f"unknown log format {format!r}: use one of {', '.join(FORMATS)}")
        self.format = format
        self._times: dict[str, dt.datetime] = {}
        self._zones: dict[str, dt.timezone] = {}
        self.tolerated: Counter[str] = Counter()

    def parse(self, line: str) -> LogRecord | Reject:
        try:
            if "\\" not in line:
                match = _STRICT.match(line)
                if match is not None:
                    return self._strict(match)
            return self._loose(line)
        except _Rejected as rejected:
            return rejected.reason
        except (ValueError, OverflowError):
            return Reject.MALFORMED

    def _strict(self, m: re.Match) -> LogRecord:
        vhost, host, user, stamp, method, target, proto, status, size, ref, agent = m.groups()
        if ref is None:
            if self.format == "combined":
                raise _Rejected(Reject.WRONG_FORMAT)
        elif self.format == "common":
            raise _Rejected(Reject.WRONG_FORMAT)
        path, _, query = target.partition("?")
        if len(target) > MAX_PATH or "%" in path:      # rare: checked again, decoded
            path = _page(target, path)
        return _new(LogRecord, (
            self._times.get(stamp) or self._time(stamp), host, method, path, query, proto,
            None if status == "-" else int(status),
            0 if size == "-" else int(size),
            NOT_LOGGED if ref is None else None if ref == "-" else ref,
            None if agent is None or agent == "-" else agent,
            None if vhost is None else strip_port(vhost),
            None if user == "-" else user,
        ))

    def _loose(self, line: str) -> LogRecord | Reject:
        line = line.rstrip("\r\n")
        if not line.strip():
            return Reject.EMPTY
        m = _LOOSE.match(line)
        if m is None:
            return Reject.MALFORMED
        vhost, host, user, stamp, request, status, size, ref, agent = m.groups()
        if (ref is None and self.format == "combined") or (
                ref is not None and self.format == "common"):
            return Reject.WRONG_FORMAT
        if not _TIME.fullmatch(stamp):
            return Reject.BAD_TIME
        request = _unescape(request)
        if request.strip(" \t") in ("-", ""):
            return Reject.NO_REQUEST
        method, raw_target, proto = _request_line(request)
        target = _origin_form(raw_target)
        if target is None or "\x00" in target:
            return Reject.BAD_TARGET
        if status != "-" and not (status.isdigit() and len(status) == 3):
            return Reject.BAD_STATUS
        if size != "-" and not size.isdigit():
            return Reject.BAD_SIZE
        path, _, query = target.partition("?")
        ref = None if ref is None else _unescape(ref)
        agent = None if agent is None else _unescape(agent)
        record = LogRecord(
            self._time(stamp), host, method.upper(), _page(raw_target, path), query,
            proto.upper(),
            None if status == "-" else int(status),
            0 if size == "-" else int(size),
            NOT_LOGGED if ref is None else None if ref == "-" else ref,
            None if agent in (None, "-", "") else agent,
            None if vhost is None else strip_port(vhost),
            None if user == "-" else user,
        )
        if not _PLAIN_REQUEST.fullmatch(request):
            self.tolerated[_oddity(method, raw_target, proto)] += 1
        return record

    def _time(self, stamp: str) -> dt.datetime:
        """``10/Oct/2000:13:55:36 -0700`` → aware UTC datetime, by slicing."""
        cached = self._times.get(stamp)
        if cached is not None:
            return cached
        month = _MONTHS.get(stamp[3:6])
        if month is None:
            raise _Rejected(Reject.BAD_TIME)
        offset = stamp[21:26]
        zone = self._zones.get(offset)
        if zone is None:
            minutes = int(offset[1:3]) * 60 + int(offset[3:5])
            if minutes >= 24 * 60:
                raise _Rejected(Reject.BAD_TIME)
            sign = -1 if offset[0] == "-" else 1
            zone = self._zones[offset] = dt.timezone(dt.timedelta(minutes=sign * minutes))
        try:
            local = dt.datetime(int(stamp[7:11]), month, int(stamp[0:2]), int(stamp[12:14]),
                                int(stamp[15:17]), int(stamp[18:20]), tzinfo=zone)
            value = local.astimezone(dt.UTC)
        except (ValueError, OverflowError):
            raise _Rejected(Reject.BAD_TIME) from None
        if len(self._times) >= _TIME_CACHE_SIZE:
            self._times.clear()
        self._times[stamp] = value
        return value


def parse_line(line: str, format: str = "auto") -> LogRecord | Reject:
    """One-off convenience; use a :class:`LineParser` for many lines (it caches times)."""
    return LineParser(format).parse(line)


def columns(records: Sequence[LogRecord]) -> dict[str, tuple]:
    """The fields of ``records`` (at least one) as columns, {field: values}: transposed
    in C, for the work done per column (events, dimensions) rather than per line."""
    return dict(zip(LogRecord._fields, zip(*records, strict=True), strict=True))


def strip_port(vhost: str) -> str:
    if vhost.startswith("["):           # [2001:db8::1]:443
        return vhost[1:].split("]", 1)[0]
    name, sep, port = vhost.rpartition(":")
    return name if sep and port.isdigit() and ":" not in name else vhost


def _request_line(request: str) -> tuple[str, str, str]:
    """(method, target, protocol) of a request line, read as GoAccess reads it: the
    target is the text between the method and a last ``HTTP/...`` token, spaces
    included; without such a token, the one word after the method (HTTP/0.9)."""
    m = _METHOD.match(request)
    if m is None:
        raise _Rejected(Reject.BAD_REQUEST)
    rest = request[m.end():].rstrip(" \t")
    cut = max(rest.rfind(" "), rest.rfind("\t"))
    if cut < 0:
        return m.group(1), rest, ""
    if not _PROTOCOL.fullmatch(rest, cut + 1):
        raise _Rejected(Reject.BAD_REQUEST)        # "GET /a HTTP/1.1 extra", "GET /a b"
    return m.group(1), rest[:cut].rstrip(" \t"), rest[cut + 1:]


def _oddity(method: str, target: str, proto: str) -> Oddity:
    if not target.startswith("/"):
        return Oddity.ABSOLUTE_TARGET
    if not proto:
        return Oddity.NO_PROTOCOL
    if not _PLAIN_PROTOCOL.fullmatch(proto):
        return Oddity.ODD_PROTOCOL
    if not method.isupper():
        return Oddity.LOWERCASE_METHOD
    if " " in target or "\t" in target:
        return Oddity.SPACE_IN_TARGET
    return Oddity.SPACING


def _page(target: str, path: str) -> str:
    """``path`` (of the raw ``target``) decoded, or a :class:`Reject`: a target longer
    than a server's request line, or a page longer than ``MAX_PATH`` once decoded."""
    if len(target) > MAX_TARGET:
        raise _Rejected(Reject.BAD_TARGET)
    path = decoded_path(path)
    if len(path) > MAX_PATH:
        raise _Rejected(Reject.BAD_TARGET)
    return path


def _origin_form(target: str) -> str | None:
    """The path of a request target: ``/a?b`` as is, ``http://host/a?b`` → ``/a?b``;
    ``*`` (OPTIONS) and ``host:443`` (CONNECT) name no page."""
    if target.startswith("/"):
        return target
    lowered = target[:8].lower()
    if lowered.startswith(("http://", "https://")):
        rest = target.split("://", 1)[1]
        slash = rest.find("/")
        return "/" if slash < 0 else rest[slash:]
    return None


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    return _ESCAPE.sub(lambda m: _UNESCAPE.get(m.group(1), m.group(0)), text)
