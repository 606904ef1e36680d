"""The presenter line's notes: a dashed line at each note's time and a label over the
plot, in a band of its own above the line (``top``: the margin it takes), so a label
never covers the line it marks (a spike's note sat on the spike's peak), placed so that
no two labels overlap and none runs past the chart's edge.

Plotly places an annotation where it is told and measures nothing, so the labels are laid
out here, in pixels of the plot's width (``plot_px``, which the browser reports): a label
runs right of its line, or left of it near the right edge; a label that would meet
another goes a row lower (up to ``ROWS`` rows); when no row has room for all of it, it
is cut to the most room there is, with "…" (down to its mark alone). Its hover always
holds the whole note; a note without room even for its mark keeps its line, and the label
over that line tells it in its hover too.
"""

from __future__ import annotations

import datetime as dt

from .annotations import KIND_COLORS, hover_text
from .plotly_text import escape

FONT_PX = 20
CHAR_PX = 0.58 * FONT_PX    # an average character of the label, with some to spare
PAD_PX = 4                  # Plotly's borderpad, each side
GAP_PX = 8                  # between two labels of one row
ROW_PX = FONT_PX + 2 * PAD_PX + 6
ROWS = 3
MAX_CHARS = 28              # of a note's text on its label
DEFAULT_PLOT_PX = 640       # until the browser has said how wide the plot is
MARK = "▼"
TOP_PX = 12                 # the line's top margin without notes


def note_layout(notes: list[dict], zone, start: dt.datetime, end: dt.datetime,
                plot_px: float | None = None) -> dict:
    """``shapes`` and ``annotations`` of the layout of a line whose x axis spans [start,
    end] (aware) and is ``plot_px`` wide, for ``notes`` (``queries.annotations``), each
    drawn at its time in ``zone``, and ``top``: the top margin their rows of labels take
    above the plot."""
    width = float(plot_px or DEFAULT_PLOT_PX)
    span = (end - start).total_seconds() or 1.0
    rows: list[list[tuple[float, float, int]]] = [[] for _ in range(ROWS)]
    shapes, annotations = [], []
    for note in sorted(notes, key=lambda n: n["time"]):
        x = note["time"].astimezone(zone).strftime("%Y-%m-%d %H:%M:%S")
        at = min(max((note["time"] - start).total_seconds() / span, 0.0), 1.0) * width
        color = KIND_COLORS.get(note["kind"], KIND_COLORS["note"])
        shapes.append({"type": "line", "xref": "x", "yref": "paper", "x0": x, "x1": x,
                       "y0": 0, "y1": 1, "layer": "below",
                       "line": {"color": color, "width": 2, "dash": "dash"}})
        placed = _place(rows, note["text"], at, width)
        if placed is None and any(rows):  # no room for its mark: the label over its line
            covering = _covering(rows, at)  # tells it in its hover
            annotations[covering]["hovertext"] += "<br><br>" + hover_text(note, zone)
            continue
        text, anchor, row = placed or (MARK, "left", 0)
        px = _px(text)
        box = (at, at + px) if anchor == "left" else (at - px, at)
        rows[row].append((*box, len(annotations)))
        annotations.append({
            "x": x, "xref": "x", "y": 1, "yref": "paper", "yanchor": "bottom",
            "xanchor": anchor, "yshift": row * ROW_PX, "text": escape(text),
            "showarrow": False, "font": {"color": "#ffffff", "size": FONT_PX},
            "bgcolor": color, "borderpad": PAD_PX, "hovertext": hover_text(note, zone),
            "captureevents": True})
    used = sum(1 for row in rows if row)
    return {"shapes": shapes, "annotations": annotations, "top": TOP_PX + used * ROW_PX}


def _place(rows: list[list[tuple[float, float, int]]], text: str, at: float,
           width: float) -> tuple[str, str, int] | None:
    """The label, its anchor and its row: the highest row with room for the whole label,
    right of the line before left of it; else the most room anywhere, the text shortened
    to it (down to the mark alone); None without room for the mark."""
    rooms = [(_room(row, at, anchor, width), anchor, i)
             for i, row in enumerate(rows) for anchor in ("left", "right")]
    for room, anchor, i in rooms:
        label = _fit(text, MAX_CHARS, anchor)
        if _px(label) <= room:
            return label, anchor, i
    room, anchor, i = max(rooms, key=lambda r: (r[0], -r[2]))
    chars = int((room - 2 * PAD_PX) / CHAR_PX) - len(MARK) - 1
    if chars > 0:
        return _fit(text, chars, anchor), anchor, i
    return (MARK, anchor, i) if _px(MARK) <= room else None


def _covering(rows: list[list[tuple[float, float, int]]], at: float) -> int:
    """The label nearest the line at ``at`` (one covers it: there was no room)."""
    boxes = [box for row in rows for box in row]
    return min(boxes, key=lambda b: max(b[0] - at, at - b[1], 0.0))[2]


def _room(row: list[tuple[float, float, int]], at: float, anchor: str,
          width: float) -> float:
    """Pixels free from the line at ``at`` to the next label of ``row`` (or the plot's
    edge), on the side ``anchor`` puts the label; none when a label covers the line."""
    if any(a - GAP_PX < at < b + GAP_PX for a, b, _ in row):
        return 0.0
    if anchor == "left":
        return min([a for a, _, _ in row if a >= at] + [width]) - at - GAP_PX * bool(row)
    return at - max([b for _, b, _ in row if b <= at] + [0.0]) - GAP_PX * bool(row)


def _fit(text: str, chars: int, anchor: str) -> str:
    """At most ``chars`` characters of ``text`` ("…" ending a cut one), with the mark on
    the side of the line."""
    text = " ".join(text.split())
    short = text if len(text) <= chars else text[: max(chars - 1, 0)].rstrip() + "…"
    return f"{MARK} {short}" if anchor == "left" else f"{short} {MARK}"


def _px(label: str) -> float:
    return len(label) * CHAR_PX + 2 * PAD_PX
