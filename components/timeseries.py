"""Hits over time: DataFrame in (the shape ``queries.series`` returns), ``go.Figure`` out.

The chart shows wall-clock times of the frame's time zone, so hovering a point reads the
local time the viewer chose. The previous period, when given, is drawn on the same axis
(bucket *i* of the previous period under bucket *i* of the current one); the CSV export
uses :func:`plotted_frame`, the very numbers the figure draws.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from .legend import COMPARED, COMPARED_TOTAL, compared_title, page_colors, page_label
from .plotly_text import escape
from .theme import base_layout, palette
from .timeaxis import HOVER_FORMAT, bucket_end, time_axis

MODES = ("lines", "stacked")
PREVIOUS_PREFIX = "previous "
PREVIOUS_TOTAL = "previous total"
PREVIOUS_TOTAL_COLOR = "#868e96"
SMALL_COUNTS = 8


def aligned_previous(current: pd.DataFrame, previous: pd.DataFrame | None) -> pd.DataFrame | None:
    """The previous period's counts (or rates, means) placed on the current period's
    buckets, by position (a previous period with fewer buckets, across a DST change,
    leaves the tail empty)."""
    if previous is None:
        return None
    values = previous.reindex(columns=current.columns, fill_value=0).iloc[:len(current)]
    aligned = pd.DataFrame(values.to_numpy(), columns=current.columns,
                           index=current.index[:len(values)])
    counts = all(pd.api.types.is_integer_dtype(kind) for kind in values.dtypes)
    return aligned.reindex(current.index).astype("Int64" if counts else "Float64")


def plotted_frame(current: pd.DataFrame, previous: pd.DataFrame | None = None,
                  mode: str = "lines") -> pd.DataFrame:
    """What the chart draws, one column per series: ``time`` (local, ISO 8601 with its
    offset), one column per page, and with a previous period ``previous time`` and one
    ``previous <page>`` column per page (stacked: one ``previous total`` column, the
    single dashed line drawn over the stack)."""
    table = pd.DataFrame({"time": [t.isoformat() for t in current.index]})
    for page in current.columns:
        table[page_label(page)] = current[page].to_numpy()
    if previous is not None:
        table["previous time"] = ([t.isoformat() for t in previous.index[:len(current)]]
                                  + [""] * max(len(current) - len(previous), 0))
        aligned = aligned_previous(current, previous)
        if mode == "stacked":
            table[PREVIOUS_TOTAL] = _total(aligned).to_numpy()
        else:
            for page in current.columns:
                table[PREVIOUS_PREFIX + page_label(page)] = aligned[page].to_numpy()
    return table


def timeseries_figure(current: pd.DataFrame, *, granularity: str, theme: str = "light",
                      pages: list[str] | tuple[str, ...] = (), mode: str = "lines",
                      previous: pd.DataFrame | None = None, uirevision: str | None = None,
                      height: int | None = None, incomplete: bool = False,
                      measure: str = "hits", whole: bool = True,
                      running: bool = False, compared: str = COMPARED) -> go.Figure:
    """One line (or stacked area) per column of ``current``, ``measure`` per bucket
    (``whole``: counts, else a rate or a mean, drawn to two decimals); the ``previous``
    period, named ``compared`` in the legend, dotted per page, or as one dashed total
    over a stack (which per-page lines would misread).
    ``pages`` fixes the colour order (the view's selection); ``incomplete`` shades the
    last bucket, still filling up, so its drop does not read as a fall in traffic;
    ``running`` (lines, with ``incomplete``) also draws the way into it dashed, as
    Plausible draws its current period: the solid line ends at the last whole bucket."""
    colors = page_colors(list(pages) or list(current.columns))
    number = "," if whole else ",.2f"
    axis = time_axis(current.index, granularity)
    x = axis.x
    # In absolute time each point carries [when, label] and its hover says the local time
    # (a unified hover's title would show the shifted axis value, not the local time).
    custom = [list(pair) for pair in zip(axis.when, axis.labels, strict=True)] \
        if axis.labels else axis.when
    when = "%{customdata[1]}<br>" if axis.labels else ""
    traces = []
    for page in current.columns:
        name = escape(page_label(page))
        trace = {"type": "scatter", "x": x, "y": current[page].to_numpy(),
                 "name": name, "mode": _line_mode(x), "customdata": custom,
                 "line": {"color": colors.get(page), "width": 2},
                 "hovertemplate": f"{when}{name}: %{{y:{number}}}<extra></extra>"}
        if mode == "stacked":
            trace.update(stackgroup="current", line={"color": colors.get(page), "width": 1})
        traces.append(trace)
    if running and incomplete and mode == "lines" and len(x) > 1:
        traces += [_running(trace) for trace in traces]
    top = current.sum(axis=1) if mode == "stacked" else current.max(axis=1)
    highest = float(top.max()) if len(top) else 0.0
    if previous is not None:
        earlier = _previous_traces(current, previous, x, granularity, mode, colors, compared)
        traces += earlier
        highest = max([highest, *(float(pd.Series(t["y"]).max()) for t in earlier)])
    layout = base_layout(
        theme, hovermode="closest" if axis.labels else "x unified", uirevision=uirevision,
        showlegend=True,
        legend={"traceorder": "grouped"}, xaxis=axis.layout,
        yaxis={"title": {"text": f"{measure} per {granularity}"},
               **({"tickformat": ",d", **integer_ticks(highest)} if whole else
                  {"rangemode": "tozero"})},
    )
    if incomplete and len(x):
        layout["shapes"], layout["annotations"] = _incomplete_marks(x, granularity, theme)
    if height:
        layout["height"] = height
    return go.Figure(data=traces, layout=layout)


def _running(trace: dict) -> dict:
    """Make ``trace`` (one page's every bucket, its hover and its data: what a test or an
    export reads) dashed and out of the legend, and return its whole buckets drawn solid
    over it, in the legend: only the way into the running bucket shows dashed. Its hover
    says the running bucket's figure is so far."""
    solid = {**trace, "x": trace["x"][:-1], "y": trace["y"][:-1], "hoverinfo": "skip",
             "legendgroup": trace["name"], "customdata": None, "hovertemplate": None}
    template = trace["hovertemplate"]
    trace.update(line={**trace["line"], "dash": "dash"}, showlegend=False,
                 legendgroup=trace["name"],
                 hovertemplate=[template] * (len(trace["x"]) - 1)
                 + [template.replace("<extra>", " so far<extra>")])
    return solid


def _line_mode(x) -> str:
    """Lines, with markers when there is one bucket (today's first minute, yesterday by
    day): a line through one point draws nothing."""
    return "lines+markers" if len(x) == 1 else "lines"


def integer_ticks(highest) -> dict:
    """Whole-number ticks for small counts: Plotly would label 0, 0.5, 1… as "0 1 1"."""
    highest = 0 if pd.isna(highest) else float(highest)
    if highest <= SMALL_COUNTS:
        return {"tick0": 0, "dtick": 1}
    return {}


def _previous_traces(current, previous, x, granularity, mode, colors,
                     compared: str) -> list[dict]:
    aligned = aligned_previous(current, previous)
    when = [t.strftime(HOVER_FORMAT[granularity]) for t in previous.index[:len(current)]]
    series = ({PREVIOUS_TOTAL: _total(aligned)} if mode == "stacked"
              else {page: aligned[page] for page in current.columns})
    traces = []
    for key, values in series.items():
        total = key == PREVIOUS_TOTAL
        label = escape(COMPARED_TOTAL if total else page_label(key))
        hover = escape(f"{compared}, all pages" if total
                       else f"{page_label(key)}, {compared}")
        traces.append({
            "type": "scatter", "x": x,
            "y": values.to_numpy(dtype=float, na_value=float("nan")),
            "name": label, "legendgroup": "compared",
            "legendgrouptitle": {"text": escape(compared_title(compared))},
            "mode": _line_mode(x), "opacity": 0.8 if total else 0.6,
            "line": {"color": PREVIOUS_TOTAL_COLOR if total else colors.get(key),
                     "width": 2 if total else 1.5, "dash": "dash" if total else "dot"},
            "customdata": when,
            "hovertemplate": f"{hover} (%{{customdata}}): %{{y:,}}<extra></extra>",
        })
    return traces


def _total(aligned: pd.DataFrame) -> pd.Series:
    """The previous period's total per bucket; empty where it had no bucket."""
    return aligned.sum(axis=1, min_count=1).astype("Int64")


def _incomplete_marks(x: list[str], granularity: str, theme: str) -> tuple[list, list]:
    colors = palette(theme)
    start, end = x[-1], bucket_end(x[-1], granularity)
    shape = {"type": "rect", "name": "incomplete", "xref": "x", "yref": "paper",
             "x0": start, "x1": end, "y0": 0, "y1": 1, "layer": "below",
             "fillcolor": colors["muted"], "opacity": 0.18, "line": {"width": 0}}
    note = {"text": "incomplete", "name": "incomplete", "showarrow": False, "xref": "x",
            "yref": "paper", "x": start, "y": 0, "xanchor": "right", "yanchor": "bottom",
            "font": {"size": 11, "color": colors["muted"]}}
    return [shape], [note]
