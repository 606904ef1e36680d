"""C1 controls and bidirectional overrides from strangers: every path that refuses a C0
control refuses them too (the beacon's page, referrer, ``utm_*``, custom events' names and
props; goals; notes), and the CLI never writes one it reads from an older store, which
may hold them: ``U+009B`` then ``31m`` turns a terminal red, as ``ESC [ 31m`` does."""

from __future__ import annotations

import datetime as dt
import json
import re

import pytest
from clikit import run
from dashkit import ADMIN_TOKEN, dashboard_app, register_sites, seed

import queries
from queries import annotations as notes
from queries import validation
from queries.custom.payload import CustomEventError, custom_event
from queries.stats.goals import Goal, GoalError, goal
from queries.stats.sites import add_goal, register

CSI, NEL, RLO, LRI = "\u009b", "\u0085", "\u202e", "\u2066"
HOSTILE = [CSI, NEL, "\u0080", "\u009f", RLO, "\u202a", LRI, "\u2069"]
OLD_UNSTORABLE = re.compile("[\x00-\x1f\x7f\ud800-\udfff]")   # what was refused before
DAY = dt.datetime(2026, 3, 1, 10, 0, tzinfo=dt.UTC)


def post(client, body: str):
    return client.post("/hit", data=body.encode(), content_type="text/plain;charset=UTF-8")


@pytest.fixture
def app(tmp_path, frozen_clock):
    with dashboard_app(tmp_path / "store", rollup_interval=0) as app:
        register_sites(app, "blog")
        yield app


@pytest.mark.parametrize("char", HOSTILE)
def test_the_beacon_refuses_c1_and_bidi_controls_sent_as_raw_characters(app, char):
    client = app.server.test_client()
    bodies = [f'{{"site": "blog", "page": "/c1{char}31mRED"}}',
              f'{{"site": "blog", "page": "/", "referrer": "https://x.example/{char}"}}',
              f'{{"site": "blog", "page": "/?utm_source=a{char}b"}}',
              f'{{"site": "blog", "page": "/", "event": "Sign{char}up"}}',
              f'{{"site": "blog", "page": "/", "event": "Buy", "props": {{"plan": "{char}"}}}}',
              f'{{"site": "blog", "page": "/", "event": "Buy", "props": {{"{char}": "x"}}}}']
    for body in bodies:
        response = post(client, body)
        assert response.status_code == 400, body
        assert "control character" in response.get_json()["error"], body
    assert post(client, '{"site": "blog", "page": "/caf\u00e9/\u0660"}').status_code == 204


@pytest.mark.parametrize("char", HOSTILE)
def test_goals_notes_events_and_pages_refuse_them_everywhere(char):
    with pytest.raises(GoalError, match="control character"):
        goal("event", f"Sign{char}up")
    with pytest.raises(GoalError, match="control character"):
        goal("page", f"/blog/{char}*")
    with pytest.raises(CustomEventError, match="control character"):
        custom_event(f"Sign{char}up")
    with pytest.raises(notes.InvalidAnnotationError, match="control character"):
        notes.check_text(f"deploy {char}v2")
    with pytest.raises(queries.InvalidPageError, match="control character"):
        validation.page(f"/a{char}")
    with pytest.raises(queries.InvalidSiteError):
        validation.site(f"blog{char}")
    assert notes.check_text("line one\n\tline two") == "line one\n\tline two"


def test_a_note_with_a_bidi_override_is_a_400_from_the_api(app):
    client = app.server.test_client()
    response = client.post("/api/annotations", json={"text": f"deploy {RLO}2v", "site": "blog"},
                           headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    assert response.status_code == 400
    assert "control character" in response.get_json()["error"]


def test_the_cli_escapes_what_an_older_store_holds(tmp_path, monkeypatch):
    store = str(tmp_path / "store")
    db = queries.connect(store)
    try:
        with monkeypatch.context() as older:         # written as before the fix
            older.setattr(validation, "_UNSTORABLE", OLD_UNSTORABLE)
            older.setattr(notes.validation, "has_control", lambda text: False)
            register(db, "s", "admin")
            seed(db, "s", [(DAY, f"/c1{CSI}31mRED", 3), (DAY, f"/{RLO}txt.exe", 2)])
            add_goal(db, "s", Goal("page", f"/{CSI}31m/*"))
            notes.add_annotation(db, "s", DAY, f"deploy{NEL}{LRI}done")
    finally:
        db.client.close()
    span = ("--site", "s", "--start", "2026-03-01", "--end", "2026-03-02")
    outputs = [run(store, "top", *span), run(store, "goals", "list", "s"),
               run(store, "annotations", "list")]
    for result in outputs:
        assert result.exit_code == 0, result.output
        assert not validation.has_control(result.output.replace("\n", "")), result.output
    assert "/c1\\x9b31mRED,3" in outputs[0].output
    assert "/\\u202etxt.exe,2" in outputs[0].output
    assert "/\\x9b31m/*" in outputs[1].output
    assert "deploy\\x85\\u2066done" in outputs[2].output
    as_json = run(store, "top", *span, "--format", "json")       # JSON escapes them itself
    assert {row["page"] for row in json.loads(as_json.output)} == {f"/c1{CSI}31mRED",
                                                                   f"/{RLO}txt.exe"}
