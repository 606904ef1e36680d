"""dashboard.state: the view's state in the URL query string."""

from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.state import (
    MAX_PAGES,
    ShellState,
    changed_search,
    encode,
    from_kwargs,
    parse_search,
    shell_search,
    updated,
)


def test_parse_and_encode_keep_repeated_pages_and_readable_slashes():
    query = parse_search("?site=s1&page=/a&page=/b%20c&tz=Europe/Paris&range=7d")
    assert query["page"] == ["/a", "/b c"]
    assert encode(query) == "?site=s1&page=/a&page=/b+c&tz=Europe/Paris&range=7d"


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.sampled_from(["site", "page", "tz", "theme", "range", "x"]),
                       st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=3),
                       max_size=5))
def test_encode_then_parse_is_the_identity(query):
    assert parse_search(encode(query)) == query


def test_updated_replaces_and_removes_keys_without_touching_the_original():
    query = {"site": ["s1"], "page": ["/a"], "range": ["7d"]}
    new = updated(query, page=[], range="30d", theme=None)
    assert new == {"site": ["s1"], "range": ["30d"]}
    assert query["page"] == ["/a"]


def test_layout_keyword_arguments_become_a_query():
    assert from_kwargs({"page": ["/a", "/b"], "site": "s"}) == {"page": ["/a", "/b"],
                                                                 "site": ["s"]}


def test_shell_state_defaults_and_limits():
    state = ShellState.from_query(parse_search(
        "?" + "&".join(f"page=/p{i}" for i in range(15)) + "&page=/p0&theme=neon"))
    assert state.site is None
    assert state.pages == tuple(f"/p{i}" for i in range(MAX_PAGES))
    assert state.tz == "UTC"
    assert state.theme == "light"


def test_navigation_keeps_only_the_shell_keys():
    query = parse_search("?site=s&page=/a&tz=UTC&theme=dark&range=30d&window=15")
    assert shell_search(query) == "?site=s&page=/a&tz=UTC&theme=dark"


def test_changed_search_ignores_order_and_encoding():
    assert changed_search({"tz": ["Europe/Paris"], "site": ["s"]},
                          "?site=s&tz=Europe%2FParis") is None
    assert changed_search({"site": ["s"], "window": ["15"]}, "?site=s") == "?site=s&window=15"
