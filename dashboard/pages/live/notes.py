"""Live's notes and band: the chart decorated with the notes of its window and the band
by minute of day, the banner while the last hour runs outside the expected range (noted
once per excursion), and the note form's callbacks wired to Live's chart."""

from __future__ import annotations

import datetime as dt
import logging

import pandas as pd
import plotly.graph_objects as go
from dash import Input, Output, callback, html

from components.annotations import add_annotations, add_band, excursion_banner
from dashboard import reads
from dashboard.feedback import describe
from dashboard.notes_view import expected_band, range_notes, register_note_callbacks
from dashboard.pages.live.pacer import PACER
from dashboard.services import get_services
from dashboard.state import ShellState, parse_search
from queries import annotations as notes
from queries.errors import HitboardError
from queries.notify.alerts import incidents, rules
from queries.reads import expected

log = logging.getLogger(__name__)


def banner_slot() -> html.Div:
    return html.Div(id="live-banner", **{"aria-live": "polite"})


def decorate_live(figure: dict, snapshot, site: str, shell, window: int) -> dict:
    """The live figure with the notes of its window and, for one series, the band by
    minute of day; built once per snapshot, notes and band for every viewer."""
    series = snapshot.series
    index = series.index
    if not len(index):
        return figure
    start, end = index[0].to_pydatetime(), index[-1].to_pydatetime() + dt.timedelta(minutes=1)
    try:
        shown = range_notes(site, start, end)
        band = None
        if len(series.columns) == 1:
            hour = end.replace(minute=0, second=0, microsecond=0)
            band = expected_band(site, hour - dt.timedelta(minutes=window + 60),
                                 hour + dt.timedelta(hours=1), "minute", shell.pages,
                                 shell.tz)
    except HitboardError:
        log.exception("notes or band left out of the live chart")
        return figure
    if not shown and band is None:
        return figure
    key = ("live-decorated", site, shell.pages, shell.tz, window, shell.theme,
           snapshot.as_of, tuple(n["id"] for n in shown), band is not None)

    def build() -> dict:
        decorated = go.Figure(figure)
        if band is not None:
            add_band(decorated, band.frame, band.weeks, index, "minute",
                     series.sum(axis=1), shell.theme, incomplete=True)
        add_annotations(decorated, shown, index, "minute", shell.theme)
        return decorated.to_dict()

    return get_services().cache.get_or_compute(key, build, timeout=10)


def live_banner(_n, search):
    """An open incident of the site's alerts (the checker's ``anomaly`` note), else while
    the last hour runs outside the expected range: say so, and record it once as an
    automatic note, once per excursion (whole-site views only, on a server that writes)."""
    shell = ShellState.from_query(parse_search(search))
    try:
        site = reads.resolve_site(shell.site, fresh=True)
        if site is None:
            return None
        now = reads.now(60)
        page = shell.pages[0] if len(shell.pages) == 1 else None
        if len(shell.pages) < 2:
            opened = reads.shared(incidents.open_incidents, site, now, page, seconds=60)
            if opened:
                return excursion_banner(opened[0]["text"], opened[0]["direction"])
        found = reads.shared(expected.hour_excursion, site, now, shell.pages, shell.tz,
                             seconds=reads.history_seconds())
    except Exception as exc:
        describe(exc)       # logged; no banner rather than a wrong one
        return None
    if found is None:
        return None
    if not shell.pages and not get_services().settings.readonly:
        _record_excursion(site, found)
    return excursion_banner(found.text[:1].upper() + found.text[1:], found.direction)


def _record_excursion(site: str, found: expected.Excursion) -> None:
    """Note it, unless the site's alerts watch that direction (their incident is the
    note)."""
    try:
        if found.direction in reads.shared(rules.watched, site, seconds=60):
            return
        notes.record_excursion(get_services().db, site, found.hour, found.direction,
                               found.text)
    except HitboardError:
        log.exception("could not record the excursion")


def chart_index(site: str, search: str) -> tuple[pd.DatetimeIndex, str]:
    shell = ShellState.from_query(parse_search(search))
    window = int(parse_search(search).get("window", ["60"])[0])
    snapshot = reads.live_snapshot(site, shell.pages, shell.tz, window)
    return snapshot.series.index, "minute"


def register_live_note_callbacks() -> None:
    register_note_callbacks("live", chart_index)
    callback(Output("live-banner", "children"), PACER.tick, Input("url", "search"),
             running=PACER.running("banner"))(live_banner)
