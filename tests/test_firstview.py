"""dashboard.firstview: the first layout carries the page of the address asking for it."""

import datetime as dt

import pytest
from dashkit import _components, dashboard_app, layout_draws, seed

from dashboard import firstview
from dashboard.services import get_services

pytestmark = pytest.mark.usefixtures("frozen_clock")

HISTORY = "/history?site=alpha&tz=Asia/Tokyo&range=7d&theme=dark"


@pytest.fixture
def client(tmp_path):
    with dashboard_app(tmp_path / "store") as app:
        now = dt.datetime.now(dt.UTC)
        seed(get_services(app.server).db, "alpha", [(now, "/a", 3), (now, "/b", 1)])
        get_services(app.server).cache.clear()
        yield app.server.test_client()


def layout(client, referrer: str | None):
    headers = {"Referer": referrer} if referrer else {}
    response = client.get("/_dash-layout", headers=headers)
    assert response.status_code == 200
    return response, {c["props"].get("id"): c["props"] for c in _components(response.get_json())
                      if isinstance(c["props"].get("id"), str)}


def test_the_layout_asked_from_history_holds_its_page_drawn_and_its_address(client):
    response, found = layout(client, "http://localhost" + HISTORY)
    assert found["_pages_content"]["children"]["props"]["className"] == "page page-history"
    assert found["history-graph"]["figure"]["data"]          # the chart, not "Loading…"
    assert found["_pages_store"]["data"] == {"title": "hitboard · history"}
    where = {"pathname": "/history", "search": HISTORY[len("/history"):],
             "href": "http://localhost" + HISTORY, "hash": ""}
    for location in ("url", "_pages_location"):    # neither asks for the page again
        assert {k: found[location].get(k) for k in where} == where
    assert (found["shell-site"]["value"], found["shell-tz"]["value"],
            found["shell-theme"]["value"]) == ("alpha", "Asia/Tokyo", "dark")
    assert response.headers["Cache-Control"] == "no-store"


@pytest.mark.parametrize("referrer", [None, "http://localhost/", "http://localhost/history",
                                      "http://elsewhere.example" + HISTORY,
                                      "http://localhost/nowhere?site=alpha"])
def test_without_a_full_address_of_a_page_here_the_router_draws_it(client, referrer):
    """No Referer, one cut to the origin or the path, another site's, an unknown path:
    the plain layout, whose router draws the page once the browser has the URL."""
    response, found = layout(client, referrer)
    assert found["_pages_content"].get("children") is None
    assert found["_pages_location"].get("search") is None
    assert found["url"].get("search") is None
    assert "no-store" not in response.headers.get("Cache-Control", "")


def test_a_pages_index_draws_its_layout_ahead_for_the_layout_request(client):
    """The page is drawn once, as its index is served (while a browser loads scripts);
    the layout request takes that drawing."""
    drawn = layout_draws("dashboard.pages.history.page")
    firstview._ahead.clear()       # no place held by another app's page, unasked for <10 s
    assert client.get(HISTORY).status_code == 200
    for _, drawing in list(firstview._ahead.values()):
        drawing.result(timeout=30)      # a drawing not begun yet is taken back and done here
    _, found = layout(client, "http://localhost" + HISTORY)
    assert found["history-graph"]["figure"]["data"]
    assert drawn == ["/history"]
    layout(client, "http://localhost" + HISTORY)      # taken: drawn again when asked again
    assert drawn == ["/history", "/_dash-layout"]


def test_an_app_that_closes_leaves_no_drawing_behind(tmp_path):
    """Its drawings would hold places of the few kept from the apps still open."""
    with dashboard_app(tmp_path / "store") as app:
        assert app.server.test_client().get(HISTORY).status_code == 200
        assert [k for k in firstview._ahead if k[0] == id(app.server)]
    assert not [k for k in firstview._ahead if k[0] == id(app.server)]
