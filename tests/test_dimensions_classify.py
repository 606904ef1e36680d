"""Classification of one hit: referrer, UTM, agent, bot, country, asset, encoding, caps."""

from __future__ import annotations

from pathlib import Path

import pytest
from crawlerdetect import CrawlerDetect
from hypothesis import given
from hypothesis import strategies as st

from queries.dimensions import agents, assets, classify, encoding, geo, referrer
from queries.dimensions.classify import RecordCoder, is_bot_agent
from queries.ingest.logformat import LineParser

CHROME = ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
          "Chrome/126.0 Safari/537.36")
IPHONE = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
          "(KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1")
IPAD = ("Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like "
        "Gecko) Version/17.5 Mobile/15E148 Safari/604.1")
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
SHARED_LOG = Path(__file__).resolve().parents[2] / "shared" / "data" / "apache_combined_2015.log"


def test_referrer_hosts():
    own = referrer.own_hosts("www.semicomplete.com")
    assert referrer.referrer_host(None) == "(direct)"
    assert referrer.referrer_host("-") == "(direct)"
    assert referrer.referrer_host(referrer.NOT_LOGGED) == "(not in the log)"   # no field
    assert referrer.referrer_host("https://News.Example:8443/a?b") == "news.example"
    assert referrer.referrer_host("http://semicomplete.com/x", own) == "(internal)"
    assert referrer.referrer_host("http://www.semicomplete.com/", own) == "(internal)"
    assert referrer.referrer_host("not a url") == "(invalid)"
    assert referrer.referrer_host("http://[::1") == "(invalid)"
    assert referrer.referrer_host("javascript:alert(1)") == "(invalid)"
    assert referrer.referrer_host("https://[2001:db8::1]/p") == "2001:db8::1"


def test_utm_from_query():
    assert referrer.utm("utm_source=news&utm_medium=email&utm_campaign=spring.sale") == (
        "news", "email", "spring.sale")
    assert referrer.utm("a=1") == ("(none)", "(none)", "(none)")
    assert referrer.utm("utm_source=%24where") == ("$where", "(none)", "(none)")
    assert referrer.utm(None) == ("(none)", "(none)", "(none)")
    assert len(referrer.utm("utm_campaign=" + "x" * 5000)[2]) == referrer.MAX_UTM


def test_agents_browser_os_device():
    chrome = agents.parse(CHROME)
    assert (chrome.browser, chrome.os, chrome.device, chrome.bot) == (
        "Chrome", "Windows", "desktop", False)
    assert agents.parse(IPHONE).device == "mobile"
    assert agents.parse(IPAD).device == "tablet"
    assert agents.parse(GOOGLEBOT).bot and agents.parse(GOOGLEBOT).device == "bot"


def test_non_browser_clients_are_bots():
    for agent in ("curl/8.5.0", "python-requests/2.31", "Go-http-client/1.1",
                  "Wget/1.21", "UptimeRobot/2.0"):
        assert agents.parse(agent).bot, agent
    assert not agents.parse(CHROME).bot


def test_hits_without_an_agent_are_people_unless_the_site_says_bots():
    """GoAccess counts them; ``--unknowns-as-crawlers`` is its other choice."""
    for agent in ("", None, "-", "  "):
        assert agents.parse(agent) == agents.Agent("Other", "Other", "unknown", False)
        people = dict(classify("s", "/", agent=agent).values)
        assert (people["bot"], people["device"]) == ("human", "unknown")
        assert not classify("s", "/", agent=agent).bot
        bots = classify("s", "/", agent=agent, unknown_bots=True)
        assert bots.bot and dict(bots.values)["device"] == "bot"
        assert is_bot_agent(agent, unknown_bots=True) and not is_bot_agent(agent)
    assert not classify("s", "/", agent=CHROME, unknown_bots=True).bot


def test_the_crawler_list_uses_both_engines_and_the_exclusions():
    crawlers = agents.CrawlerList(crawlers=["spider", "Yandex(?!Search)"],
                                  exclusions=[r"Mozilla/[\d.]*", "spidermonkey"])
    assert crawlers.is_crawler("MySpider/1.0")              # RE2, case apart
    assert crawlers.is_crawler("YandexBot/3.0")             # a lookaround: Python's re
    assert not crawlers.is_crawler("YandexSearch/1.0")
    assert not crawlers.is_crawler("Mozilla/5.0 SpiderMonkey")   # excluded tokens
    assert not crawlers.is_crawler("Mozilla/5.0 ")          # nothing left


@pytest.mark.skipif(not SHARED_LOG.exists(), reason=f"{SHARED_LOG} is not there")
def test_the_crawler_list_answers_as_crawlerdetect_does():
    parser = LineParser()
    records = map(parser.parse, SHARED_LOG.open(encoding="utf-8", errors="replace"))
    tried = {record.user_agent for record in records if getattr(record, "user_agent", None)}
    tried |= {GOOGLEBOT, CHROME, IPHONE, "YandexBot/3.0", "YandexSearch/1.0", "Mozilla/5.0"}
    crawlers, reference = agents.CrawlerList(), CrawlerDetect()
    answers = {agent: crawlers.is_crawler(agent) for agent in tried}
    assert answers == {agent: reference.is_crawler(agent) for agent in tried}
    assert 50 < sum(answers.values()) < len(tried) - 300      # both answers are there


def test_prepare_builds_the_parser_and_the_crawler_list_before_any_agent():
    agents._parser.cache_clear()
    agents._crawlers.cache_clear()
    agents.prepare()
    assert agents._parser.cache_info().currsize == agents._crawlers.cache_info().currsize == 1


def test_parses_are_cached():
    agents.clear_cache()
    agents.parse(CHROME)
    agents.parse(CHROME)
    info = agents.cache_info()
    assert (info.hits, info.misses) == (1, 1)


def test_huge_agent_is_harmless():
    huge = CHROME + "x" * 10_000
    assert agents.parse(huge).browser == "Chrome"


def test_country_offline():
    assert geo.country("8.8.8.8") == "US"
    assert geo.country("2001:4860:4860::8888") == "US"
    for address in ("10.0.0.1", "192.168.1.1", "127.0.0.1", "::1", "fe80::1", "example.com",
                    "", None, "999.1.1.1", "192.0.2.7"):
        assert geo.country(address) == "unknown", address


def test_assets_by_extension():
    assert assets.kind("/favicon.ico") == "asset"
    assert assets.kind("/static/app.3f2a.CSS") == "asset"
    assert assets.kind("/blog/post") == "page"
    assert assets.kind("/v1.2/") == "page"
    assert assets.kind("/") == "page"


@pytest.mark.parametrize("path", [
    "/icons/unknown.xbm", "/icons/blank.XBM", "/movies/launch.mpg", "/fonts/inter.woff2",
    "/fonts/old.eot", "/files/logstash/logstash-1.3.2-monolithic.jar", "/misc/sample.log",
    "/files/rpm/hbase.spec", "/presentations/talk.pdf", "/robots.txt", "/sitemap.xml",
    "/feed.json", "/download/tool.tar.gz", "/pkg/app.7z", "/clip.3gp", "/img/a.webp"])
def test_files_of_a_known_or_unknown_type_are_assets(path):
    """``.xbm`` icons, ``.mpg`` video and the like counted as pages
    (a hand-written list missed them): a type from a maintained list, and an extension
    that names no kind of page, are files."""
    assert assets.kind(path) == "asset", path


@pytest.mark.parametrize("path", [
    "/", "/about", "/blog/", "/index.html", "/a/b.HTM", "/projects/xdotool/xdotool.xhtml",
    "/xmlrpc.php", "/wp-login.php", "/Default.aspx", "/app/login.jsp", "/cgi-bin/x.cgi",
    "/docs/2.7", "/.env", "/trailing.", "/x.newmoused+newpsm", "/a.html target="])
def test_pages_are_html_server_pages_or_paths_without_a_file_type(path):
    assert assets.kind(path) == "page", path


def test_escape_round_trips_and_is_a_safe_field_name():
    for value in ("$where", "a.b.c", "100%", "%2E", "x\x00y", "$", ".", "é.ü$"):
        name = encoding.escape(value)
        assert "." not in name and not name.startswith("$") and "\x00" not in name
        assert encoding.unescape(name) == value


def test_cap_keeps_most_frequent_and_sums_the_rest():
    limit = encoding.CAPS["device"]
    counts = {f"v{i}": i + 1 for i in range(10)}
    kept = encoding.cap("device", set(), counts)
    assert len(kept) == limit
    assert sum(kept.values()) == sum(counts.values())
    assert set(kept) == {f"v{i}" for i in range(10 - limit + 1, 10)} | {"(other)"}
    again = encoding.cap("device", set(kept), {"v0": 3, "v9": 1})
    assert again == {"(other)": 3, "v9": 1}
    assert encoding.cap("device", None, {"new": 2}) == {"(other)": 2}


@given(known=st.sets(st.sampled_from([f"v{i}" for i in range(8)] + ["(other)"]), max_size=6),
       counts=st.dictionaries(st.sampled_from([f"v{i}" for i in range(12)] + ["(other)"]),
                              st.integers(1, 9), max_size=12),
       readable=st.booleans())
def test_cap_keeps_every_hit_within_the_cap_and_the_known_values_as_they_are(
        known, counts, readable):
    """Whether every value fits (the quick path) or not: no hit lost, the document never
    past its cap, the values it holds counted as themselves, the new ones most frequent
    first."""
    limit = encoding.CAPS["device"]                  # 5: four values and (other)
    known = known if readable else None
    kept = encoding.cap("device", known, counts)
    assert sum(kept.values()) == sum(counts.values())
    held = (known or set()) | set(kept)
    assert len(held - {"(other)"}) <= max(limit - 1, len((known or set()) - {"(other)"}))
    for value in (counts.keys() & (known or set())) - {"(other)"}:
        assert kept[value] == counts[value]
    new_kept = [v for v in kept if v not in (known or set()) and v != "(other)"]
    spilled = [n for v, n in counts.items() if v not in kept]
    assert not spilled or all(counts[v] >= max(spilled) for v in new_kept)
    assert readable or not new_kept


def test_classify_a_log_hit():
    dims = classify("semicomplete.com", "/missing.png", query="utm_source=a.b&utm_medium=$x",
                    status=404, referrer_url="http://semicomplete.com/", agent=GOOGLEBOT,
                    address="8.8.8.8")
    values = dict(dims.values)
    assert values["referrer"] == "(internal)"
    assert values["utm_source"] == "a.b" and values["utm_medium"] == "$x"
    assert values["status"] == "404" and values["notfound"] == "/missing.png"
    assert values["bot"] == "bot" and values["kind"] == "asset" and values["country"] == "US"
    assert dims.bot
    beacon = dict(classify("blog", "/").values)
    assert beacon["status"] == "(none)" and beacon["referrer"] == "(direct)"


def test_a_record_coder_gives_what_classify_gives_each_line():
    parser = LineParser()
    records = [parser.parse(line) for line in SAMPLE_LINES]
    coder = RecordCoder()
    keys = []
    for record in records:
        fields = {**record._asdict(), "site": "semicomplete.com"}
        keys.append(tuple(coder.numbering(part)(*(fields[name] for name in inputs))
                          for part, inputs in RecordCoder.PARTS.items()))
    for record, key in zip(records, keys, strict=True):
        assert coder.values(key) == classify(
            "semicomplete.com", record.path, query=record.query, status=record.status,
            referrer_url=record.referrer, agent=record.user_agent, address=record.host,
            vhost=record.vhost).values
    assert len(set(keys)) == 4          # the two hits of one visitor and page share a key


SAMPLE_LINES = [
    '8.8.8.8 - - [17/May/2015:10:05:03 +0000] "GET /a?utm_source=x HTTP/1.1" 200 5 '
    '"http://news.example/" "' + CHROME + '"',
    '8.8.8.8 - - [17/May/2015:10:05:04 +0000] "GET /a?utm_source=x HTTP/1.1" 200 9 '
    '"http://news.example/" "' + CHROME + '"',
    '1.1.1.1 - - [17/May/2015:10:05:03 +0000] "GET /missing HTTP/1.1" 404 0 "-" "'
    + GOOGLEBOT + '"',
    'semicomplete.com:80 2001:4860::1 - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" '
    '304 - "http://semicomplete.com/x" "-"',
    '2001:4860::1 - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 1 "-" "' + IPAD + '"',
]
