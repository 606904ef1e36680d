"""How a page looks in every chart of a view: its colour and its label, and how the
period it is compared with is named.

Colours follow the order of the view's selected pages, so a page keeps the same colour
on the live chart, the historical chart, the top-pages bars and the totals table.
"""

from __future__ import annotations

from collections.abc import Sequence

WHOLE_SITE = "*"
WHOLE_SITE_LABEL = "Whole site"
WHOLE_SITE_COLOR = "#3b5bdb"
OTHER_COLOR = "#adb5bd"
# Tableau 10, reordered so neighbours contrast; none is close to the whole site's indigo.
PALETTE = ("#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#b07aa1", "#edc948", "#ff9da7",
           "#9c755f", "#4e79a7", "#bab0ac")
# The compared period when nothing names it; History names its choice ("a year earlier").
COMPARED = "previous period"
COMPARED_TOTAL = "All pages"      # the compared period's one line over a stack


def page_label(page: str) -> str:
    return WHOLE_SITE_LABEL if page == WHOLE_SITE else page


def compared_title(compared: str = COMPARED) -> str:
    """The legend's title over the compared period's lines: "A year earlier" (each line
    named by its page, so a long page name is not made longer)."""
    return compared[:1].upper() + compared[1:]


def page_colors(pages: Sequence[str]) -> dict[str, str]:
    """One colour per page, by position among the selected pages; the whole site is
    always indigo."""
    colors = {WHOLE_SITE: WHOLE_SITE_COLOR}
    for page in pages:
        if page not in colors:
            colors[page] = PALETTE[(len(colors) - 1) % len(PALETTE)]
    return colors
