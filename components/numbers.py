"""Numbers as the pages show them: thousands separated, decimals included (``1,730.15``,
``+4,574.0 %``), a dash for a value not known, ``≈`` before an estimate. Every count,
mean, rate and change on a page goes through these, so no figure reads ``1730.15``
beside ``1,730``, and an estimate reads as one wherever it is shown."""

from __future__ import annotations

import re

import pandas as pd
from dash import html

NO_VALUE = "–"
MINUS = "−"  # a real minus sign: "-3 %" in a proportional font reads as a dash
APPROX = "≈"


def estimate(value: int | float | None, error: int | float | None = 0):
    """A count that may be estimated (distinct visitors from sketches): ``12,345`` when
    exact (``error`` 0, or not given), else ``≈12,345`` whose title gives the error."""
    if _missing(value) or _missing(error) or not error:
        return count(value)
    return html.Span(APPROX + count(value), className="estimate",
                     title=f"Estimated from sketches: ±{count(error)} (95 % interval)")


def count(value: int | float | None) -> str:
    """A whole number: ``12,345``."""
    if _missing(value):
        return NO_VALUE
    return f"{int(value):,}"


def decimal(value: float | None, digits: int = 1) -> str:
    """A number with ``digits`` decimals: ``1,730.15``."""
    if _missing(value):
        return NO_VALUE
    return f"{float(value):,.{digits}f}".replace("-", MINUS)


def percent(value: float | None, digits: int = 1, *, signed: bool = False) -> str:
    """``value`` already in % (``12.5`` is 12.5 %): ``12.5 %``, or ``+4,574.0 %`` when
    ``signed``."""
    if _missing(value):
        return NO_VALUE
    sign = "+" if signed else ""
    return f"{float(value):{sign},.{digits}f} %".replace("-", MINUS)


def share(fraction: float | None, digits: int = 0) -> str:
    """A fraction as a percentage: ``0.173`` is ``17 %``."""
    return NO_VALUE if _missing(fraction) else percent(100 * float(fraction), digits)


def amounts(text: str) -> str:
    """The whole parts of the amounts in a text, thousands separated: ``EUR 652890.76,
    USD 1200`` reads ``EUR 652,890.76, USD 1,200`` (decimals as they were)."""
    return _WHOLE.sub(lambda m: f"{int(m.group()):,}", text)


_WHOLE = re.compile(r"(?<![\d.])\d{4,}")


def duration(seconds: float | None) -> str:
    """A visit's length: ``42 s``, ``3 min 05 s``, ``1 h 02 min``."""
    if _missing(seconds):
        return NO_VALUE
    whole = round(float(seconds))
    if whole < 60:
        return f"{whole} s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    return f"{minutes // 60:,} h {minutes % 60:02d} min"


def _missing(value) -> bool:
    """None, NaN or pandas' NA (a count a frame does not know)."""
    return value is None or bool(pd.isna(value))
