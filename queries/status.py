"""Statuses (the recorder's, the load generator's, the rollups') are frozen dataclasses;
:func:`as_dict` is their one way out as plain dicts, where they cross a JSON or
``dcc.Store`` boundary (``/healthz`` for instance)."""

from __future__ import annotations

import dataclasses
from typing import Any


def as_dict(status: Any) -> dict:
    """A status dataclass, nested ones included, as a dict of plain values."""
    return dataclasses.asdict(status)
