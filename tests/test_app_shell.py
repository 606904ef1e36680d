"""dashboard.shell: navigation and the shell's controls kept in step with the URL."""

import datetime as dt

import pytest
from dash import no_update
from dashkit import dashboard_app, seed

import queries
from dashboard import shell
from dashboard.services import get_services

pytestmark = pytest.mark.usefixtures("frozen_clock")   # the same days at any hour


@pytest.fixture
def app(tmp_path):
    with dashboard_app(tmp_path / "store") as app, app.server.test_request_context():
        now = dt.datetime.now(dt.UTC)
        seed(get_services(app.server).db, "alpha",
             [(now, f"/p{i:02d}", 1) for i in range(30)] + [(now, "/Blog/x", 1)])
        seed(get_services(app.server).db, "beta", [(now, "/", 1)])
        get_services(app.server).cache.clear()   # the first render read an empty store
        yield app


def test_url_sets_the_controls(app):
    out = shell.sync_shell({"url"}, "?site=beta&page=/&tz=Asia/Tokyo&theme=dark", None, None,
                           None, None)
    assert out["search"] is no_update
    assert (out["site"], values(out["site_options"]), out["pages"], out["tz"],
            out["theme"]) == ("beta", ["alpha", "beta"], ["/"], "Asia/Tokyo", "dark")
    assert out["page_options"] == ["/"]  # the value always comes with options holding it
    assert out["note"] is no_update


def test_controls_already_showing_the_url_are_left_alone(app):
    """A page moving in place (History's filter, its back button) changes the URL: the
    shell's controls that show its site, pages, zone and theme already are not set
    again, which would run each callback reading them (the pages' options, this one)."""
    out = shell.sync_shell({"url"}, "?site=beta&page=/&tz=Asia/Tokyo&theme=dark&range=7d",
                           "beta", ["/"], "Asia/Tokyo", "dark")
    assert [out[k] for k in ("site", "pages", "tz", "theme")] == [no_update] * 4
    out = shell.sync_shell({"url"}, "?site=beta&tz=UTC", "beta", ["/"], "Asia/Tokyo", "dark")
    assert (out["site"], out["pages"], out["tz"], out["theme"]) == (no_update, [], "UTC",
                                                                    "light")


def test_without_a_site_the_first_one_is_shown_and_an_unknown_one_is_kept(app):
    out = shell.sync_shell(set(), "", None, None, None, None)
    assert (out["site"], values(out["site_options"]), out["pages"], out["tz"],
            out["theme"]) == ("alpha", ["alpha", "beta"], [], "UTC", "light")
    assert values(shell.sync_shell({"url"}, "?site=gamma", None, None, None,
                                   None)["site_options"]) == ["alpha", "beta", "gamma"]


def values(options):
    return [option["value"] for option in options]


def test_synthetic_sites_are_labelled_or_hidden(tmp_path):
    now = dt.datetime.now(dt.UTC)
    for hide, expected in ((False, ["demo.example", "real"]), (True, ["real"])):
        # Listed by name; the real site is the one shown first either way.
        with dashboard_app(tmp_path / f"store-{hide}", hide_synthetic=hide) as app, \
                app.server.test_request_context():
            db = get_services(app.server).db
            queries.register_synthetic(db, ["demo.example"])
            seed(db, "demo.example", [(now, "/", 1)])
            seed(db, "real", [(now, "/", 1)])
            get_services(app.server).cache.clear()
            out = shell.sync_shell(set(), "", None, None, None, None)
            site, options = out["site"], out["site_options"]
            assert values(options) == expected
            assert site == "real"
            labels = {option["value"]: option["label"] for option in options}
            assert labels["real"] == "real"
            assert labels.get("demo.example", "demo.example · synthetic") == (
                "demo.example · synthetic")


def test_controls_write_the_url_and_keep_the_page_keys(app):
    out = shell.sync_shell({"shell-theme"}, "?site=alpha&page=/p01&tz=UTC&range=30d",
                           "alpha", ["/p01"], "UTC", "dark")
    search = out.pop("search")
    assert search == "?site=alpha&page=/p01&tz=UTC&theme=dark&range=30d"
    assert list(out.values()) == [no_update] * 7
    search = shell.sync_shell({"shell-tz"}, search, "alpha", ["/p01"], "Asia/Tokyo",
                              "dark")["search"]
    assert search == "?site=alpha&page=/p01&tz=Asia/Tokyo&theme=dark&range=30d"


def test_controls_reporting_what_the_url_says_change_nothing(app):
    search = "?site=alpha&page=/p01&tz=UTC"
    for triggered, values in (({"shell-pages"}, ("alpha", ["/p01"], "UTC", "light")),
                              ({"shell-tz"}, ("alpha", None, None, "light")),
                              ({"shell-pages", "shell-tz"}, ("alpha", None, "UTC", None))):
        out = shell.sync_shell(triggered, search, *values)
        assert [value for name, value in out.items() if name != "note"] == [no_update] * 7


def test_when_the_url_changes_with_a_control_the_url_wins(app):
    result = shell.sync_shell({"url", "shell-pages"}, "?site=alpha&page=/p02", "alpha", [],
                              "UTC", "light")
    assert result["search"] is no_update
    assert result["pages"] == ["/p02"]


def test_changing_site_clears_the_pages(app):
    out = shell.sync_shell(
        {"shell-site"}, "?site=alpha&page=/p01&tz=UTC", "beta", ["/p01"], "UTC", "light")
    assert out["search"] == "?site=beta&tz=UTC"
    assert out["pages"] == []


def test_at_most_ten_pages_the_most_visited_and_the_note_says_so(app):
    # An hour ago: the ranking ends at the start of the current minute, so hits of "now"
    # fall outside it during the first minute of an hour.
    hour_ago = dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)
    seed(get_services(app.server).db, "alpha", [(hour_ago, f"/p{i:02d}", i) for i in range(1, 11)])
    chosen = [f"/p{i:02d}" for i in range(11)]
    out = shell.sync_shell({"shell-pages"}, "?site=alpha", "alpha", chosen, "UTC", "light")
    search, pages, note = out["search"], out["pages"], out["note"]
    assert pages == [f"/p{i:02d}" for i in range(10, 0, -1)]  # /p00 has the fewest hits
    assert search.count("page=") == 10
    assert "11 pages chosen: showing the 10 with the most hits" in note
    assert shell.sync_shell({"shell-pages"}, search, "alpha", pages[:2], "UTC",
                            "light")["note"] is None  # the note goes with the next choice


def test_page_options_search_and_stop_at_ten(app):
    assert shell.page_options("alpha", "blog", []) == ["/Blog/x"]
    assert shell.page_options("alpha", "", ["/p05"])[0] == "/p05"
    assert len(shell.page_options("alpha", "", [])) == 31
    full = [f"/p{i:02d}" for i in range(10)]
    assert shell.page_options("alpha", "p2", full) == full
    assert shell.page_options(None, "", ["/x"]) == ["/x"]


def test_the_page_dropdown_of_a_view_does_not_list_every_page(app, monkeypatch):
    # A site a beacon flood gave 10,000 pages: every view's shell offered its first 50
    # after listing and sorting all of them (bench/flood.py: 5-7x the shell's time).
    def every_page(*args, **kwargs):
        raise AssertionError("every page of the site listed")

    monkeypatch.setattr(queries, "list_pages", every_page)
    expected = sorted([f"/p{i:02d}" for i in range(30)] + ["/Blog/x"])
    assert shell.page_options("alpha", "", []) == expected
    assert shell.page_options("alpha", None, ["/p05"]) == ["/p05"] + [
        p for p in expected if p != "/p05"]
    out = shell.sync_shell({"url"}, "?site=alpha&page=/p01", None, None, None, None)
    assert out["page_options"] == ["/p01"] + [p for p in expected if p != "/p01"]


def test_navigation_keeps_the_shell_state_and_marks_the_current_page(app):
    links = shell.nav_links("/history", "?site=alpha&tz=UTC&range=30d")
    by_name = {link.children: link for link in links}
    assert by_name["Live"].href == "/?site=alpha&tz=UTC"
    assert by_name["History"].href == "/history?site=alpha&tz=UTC"
    assert "active" in by_name["History"].className
    assert "active" not in by_name["Live"].className


def test_the_sites_page_is_in_the_navigation_among_the_operations_pages(app):
    links = shell.nav_links("/sites", "?site=alpha&tz=UTC&edit=alpha")
    assert [link.children for link in links][-5:] == ["Data", "Sites", "Team",
                                                     "Load generator", "Present"]
    sites = next(link for link in links if link.children == "Sites")
    assert sites.href == "/sites?site=alpha&tz=UTC" and "active" in sites.className
    assert sites.id == "nav-sites"
    views = shell.remember_view("/sites", "?tz=UTC&edit=alpha", {})
    back = {link.children: link.href for link in shell.nav_links("/data", "?tz=UTC", views)}
    assert back["Sites"] == "/sites?tz=UTC&edit=alpha"


def test_navigation_back_to_a_page_finds_it_as_it_was_left(app):
    views = shell.remember_view("/history", "?site=alpha&range=30d&compare=1", {})
    views = shell.remember_view("/", "?site=alpha&window=15", views)
    links = {link.children: link.href
             for link in shell.nav_links("/", "?site=beta&tz=UTC&window=15", views)}
    assert links["History"] == "/history?site=beta&tz=UTC&compare=1&range=30d"
    assert links["Live"] == "/?site=beta&tz=UTC"        # here: afresh
    assert links["Data"] == "/data?site=beta&tz=UTC"
