"""A report's chart: the figure History draws for the period, as a PNG made by Kaleido
(which drives a headless Chromium). Without Kaleido or a browser it raises, and the
report says the chart is left out."""

from __future__ import annotations

import pandas as pd

from components.timeseries import timeseries_figure

WIDTH, HEIGHT = 700, 320


def render_chart(frame: pd.DataFrame, granularity: str) -> bytes:
    import plotly.io as pio  # here: Kaleido is loaded only when a report is drawn

    figure = timeseries_figure(frame, granularity=granularity, height=HEIGHT)
    figure.update_layout(width=WIDTH, showlegend=False)
    return pio.to_image(figure, format="png", width=WIDTH, height=HEIGHT)
