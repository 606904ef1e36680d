"""Index keys: BSON values as SQLite values that sort in MongoDB's order.

SQLite orders NULL < numbers < TEXT < BLOB, and TEXT by bytes (UTF-8), as MongoDB orders
null < numbers < strings (with the simple collation). Every other indexed type becomes a
BLOB whose first byte is MongoDB's rank of that type, so BLOBs sort as MongoDB sorts
binary data < ObjectId < booleans < dates, and a range over one type can be bracketed to
that type ("type bracketing", as MongoDB's query planner does): ``$gt: 5`` never matches
a string, ``$lt: <date>`` never matches a number.

A missing field and ``null`` are both SQL NULL, which sorts first as MongoDB sorts them
(the document itself, stored whole, keeps the difference for ``$exists``). Arrays and
embedded documents are not indexable here (MongoDB's multikey indexes): writing one into
an indexed field is refused with a clear error.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping

from bson import Binary, Int64, ObjectId
from bson.codec_options import CodecOptions
from pymongo.errors import WriteError

_BINARY, _OBJECT_ID, _BOOL, _DATE = b"\x05", b"\x07", b"\x08", b"\x09"
_AFTER_DATES = b"\x0a"
_OFFSET = 2**63
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_NUMBERS = (int, float, Int64)
CODEC = CodecOptions(tz_aware=True, tzinfo=dt.UTC)  # how stored documents are decoded

# SQL bounds of each bracket: lower (inclusive) and upper (exclusive) of a type's values.
BRACKETS = {
    "number": (None, ""),          # numbers sort below the empty string
    "string": ("", b""),           # strings sort below the empty blob
    "binary": (_BINARY, _OBJECT_ID),
    "objectid": (_OBJECT_ID, _BOOL),
    "bool": (_BOOL, _DATE),
    "date": (_DATE, _AFTER_DATES),
}


class UnindexableValueError(WriteError):
    """An array or document written into an indexed field."""

    def __init__(self, message: str):
        super().__init__(message, code=2)


def date_ms(value: dt.datetime) -> int:
    """Milliseconds since the epoch, as BSON stores dates (naive values are UTC)."""
    delta = (value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)) - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def from_ms(ms: int) -> dt.datetime:
    return _EPOCH + dt.timedelta(milliseconds=ms)


def encode(value, field: str = "value"):
    """The SQLite value of a BSON value (``field`` names it in errors)."""
    kind = type(value)
    if kind is str or kind is int or kind is float or value is None:
        return value
    if kind is dt.datetime:
        return _DATE + (date_ms(value) + _OFFSET).to_bytes(8, "big")
    if kind is ObjectId:
        return _OBJECT_ID + value.binary
    if kind is bool:
        return _BOOL + (b"\x01" if value else b"\x00")
    if isinstance(value, Int64):
        return int(value)
    if isinstance(value, bytes | Binary):
        return _BINARY + bytes(value)
    if isinstance(value, Mapping | list | tuple):
        raise UnindexableValueError(
            f"the embedded store cannot index the {kind.__name__} in {field!r}: indexed "
            "fields hold single values (no multikey indexes)")
    raise UnindexableValueError(f"the embedded store cannot index a {kind.__name__} ({field!r})")


def decode(stored):
    """The BSON value of a stored key (inverse of :func:`encode`)."""
    if type(stored) is not bytes:
        return stored
    tag, body = stored[:1], stored[1:]
    if tag == _DATE:
        return from_ms(int.from_bytes(body, "big") - _OFFSET)
    if tag == _OBJECT_ID:
        return ObjectId(body)
    if tag == _BOOL:
        return body == b"\x01"
    return body


def bracket(value) -> tuple:
    """The (lower, upper) SQL bounds of the type of ``value``; None where MongoDB's
    comparison operators match no stored key of that type here."""
    if isinstance(value, bool):
        return BRACKETS["bool"]
    if isinstance(value, _NUMBERS):
        return BRACKETS["number"]
    if isinstance(value, str):
        return BRACKETS["string"]
    if isinstance(value, dt.datetime):
        return BRACKETS["date"]
    if isinstance(value, ObjectId):
        return BRACKETS["objectid"]
    if isinstance(value, bytes | Binary):
        return BRACKETS["binary"]
    return None


def ms_of_key(stored: bytes) -> int | None:
    """Milliseconds of a stored date key (a SQL function in aggregations); None else."""
    if type(stored) is bytes and stored[:1] == _DATE:
        return int.from_bytes(stored[1:], "big") - _OFFSET
    return None
