"""Figure colours for the light and dark themes, as plain layout values: a full Plotly
template would be serialised into every response of every viewer."""

from __future__ import annotations

_THEMES = {
    "light": {"text": "#212529", "muted": "#6c757d", "grid": "#e9ecef", "line": "#ced4da",
              "hover_bg": "#ffffff"},
    "dark": {"text": "#e9ecef", "muted": "#adb5bd", "grid": "#343a40", "line": "#495057",
             "hover_bg": "#212529"},
}
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif"
# Px above the plot where Plotly's toolbar (the modebar: 22 px buttons 2 px from the top)
# shows, so it never covers the data, whatever the chart's width.
TOOLBAR_BAND = 30


def palette(theme: str) -> dict[str, str]:
    return _THEMES.get(theme, _THEMES["light"])


def base_layout(theme: str, **overrides) -> dict:
    """Layout shared by every chart: transparent background (the page's colour shows
    through), compact margins that fit a phone with a band on top for the toolbar,
    horizontal legend below the plot."""
    colors = palette(theme)
    axis = {"gridcolor": colors["grid"], "linecolor": colors["line"], "zeroline": False,
            "color": colors["muted"], "automargin": True}
    layout = {
        "paper_bgcolor": "rgba(0,0,0,0)",
        "plot_bgcolor": "rgba(0,0,0,0)",
        "font": {"family": FONT, "color": colors["text"], "size": 13},
        "margin": {"l": 8, "r": 8, "t": TOOLBAR_BAND, "b": 8},
        "xaxis": dict(axis),
        "yaxis": dict(axis, rangemode="tozero"),
        # Below the chart: above it the legend ran under Plotly's toolbar (top right).
        "legend": {"orientation": "h", "x": 0, "xanchor": "left", "yref": "container",
                   "y": 0, "yanchor": "bottom"},
        "hoverlabel": {"bgcolor": colors["hover_bg"], "font": {"color": colors["text"]}},
        "autosize": True,
    }
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(layout.get(key), dict):
            layout[key] = {**layout[key], **value}
        else:
            layout[key] = value
    return layout


# One Plotly toolbar setup for every chart: no logo, shown on hover, no lasso/box select,
# and no cloud action ("Share chart…", "Edit in Chart Studio"): traffic data must never
# leave the server by one click. PNG download stays.
CLOUD_BUTTONS = ["sendChartToCloud", "sendDataToCloud", "editInChartStudio"]
GRAPH_CONFIG = {"displaylogo": False, "responsive": True, "displayModeBar": "hover",
                "showSendToCloud": False, "showEditInChartStudio": False,
                "plotlyServerURL": "",
                "modeBarButtonsToRemove": ["select2d", "lasso2d", *CLOUD_BUTTONS]}
