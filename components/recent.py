"""The recent-hits feed: the newest requests, one row each, newest first."""

from __future__ import annotations

from collections.abc import Sequence
from zoneinfo import ZoneInfo

from dash import html

COLUMNS = ("Time", "Page", "Method", "Status", "Bytes", "Referrer")
SCROLL = {"maxHeight": "420px", "overflowY": "auto", "overflowX": "auto"}


def recent_table(hits: Sequence[dict], tz: str = "UTC", table_id: str | None = None):
    """``hits``: event documents (``time`` aware) shown in ``tz`` to the millisecond."""
    zone = ZoneInfo(tz)
    rows = [html.Tr([
        html.Td(hit["time"].astimezone(zone).strftime("%H:%M:%S.%f")[:-3], className="num"),
        html.Td(hit.get("path", ""), className="page-cell"),
        html.Td(hit.get("method", "")),
        html.Td(str(hit.get("status", "")), className="num"),
        html.Td(f"{hit.get('bytes') or 0:,}", className="num"),
        html.Td(hit.get("referrer") or "–", className="page-cell"),
    ]) for hit in hits]
    if not rows:
        rows = [html.Tr(html.Td("No requests recorded for these pages yet.",
                                colSpan=len(COLUMNS), className="hint"))]
    props = {"id": table_id} if table_id else {}
    return html.Div(style=SCROLL, children=html.Table(className="totals recent", children=[
        html.Thead(html.Tr([html.Th(c) for c in COLUMNS])), html.Tbody(rows)], **props))
