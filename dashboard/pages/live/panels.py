"""The Live page's people: visitors active now (last 5 minutes) and this minute, from raw
events (exact, and kept far longer than these windows), and the top referrers of the
last hour, hits and visitors of the same hour (from its raw events, see
``recent_breakdown``); each referrer links to History filtered by it. Humans by
default, as on History: ``bots=1`` in the URL (the panel's own link toggles it) counts
bots too. Kept beside the page so the page includes it with two lines (the section, the
registration)."""

from __future__ import annotations

import dash
from dash import Input, Output, callback, dcc, html

import queries
from components import Kpi, kpi_cards, message
from components.breakdowns import breakdown_panel
from components.numbers import count
from dashboard import reads
from dashboard.feedback import describe
from dashboard.pages.live.pacer import PACER
from dashboard.state import (
    BOTS_KEY,
    FILTER_KEY,
    ShellState,
    encode,
    first,
    parse_search,
    shell_search,
    updated,
)
from queries.reads import live
from queries.reads.live import ACTIVE_MINUTES, MAX_SCANNED, RECENT_MINUTES, Active, Coverage

# Who is on the site changes slowly: these reads of raw events refresh every 5 s, not every
# second as the hit counts do.
PEOPLE_SECONDS = 5


def live_people_section() -> html.Div:
    return html.Div(className="grid", children=[
        html.Div(id="live-people", className="kpis",
                 children=kpi_cards(_cards(None, None, None))),
        html.Div(id="live-referrers"),
    ])


def register_people_callbacks() -> None:
    """Declare the callback; the Live page calls this as Dash loads it."""
    callback(
        Output("live-people", "children"),
        Output("live-referrers", "children"),
        PACER.tick,
        Input("url", "search"),
        running=PACER.running("people"),
    )(refresh_people)


def _cards(active: Active | None, minute: Active | None, visits: int | None,
           bots: bool = False, covered: dict[int, Coverage] | None = None) -> list[Kpi]:
    """The people of the last minutes, from raw events. A window whose raw events hold
    too few of its counted hits (a backfill keeps none) shows no figure, and says so:
    a few live visitors would read as the people behind the hits above."""
    who = "" if bots else ", humans"
    covered = covered or {}

    def card(kpi_id: str, label: str, value: int | None, minutes: int, what: str,
             found: Active | None = None) -> Kpi:
        seen = covered.get(minutes)
        if value is not None and seen is not None and not seen.complete:
            return Kpi(kpi_id, label, None, f"{what}; unknown: raw events kept for only "
                       f"{count(seen.events)} of its {count(seen.hits)} hits")
        partial = "" if found is None or found.complete else \
            f"; at least: from the newest {count(MAX_SCANNED)} hits"
        return Kpi(kpi_id, label, value, what + partial)

    return [card("live-kpi-active", "Active visitors", active and active.visitors,
                 ACTIVE_MINUTES, f"last {ACTIVE_MINUTES} minutes{who}", active),
            card("live-kpi-visitors-minute", "Visitors this minute",
                 minute and minute.visitors, 1, f"last 60 seconds{who}", minute),
            card("live-kpi-visits", "Visits", visits, RECENT_MINUTES,
                 f"begun in the last {RECENT_MINUTES} minutes, humans")]


def bots_toggle(query, bots: bool) -> html.Div:
    """What the panel counts, and a link to the same view counting the other way."""
    href = dash.get_relative_path("/") + encode(
        updated(query, **{BOTS_KEY: None if bots else "1"}))
    return html.Div(className="hint", id="live-bots", children=[
        "Bots included · " if bots else "Humans only · ",
        dcc.Link("leave bots out" if bots else "include bots", href=href,
                 id="live-bots-toggle"),
    ])


def refresh_people(_n, search):
    query = parse_search(search)
    shell = ShellState.from_query(query)
    bots = first(query, BOTS_KEY) == "1"
    seconds = max(reads.live_seconds(), PEOPLE_SECONDS)
    try:
        site = reads.resolve_site(shell.site, fresh=True)
        if site is None or site not in reads.shared(queries.list_sites, seconds=seconds):
            return kpi_cards(_cards(None, None, None)), None
        found = reads.shared(live.people, site, reads.now(seconds), humans=not bots,
                             seconds=seconds)
    except Exception as exc:
        return kpi_cards(_cards(None, None, None)), message(describe(exc))
    base = parse_search(shell_search(query))

    def href(value: str) -> str:
        return dash.get_relative_path("/history") + encode(
            updated(base, range="today", **{FILTER_KEY: f"referrer:{value}",
                                            BOTS_KEY: "1" if bots else None}))

    top = found.referrers
    note = top.attrs.get("note")
    extra = bots_toggle(query, bots)
    if note:
        extra = html.Div([html.Div(note.capitalize() + ".", className="hint",
                                   id="live-referrers-note"), extra])
    panel = breakdown_panel("referrer", "Referrers, last hour", top, href,
                            panel_id="live-referrers-panel", extra=extra)
    return kpi_cards(_cards(found.active, found.minute, found.visits, bots,
                            found.covered)), panel
