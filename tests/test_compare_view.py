"""History's comparison: previous period, a year earlier (364 days), or a custom start."""

import datetime as dt

import pytest
from dashkit import page_module, seed

from dashboard.pages.history import compare as compare_view
from dashboard.ranges import Period
from dashboard.services import get_services
from dashboard.state import parse_search
from queries import HitboardError

pytestmark = pytest.mark.usefixtures("frozen_clock")   # the same days at any hour

UTC = dt.UTC
WEEK = Period(dt.datetime(2026, 11, 16, tzinfo=UTC), dt.datetime(2026, 11, 23, tzinfo=UTC),
              "day")


def test_a_year_earlier_is_364_days_back_so_weekdays_line_up():
    other = compare_view.comparison_period(parse_search("?vs=yoy"), WEEK, "UTC")
    assert other.start == dt.datetime(2025, 11, 17, tzinfo=UTC)
    assert other.start.weekday() == WEEK.start.weekday()
    assert other.end - other.start == WEEK.end - WEEK.start


def test_a_custom_start_keeps_the_length_and_is_read_in_the_zone():
    other = compare_view.comparison_period(parse_search("?vs=custom&vsstart=2026-01-05"),
                                           WEEK, "Europe/Paris")
    assert other.start == dt.datetime(2026, 1, 4, 23, tzinfo=UTC)
    assert other.end - other.start == dt.timedelta(days=7)
    for bad in ("?vs=custom", "?vs=custom&vsstart=2027-01-01", "?vs=custom&vsstart=soon"):
        with pytest.raises(HitboardError):
            compare_view.comparison_period(parse_search(bad), WEEK, "UTC")


def test_the_default_is_the_previous_period():
    other = compare_view.comparison_period(parse_search("?vs=nonsense"), WEEK, "UTC")
    assert other == WEEK.previous("UTC")


def test_history_draws_the_year_earlier_and_says_which_dates(app):
    db = get_services(app.server).db
    now = dt.datetime.now(UTC)
    seed(db, "s", [(now - dt.timedelta(days=364 + d), "/a", 7) for d in range(1, 7)]
         + [(now - dt.timedelta(days=d), "/a", 1) for d in range(1, 7)])
    search = "?site=s&range=7d&tz=UTC&compare=1&vs=yoy"
    figure = page_module("history").render(search)["figure"]
    earlier = [t for t in figure.data if t.legendgroup == "compared"]
    assert [(t.legendgrouptitle.text, t.name) for t in earlier] == [("A year earlier",
                                                                     "Humans")]
    assert sum(v for v in earlier[0].y if v == v) == 42
    totals = str(page_module("history").render(search)["totals"])
    assert "A year earlier" in totals and "Previous period" not in totals
    assert compare_view.describe_comparison(search).startswith("compared with a year "
                                                               "earlier: ")
    assert compare_view.choose_comparison("yoy", "", "?site=s") == "?site=s&compare=1&vs=yoy"
    assert compare_view.choose_comparison(
        "custom", "2025-01-01", "?site=s") == "?site=s&compare=1&vs=custom&vsstart=2025-01-01"
    bad = page_module("history").render("?site=s&range=7d&compare=1&vs=custom")["alert"]
    assert "needs its start date" in str(bad)


def _said(component) -> str:
    """The text a component tree shows, its strings joined."""
    if isinstance(component, str):
        return component
    if isinstance(component, list | tuple):
        return "".join(_said(c) for c in component)
    return _said(getattr(component, "children", None) or "")


@pytest.mark.parametrize(("search", "name"), [
    ("?compare=1", "previous period"),
    ("?compare=1&vs=yoy", "a year earlier"),
    ("?compare=1&vs=custom&vsstart=2025-11-01", "period from 01 Nov 2025"),
    ("?compare=1&vs=custom&vsstart=2025-11-01T10:30", "period from 01 Nov 2025 10:30"),
    ("?compare=1&vs=custom&vsstart=soon", "a custom period"),
])
def test_every_label_names_the_comparison_made(app, search, name):
    """The KPIs' notes, the legend, the totals' column and the note under the controls
    say which period the view is compared with, never "previous period" for another."""
    db = get_services(app.server).db
    now = dt.datetime.now(UTC)
    seed(db, "s", [(now - dt.timedelta(days=d), "/a", 1) for d in range(0, 400, 3)])
    search = f"{search}&site=s&range=7d&tz=UTC"
    assert compare_view.comparison_name(parse_search(search), "UTC") == name
    from components.statictable import rebuilt
    from dashboard.pages.history.panels import render_panels

    history = page_module("history")
    if name == "a custom period":        # a start the page cannot read: its alert says why
        assert "invalid time" in str(history.render(search)["alert"])
        return
    panels = render_panels(search)
    notes = [_said(card.children[2]) for card in rebuilt(panels["kpis"])]   # drawn by JS
    assert notes and all(f" vs {name}" in note for note in notes), notes
    out = history.render(search)
    legend = [t.name for t in out["figure"].data if t.name] + [
        t.legendgrouptitle.text for t in out["figure"].data if t.legendgrouptitle.text]
    assert name[:1].upper() + name[1:] in legend
    assert name[:1].upper() + name[1:] in str(out["totals"])
    assert compare_view.describe_comparison(search).startswith(f"compared with {name}: ")
    if name != "previous period":
        assert "previous period" not in " ".join(notes + legend).lower()
        assert "previous period" not in str(out["totals"]).lower()


def test_the_checkbox_says_compare_and_the_control_beside_it_says_with_what(app):
    with app.server.test_request_context("/history?compare=1&vs=yoy"):
        layout = str(page_module("history").layout(compare="1", vs="yoy"))
    assert "previous period" not in layout.replace("'label': 'previous period'", "")
    assert "' Compare'" in layout
