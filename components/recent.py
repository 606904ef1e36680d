"""The recent-hits feed: the newest requests, one row each, newest first."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from zoneinfo import ZoneInfo

from dash import html

from .numbers import count

COLUMNS = ("Time", "Page", "Method", "Status", "Bytes", "Referrer")
SCROLL = {"maxHeight": "420px", "overflowY": "auto", "overflowX": "auto"}
UNKNOWN = "–"


def recent_table(hits: Sequence[dict], tz: str = "UTC", table_id: str | None = None,
                 now: dt.datetime | None = None):
    """``hits``: event documents (``time`` aware) shown in ``tz`` to the millisecond,
    with the date when it is not today there (a 2015 log line must not look like
    today's). A beacon hit has no status: shown as a dash."""
    zone = ZoneInfo(tz)
    today = (now or dt.datetime.now(dt.UTC)).astimezone(zone).date()
    rows = [html.Tr([
        html.Td(when(hit["time"], zone, today), className="num"),
        html.Td(hit.get("path", ""), className="page-cell"),
        html.Td(hit.get("method") or UNKNOWN),
        html.Td(UNKNOWN if hit.get("status") is None else str(hit["status"]), className="num"),
        html.Td(count(hit.get('bytes') or 0), className="num"),
        html.Td(hit.get("referrer") or UNKNOWN, className="page-cell"),
    ]) for hit in hits]
    if not rows:
        rows = [html.Tr(html.Td("No requests recorded for these pages yet.",
                                colSpan=len(COLUMNS), className="hint"))]
    props = {"id": table_id} if table_id else {}
    return html.Div(style=SCROLL, children=html.Table(className="totals recent", children=[
        html.Thead(html.Tr([html.Th(c) for c in COLUMNS])), html.Tbody(rows)], **props))


def when(moment: dt.datetime, zone: ZoneInfo, today: dt.date) -> str:
    local = moment.astimezone(zone)
    clock = local.strftime("%H:%M:%S.%f")[:-3]
    return clock if local.date() == today else f"{local:%Y-%m-%d} {clock}"
