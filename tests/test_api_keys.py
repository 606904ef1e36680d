"""API keys in the store, on every backend: a key is checked by its prefix and
SHA-256 alone, spends its hour's requests in one shared count, and once revoked is no
key; names are unique."""

from __future__ import annotations

import datetime as dt

import pytest

from queries.accounts import keys
from queries.errors import HitboardError

NOW = dt.datetime(2026, 11, 21, 14, 40, tzinfo=dt.UTC)


def test_a_key_is_checked_counted_and_revoked(db):
    key = keys.create(db, "ci", ["b.example", "a.example"], now=NOW)
    found = keys.check(db, key)
    assert found is not None and found.sites == ("a.example", "b.example")
    assert found.sees("a.example") and not found.sees("c.example")
    assert keys.check(db, key[:-1] + ("A" if key[-1] != "A" else "B")) is None
    assert keys.check(db, "hbk_") is None and keys.check(db, None) is None
    assert [keys.spend(db, found, NOW, limit=2) for _ in range(3)] == [0, 0, 20 * 60]
    assert keys.spend(db, found, NOW + dt.timedelta(minutes=20), limit=2) == 0
    (listed,) = keys.listed(db)
    assert listed.last_used == NOW + dt.timedelta(minutes=20) and listed.created == NOW
    with pytest.raises(HitboardError, match="exists already"):
        keys.create(db, "ci")
    assert keys.revoke(db, "ci") and not keys.revoke(db, "ci")
    assert keys.check(db, key) is None and keys.listed(db) == []
    assert keys.check(db, keys.create(db, "ci", now=NOW)).sites is None


def test_a_key_s_name_is_printable_and_short(embedded_db):
    for name in ("", "   ", "x" * 65, "tab\there", None):
        with pytest.raises(HitboardError, match="printable"):
            keys.create(embedded_db, name)
    assert keys.listed(embedded_db) == []
