"""The ``hitboard`` group: every command reachable, each module loaded when needed."""

from __future__ import annotations

import subprocess
import sys
from importlib import import_module

from click.testing import CliRunner

from dashboard.cli import COMMAND_MODULES, main

LINE = ('10.0.0.1 - - [17/May/2015:10:05:03 +0000] "GET /a HTTP/1.1" 200 5 "-" '
        '"Mozilla/5.0"\n')
INGEST_ALONE = """
import sys
from dashboard.cli import main
try:
    main(sys.argv[1:])
except SystemExit as done:
    assert not done.code, done.code
print(sorted(m for m in ("pandas", "dash", "plotly") if m in sys.modules))
"""


def test_every_command_of_every_module_is_listed_under_its_module():
    listed = {}
    for module in set(COMMAND_MODULES.values()):
        for command in import_module(f"dashboard.cli.{module}").COMMANDS:
            listed[command.name] = module
    assert listed == COMMAND_MODULES
    help_text = CliRunner().invoke(main, ["--help"]).output
    assert all(f"  {name} " in help_text for name in COMMAND_MODULES)


def test_an_unknown_command_is_a_usage_error():
    result = CliRunner().invoke(main, ["nope"])
    assert result.exit_code == 2 and "No such command 'nope'" in result.output


def test_an_ingest_loads_neither_pandas_nor_dash(tmp_path):
    """Its start-up time counts in the ingest benchmark."""
    log = tmp_path / "a.log"
    log.write_text(LINE * 3)
    done = subprocess.run([sys.executable, "-c", INGEST_ALONE, "ingest", str(log), "--store",
                           str(tmp_path / "store")], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[]"


def _one_error_line(args) -> tuple[int, str]:
    result = subprocess.run([sys.executable, "-m", "dashboard.cli", *args],
                            capture_output=True, text=True, timeout=60)
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    return result.returncode, lines[0]


def test_an_unreachable_mongodb_is_one_line_and_exit_2(tmp_path):
    uri = ("mongodb://user:secret@127.0.0.1:9/hb?serverSelectionTimeoutMS=200"
           "&connectTimeoutMS=200")
    log = tmp_path / "access.log"
    log.write_text(LINE)
    for args in (["report", "--site", "s", "--granularity", "day", "--start", "2015-05-17",
                  "--end", "2015-05-18"], ["ingest", str(log), "--site", "s"],
                 ["site", "list"]):
        code, line = _one_error_line([*args, "--store", uri])
        assert code == 2 and "MongoDB server" in line and "secret" not in line, line


def test_a_store_path_that_cannot_be_one_is_one_line_and_exit_2(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    code, line = _one_error_line(["site", "list", "--store", str(blocker / "store")])
    assert code == 2, line
