"""The Data page's tables: the logs ingested, what each collection holds, and how each
chart query runs; each one element the browser draws (``statictable``: as Dash elements
they took seconds to appear)."""

from __future__ import annotations

from collections.abc import Sequence
from zoneinfo import ZoneInfo

from dash import html

from .numbers import count, decimal
from .statictable import Cell, cell, static_table


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


def collections_table(collections: Sequence[dict], table_id: str | None = None) -> html.Div:
    """One row per collection: ``name, count, size_bytes, size_is_estimate,
    stored_bytes`` (None: the store does not say), ``indexes ((name, keys), ...),
    ttl_seconds`` and ``holds`` (which representation of hits, under the name)."""
    head = ("Collection", "Documents", "Size (BSON)", "Stored (compressed)", "Indexes",
            "Retention")
    rows = [[cell(c["name"], hint=c.get("holds", "")), cell(count(c["count"]), "num"),
             cell(_size(c["size_bytes"], c["size_is_estimate"]), "num"),
             cell("–" if c.get("stored_bytes") is None
                  else _size(c["stored_bytes"], c["size_is_estimate"]), "num"),
             cell([f"{name} {{{_keys(keys)}}}" for name, keys in c["indexes"]], "code-text"),
             cell(_retention(c["ttl_seconds"]))] for c in collections]
    return static_table(head, rows, table_id)


def plans_table(plans: Sequence[dict], table_id: str | None = None) -> html.Div:
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
        cells = [cell(p["chart"], rowspan=span)] if first else []
        cells += [cell(p["collection"], "code-text"),
                  cell(p["filter"], "page-cell code-text",
                       hint=f"sent {runs}× per refresh (the same documents)" if runs > 1
                       else "")]
        if p.get("reason"):
            cells.append(cell(p["reason"], "hint", label="Plan", colspan=4))
        else:
            cells += [cell(p["index"], hint=p.get("detail") or ""),
                      cell(count(p["keys_examined"]), "num"),
                      cell(count(p["docs_examined"]), "num"), cell(count(p["returned"]), "num")]
        rows.append(cells)
    return static_table(head, rows, table_id)


def logs_table(logs: Sequence[dict], tz: ZoneInfo, table_id: str | None = None) -> html.Div:
    """One row per log path ingested: ``path, host, lines, hits, tolerated, rejected``
    ({reason: lines}), ``updated`` (aware, or None), ``pid, running`` (None: another host's) and
    ``interrupted``, shown in ``tz``."""
    head = ("Log file", "Reading now", "Lines", "Hits", "Read despite", "Not read",
            "Last written")
    rows = [[cell(log["path"], "page-cell code-text path-text", hint=log["host"]),
             cell(_reading(log)), cell(count(log["lines"]), "num"),
             cell(count(log["hits"]), "num"), _by_reason(log["tolerated"]),
             _by_reason(log["rejected"]),
             cell("–" if log["updated"] is None
                  else log["updated"].astimezone(tz).strftime("%Y-%m-%d %H:%M:%S"))]
            for log in logs]
    return static_table(head, rows, table_id)


def _reading(log: dict) -> str:
    if log["running"] is None:
        return f"unknown (read on {log['host']})"
    state = f"yes, process {log['pid']}" if log["running"] else "no"
    if log["interrupted"] and not log["running"]:
        state += " (a batch was interrupted: the next run completes it)"
    return state


def _by_reason(lines: dict[str, int]) -> Cell:
    """Lines counted by reason: those that parsed into no hit
    (``queries.ingest.logformat.Reject``), or those read despite an oddity (``Oddity``,
    bytes that are not UTF-8), the reasons in the cell's hint."""
    reasons = ", ".join(f"{count(n)} {reason.replace('_', ' ')}"
                        for reason, n in sorted(lines.items(), key=lambda r: -r[1]) if n)
    return cell(count(sum(lines.values())), hint=reasons)


def quarantine_table(items: Sequence[dict], tz: ZoneInfo, table_id: str | None = None
                     ) -> html.Div:
    """What writers set aside for its content (``queries.quarantine``): ``at, source,
    what, reason, hits``, newest first, as text."""
    head = ("When", "Writer", "Item", "Why", "Hits")
    rows = [[cell(item["at"].astimezone(tz).strftime("%Y-%m-%d %H:%M:%S")),
             cell(item["source"]), cell(item["what"], "page-cell code-text"),
             cell(item["reason"]), cell(count(item.get("hits", 0)), "num")]
            for item in items]
    return static_table(head, rows, table_id)
