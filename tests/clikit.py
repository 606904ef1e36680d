"""The ``hitboard`` command run in process on a store, and its CSV read back."""

from __future__ import annotations

import csv
import io

from click.testing import CliRunner

from dashboard.cli import main


def run(store, *args):
    """``hitboard ARGS --store STORE``, its result."""
    return CliRunner().invoke(main, [*args, "--store", store])


def rows(result) -> list[dict]:
    """A successful command's CSV output as dicts."""
    assert result.exit_code == 0, result.output
    return list(csv.DictReader(io.StringIO(result.stdout)))
