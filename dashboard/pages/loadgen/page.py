"""Load generator: synthetic traffic on demand for presenters, and history by backfill.

The generator lives in the server process (``dashboard.loadgen.control``), one per
server: this page only sends it commands and shows its status every second, so a reload
or a second viewer sees the same running generator and the same counters.
"""

from __future__ import annotations

import time

import dash
from dash import Input, Output, State, callback, ctx, dcc, html, no_update

from components import Kpi, kpi_cards, message
from components.numbers import count, decimal
from dashboard.authority import refusal, requires
from dashboard.feedback import describe
from dashboard.loadgen.control import Config, GeneratorStatus, get_generator
from queries.errors import InvalidRangeError
from queries.jobs.backfill import MAX_DAYS
from queries.loadgen.history import plan_backfill
from queries.loadgen.model import MAX_PAGES, MAX_SITES

dash.register_page(__name__, path="/loadgen", name="Load generator",
                   title="hitboard · load generator", order=20)

REFRESH_MS = 1000
DIURNAL_ON = 0.5
ACTIONS = ("lg-start", "lg-stop", "lg-spike", "lg-backfill-confirm")


def layout(**_query):
    generator = get_generator()
    status = generator.status()
    config = status.config
    refused = refusal("loadgen")
    disabled = not status.enabled or refused is not None
    return html.Div(className="page page-loadgen", children=[
        message(generator.disabled_reason if not status.enabled else refused.reason, "info")
        if disabled else None,
        html.Section(className="card", children=[
            html.H2("Traffic", className="card-title"),
            html.Div(className="history-controls", children=[
                _number("lg-rate", "Rate (hits/s)", config.rate, 1, status.max_rate, disabled),
                _number("lg-sites", "Sites", config.sites, 1, MAX_SITES, disabled),
                _number("lg-pages", "Pages per site", config.pages, 1, MAX_PAGES, disabled),
                _number("lg-zipf", "Popularity (Zipf s)", config.zipf_s, 0, 5, disabled,
                        step=0.1),
                dcc.Checklist(id="lg-options", value=[
                    name for name, on in (("diurnal", config.diurnal),
                                          ("events", config.events)) if on
                ], options=[
                    {"label": " daily cycle", "value": "diurnal", "disabled": disabled},
                    {"label": " raw events too", "value": "events", "disabled": disabled},
                ]),
            ]),
            html.Div(className="toolbar", style={"marginTop": "12px"}, children=[
                html.Button("Start / apply", id="lg-start", className="btn", disabled=disabled),
                html.Button("Stop", id="lg-stop", className="btn", disabled=disabled),
                html.Button("Spike ×10 for 30 s", id="lg-spike", className="btn",
                            disabled=disabled),
                html.Span(id="lg-state", className="freshness", **{"aria-live": "polite"}),
            ]),
            html.P(f"Sites are synthetic (*.example) and registered as such. The rate is a "
                   f"daily mean when the daily cycle is on; this server caps it at "
                   f"{count(round(status.max_rate))} hits/s, spikes included.", className="hint"),
        ]),
        html.Div(id="lg-feedback"),
        html.Div(id="lg-kpis", className="kpis", children=kpi_cards(_kpis(status))),
        html.Section(className="card", children=[
            html.H2("History", className="card-title"),
            html.Div(className="history-controls", children=[
                _number("lg-days", "Days to backfill", 30, 1, MAX_DAYS, disabled),
                html.Button("Backfill", id="lg-backfill", className="btn", disabled=disabled),
                html.Progress(id="lg-progress", max=1, value=0),
                html.Span(id="lg-backfill-state", className="hint"),
            ]),
            html.Div(id="lg-confirm", className="notice notice-warning confirm-panel",
                     hidden=True, children=[
                html.Span(id="lg-confirm-text"),
                html.Div(className="toolbar", children=[
                    html.Button("Write it", id="lg-backfill-confirm", className="btn",
                                disabled=disabled),
                    html.Button("Cancel", id="lg-backfill-cancel", className="btn"),
                ]),
            ]),
            html.P("Writes whole pre-aggregated documents (and their rollups) for the sites "
                   "and pages above, at the rate above, added to whatever they already "
                   "hold; you see what it will add and confirm first.", className="hint"),
        ]),
        dcc.Interval(id="lg-interval", interval=REFRESH_MS),
        dcc.Store(id="lg-action"),
    ])


def _number(id_: str, label: str, value, low, high, disabled: bool, step=1):
    return html.Label(className="hint", children=[
        label, html.Br(),
        # Wide enough for the largest value beside the -/+ buttons Dash draws inside.
        dcc.Input(id=id_, type="number", value=value, min=low, max=high, step=step,
                  debounce=True, disabled=disabled,
                  style={"width": f"calc({len(f'{high:g}') + 3}ch + 5.5em)"}),
    ])


def _kpis(status: GeneratorStatus) -> list[Kpi]:
    spike = " · spike ×10" if status.spiking else ""
    return [
        Kpi("lg-kpi-target", "Target now (hits/s)", round(status.target_now),
            (f"rate {count(round(status.config.rate))}"
             f"{' × daily cycle' if status.config.diurnal else ', flat'}{spike}"
             if status.running else "stopped")),
        Kpi("lg-kpi-achieved", "Achieved (hits/s)", round(status.achieved), "last 5 s"),
        Kpi("lg-kpi-sent", "Hits sent", status.hits_sent,
            f"since the server started · {count(status.events_written)} raw events written"),
        Kpi("lg-kpi-pending", "Pending in the recorder", status.pending_hits,
            "hits not yet flushed"),
        Kpi("lg-kpi-ops", "DB operations/s", round(status.db_operations_per_s),
            "recorder updates"),
        Kpi("lg-kpi-errors", "Errors", status.errors, status.last_error[:80]),
    ]


def _config(rate, sites, pages, zipf_s, options) -> Config:
    values = {"rate": rate, "sites": sites, "pages": pages, "Zipf s": zipf_s}
    missing = [name for name, value in values.items() if value is None]
    if missing:
        raise InvalidRangeError(f"enter a number for {', '.join(missing)} (within the limits)")
    options = options or []
    return Config(rate=float(rate), sites=int(sites), pages=int(pages), zipf_s=float(zipf_s),
                  diurnal=DIURNAL_ON if "diurnal" in options else 0.0,
                  events="events" in options)


def _days(n: int) -> str:
    return f"{n} day" if n == 1 else f"{n} days"


# The generator's settings as the form holds them: what a command and its confirmation read.
SETTINGS_STATE = tuple(State(f"lg-{name}", "value")
                       for name in ("rate", "sites", "pages", "zipf", "options", "days"))


@callback(
    Output("lg-feedback", "children"),
    Output("lg-action", "data"),
    *(Input(action, "n_clicks") for action in ACTIONS),
    *SETTINGS_STATE,
    prevent_initial_call=True,
)
@requires("loadgen", refused=lambda reason: (message(reason), time.time()))
def act(_start, _stop, _spike, _backfill, rate, sites, pages, zipf_s, options, days):
    text, kind = command(get_generator(), ctx.triggered_id, rate, sites, pages, zipf_s,
                         options, days)
    return message(text, kind), time.time()


def command(generator, action, rate, sites, pages, zipf_s, options, days) -> tuple[str, str]:
    """Send one command to the server's generator: (what happened, message kind); a
    refusal becomes its reason."""
    try:
        if action == "lg-stop":
            return ("Stopped." if generator.stop() else "The generator was not running."), "info"
        if action == "lg-spike":
            generator.spike()
            return "Spike: ×10 for 30 s.", "info"
        config = _config(rate, sites, pages, zipf_s, options)
        if action == "lg-backfill-confirm":
            if days is None:
                raise InvalidRangeError(f"enter a number of days from 1 to {MAX_DAYS}")
            started = generator.backfill(int(days), config)
            return ("Backfill started." if started else "A backfill is already running."), "info"
        started = generator.start(config)
        return ("Started." if started else "Applied to the running generator."), "info"
    except Exception as exc:
        return describe(exc), "error"


@callback(
    Output("lg-confirm", "hidden"),
    Output("lg-confirm-text", "children"),
    Input("lg-backfill", "n_clicks"),
    Input("lg-backfill-cancel", "n_clicks"),
    Input("lg-backfill-confirm", "n_clicks"),
    *SETTINGS_STATE,
    prevent_initial_call=True,
)
def confirm(_backfill, _cancel, _confirm, rate, sites, pages, zipf_s, options, days):
    """Backfill asks first: what it will add (hits, days, sites), then Write it or Cancel."""
    if ctx.triggered_id != "lg-backfill":
        return True, ""
    try:
        if days is None:
            raise InvalidRangeError(f"enter a number of days from 1 to {MAX_DAYS}")
        config = _config(rate, sites, pages, zipf_s, options)
        plan = plan_backfill(config.model(), config.rate, int(days))
    except Exception as exc:
        return False, describe(exc)
    return False, (f"Backfill will add about {count(plan.hits)} hits: {_days(plan.days)} and today "
                   f"so far, for {len(plan.sites)} site{'s' if len(plan.sites) != 1 else ''} "
                   f"({', '.join(plan.sites)}) of {plan.pages} pages, on top of what they "
                   "already hold. Write it?")


@callback(
    output={"kpis": Output("lg-kpis", "children"), "state": Output("lg-state", "children"),
            "done": Output("lg-progress", "value"), "total": Output("lg-progress", "max"),
            "backfill": Output("lg-backfill-state", "children")},
    inputs=[Input("lg-interval", "n_intervals"), Input("lg-action", "data")],
)
def refresh(_n, _action):
    status = get_generator().status()
    state = f"Running on {', '.join(status.sites)}" if status.running else "Stopped"
    backfill = status.backfill
    if backfill.error:
        text = f"Backfill failed: {backfill.error}"
    elif backfill.running:
        text = f"{backfill.done} of {backfill.total} site-days…"
    elif backfill.total:
        text = (f"Backfilled {_days(backfill.days)}: {count(backfill.hits)} hits in "
                f"{decimal(backfill.seconds)} s")
    else:
        text = ""
    if not status.enabled:
        return {"kpis": kpi_cards(_kpis(status)), "state": "Disabled (read-only)", "done": 0,
                "total": 1, "backfill": no_update}
    return {"kpis": kpi_cards(_kpis(status)), "state": state, "done": backfill.done,
            "total": max(backfill.total, 1), "backfill": text}
