"""Stored names (pages, referrers, sites, notes) as text in a Plotly figure.

Plotly reads a subset of HTML in every string it draws: trace names in the legend,
hover text and templates, axis titles and category ticks, annotations. A page named
``<a href="https://example.org">click</a>`` would be drawn as a live link. Every stored
value that becomes a Plotly string passes through :func:`escape`, which Plotly turns
back into the same characters, drawn as text.
"""

from __future__ import annotations

# Plotly's markup (<, >, &) and its hover templates' %{...}: numeric or named entities,
# which Plotly shows as the characters themselves.
_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;",
                          "{": "&#123;", "}": "&#125;"})


def escape(value: object) -> str:
    return str(value).translate(_ESCAPES)
