"""History's controls and its URL, both ways: a control changed writes the URL
(``choose``: a history entry, the page moving in place), and a URL moved to (the back
button, a link followed in place) puts each control showing something else in step
(``sync_controls``).

A control set by ``sync_controls`` fires ``choose`` too, which reads the URL only as it
runs: by then the URL may have moved again (back pressed twice). Controls in step with
one URL applied to the next would write a new history entry, mixing the two and cutting
off the forward history, so ``choose`` writes only when the controls are in step with
the URL it reads (``SYNCED_STORE``: the URL they were last put in step with), or when
what fired is not that sync's doing (a click while it is on its way)."""

from __future__ import annotations

import datetime as dt

from dash import Input, Output, State, callback, ctx, no_update

from dashboard import reads
from dashboard.ranges import GRANULARITIES, PRESETS
from dashboard.state import (
    ASSETS_KEY,
    BOTS_KEY,
    ShellState,
    changed_search,
    choice,
    first,
    parse_search,
    updated,
)
from queries.reads.history import HITS, METRICS

from .compare import COMPARE_WITH
from .url import MODES, SYNCED_STORE, Controls, controls_of, in_step, opening_preset
from .view import history_view, picker_dates


def choose(preset, start_date, end_date, granularity, mode, compare, metric, search,
           synced=None):
    """Controls → URL. Picking dates makes a custom range; a preset shows its dates.
    Nothing for controls set to another URL than ``search`` (:func:`_echo`)."""
    triggered = {item["prop_id"].split(".")[0] for item in ctx.triggered
                 if item["prop_id"] != "."}
    shown = {"preset": preset, "start_date": start_date, "end_date": end_date,
             "granularity": granularity, "mode": mode, "compare": compare, "metric": metric}
    if not in_step(synced, search) and _echo(triggered, shown, synced):
        return {"search": no_update, "start_date": no_update, "end_date": no_update,
                "preset": no_update, "synced": no_update}
    out = apply_controls(triggered, preset, start_date, end_date, granularity, mode,
                         compare, search, metric)
    return {**out, "synced": no_update if out["search"] is no_update else out["search"]}


def _echo(triggered, shown: dict, synced) -> bool:
    """Whether each control that fired shows what ``synced`` (the URL the controls were
    last put in step with) wants: ``sync_controls``'s doing, not the viewer's."""
    try:
        wanted = controls_in(synced)
    except Exception:           # a URL the page's alert explains: a click is the viewer's
        return False
    return all(_same(name, shown[name], wanted[name]) for name, (control, _) in SYNCED.items()
               if control in triggered and name in shown)


def apply_controls(triggered, preset, start_date, end_date, granularity, mode, compare,
                   search, metric=None):
    """The URL for what the user changed, and the preset and dates to show.

    Only a control that fired *and* differs from the URL changes it: a control reporting
    its value as it mounts (Dash's date picker and radio items do) leaves the range alone,
    so a sub-day range (an hour's minutes) survives every other change. Returns
    ``{search, start_date, end_date, preset}`` with ``no_update`` where nothing changes."""
    triggered = {triggered} if isinstance(triggered, str) else set(triggered)
    query = parse_search(search)
    shell = ShellState.from_query(query)
    tz, site = shell.tz, reads.resolve_site(shell.site)
    url, opening = controls_of(query), opening_preset(query)
    shown = picker_dates(url, tz, site)
    picked = (_day(start_date), _day(end_date))
    dates, bounds, new_preset = (no_update, no_update), {}, url.preset
    if "history-dates" in triggered and all(picked) and picked != shown:
        new_preset, bounds = "custom", _whole_days(*picked)
    elif "history-range" in triggered and preset in PRESETS and preset != url.preset:
        new_preset = preset
        if preset == "custom":
            if not all(picked):
                return {"search": no_update, "start_date": no_update, "end_date": no_update,
                        "preset": url.preset}
            bounds = _whole_days(*picked)
        else:
            bounds = {"start": None, "end": None}
            dates = picker_dates(Controls(preset, "auto", "lines", False, None, None), tz,
                                 site)
    changes = dict(bounds)
    if new_preset != url.preset or bounds:      # else the URL keeps its range as written
        changes["range"] = None if new_preset == opening else new_preset
    if "history-granularity" in triggered and granularity in GRANULARITIES:
        changes["gran"] = None if granularity == "auto" else granularity
    if "history-mode" in triggered and mode in MODES:
        changes["mode"] = None if mode == "lines" else mode
    if "history-compare" in triggered:
        changes["compare"] = "1" if compare else None
    if "history-metric" in triggered and metric in METRICS:
        changes["metric"] = None if metric == HITS else metric
    new_search = changed_search(updated(query, **changes), search)
    return {"search": new_search or no_update, "start_date": dates[0], "end_date": dates[1],
            "preset": new_preset if new_preset != preset else no_update}


# The controls :func:`sync_controls` puts in step with the URL, and how each is read.
SYNCED = {"preset": ("history-range", "value"), "start_date": ("history-dates", "start_date"),
          "end_date": ("history-dates", "end_date"),
          "granularity": ("history-granularity", "value"), "mode": ("history-mode", "value"),
          "compare": ("history-compare", "value"), "metric": ("history-metric", "value"),
          "versus": ("history-compare-with", "value"),
          "versus_start": ("history-compare-start", "value"),
          "bots": ("history-bots", "value"), "assets": ("history-assets", "value")}


def sync_controls(search, shown):
    """The controls as the URL says (the back button, a link moved in place): each one
    that shows something else; ``no_update`` for the rest, so nothing fires for them."""
    try:
        wanted = controls_in(search)
    except Exception:           # a URL the page's alert explains: the controls stay
        return dict.fromkeys(SYNCED, no_update)
    return {name: no_update if _same(name, shown.get(name), value) else value
            for name, value in wanted.items()}


def controls_in(search) -> dict:
    """Each synced control's value for the URL, keyed as :data:`SYNCED`."""
    view = history_view(search)
    query, controls = view.query, view.controls
    start, end = picker_dates(controls, view.shell.tz, view.site)
    return {"preset": controls.preset, "start_date": start, "end_date": end,
            "granularity": controls.granularity, "mode": controls.mode,
            "compare": ["1"] if controls.compare else [], "metric": controls.metric,
            "versus": choice(query, "vs", COMPARE_WITH, "previous"),
            "versus_start": first(query, "vsstart") or "",
            "bots": ["1"] if first(query, BOTS_KEY) == "1" else [],
            "assets": ["1"] if first(query, ASSETS_KEY) == "1" else []}


def _same(name: str, shown, wanted) -> bool:
    if name in ("start_date", "end_date"):
        return _day(shown) == _day(wanted)
    if isinstance(wanted, list):
        return sorted(shown or []) == wanted
    return (shown or None) == (wanted or None)


def _day(value) -> str | None:
    """The date part of what the picker reports (it may add a time)."""
    return str(value)[:10] if value else None


def _whole_days(first: str, last: str) -> dict:
    """The URL bounds of the picked local days, ``last`` included."""
    try:
        end = (dt.date.fromisoformat(last) + dt.timedelta(days=1)).isoformat()
        return {"start": dt.date.fromisoformat(first).isoformat(), "end": end}
    except (ValueError, OverflowError):
        # Only a crafted request sends these: the URL keeps them and the page says why.
        return {"start": first, "end": last}


def register_control_callbacks() -> None:
    """Declare the callbacks; the History page calls this as Dash loads it (Dash pages
    import every module of the folder: a callback declared at import would be twice)."""
    callback(
        output={"search": Output("url", "search", allow_duplicate=True),
                "start_date": Output("history-dates", "start_date"),
                "end_date": Output("history-dates", "end_date"),
                "preset": Output("history-range", "value"),
                "synced": Output(SYNCED_STORE, "data", allow_duplicate=True)},
        inputs=[Input("history-range", "value"), Input("history-dates", "start_date"),
                Input("history-dates", "end_date"), Input("history-granularity", "value"),
                Input("history-mode", "value"), Input("history-compare", "value"),
                Input("history-metric", "value"), State("url", "search"),
                State(SYNCED_STORE, "data")],
        prevent_initial_call=True,
    )(choose)
    callback(output={"synced": Output(SYNCED_STORE, "data", allow_duplicate=True),
                     **{name: Output(*target, allow_duplicate=True)
                        for name, target in SYNCED.items()}},
             inputs={"search": Input("url", "search"),
                     "shown": {name: State(*target) for name, target in SYNCED.items()}},
             prevent_initial_call=True)(_sync_and_note)


def _sync_and_note(search, shown):
    """:func:`sync_controls`, and the URL the controls now show, in the same update."""
    return {**sync_controls(search, shown), "synced": search}
