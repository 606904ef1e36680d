"""Share links in the store and on the command line: a token stored as its hash, the
scope it grants, refusals that write nothing (exit 2), list and revoke by prefix."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from clikit import run
from dashkit import seed

import queries
from queries import shares
from queries.shares import ShareError
from queries.stats.sites import register

NOW = dt.datetime(2026, 11, 21, 14, 0, tzinfo=dt.UTC)


@pytest.fixture
def db(tmp_path):
    db = queries.connect(str(tmp_path / "store"))
    seed(db, "s", [(NOW, "/a", 3)])
    register(db, "reg", "admin")
    yield db
    db.client.close()


def test_a_link_is_stored_as_its_hash_and_opens_its_scope(db):
    token, made = shares.create(db, "s", "referrer:news.example:8080",
                                frame_ancestors=("https://Blog.example.com/",), now=NOW)
    assert made.filter == ("referrer", "news.example:8080")
    assert made.frame_ancestors == ("https://blog.example.com",)
    stored = db[shares.COLLECTION].find_one({})
    assert token not in json.dumps(stored, default=str)
    assert stored["prefix"] == token[:shares.PREFIX_CHARS]
    assert shares.find(db, token) == made
    assert shares.find(db, token[:-1] + ("A" if token[-1] != "A" else "B")) is None
    assert shares.find(db, None) is None and shares.find(db, "x" * 500) is None
    assert shares.create(db, "reg")[1].site == "reg"         # registered, no hits yet


@pytest.mark.parametrize(("args", "said"), [
    ({"site": "nope"}, "unknown site 'nope'"),
    ({"site": "s", "filter": "colour:red"}, "unknown dimension 'colour'"),
    ({"site": "s", "filter": "referrer:"}, "a filter is DIM:VALUE"),
    ({"site": "s", "password": "short"}, "10 to 1,024 characters"),
    ({"site": "s", "password": "x" * 1025}, "10 to 1,024 characters"),
    ({"site": "s", "frame_ancestors": ("https://a.example; script-src *",)}, "not an origin"),
    ({"site": "s", "frame_ancestors": ("javascript:alert(1)",)}, "not an origin"),
])
def test_bad_input_says_what_and_writes_nothing(db, args, said):
    with pytest.raises(queries.HitboardError, match=said):
        shares.create(db, **args)
    assert db[shares.COLLECTION].count_documents({}) == 0


def test_a_password_unlocks_a_cookie_that_revoking_ends(db):
    token, made = shares.create(db, "s", password="correct horse")
    assert made.locked
    assert not shares.password_matches(db, token, "wrong horse!")
    assert not shares.password_matches(db, token, None)
    assert shares.password_matches(db, token, "correct horse")
    now = NOW.timestamp()
    cookie = shares.unlock_value(db, token, now)
    assert shares.unlocked(db, token, cookie, now + 3600)
    assert not shares.unlocked(db, token, cookie, now + shares.UNLOCK_SECONDS + 1)
    assert not shares.unlocked(db, token, cookie.replace(".", ".0"), now)
    other, _ = shares.create(db, "s", password="another one!")
    assert not shares.unlocked(db, other, cookie, now)       # one link's cookie only
    shares.revoke(db, made.prefix)
    assert not shares.unlocked(db, token, cookie, now)
    with pytest.raises(ShareError, match="first 8 characters"):
        shares.revoke(db, "ab")


def test_the_cli_creates_lists_and_revokes(tmp_path):
    store = str(tmp_path / "store")
    db = queries.connect(store)
    seed(db, "s", [(NOW, "/a", 3)])
    db.client.close()
    made = run(store, "share", "create", "--site", "s", "--filter", "page:/a",
               "--frame-ancestors", "https://blog.example.com", "--port", "9000")
    assert made.exit_code == 0, made.output
    link = made.stdout.strip()
    assert link.startswith("http://127.0.0.1:9000/share/") and "\n" not in link
    token = link.rsplit("/", 1)[1]
    listed = json.loads(run(store, "share", "list", "--format", "json").stdout)
    assert [(r["prefix"], r["site"], r["filter"], r["frame_ancestors"], r["password"])
            for r in listed] == [(token[:8], "s", "page:/a", ["https://blog.example.com"],
                                  False)]
    assert token not in run(store, "share", "list").stdout
    assert run(store, "share", "revoke", token[:8]).exit_code == 0
    again = run(store, "share", "revoke", token[:8])
    assert again.exit_code == 2 and "no share link begins with" in again.output


def test_the_cli_reads_a_password_from_stdin_and_says_http_cannot_embed(tmp_path):
    from click.testing import CliRunner

    from dashboard.cli import main

    store = str(tmp_path / "store")
    db = queries.connect(store)
    seed(db, "s", [(NOW, "/a", 3)])
    db.client.close()
    made = CliRunner().invoke(main, ["share", "create", "--site", "s", "--password-stdin",
                                     "--store", store], input="a long password\n")
    assert made.exit_code == 0, made.output
    assert "cannot be embedded on another site" in made.stderr
    short = CliRunner().invoke(main, ["share", "create", "--site", "s", "--password-stdin",
                                      "--store", store], input="short\n")
    assert short.exit_code == 2 and "10 to 1,024 characters" in short.output
    bad = CliRunner().invoke(main, ["share", "create", "--site", "nope", "--store", store])
    assert bad.exit_code == 2 and "unknown site" in bad.output


def test_removing_a_sites_data_ends_its_links(db):
    from queries import sitedata

    token, _ = shares.create(db, "s")
    kept, _ = shares.create(db, "reg")
    assert sitedata.remove(db, "s")[shares.COLLECTION] == 1
    assert shares.find(db, token) is None and shares.find(db, kept) is not None


def test_a_prefix_never_starts_with_a_dash(db, monkeypatch):
    tokens = iter(["-starts-with-a-dash-0123456789abcdef", "Plain0123456789abcdef0123"])
    monkeypatch.setattr(shares.secrets, "token_urlsafe", lambda _n: next(tokens))
    token, made = shares.create(db, "s")
    assert token.startswith("Plain") and made.prefix == "Plain012"
