"""A read's frame as the CLI prints it. A frame's cells may be pandas' missing values
(``None``, ``NaN``, ``NaT``, and the nullable dtypes' ``pd.NA``, whose truth raises
``TypeError``): each becomes an empty cell (``null`` in JSON), never a test of its truth."""

from __future__ import annotations

import pandas as pd


def present(value):
    """``value`` as a plain Python value (numpy's scalars unwrapped), or ``None`` where
    pandas counts it missing."""
    if value is None or pd.isna(value):
        return None
    return value.item() if hasattr(value, "item") else value


def whole(value) -> int | None:
    """A count, or ``None`` where it is missing (unknown, not zero)."""
    value = present(value)
    return None if value is None else int(value)


def records(frame: pd.DataFrame) -> list[dict]:
    """The frame's rows as dicts of plain values, missing cells ``None``."""
    return [{key: present(value) for key, value in row.items()}
            for row in frame.astype(object).to_dict("records")]
