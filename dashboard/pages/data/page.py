"""Data: the logs ingested, what the store holds, how each chart's query runs, and where
it could be sharded.

Each chart query of the live and historical pages is run once through a recorder and
explained: a MongoDB server names the index it used; the embedded store also shows
SQLite's plan of the same query.

The store's part comes first (a few cheap reads); the explain() table and the shard-key
simulation, which read much more, are sections of their own that fill in after it, each
saying meanwhile what it is doing.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json

import dash
from dash import Input, Output, callback, html

import queries
from components import message
from components.shardadvice import shard_advice
from components.storetables import collections_table, logs_table, plans_table, quarantine_table
from dashboard import reads
from dashboard.authority.scope import check_all_sites
from dashboard.feedback import describe
from dashboard.services import get_services
from dashboard.settings import env_name
from dashboard.state import ShellState, parse_search
from queries import validation
from queries.ingest.logs import log_ingests
from queries.quarantine import listed
from queries.reads.charts import chart_queries
from queries.representations import holding
from queries.sharding import plan as shardplan
from queries.sharding import text as shardtext
from queries.store import inspect

dash.register_page(__name__, path="/data", name="Data", title="hitboard · data", order=10)



def layout(**_query):
    return html.Div(className="page page-data", children=[
        html.Div(id="data-content", children=_pending("Reading the store…")),
        html.Section(className="card", children=[
            html.H2("Chart queries: explain()", id="data-plans-title", className="card-title"),
            html.Div(id="data-plans-box",
                     children=_pending("Running and explaining each chart's queries…")),
        ]),
        html.Section(className="card", children=[
            html.H2("Shard key advice (hitboard shard-plan)", className="card-title"),
            html.Div(id="data-shard-box",
                     children=_pending("Simulating each shard key on the stats documents…")),
        ]),
    ])


def _pending(text: str) -> html.P:
    return html.P(text, className="hint pending")


def _filter_text(flt: dict) -> str:
    return json.dumps(flt, default=lambda v: v.isoformat() if hasattr(v, "isoformat")
                      else str(v))


def _plan_rows(db, site: str, pages, tz: str) -> list[dict]:
    """One row per distinct query of each chart: a chart sending the same query twice
    (the live totals read today's documents for minutes and for hours) gets one row
    saying so, not two identical rows."""
    rows = []
    now = reads.now(reads.live_seconds())
    for chart, read, args, kwargs in chart_queries(site, pages, tz, now):
        seen: dict[tuple, dict] = {}
        for query in inspect.explain_reads(db, chart, read, *args, **kwargs):
            plan, text = query.plan, _filter_text(query.filter)
            if (query.collection, text) in seen:
                seen[(query.collection, text)]["runs"] += 1
                continue
            seen[(query.collection, text)] = row = {
                "chart": chart, "collection": query.collection, "filter": text, "runs": 1,
                "reason": plan.reason, "index": plan.stage,
                "keys_examined": plan.keys_examined, "docs_examined": plan.docs_examined,
                "returned": plan.returned, "detail": "; ".join(plan.detail)}
            rows.append(row)
    return rows


def _logs(db, tz: str) -> html.Section:
    """The logs ``hitboard ingest`` has read into this store, and the lines it could not."""
    logs = [dataclasses.asdict(log) for log in log_ingests(db)]
    body = (logs_table(logs, validation.timezone(tz), table_id="data-logs") if logs else
            html.P(["No log has been ingested into this store: ",
                    html.Code("hitboard ingest FILE"), " (", html.Code("--follow"),
                    " to keep reading it)."]))
    return html.Section(className="card", children=[
        html.H2("Log files (hitboard ingest)", className="card-title"), body])


def _set_aside(db, tz: str) -> html.Section | None:
    """What the writers could not store for its content (none, usually: nothing shown)."""
    items = listed(db)
    for item in items:
        item["at"] = validation.stored_time(item["at"])
    if not items:
        return None
    return html.Section(className="card", children=[
        html.H2("Set aside (not counted)", className="card-title"),
        html.P("Hits and events a writer could not store for what they hold (text no "
               "database can encode, a document refused): the rest was counted. Newest "
               "first.", className="hint"),
        quarantine_table(items, validation.timezone(tz), table_id="data-quarantine")])


def _retention(days: int) -> html.Ul:
    variable = html.Code(env_name("events_ttl_days"))
    items = [html.Li([f"Raw events: kept {days} days after ingestion (", variable,
                      "), and until the rollups have read them: each rollup run removes "
                      "what is older and already rolled up."]),
             html.Li("Pre-aggregated statistics and rollups: kept (no TTL).")]
    return html.Ul(items)


@callback(Output("data-content", "children"), Input("url", "search"))
def show(search):
    """The store: the logs ingested, each collection and the retention."""
    check_all_sites()
    shell = ShellState.from_query(parse_search(search))
    db = get_services().db
    store = queries.redact(get_services().settings.store)
    kind = "embedded store" if queries.is_embedded(db) else "MongoDB server"
    sections = [html.P(className="wrap-anywhere", children=[
        "Reading ", html.Code(store), f" ({kind}), database ", html.Code(db.name), "."])]
    try:
        sections.append(_logs(db, shell.tz))
        aside = _set_aside(db, shell.tz)
        if aside is not None:
            sections.append(aside)
        collections = inspect.collections(db)
        sections.append(html.Section(className="card", children=[
            html.H2("Collections", className="card-title"),
            collections_table([_described(c) for c in collections],
                              table_id="data-collections"),
            html.H2("Retention", className="card-title"),
            _retention(get_services().settings.events_ttl_days),
        ]))
    except Exception as exc:
        sections.append(message(describe(exc)))
    return sections


def _described(collection: inspect.CollectionInfo) -> dict:
    """A collection's figures and the representation of hits it holds, if any."""
    held = holding(collection.name)
    return {**dataclasses.asdict(collection), "holds": held.name if held else ""}


@callback(Output("data-plans-title", "children"), Output("data-plans-box", "children"),
          Input("url", "search"))
def show_plans(search):
    """Every chart query of the site, run and explained (not cached: as of this load)."""
    shell = ShellState.from_query(parse_search(search))
    title = "Chart queries: explain()"
    try:
        site = reads.resolve_site(shell.site)
        if not site:
            return title, html.P("No site has data yet: nothing to explain.")
        rows = _plan_rows(get_services().db, site, shell.pages, shell.tz)
        return f"Chart queries of {site}: explain()", plans_table(rows, table_id="data-plans")
    except Exception as exc:
        return title, message(describe(exc))


@callback(Output("data-shard-box", "children"), Input("url", "search"))
def show_shard_advice(search):
    """The shard-key simulation, shared by every viewer for the history cache's time, and
    the time of the documents it read."""
    check_all_sites()
    shell = ShellState.from_query(parse_search(search))
    try:
        plan, read_at = reads.shared(_shard_plan, seconds=reads.history_seconds())
        when = read_at.astimezone(validation.timezone(shell.tz))
    except Exception as exc:
        return message(describe(exc))
    return [shard_advice(shardtext.summary(plan), shardtext.HEAD, shardtext.key_rows(plan),
                         shardtext.notes(plan), shardtext.recommendation(plan),
                         element_id="data-shard-advice"),
            html.P(f"Simulated on the documents as they were at {when:%H:%M:%S} ({shell.tz}); "
                   f"simulated again at most every {reads.history_seconds()} s.",
                   className="hint", id="data-shard-when")]


def _shard_plan(db) -> tuple[shardplan.Plan, dt.datetime]:
    read_at = dt.datetime.now(dt.UTC)
    return shardplan.simulate(shardplan.read_workload(db)), read_at
