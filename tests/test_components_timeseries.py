"""components.timeseries: series frames to figures and to the CSV of what is plotted."""

import pandas as pd
import pytest

from components import aligned_previous, page_colors, plotted_frame, timeseries_figure
from components.legend import WHOLE_SITE_COLOR


def frame(values: dict, start="2026-11-21 00:00", freq="h", tz="Europe/Paris"):
    index = pd.date_range(start, periods=len(next(iter(values.values()))), freq=freq, tz=tz,
                          name="time")
    result = pd.DataFrame(values, index=index).astype("int64")
    result.columns.name = "page"
    return result


def test_one_line_per_page_in_local_wall_time_with_exact_hover():
    current = frame({"/a": [1, 2, 3], "/b": [0, 5, 1234]})
    figure = timeseries_figure(current, granularity="hour", pages=["/a", "/b"])
    assert [t.name for t in figure.data] == ["/a", "/b"]
    assert list(figure.data[1].y) == [0, 5, 1234]
    assert list(figure.data[0].x) == ["2026-11-21 00:00", "2026-11-21 01:00", "2026-11-21 02:00"]
    assert "%{y:,}" in figure.data[0].hovertemplate
    assert figure.layout.xaxis.hoverformat == "%a %d %b %Y %H:00"


def test_colours_follow_the_selection_and_the_whole_site_is_indigo():
    current = frame({"/b": [1], "/a": [2]})
    figure = timeseries_figure(current, granularity="hour", pages=["/a", "/b"])
    colors = page_colors(["/a", "/b"])
    assert figure.data[0].line.color == colors["/b"]
    assert figure.data[1].line.color == colors["/a"]
    assert colors["/a"] != colors["/b"]
    site = timeseries_figure(frame({"*": [1]}), granularity="hour")
    assert site.data[0].name == "Whole site"
    assert site.data[0].line.color == WHOLE_SITE_COLOR


def test_stacked_compare_draws_the_previous_total_as_one_dashed_line():
    current = frame({"/a": [1, 2], "/b": [3, 4]})
    previous = frame({"/a": [5, 6], "/b": [7, 8]}, start="2026-11-20 00:00")
    figure = timeseries_figure(current, granularity="hour", mode="stacked", previous=previous)
    assert [t.stackgroup for t in figure.data] == ["current", "current", None]
    assert figure.data[2].line.dash == "dash"
    assert (figure.data[2].legendgrouptitle.text, figure.data[2].name) == (
        "Previous period", "All pages")
    assert list(figure.data[2].y) == [12, 14]
    assert list(figure.data[2].x) == list(figure.data[1].x)
    table = plotted_frame(current, previous, mode="stacked")
    assert list(table.columns) == ["time", "/a", "/b", "previous time", "previous total"]
    assert table["previous total"].tolist() == [12, 14]


def test_lines_compare_keeps_one_dotted_line_per_page():
    current = frame({"/a": [1, 2], "/b": [3, 4]})
    previous = frame({"/a": [5, 6], "/b": [7, 8]}, start="2026-11-20 00:00")
    figure = timeseries_figure(current, granularity="hour", previous=previous)
    assert [t.name for t in figure.data] == ["/a", "/b", "/a", "/b"]
    assert [t.legendgrouptitle.text for t in figure.data[2:]] == ["Previous period"] * 2
    assert figure.data[2].line.dash == "dot"


def test_a_rate_is_compared_as_it_is_not_cut_to_whole_numbers():
    """A bounce rate or a visit's duration against the previous period's (the chart
    refused it: its values were cast to whole numbers)."""
    current = pd.DataFrame({"*": [21.6, 30.0]}, index=frame({"*": [0, 0]}).index)
    previous = pd.DataFrame({"*": [4.2, 50.5]},
                            index=frame({"*": [0, 0]}, start="2026-11-20 00:00").index)
    figure = timeseries_figure(current, granularity="hour", previous=previous,
                               measure="bounce rate (%)", whole=False)
    assert list(figure.data[1].y) == [4.2, 50.5]
    assert plotted_frame(current, previous)["previous Whole site"].tolist() == [4.2, 50.5]


@pytest.mark.parametrize("mode", ["lines", "stacked"])
def test_the_legend_and_hovers_name_the_comparison_made(mode):
    current = frame({"*": [1, 2]})
    previous = frame({"*": [5, 6]}, start="2025-11-22 00:00")
    figure = timeseries_figure(current, granularity="hour", previous=previous, mode=mode,
                               compared="a year earlier")
    (earlier,) = figure.data[1:]
    assert earlier.legendgrouptitle.text == "A year earlier"   # over its lines, named by page
    assert earlier.name == ("All pages" if mode == "stacked" else "Whole site")
    assert "a year earlier" in earlier.hovertemplate
    assert "previous" not in (earlier.name + earlier.hovertemplate).lower()


def test_the_incomplete_last_bucket_is_shaded():
    current = frame({"*": [5, 6, 2]})
    figure = timeseries_figure(current, granularity="hour", incomplete=True)
    (shape,) = figure.layout.shapes
    assert (shape.name, shape.x0, shape.x1) == ("incomplete", "2026-11-21 02:00",
                                                "2026-11-21 03:00")
    assert figure.layout.annotations[0].text == "incomplete"
    assert not timeseries_figure(current, granularity="hour").layout.shapes


def test_the_running_bucket_is_reached_by_a_dashed_line_the_whole_ones_stay_solid():
    """Live's running minute: the solid line ends at the last whole minute, the way into
    the running one is dashed (the data trace, dashed, under a solid copy of its whole
    buckets), and its hover says "so far"."""
    current = frame({"/a": [5, 6, 2], "/b": [1, 1, 0]}, freq="min")
    figure = timeseries_figure(current, granularity="minute", pages=["/a", "/b"],
                               incomplete=True, running=True)
    data, solid = figure.data[:2], figure.data[2:]
    assert [list(t.y) for t in data] == [[5, 6, 2], [1, 1, 0]]      # every bucket
    assert [(t.line.dash, t.showlegend) for t in data] == [("dash", False)] * 2
    assert [list(t.y) for t in solid] == [[5, 6], [1, 1]]
    assert [(t.name, t.line.dash, t.hoverinfo) for t in solid] == [
        ("/a", None, "skip"), ("/b", None, "skip")]
    assert [t.line.color for t in solid] == [t.line.color for t in data]
    assert data[0].hovertemplate[-1] == "/a: %{y:,} so far<extra></extra>"
    assert data[0].hovertemplate[0] == "/a: %{y:,}<extra></extra>"
    assert figure.layout.shapes[0].name == "incomplete"
    whole = timeseries_figure(current, granularity="minute", running=True)
    assert len(whole.data) == 2 and whole.data[0].line.dash is None      # nothing runs
    stacked = timeseries_figure(current, granularity="minute", mode="stacked",
                                incomplete=True, running=True)
    assert len(stacked.data) == 2         # a stack's dashed top would misread: shaded only


@pytest.mark.parametrize("mode", ["lines", "stacked"])
def test_one_bucket_is_drawn_with_a_marker_a_line_through_one_point_being_invisible(mode):
    """Today's first minute, yesterday by day: one point per series."""
    one = frame({"*": [3]}, freq="min")
    figure = timeseries_figure(one, granularity="minute", mode=mode, previous=one)
    assert [t.mode for t in figure.data] == ["lines+markers", "lines+markers"]
    assert {t.mode for t in timeseries_figure(frame({"*": [3, 4]}), granularity="hour",
                                              mode=mode, previous=one).data} == {"lines"}


def test_small_counts_get_whole_number_ticks_only():
    small = timeseries_figure(frame({"*": [0, 3, 1]}), granularity="minute")
    assert (small.layout.yaxis.dtick, small.layout.yaxis.tick0) == (1, 0)
    assert timeseries_figure(frame({"*": [0, 0]}), granularity="minute").layout.yaxis.dtick == 1
    assert timeseries_figure(frame({"*": [0, 300]}), granularity="minute").layout.yaxis.dtick \
        is None


def test_a_dst_day_is_drawn_in_absolute_time_with_local_labels():
    index = pd.date_range("2026-11-01 04:00", periods=5, freq="h", tz="UTC").tz_convert(
        "America/New_York").rename("time")
    current = pd.DataFrame({"*": [1, 2, 3, 4, 5]}, index=index)
    figure = timeseries_figure(current, granularity="hour")
    x = list(figure.data[0].x)
    assert len(set(x)) == 5  # the two 01:00 hours are two points
    assert x == ["2026-11-01 00:00", "2026-11-01 01:00", "2026-11-01 02:00",
                 "2026-11-01 03:00", "2026-11-01 04:00"]
    assert [when for when, _label in figure.data[0].customdata][1:3] == [
        "2026-11-01T01:00-04:00", "2026-11-01T01:00-05:00"]
    assert figure.data[0].customdata[2][1] == "Sun 01 Nov 2026 01:00 EST"
    labels = list(figure.layout.xaxis.ticktext)
    assert "01:00 EDT" in labels[1] and "01:00 EST" in labels[2]


def test_uirevision_keeps_zoom_across_refreshes():
    figure = timeseries_figure(frame({"*": [1]}), granularity="minute", uirevision="live|s")
    assert figure.layout.uirevision == "live|s"


def test_page_names_cannot_inject_hover_markup():
    figure = timeseries_figure(frame({"/%{y}<b>": [1]}), granularity="hour")
    assert "<b>" not in figure.data[0].hovertemplate.split(":")[0]
    assert "%{y}" not in figure.data[0].hovertemplate.split(":")[0]


def test_day_buckets_are_plotted_as_dates():
    figure = timeseries_figure(frame({"*": [1, 2]}, freq="D"), granularity="day")
    assert list(figure.data[0].x) == ["2026-11-21", "2026-11-22"]


@pytest.mark.parametrize(("days", "step"), [(3, 1), (7, 1), (10, 1), (14, 2), (30, 3),
                                            (90, 14), (365, 56)])
def test_a_chart_by_day_labels_dates_the_last_day_included(days, step):
    """One dated tick a day, or every few days past ten, counted back from the last day
    (Plotly's own ticks read 00:00 / 12:00 on three days and left the last one out)."""
    figure = timeseries_figure(frame({"*": [1] * days}, start="2026-11-01", freq="D"),
                               granularity="day")
    axis = figure.layout.xaxis
    x = list(figure.data[0].x)
    assert axis.tickmode == "array"
    assert list(axis.tickvals) == x[::-1][::step][::-1]
    assert axis.tickvals[-1] == x[-1] and len(axis.tickvals) <= 10
    assert not any(":" in text for text in axis.ticktext)
    first = pd.Timestamp(axis.tickvals[0])
    assert axis.ticktext[0] == f"{first:%b} {first.day}<br>2026"
    last = pd.Timestamp(x[-1])
    assert axis.ticktext[-1] in (str(last.day), f"{last:%b} {last.day}")


def test_day_labels_name_the_month_and_the_year_where_they_change():
    figure = timeseries_figure(frame({"*": [1] * 4}, start="2026-12-30", freq="D"),
                               granularity="day")
    assert list(figure.layout.xaxis.ticktext) == ["Dec 30<br>2026", "31", "Jan 1<br>2027", "2"]
    week = timeseries_figure(frame({"*": [1] * 7}, start="2026-11-19", freq="D"),
                             granularity="day")
    assert list(week.layout.xaxis.ticktext) == ["Nov 19<br>2026", "20", "21", "22", "23", "24",
                                                "25"]


def test_the_presenters_30_days_are_labelled_as_history_labels_them():
    from components.presenter import days_figure

    days = frame({"*": [5] * 30}, start="2026-10-27", freq="D")
    figure = days_figure(days, "dark")
    history = timeseries_figure(days, granularity="day")
    assert figure.layout.xaxis.tickvals == history.layout.xaxis.tickvals
    assert list(figure.layout.xaxis.ticktext[-3:]) == ["19", "22", "25"]
    assert figure.layout.xaxis.tickfont.size == 22        # the presenter's axis style kept


def test_previous_period_is_aligned_by_position_and_may_be_shorter():
    current = frame({"/a": [1, 2, 3]})
    previous = frame({"/a": [7, 8]}, start="2026-11-20 00:00")
    aligned = aligned_previous(current, previous)
    assert list(aligned.index) == list(current.index)
    assert aligned["/a"].tolist()[:2] == [7, 8]
    assert pd.isna(aligned["/a"].iloc[2])
    assert aligned_previous(current, None) is None


def test_plotted_frame_is_the_csv_of_exactly_the_drawn_series():
    current = frame({"*": [1, 2]})
    previous = frame({"*": [3, 4]}, start="2026-11-20 00:00")
    table = plotted_frame(current, previous)
    assert list(table.columns) == ["time", "Whole site", "previous time", "previous Whole site"]
    assert table["time"].tolist() == ["2026-11-21T00:00:00+01:00", "2026-11-21T01:00:00+01:00"]
    assert table["Whole site"].tolist() == [1, 2]
    assert table["previous Whole site"].tolist() == [3, 4]
    figure = timeseries_figure(current, granularity="hour", previous=previous)
    assert list(figure.data[0].y) == table["Whole site"].tolist()
    assert list(figure.data[1].y) == table["previous Whole site"].tolist()


@pytest.mark.parametrize("granularity", ["minute", "hour", "day"])
def test_empty_frame_still_builds(granularity):
    empty = pd.DataFrame({"*": pd.Series([], dtype="int64")},
                         index=pd.DatetimeIndex([], tz="UTC", name="time"))
    assert len(timeseries_figure(empty, granularity=granularity).data) == 1


def test_a_month_across_a_dst_change_keeps_ten_ticks_at_most():
    index = pd.date_range("2026-10-20 04:00", "2026-11-19 05:00", freq="h", tz="UTC").tz_convert(
        "America/New_York").rename("time")
    current = pd.DataFrame({"*": 1}, index=index)
    figure = timeseries_figure(current, granularity="hour")
    labels = list(figure.layout.xaxis.ticktext)
    assert 3 <= len(labels) <= 10
    assert labels[0].startswith("Oct 20 EDT")
    assert any("EST" in label for label in labels[1:])


def test_only_the_repeated_hour_and_the_change_name_their_zone():
    index = pd.date_range("2026-10-31 04:00", periods=49, freq="h", tz="UTC").tz_convert(
        "America/New_York").rename("time")
    labels = list(timeseries_figure(pd.DataFrame({"*": 1}, index=index),
                                    granularity="hour").layout.xaxis.ticktext)
    assert labels[0].startswith("00:00 EDT")
    assert "06:00<br>" not in labels and "06:00" in labels  # no zone while nothing changed
    assert "06:00 EST" in labels  # the first tick after the change


def test_every_chart_with_a_toolbar_leaves_it_a_band_above_the_plot():
    """Plotly draws its toolbar over the top of the figure: the top margin keeps it off
    the data on a phone too (the Rollups bars ran under it at 390 px)."""
    from components.notice import notice_figure
    from components.rollups import rollup_figure
    from components.theme import TOOLBAR_BAND

    rollups = pd.DataFrame({"hits": [3], "bytes": [10], "mean_bytes": [3.3],
                            "error_rate": [0.0]},
                           index=pd.Index([pd.Timestamp("2026-11-20", tz="UTC")], name="time"))
    figures = [timeseries_figure(frame({"/a": [1, 2]}), granularity="hour"),
               rollup_figure(rollups, level="day", metric="hits"), notice_figure("No data")]
    assert TOOLBAR_BAND >= 26          # the toolbar's 22 px buttons, 2 px from the top
    assert [f.layout.margin.t for f in figures] == [TOOLBAR_BAND] * 3
