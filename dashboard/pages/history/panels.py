"""The History page's breakdown panels, KPIs, filter chip and toggles: their layout slots
and callbacks, kept beside the page so the page includes them with a few lines.

Every value in a panel is a link to the same view filtered by it (``filter=dim:value``
in the URL), so a reload, a shared link and the back button all show the filtered view;
the chip's × links to the view without it. Toggles write ``bots`` and ``assets``."""

from __future__ import annotations

from dataclasses import replace

import dash
from dash import Input, Output, State, callback, dcc, html, no_update

import queries
from components import message
from components.breakdowns import (
    GOAL_COLUMNS,
    VISIT_COLUMNS,
    KpiChange,
    breakdown_panel,
    filter_chip,
    kpi_change_cards,
    not_found_list,
)
from components.numbers import decimal, duration, estimate, percent
from components.statictable import static
from components.tables import change_percent
from dashboard.feedback import describe
from dashboard.pages.history.breakdowns import PANELS, VISIT_PANELS, compute_panels
from dashboard.pages.history.compare import comparison_name
from dashboard.pages.history.view import history_view
from dashboard.state import (
    ASSETS_KEY,
    BOTS_KEY,
    FILTER_KEY,
    changed_search,
    encode,
    first,
    parse_search,
    updated,
)
from queries.reads.query import ENTRY, PAGE

PATH = "/history"
# Rates, whose change is in percentage points: the scale of each to percent.
RATES = {"bounce_rate": 1, "errors": 100}
NO_GOALS = ("No goals yet: add an event name or a page pattern on the Sites page "
            "(or: hitboard goals add).")


def panel_controls(query) -> html.Div:
    """Toggles, the bot share and the active filter's chip (a row under the controls)."""
    return html.Div(className="history-controls", children=[
        dcc.Checklist(id="history-bots", className="check",
                      options=[{"label": " Include bots", "value": "1"}],
                      value=["1"] if first(query, BOTS_KEY) == "1" else []),
        dcc.Checklist(id="history-assets", className="check",
                      options=[{"label": " Assets in top pages", "value": "1"}],
                      value=["1"] if first(query, ASSETS_KEY) == "1" else []),
        html.Span(id="history-botshare", className="hint"),
        html.Span(id="history-filter"),
    ])


def kpi_slot() -> html.Div:
    return html.Div(id="history-kpis", className="kpis kpis-4")


def panels_section() -> html.Div:
    return html.Div(children=[
        dcc.Store(id="history-panels-key"),
        html.Div(id="history-panel-notes"),
        html.Div(id="history-panels", className="bd-grid"),
    ])


PANEL_OUTPUTS = {
    "kpis": Output("history-kpis", "children"),
    "panels": Output("history-panels", "children"),
    "chip": Output("history-filter", "children"),
    "share": Output("history-botshare", "children"),
    "notes": Output("history-panel-notes", "children"),
    "key": Output("history-panels-key", "data"),
}


def _nothing(notes=None) -> dict:
    """No panels (no site, or a bad URL the page's own alert explains)."""
    return {"kpis": None, "panels": None, "chip": None, "share": "", "notes": notes,
            "key": None}


def register_panel_callbacks() -> None:
    """Declare the callbacks; the History page calls this as Dash loads it, so every app
    built gets them (Dash collects callbacks in a global list at app creation)."""
    callback(output=PANEL_OUTPUTS, inputs=[Input("url", "search")],
             state=[State("history-panels-key", "data")],
             prevent_initial_call=True)(render_panels)   # the first: in the layout
    callback(
        Output("url", "search", allow_duplicate=True),
        Input("history-bots", "value"),
        Input("history-assets", "value"),
        State("url", "search"),
        prevent_initial_call=True,
    )(toggle)


def toggle(bots, assets, search):
    """Toggles → URL (no entry when the URL already says the same)."""
    new = updated(parse_search(search), **{BOTS_KEY: "1" if bots else None,
                                           ASSETS_KEY: "1" if assets else None})
    return changed_search(new, search) or no_update


def _href(query, **changes) -> str:
    return dash.get_relative_path(PATH) + encode(updated(query, **changes))


def panels_key(q) -> str:
    """What the panels, the KPIs and the chip depend on: a new URL that keeps it (another
    granularity, chart metric or mode, theme) leaves them as they are."""
    return repr(replace(q, granularity="", metric=""))


def render_panels(search, shown_key=None):
    """Panels, KPIs, chip, bot share and notes for the URL's view, keyed as
    :data:`PANEL_OUTPUTS`: each drawn by the browser as one element (``statictree``),
    and none sent again when the URL changed nothing they show (``shown_key``)."""
    try:
        view = history_view(search)
        if view.q is None:
            return _nothing()
        key = panels_key(view.q)
        if key == shown_key:
            return dict.fromkeys(PANEL_OUTPUTS, no_update)
        panels = compute_panels(view.q)
    except queries.HitboardError:
        return _nothing()  # the page's own alert says what is wrong
    except Exception as exc:
        return _nothing(message(describe(exc)))
    q, query = view.q, view.query

    def link(dim):
        if dim == PAGE:
            return lambda value: _href(query, page=[value])
        return lambda value: _href(query, **{FILTER_KEY: f"{dim}:{value}"})

    cards = []
    empty = {"empty": panels.empty} if panels.empty else {}
    whole = None if q.follows(ENTRY) else html.P(
        f"All of the site's visits: {q.label} does not apply to visits.",
        className="hint bd-population")
    for dim, title in PANELS.items():
        extra = not_found_list(panels.not_found, **empty) if dim == "status" else None
        cards.append(breakdown_panel(dim, title, panels.frames[dim], link(dim),
                                     _active(q, dim), extra, **empty))
        if dim == PAGE:      # where visits enter and leave, beside the top pages
            cards += [breakdown_panel(kind, title, panels.visit_pages[kind], link(PAGE),
                                      extra=whole, columns=VISIT_COLUMNS, empty="No visits")
                      for kind, title in VISIT_PANELS.items()]
            cards.append(breakdown_panel("goals", "Goals", panels.goals, lambda _: None,
                                         extra=whole, columns=GOAL_COLUMNS, empty=NO_GOALS,
                                         sub="revenue"))
    chips = [filter_chip(c.label, _href(query, **_without(c))) for c in q.conditions]
    notes = [message(n, "info") for n in panels.notes]
    against = comparison_name(query, view.shell.tz)
    return {"kpis": static(_kpis(panels, q.humans, against=against)),
            "panels": static(cards),
            "chip": static(chips) if chips else None,
            "share": _share(panels.bot_share, q), "notes": notes or None, "key": key}


def _active(q, dim: str) -> str | None:
    """The value of ``dim`` the view is limited to, if one (its row is marked)."""
    found = q.condition(dim)
    return found.value if found is not None and len(found.values) == 1 else None


def _without(condition) -> dict:
    """The URL changes that drop ``condition``."""
    return {"page": None} if condition.dimension == PAGE else {FILTER_KEY: None}


def _share(share: float, q) -> str:
    """"12% bots (left out)", of the hits of the view's conditions."""
    if q.filter and q.filter[0] == "bot":
        return f"{share:.0%} bots ({q.label})"
    among = f" among {q.label}" if q.conditions else ""
    return f"{share:.0%} bots{among}" + (" (left out)" if q.humans else " (included)")


def _kpis(panels, humans: bool, pages: bool = False, filtered: bool = False,
          against: str = "previous period") -> list:
    """The KPI cards: the range's figures and their change against the compared period
    (the totals' comparison, so both say the same, named ``against``); a rate's change in
    percentage points. Visits are people's and the whole site's, whatever the view
    counts: their cards say so when it counts otherwise (``pages``, ``filtered``: when
    no query value says it)."""
    q = getattr(panels, "query", None)
    if q is not None:
        pages, filtered = False, bool(q.conditions)
    now, before = panels.current, panels.previous
    visits, visits_before = panels.visits, panels.visits_before
    visitors_exact = now.visitors_exact and (before is None or before.visitors_exact)

    def change(figure: str, now, before) -> tuple[float | None, bool]:
        """The change against the compared period, and whether it is "new" (nothing
        before, something now)."""
        if before is None or (figure == "visitors" and not visitors_exact):
            return None, False
        a, b = getattr(now, figure), getattr(before, figure)
        if a is None or b is None:
            return None, False
        if figure in RATES:
            return (a - b) * RATES[figure], False
        return change_percent(a, b), bool(a) and not b

    def card(kpi_id: str, label: str, value: str, figure: str, note: str = "",
             good_when_up: bool = True) -> KpiChange:
        pct, new = change(figure, now, before)
        return KpiChange(kpi_id, label, value, pct, note, good_when_up, new, figure in RATES)

    def visit_card(kpi_id: str, label: str, value: str, figure: str,
                   good_when_up: bool = True) -> KpiChange:
        pct, new = change(figure, visits, visits_before)
        return KpiChange(kpi_id, label, value, pct, visit_note, good_when_up, new,
                         figure in RATES)

    whole = " (whole site)" if pages else ""    # the pages' hits are a condition now
    visit_note = " (whole site)" if pages or filtered else ("" if humans else " (people)")
    rate = percent(None if now.errors is None else 100 * now.errors)
    return kpi_change_cards([
        card("history-kpi-visitors", "Visitors", estimate(now.visitors, now.visitors_error),
             "visitors", whole),
        visit_card("history-kpi-visits", "Visits", f"{visits.visits:,}", "visits"),
        visit_card("history-kpi-pageviews", "Pageviews", f"{visits.pageviews:,}",
                   "pageviews"),
        visit_card("history-kpi-pervisit", "Views per visit",
                   decimal(visits.views_per_visit, 2), "views_per_visit"),
        visit_card("history-kpi-bounce", "Bounce rate", percent(visits.bounce_rate, 0),
                   "bounce_rate", good_when_up=False),
        visit_card("history-kpi-duration", "Visit duration",
                   duration(visits.visit_duration), "visit_duration"),
        card("history-kpi-hits", "Hits", f"{now.hits:,}", "hits", whole),
        card("history-kpi-errors", "4xx/5xx rate", rate, "errors",
             (" (humans" if humans else " (all hits")
             + (", from raw events" if now.errors_from_events else "") + ")"
             + whole, good_when_up=False),
    ], against)
