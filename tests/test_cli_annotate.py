"""hitboard annotate / annotations list / annotations delete: output and bad input."""

from click.testing import CliRunner

import queries
from dashboard.cli import main
from queries import annotations as notes


def run(*args):
    return CliRunner().invoke(main, list(args))


def test_annotate_list_and_delete(tmp_path):
    store = str(tmp_path / "store")
    made = run("annotate", "--site", "s", "--at", "2026-11-21T14:00", "--tz", "Europe/Paris",
               "--text", "deployed v2.3", "--kind", "deploy", "--author", "ci", "--store", store)
    assert made.exit_code == 0, made.output
    assert "2026-11-21T13:00:00+00:00" in made.output
    assert run("annotate", "--at", "2026-11-21T15:00Z", "--text", "all sites",
               "--store", store).exit_code == 0
    listed = run("annotations", "list", "--store", store)
    assert listed.exit_code == 0
    lines = listed.output.splitlines()
    assert "all sites" in lines[0] and "  *  note" in lines[0]
    assert "2026-11-21T13:00:00+00:00  s  deploy  ci  deployed v2.3" in lines[1]
    ident = lines[1].split()[0]
    assert run("annotations", "delete", ident, "--store", store).exit_code == 0
    db = queries.connect(store)
    try:
        assert [a["text"] for a in notes.list_annotations(db)] == ["all sites"]
    finally:
        db.client.close()


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    store = str(tmp_path / "store")
    cases = [
        (["annotate", "--at", "yesterday", "--text", "x"], "invalid time"),
        (["annotate", "--at", "2026-11-21", "--text", "x" * 281], "at most 280"),
        (["annotate", "--at", "2026-11-21", "--text", "  "], "empty"),
        (["annotate", "--site", "a b", "--at", "2026-11-21", "--text", "x"], "invalid site"),
        (["annotate", "--at", "2026-11-21", "--text", "x", "--tz", "Mars/Base"],
         "unknown time zone"),
        (["annotations", "delete", "nope"], "no annotation with id"),
    ]
    for args, reason in cases:
        result = run(*args, "--store", store)
        assert result.exit_code == 2, (args, result.output)
        assert "Error: " in result.output and reason in result.output
        assert "Traceback" not in result.output
    assert run("annotate", "--at", "2026-11-21", "--text", "x", "--kind", "party",
               "--store", store).exit_code == 2
