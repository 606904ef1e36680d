"""The Data page's tables: the logs ingested, what each collection holds, and how each
chart query runs."""

from __future__ import annotations

from collections.abc import Sequence
from zoneinfo import ZoneInfo

from dash import html

from .numbers import count, decimal


def _size(size: int, estimate: bool) -> str:
    text = f"{decimal(size / 2**20, 2)} MB" if size >= 2**20 else f"{decimal(size / 1024)} KB"
    return f"≈ {text}" if estimate else text


def _keys(keys) -> str:
    return ", ".join(f"{field}: {direction}" for field, direction in keys)


def _retention(ttl_seconds: int | None) -> str:
    if ttl_seconds is None:
        return "kept"
    days, rest = divmod(ttl_seconds, 86_400)
    return f"{days} days (TTL)" if not rest else f"{count(ttl_seconds)} s (TTL)"


def _table(head: Sequence[str], rows: list, table_id: str | None) -> html.Table:
    """``stack-on-phone``: on a narrow screen each row becomes a card whose cells show
    their column's name (``data-label``), so the page never scrolls sideways."""
    props = {"id": table_id} if table_id else {}
    return html.Table(className="totals stack-on-phone", children=[
        html.Thead(html.Tr([html.Th(h) for h in head])), html.Tbody(rows)], **props)


def collections_table(collections: Sequence[dict], table_id: str | None = None) -> html.Table:
    """One row per collection: ``name, count, size_bytes, size_is_estimate, indexes
    ((name, keys), ...), ttl_seconds``."""
    head = ("Collection", "Documents", "Size (BSON)", "Indexes", "Retention")
    rows = [html.Tr(_labelled(head, [
        html.Td(c["name"]),
        html.Td(count(c['count']), className="num"),
        html.Td(_size(c["size_bytes"], c["size_is_estimate"]), className="num"),
        html.Td(html.Ul([html.Li([html.Code(name), f" {{{_keys(keys)}}}"])
                         for name, keys in c["indexes"]], className="plain-list")),
        html.Td(_retention(c["ttl_seconds"])),
    ])) for c in collections]
    return _table(head, rows, table_id)


def _labelled(head: Sequence[str], cells: list[html.Td]) -> list[html.Td]:
    for label, cell in zip(head, cells, strict=False):
        setattr(cell, "data-label", label)
    return cells


def plans_table(plans: Sequence[dict], table_id: str | None = None) -> html.Table:
    """One row per distinct query: ``chart, collection, filter`` (text), ``runs`` (how
    often the chart sends that same query, default 1) and its explain summary ``index,
    keys_examined, docs_examined, returned`` or ``reason``; ``detail`` (the embedded
    store's SQLite plan) shows under the index name. A chart's consecutive queries share
    one chart cell."""
    head = ("Chart", "Collection", "Filter", "Index", "Keys examined", "Docs examined",
            "Returned")
    rows = []
    for i, p in enumerate(plans):
        first = i == 0 or plans[i - 1]["chart"] != p["chart"]
        span = next((j for j in range(i, len(plans)) if plans[j]["chart"] != p["chart"]),
                    len(plans)) - i
        runs = p.get("runs", 1)
        cells = [html.Td(p["chart"], rowSpan=span)] if first else []
        cells += [html.Td(html.Code(p["collection"])),
                  html.Td([html.Code(p["filter"])] + ([html.Span(
                      f" sent {runs}× per refresh (the same documents)", className="hint")]
                      if runs > 1 else []), className="page-cell")]
        if p.get("reason"):
            cells.append(html.Td(p["reason"], colSpan=4, className="hint"))
        else:
            index = [p["index"]]
            if p.get("detail"):
                index += [html.Br(), html.Small(p["detail"], className="hint")]
            cells += [html.Td(index), html.Td(count(p["keys_examined"]), className="num"),
                      html.Td(count(p["docs_examined"]), className="num"),
                      html.Td(count(p["returned"]), className="num")]
        labels = head[:3] + (("Plan",) if p.get("reason") else head[3:])
        rows.append(html.Tr(_labelled(labels if first else labels[1:], cells)))
    return _table(head, rows, table_id)


def logs_table(logs: Sequence[dict], tz: ZoneInfo, table_id: str | None = None) -> html.Table:
    """One row per log path ingested: ``path, host, lines, hits, rejected`` ({reason:
    lines}), ``updated`` (aware, or None), ``pid, running`` (None: another host's) and
    ``interrupted``, shown in ``tz``."""
    head = ("Log file", "Reading now", "Lines", "Hits", "Not read", "Last written")
    rows = [html.Tr(_labelled(head, [
        html.Td([html.Code(log["path"]), html.Br(), html.Small(log["host"], className="hint")],
                className="page-cell"),
        html.Td(_reading(log)),
        html.Td(count(log['lines']), className="num"),
        html.Td(count(log['hits']), className="num"),
        html.Td(_rejected(log["rejected"])),
        html.Td("–" if log["updated"] is None
                else log["updated"].astimezone(tz).strftime("%Y-%m-%d %H:%M:%S")),
    ])) for log in logs]
    return _table(head, rows, table_id)


def _reading(log: dict) -> str:
    if log["running"] is None:
        return f"unknown (read on {log['host']})"
    state = f"yes, process {log['pid']}" if log["running"] else "no"
    if log["interrupted"] and not log["running"]:
        state += " (a batch was interrupted: the next run completes it)"
    return state


def _rejected(rejected: dict[str, int]) -> list | str:
    """Lines that parsed into no hit, by reason (``queries.ingest.logformat.Reject``)."""
    total = sum(rejected.values())
    if not total:
        return "0"
    reasons = ", ".join(f"{count(n)} {reason.replace('_', ' ')}"
                        for reason, n in sorted(rejected.items(), key=lambda r: -r[1]))
    return [html.Span(count(total), className="num"), html.Br(),
            html.Small(reasons, className="hint")]
