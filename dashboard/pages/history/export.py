"""History's Export button: the shown range's days (of the site's zone, else UTC) in
Plausible's CSV layout, a ZIP as ``hitboard export`` writes it."""

from __future__ import annotations

import datetime as dt
import io

from dash import Input, Output, State, callback, dcc, html, no_update

from components import message
from dashboard.feedback import describe
from dashboard.pages.history.view import history_view
from dashboard.services import get_services
from queries import validation
from queries.exports import archive

# A button's export holds a server thread: 90 days of a site took 3.8 s of CPU (pages,
# sources, locations... read day by day), so a quarter at most; longer: the CLI.
MAX_DAYS = 92


def export_controls() -> list:
    return [html.Button("Export ZIP", id="history-export-button", n_clicks=0, className="btn",
                        title="The range's days in Plausible's CSV layout"),
            dcc.Download(id="history-export")]


def export_days(start: dt.datetime, end: dt.datetime, tz: str) -> tuple[dt.date, dt.date]:
    """The days of ``tz`` a range touches: its first, and the day after its last."""
    zone = validation.timezone(tz)
    local_end = end.astimezone(zone)
    last = local_end.date() if local_end.time() == dt.time() else (
        local_end.date() + dt.timedelta(days=1))
    return start.astimezone(zone).date(), last


@callback(Output("history-export", "data"),
          Output("history-alert", "children", allow_duplicate=True),
          Input("history-export-button", "n_clicks"), State("url", "search"),
          prevent_initial_call=True)
def export_zip(_clicks, search):
    try:
        view = history_view(search)
    except Exception as exc:
        return no_update, message(describe(exc))
    if view.period is None:
        return no_update, message("There is no data to export yet.", "info")
    db = get_services().db
    tz = archive.zone(db, view.site)
    first, end = export_days(view.period.start, view.period.end, tz)
    if (end - first).days > MAX_DAYS:
        return no_update, message(f"An export from this page holds {MAX_DAYS} days at most: "
                                  "choose a shorter range, or use `hitboard export`.", "info")
    out = io.BytesIO()
    try:
        archive.write(db, view.site, first, end, out, tz)
    except Exception as exc:
        return no_update, message(describe(exc))
    last = end - dt.timedelta(days=1)
    name = f"hitboard-{view.site}-{first:%Y%m%d}-{last:%Y%m%d}.zip"
    return dcc.send_bytes(out.getvalue(), name), None
