"""The time axis of a series chart: where each bucket is drawn and how it is labelled.

Plotly has no time zones: it draws the strings it is given. A view in one UTC offset is
drawn at its local wall-clock times. A view crossing a daylight-saving change is drawn in
absolute time (each bucket at its UTC instant shifted by the view's first offset, so
points stay evenly spaced and New York's two 01:00 hours are two distinct points), with
ticks and hover labels written in local time, the zone's abbreviation telling the
repeated hour apart.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import pandas as pd

HOVER_FORMAT = {"minute": "%a %d %b %Y %H:%M", "hour": "%a %d %b %Y %H:00",
                "day": "%a %d %b %Y"}
STEP = {"minute": dt.timedelta(minutes=1), "hour": dt.timedelta(hours=1),
        "day": dt.timedelta(days=1)}
# Tick spacings (minutes) tried in order until at most MAX_TICKS ticks remain.
TICK_MINUTES = (1, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440)
MAX_TICKS = 10
# Days between two labels of a per-day chart, tried in order until at most MAX_TICKS
# labels remain (Plotly's own most), counted back from the last day.
DAY_STEPS = (1, 2, 3, 7, 14, 28, 56, 91, 182, 364)


@dataclass(frozen=True)
class TimeAxis:
    """``x``: plotted positions; ``when``: each bucket's local time for clicks (ISO 8601,
    with its offset when the view crosses a DST change); ``labels``: in absolute time,
    the hover title of each bucket (local time and zone); ``layout``: xaxis properties."""

    x: list[str]
    when: list[str]
    layout: dict
    absolute: bool
    labels: list[str] | None = None


def time_axis(index: pd.DatetimeIndex, granularity: str) -> TimeAxis:
    offsets = {t.utcoffset() for t in index}
    if granularity == "day" or len(offsets) <= 1:
        fmt = "%Y-%m-%d" if _all_midnight(index) else "%Y-%m-%d %H:%M"
        x = [t.strftime(fmt) for t in index]
        layout = {"hoverformat": HOVER_FORMAT[granularity], "type": "date"}
        if granularity == "day":
            layout.update(day_ticks(index, x))
        return TimeAxis(x, list(x), layout, absolute=False)
    shift = index[0].utcoffset()
    x = [(t.tz_convert("UTC").tz_localize(None) + shift).strftime("%Y-%m-%d %H:%M")
         for t in index]
    when = [t.isoformat(timespec="minutes") for t in index]
    tickvals, ticktext = _ticks(index, x)
    labels = [f"{t:%a %d %b %Y %H:%M} {t.tzname()}" for t in index]
    return TimeAxis(x, when, {"type": "date", "tickmode": "array", "tickvals": tickvals,
                              "ticktext": ticktext},
                    absolute=True, labels=labels)


def bucket_end(x_last: str, granularity: str) -> str:
    """The plotted position where the bucket drawn at ``x_last`` ends."""
    end = pd.Timestamp(x_last) + STEP[granularity]
    return end.strftime("%Y-%m-%d" if granularity == "day" else "%Y-%m-%d %H:%M")


def day_ticks(index: pd.DatetimeIndex, x: list) -> dict:
    """A dated tick every day, or every few days when more than ``MAX_TICKS`` would
    crowd the axis, always on the last day: Plotly's own ticks fell at 00:00 and 12:00
    on a few days and skipped the last one. The month is named on the first label and
    where it changes (``Nov 29, 30, Dec 1``: short labels that a phone's axis fits), the
    year under the first and where it changes."""
    if not len(index):
        return {}
    step = next((k for k in DAY_STEPS if -(-len(index) // k) <= MAX_TICKS), DAY_STEPS[-1])
    picked = list(range(len(index) - 1, -1, -step))[::-1]
    texts, shown = [], None
    for i in picked:
        t = index[i]
        label = f"{t.day}" if shown == (t.year, t.month) else f"{t:%b} {t.day}"
        texts.append(label + (f"<br>{t:%Y}" if shown is None or shown[0] != t.year else ""))
        shown = (t.year, t.month)
    return {"tickmode": "array", "tickvals": [x[i] for i in picked], "ticktext": texts}


def _ticks(index: pd.DatetimeIndex, x: list[str]) -> tuple[list[str], list[str]]:
    """Local labels at round local times; a label says its zone where the offset differs
    from the view's first (``01:00 EST`` after ``01:00 EDT``)."""
    minutes = [t.hour * 60 + t.minute for t in index]
    for step in TICK_MINUTES:
        picked = [i for i, m in enumerate(minutes) if m % step == 0]
        if len(picked) <= MAX_TICKS:
            break
    if len(picked) > MAX_TICKS:  # weeks: every k-th local midnight
        picked = picked[::-(-len(picked) // MAX_TICKS)]
    daily = step == TICK_MINUTES[-1]
    offsets: dict[str, set] = {}  # local date and time → offsets: two on the repeated hour
    for t in index:
        offsets.setdefault(t.strftime("%Y-%m-%d %H:%M"), set()).add(t.utcoffset())
    texts, previous = [], None
    for i in picked:
        t = index[i]
        label = t.strftime("%b %d" if daily else "%H:%M")
        # The zone where it tells something: first tick, first after the change, and
        # any wall time that happens twice (01:00 EDT, then 01:00 EST).
        if previous is None or t.utcoffset() != previous or \
                len(offsets[t.strftime("%Y-%m-%d %H:%M")]) > 1:
            label += f" {t.tzname()}"
        if i == picked[0] or (not daily and t.hour == 0 and t.minute == 0):
            label += f"<br>{t:%Y}" if daily else f"<br>{t:%b %d, %Y}"
        texts.append(label)
        previous = t.utcoffset()
    return [x[i] for i in picked], texts


def _all_midnight(index: pd.DatetimeIndex) -> bool:
    return len(index) > 0 and bool(((index.hour == 0) & (index.minute == 0)).all())
