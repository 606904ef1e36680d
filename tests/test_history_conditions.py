"""History's conditions without a browser: a page is a condition like a filter (KPIs and
panels its own), a page and a referrer count the hits meeting both, and under a referrer
every panel counts its hits or says whose it shows."""


import pytest
from dimkit import NEWS, ingest_sample
from historykit import kpi, panel_rows, panel_text

from dashboard.pages.history import breakdowns as breakdown_view

pytestmark = pytest.mark.usefixtures("frozen_clock")   # the same days at any hour


def test_a_page_is_a_condition_like_any_other_kpis_and_panels_are_its_own(app, tmp_path):
    """A click on a page showed only its chart; the KPIs said "(whole
    site)" and every panel was the whole site's. "/" has 30 news.example and 10 direct
    human hits (and 15 of Googlebot's, left out), each from its own address."""
    from dashboard.pages.history.panels import render_panels
    from dashboard.services import get_services

    ingest_sample(get_services(app.server).db, "s", tmp_path)
    out = render_panels("?site=s&range=7d&page=/")
    assert kpi(out, "hits") == ("40", " vs previous period")
    assert kpi(out, "visitors")[0] == "40"
    assert kpi(out, "errors")[0] == "0.0 %"
    assert panel_rows(out, "referrer") == {"news.example": 30, "(direct)": 10}
    assert panel_rows(out, "browser") == {"Chrome": 40}
    assert panel_rows(out, "page") == {"/": 40}
    assert out["share"] == "27% bots among page = / (left out)"
    assert "page = /" in str(out["chip"])
    about = render_panels("?site=s&range=7d&page=/about")
    assert kpi(about, "hits")[0] == "20" and kpi(about, "visitors")[0] == "20"
    assert panel_rows(about, "referrer") == {"search.example": 20}
    assert panel_rows(about, "device") == {"mobile": 20}
    style = render_panels("?site=s&range=7d&page=/style.css")    # an asset, named
    assert panel_rows(style, "page") == {"/style.css": 8}


def test_a_page_and_a_referrer_count_the_hits_meeting_both(app, tmp_path):
    """Conditions add up: the chart, the KPIs and the panels of "/" from news.example,
    from raw events (no counter holds the two together), and the page says so."""
    from dashboard.pages.history.panels import render_panels
    from dashboard.pages.history.view import compute_view
    from dashboard.services import get_services

    ingest_sample(get_services(app.server).db, "s", tmp_path)
    search = "?site=s&range=7d&page=/&filter=referrer:(direct)"
    view = compute_view(search)
    assert view.chart.source == "raw events" and int(view.current.to_numpy().sum()) == 10
    out = render_panels(search)
    assert kpi(out, "hits")[0] == "10" and kpi(out, "visitors")[0] == "10"
    assert panel_rows(out, "referrer") == {"(direct)": 10}
    assert out["share"] == "60% bots among page = / and referrer = (direct) (left out)"
    notes = " ".join(str(n.children) for n in out["notes"])
    assert "The panels, the visitors, the 4xx/5xx rate and the chart: page = / and " \
           "referrer = (direct): counted from raw events" in notes


def test_under_a_referrer_every_panel_counts_its_hits_or_says_whose_it_shows(app, tmp_path):
    """Under a referrer, the entry and exit pages (and the goals, and
    the visits' KPIs) were the whole site's and said nothing. Each panel of hits counts
    the filtered hits; those of visits say they are all of the site's."""
    from dashboard.pages.history.panels import render_panels
    from dashboard.services import get_services

    ingest_sample(get_services(app.server).db, "s", tmp_path)
    out = render_panels("?site=s&range=7d&filter=referrer:news.example")
    for dim in breakdown_view.PANELS:
        rows = panel_rows(out, dim)
        assert sum(rows.values()) in (NEWS, 0), dim          # none: utm_* of no campaign
    assert panel_rows(out, "referrer") == {"news.example": NEWS}
    for dim in ("entry", "exit", "goals"):
        assert ("All of the site's visits: referrer = news.example does not apply to "
                "visits.") in panel_text(out, dim), dim
    for name in ("visits", "pageviews", "pervisit", "bounce", "duration"):
        assert kpi(out, name)[1].endswith("(whole site)"), name
    notes = " ".join(str(n.children) for n in out["notes"])
    assert "Visits, entry and exit pages, goals: all of the site's visits" in notes
    plain = render_panels("?site=s&range=7d")
    assert "does not apply" not in str(plain["panels"])
