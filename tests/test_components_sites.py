"""components.sites: the registry as a table (names and origins as text, placeholders
for what is not set), the add and settings forms (disabled for a visitor, holding the
site's values), the tracking tag and the danger zone (deleting waits for the name)."""

from dash import dcc, html

from components.sites import add_form, danger_zone, settings_form, site_summary, sites_table
from components.sites import tracking_tag as tag_section

ROWS = [
    {"name": "blog.example.com", "href": "/sites?edit=blog.example.com", "synthetic": False,
     "via": "the admin", "registered": "2026-11-21 14:03", "last_hit": "2026-11-22 09:15",
     "origins": ["https://blog.example.com", "https://www.blog.example.com"],
     "tz": "Europe/Paris", "agents": "bot"},
    {"name": "shop.example", "href": "/sites?edit=shop.example", "synthetic": True,
     "via": "the load generator", "registered": None, "last_hit": None, "origins": [],
     "tz": None, "agents": "human"},
]


def by_id(tree) -> dict:
    return {c.id: c for c in tree._traverse() if isinstance(getattr(c, "id", None), str)}


def texts(tree) -> list[str]:
    """Every string in the tree, in order: what the page shows as text."""
    found = []

    def walk(node):
        if isinstance(node, str):
            found.append(node)
        elif isinstance(node, list | tuple):
            for child in node:
                walk(child)
        elif node is not None:
            walk(getattr(node, "children", None))

    walk(tree)
    return found


def test_the_table_has_a_row_per_site_named_as_text_with_a_link_to_its_settings():
    table = sites_table(ROWS)
    head, body = table.children
    assert [th.children for th in head.children.children] == [
        "Site", "Registered", "Origins", "Time zone", "No user agent", "Last hit"]
    blog, shop = body.children
    links = [c for c in blog._traverse() if isinstance(c, dcc.Link)]
    assert [(link.children, link.href) for link in links] == [
        ("blog.example.com", "/sites?edit=blog.example.com")]
    assert texts(blog) == ["blog.example.com", "2026-11-21 14:03", "by the admin",
                           "https://blog.example.com", "https://www.blog.example.com",
                           "Europe/Paris", "bots", "2026-11-22 09:15"]
    assert texts(shop) == ["shop.example", "synthetic", "–", "by the load generator",
                           "any origin", "not set", "people", "never"]
    # A phone shows each row as a card naming its columns.
    assert "stack-on-phone" in table.className
    assert [td.to_plotly_json()["props"]["data-label"]
            for td in blog.children] == ["Site", "Registered", "Origins", "Time zone",
                                         "No user agent", "Last hit"]


def test_the_add_form_is_disabled_for_a_visitor_and_open_to_the_admin():
    for disabled in (True, False):
        form = by_id(add_form(["Europe/Paris", "UTC"], disabled))
        assert form["sites-add"].disabled is disabled
        for field in ("sites-add-name", "sites-add-tz", "sites-add-origins"):
            assert form[field].disabled is disabled, field
        assert all(o["disabled"] is disabled for o in form["sites-add-agents"].options)
        assert form["sites-add-tz"].options == ["Europe/Paris", "UTC"]
        assert form["sites-add-tz"].value is None and form["sites-add-agents"].value == "human"


def test_the_settings_form_holds_the_sites_values():
    form = by_id(settings_form("Asia/Kolkata", "bot", ("https://a.example", "http://b:8080"),
                               ["UTC"], False))
    assert form["sites-tz"].value == "Asia/Kolkata"
    assert form["sites-tz"].options == ["UTC", "Asia/Kolkata"]   # its zone is offered
    assert form["sites-origins"].value == "https://a.example\nhttp://b:8080"
    assert form["sites-agents"].value == "bot"
    assert form["sites-visit-minutes"].value == 30
    assert form["sites-save"].disabled is False
    assert by_id(settings_form(None, "human", (), [], True))["sites-save"].disabled is True


def test_the_summary_says_who_registered_the_site_when_and_its_last_hit():
    summary = site_summary("blog", False, "a log ingest", "2026-11-21 14:03 (UTC)", None,
                           "/history?site=blog")
    assert "".join(texts(summary)) == (
        "blogRegistered by a log ingest on 2026-11-21 14:03 (UTC) · no hit yet · "
        "its traffic in History")
    tagged = texts(site_summary("s", True, "the admin", None, "2026-11-22 09:15", "/h"))
    assert "synthetic" in tagged and "last hit 2026-11-22 09:15" in tagged


def test_the_tracking_tag_names_the_script_and_the_site_as_text():
    section = tag_section("https://stats.example.com/hit.js", "blog")
    code = by_id(section)["sites-tag"].children
    assert isinstance(code, html.Code)
    assert code.children == ('<script defer src="https://stats.example.com/hit.js" '
                             'data-site="blog"></script>')
    assert any(isinstance(c, dcc.Clipboard) and c.target_id == "sites-tag"
               for c in section._traverse())


def test_the_danger_zone_asks_for_the_name_before_deleting_data():
    zone = by_id(danger_zone("blog", False))
    assert zone["sites-delete"].disabled is True         # until the name is typed
    assert zone["sites-unregister"].disabled is False
    assert zone["sites-confirm"].disabled is False and zone["sites-confirm"].value == ""
    visitor = by_id(danger_zone("blog", True))
    assert visitor["sites-unregister"].disabled is True and visitor["sites-confirm"].disabled
    assert "blog" in texts(danger_zone("blog", False))
