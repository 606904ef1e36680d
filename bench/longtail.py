"""A seeded long-tail log. The shared log has 1,368 paths and 1,753 clients over 4 days; a
real site has tens of thousands of pages, a Zipf tail of them seen once a month, and
hundreds of thousands of clients. ``longtail`` writes such a log, the same for a seed:
people's visits (a page, then the next, some with their assets, each referred by the
one before), crawlers walking the tail, scanners probing for what is not there.
"""

from __future__ import annotations

import datetime as dt
import math
import random
from bisect import bisect
from itertools import accumulate
from operator import itemgetter
from pathlib import Path

SITE_HOST = "www.shop-example.com"
_WORD_TEXT = (
    "analytics apple autumn backup banana battery beach bicycle blue book bread bridge "
    "budget cable camera candle canvas carbon castle cedar chair cheese cherry cloud "
    "coffee copper cotton crystal dashboard delta desert diamond digital dragon dream "
    "eagle earth electric engine falcon festival fiber forest fossil garden garlic ginger "
    "glacier glass golden granite guide harbor harvest hidden honey horizon island ivory "
    "jacket jungle kettle kitchen lantern laser lemon library light linen lunar maple "
    "marble meadow metal mint mirror modern monitor mountain museum native neon nickel "
    "night ocean olive onion orange orbit paper pepper pixel planet plastic pocket "
    "polar premium prism pulse quartz radio rain rapid raven river robot rocket rubber "
    "saddle salmon sand satellite scarlet shadow signal silver simple smart solar "
    "spice spring steel stone storm summer sunset swift table thunder tiger timber "
    "titan tomato travel tulip turbo ultra urban valley velvet vintage violet vision "
    "walnut water wave wild willow window winter wire wolf wooden yellow zen zinc "
    "review howto setup install guide tips best cheap vs compare fix error update "
    "linux windows mac android iphone python docker nginx postgres mongodb kubernetes"
)
WORDS = _WORD_TEXT.split()
CATEGORIES = ("kitchen", "garden", "outdoor", "electronics", "books", "toys", "fashion",
              "sports", "office", "tools", "music", "beauty", "health", "auto", "pets")
TOP_PAGES = ("/", "/blog/", "/products/", "/about", "/pricing", "/contact", "/feed/",
             "/search", "/login", "/cart", "/docs/", "/careers", "/sitemap.xml",
             "/robots.txt")
ASSETS = ("/static/css/main.4f3c2a.css", "/static/js/app.9b1e77.js",
          "/static/js/vendor.51d0aa.js", "/static/fonts/inter-var.woff2",
          "/static/img/logo.svg", "/favicon.ico", "/static/css/print.0c1d.css")
PROBES = ("/wp-login.php", "/xmlrpc.php", "/.env", "/wp-admin/setup-config.php",
          "/phpmyadmin/index.php", "/.git/config", "/admin/config.php", "/vendor/phpunit/",
          "/cgi-bin/luci", "/actuator/health", "/owa/auth/logon.aspx", "/boaform/admin",
          "/.aws/credentials", "/server-status", "/wp-content/plugins/", "/HNAP1/")
SEARCH = (*("https://www.google.com/",) * 10,
          "https://www.google.co.uk/", "https://www.google.de/", "https://www.google.fr/",
          "https://www.google.com.br/", "https://www.bing.com/", "https://duckduckgo.com/",
          "https://yandex.ru/", "https://search.yahoo.com/", "https://www.ecosia.org/",
          "https://www.baidu.com/link?url=", "https://search.brave.com/")
SOCIAL = ("https://t.co/", "https://www.facebook.com/", "https://l.facebook.com/",
          "https://m.facebook.com/", "https://www.reddit.com/", "https://out.reddit.com/",
          "https://news.ycombinator.com/", "https://www.linkedin.com/", "https://lnkd.in/",
          "https://www.instagram.com/", "https://www.pinterest.com/",
          "https://www.youtube.com/", "android-app://com.slack/", "https://mastodon.social/")
_TLDS = ("com", "com", "com", "org", "net", "io", "de", "co.uk", "fr", "blog", "dev", "info")
_ANDROID_MODELS = ("SM-G991B", "SM-A536B", "SM-S911B", "Pixel 7", "Pixel 8 Pro",
                   "M2101K6G", "CPH2451", "moto g(60)", "SM-A145R", "RMX3085", "K")
# Crawlers: agent, weight, their addresses ({} filled at random).
BOTS = (
    ("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", 20,
     "66.249.{}.{}"),
    ("Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, "
     "like Gecko) Chrome/{chrome}.0.0.0 Mobile Safari/537.36 (compatible; Googlebot/2.1; "
     "+http://www.google.com/bot.html)", 15, "66.249.{}.{}"),
    ("Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", 14,
     "40.77.{}.{}"),
    ("Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)", 10,
     "54.36.{}.{}"),
    ("Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)", 8,
     "185.191.{}.{}"),
    ("Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)", 5, "5.255.{}.{}"),
    ("Mozilla/5.0 (compatible; DotBot/1.2; +https://opensiteexplorer.org/dotbot)", 3,
     "216.244.{}.{}"),
    ("Mozilla/5.0 (compatible; MJ12bot/v1.4.8; http://mj12bot.com/)", 3, "144.76.{}.{}"),
    ("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; "
     "+https://openai.com/gptbot)", 4, "20.171.{}.{}"),
    ("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; "
     "+claudebot@anthropic.com)", 3, "3.12.{}.{}"),
    ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like "
     "Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; "
     "+http://www.apple.com/go/applebot)", 3, "17.241.{}.{}"),
    ("Mozilla/5.0 (compatible; PetalBot;+https://webmaster.petalsearch.com/site/petalbot)",
     2, "114.119.{}.{}"),
    ("DuckDuckBot/1.1; (+http://duckduckgo.com/duckduckbot.html)", 2, "20.191.{}.{}"),
    ("facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)", 2,
     "69.171.{}.{}"),
    ("Twitterbot/1.0", 1, "199.16.{}.{}"),
    ("curl/8.{minor}.0", 1, None),
    ("python-requests/2.{minor}.0", 2, None),
    ("Go-http-client/1.1", 1, None),
    ("Wget/1.21.{minor}", 1, None),
    ("-", 1, None),
)
SCANNER_AGENTS = ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, "
                  "like Gecko) Chrome/81.0.4044.129 Safari/537.36", "Mozilla/5.0 zgrab/0.x",
                  "-", "python-requests/2.28.1", "Mozilla/5.0 (compatible; CensysInspect/1.1; "
                  "+https://about.censys.io/)")
_FIRST_OCTETS = tuple(o for o in range(1, 224)
                      if o not in (10, 100, 127, 169, 172, 192, 198, 203))
_STATUS = {  # who: (statuses, cumulative weights)
    "person": ((200, 304, 301, 302, 404, 403, 500, 503),
               tuple(accumulate((885, 60, 15, 8, 25, 2, 4, 1)))),
    "crawler": ((200, 301, 304, 404, 410, 500), tuple(accumulate((82, 5, 3, 8, 1, 1)))),
}
_QUERIES = ("?utm_source=newsletter&utm_medium=email&utm_campaign={w}",
            "?utm_source=twitter&utm_medium=social&utm_campaign={w}", "?page={n}",
            "?ref={w}", "?fbclid=IwAR{n}{w}", "?gclid=Cj0KCQ{n}", "?sort=price&page={n}",
            "?q={w}+{v}")


class _Draws(random.Random):
    """Python's seeded generator with the draws a log needs."""

    def zipf_table(self, count: int, s: float) -> list[float]:
        return list(accumulate(k ** -s for k in range(1, count + 1)))

    def ranked(self, table: list[float]) -> int:
        """A rank in [0, len(table)), drawn by the cumulative weights ``table``."""
        return min(bisect(table, self.random() * table[-1]), len(table) - 1)

    def geometric(self, p: float) -> int:
        """Trials until the first success (≥ 1), each succeeding with ``p``."""
        return 1 + int(math.log(1.0 - self.random()) / math.log(1.0 - p))

    def word(self) -> str:
        return WORDS[self.randrange(len(WORDS))]

    def slug(self, words: int) -> str:
        return "-".join(self.word() for _ in range(words))

    def address(self) -> str:
        if self.random() < .08:
            return (f"2a0{self.randrange(1, 10)}:{self.randrange(0x100, 0xffff):x}:"
                    f"{self.randrange(0xffff):x}:{self.randrange(0xffff):x}::"
                    f"{self.randrange(1, 0xffff):x}")
        return (f"{self.choice(_FIRST_OCTETS)}.{self.randrange(256)}.{self.randrange(256)}."
                f"{self.randrange(1, 255)}")


def _paths(draw: _Draws, count: int) -> list[str]:
    """``count`` distinct paths, the top pages first: blog posts, products,
    documentation, tags, users, images, forum threads, in the order of their ranks."""
    paths, seen = list(TOP_PAGES), set(TOP_PAGES)
    kinds = tuple(accumulate((30, 30, 14, 6, 8, 8, 4)))
    while len(paths) < count:
        kind = bisect(kinds, draw.random() * kinds[-1])
        if kind == 0:
            path = (f"/blog/{draw.randrange(2012, 2024)}/{draw.randrange(1, 13):02d}/"
                    f"{draw.slug(draw.randrange(2, 7))}/")
        elif kind == 1:
            path = (f"/products/{draw.choice(CATEGORIES)}/{draw.slug(draw.randrange(1, 4))}"
                    f"-{draw.randrange(1000, 99999)}")
        elif kind == 2:
            path = (f"/docs/v{draw.randrange(1, 5)}/{draw.word()}/"
                    f"{draw.slug(draw.randrange(1, 4))}.html")
        elif kind == 3:
            path = f"/tag/{draw.slug(draw.randrange(1, 3))}/"
            if draw.random() < .4:
                path += f"page/{draw.randrange(2, 40)}/"
        elif kind == 4:
            path = f"/user/{draw.word()}{draw.randrange(1, 99999)}"
        elif kind == 5:
            path = (f"/images/{draw.slug(draw.randrange(1, 4))}."
                    f"{'jpg' if draw.random() < .7 else 'png'}")
        else:
            path = f"/forum/t/{draw.slug(draw.randrange(2, 6))}/{draw.randrange(1, 400_000)}"
        if path not in seen:
            seen.add(path)
            paths.append(path)
    tail = paths[len(TOP_PAGES):]
    draw.shuffle(tail)
    return list(TOP_PAGES) + tail


def _browsers(draw: _Draws, count: int) -> list[tuple[str, bool]]:
    """``count`` browser agents (recent versions most often) and whether each is a
    phone's or a tablet's, in the order of their popularity."""
    kinds = tuple(accumulate((34, 10, 7, 6, 17, 13, 5, 4, 4)))
    found: list[tuple[str, bool]] = []
    seen: set[str] = set()
    while len(found) < count:
        kind = bisect(kinds, draw.random() * kinds[-1])
        chrome = 117 + draw.geometric(.35)
        build, patch = draw.randrange(5900, 6800), draw.randrange(0, 200)
        firefox = 114 + draw.geometric(.3)
        ios = f"{draw.choice((15, 16, 17, 17, 17, 18))}_{draw.randrange(0, 7)}"
        mac = draw.choice(("10_15_7", "10_15_7", "10_15_7", "14_2_1", "13_6_3"))
        windows = draw.choice(("Windows NT 10.0; Win64; x64", "Windows NT 10.0; Win64; x64",
                               "Windows NT 10.0; WOW64", "Windows NT 6.1; Win64; x64"))
        android = f"Android {draw.choice((10, 11, 12, 13, 13, 14, 14))}; " \
                  f"{draw.choice(_ANDROID_MODELS)}"
        webkit = "AppleWebKit/537.36 (KHTML, like Gecko)"
        safari = "AppleWebKit/605.1.15 (KHTML, like Gecko)"
        agent = (
            f"Mozilla/5.0 ({windows}) {webkit} Chrome/{chrome}.0.{build}.{patch} Safari/537.36",
            f"Mozilla/5.0 (Macintosh; Intel Mac OS X {mac}) {webkit} Chrome/{chrome}.0.0.0 "
            "Safari/537.36",
            f"Mozilla/5.0 ({draw.choice((windows, 'X11; Linux x86_64', 'X11; Ubuntu; Linux x86_64', 'Macintosh; Intel Mac OS X 10.15'))}; "  # noqa: E501
            f"rv:{firefox}.0) Gecko/20100101 Firefox/{firefox}.0",
            f"Mozilla/5.0 (Macintosh; Intel Mac OS X {mac}) {safari} "
            f"Version/{ios.replace('_', '.')} Safari/605.1.15",
            f"Mozilla/5.0 (iPhone; CPU iPhone OS {ios} like Mac OS X) {safari} "
            f"Version/{ios.replace('_', '.')} Mobile/15E148 Safari/604.1",
            f"Mozilla/5.0 (Linux; {android}) {webkit} Chrome/{chrome}.0.{build}.{patch} "
            "Mobile Safari/537.36",
            f"Mozilla/5.0 ({windows}) {webkit} Chrome/{chrome}.0.0.0 Safari/537.36 "
            f"Edg/{chrome}.0.{build}.{patch}",
            f"Mozilla/5.0 (Linux; {android}) {webkit} SamsungBrowser/{draw.randrange(20, 26)}.0 "
            f"Chrome/{chrome - 4}.0.0.0 Mobile Safari/537.36",
            f"Mozilla/5.0 (iPad; CPU OS {ios} like Mac OS X) {safari} "
            f"Version/{ios.replace('_', '.')} Mobile/15E148 Safari/604.1",
        )[kind]
        if agent not in seen:
            seen.add(agent)
            found.append((agent, kind in (4, 5, 7, 8)))
    return found


def longtail(lines: int, target: Path, seed: int = 31, paths: int = 100_000,
             people: int = 600_000, days: int = 120,
             start: dt.date = dt.date(2024, 1, 1)) -> int:
    """A combined-format log of ``lines`` lines in time order over ``days`` days from
    ``start`` (UTC), the same for a ``seed``. People's visits (~65% of the lines), each of
    ~2 Zipf-ranked pages (s = 1) among ``paths``, a third of them with some of their
    assets, the first page referred by a search engine, a social site, another site or
    nobody, the next by the page before; the visitors drawn from ``people`` by Zipf
    (s = 0.7, so some return: ~135,000 distinct at 1,000,000 lines), each with one of
    4,000 browsers. Crawlers (~35%: Googlebot, bingbot, AhrefsBot… and scripts) walk
    pages half at random, half by rank; scanners probe for ``/wp-login.php`` and the
    like. More visits on weekdays and in the afternoon (UTC), traffic growing by half over
    the period; statuses and sizes as a site's (304s and 404s, a page's size each time
    within a few percent). Returns the lines written."""
    draw = _Draws(seed)
    names = _paths(draw, paths)
    page_bytes = [int(draw.lognormvariate(math.log(18_000), .8)) + 200 for _ in names]
    asset_bytes = [int(draw.lognormvariate(math.log(40_000), 1.0)) + 300 for _ in ASSETS]
    browsers = _browsers(draw, 4_000)
    browser_table = draw.zipf_table(len(browsers), 1.1)
    page_table = draw.zipf_table(len(names), 1.0)
    people_table = draw.zipf_table(people, 0.7)
    bot_table = tuple(accumulate(weight for _, weight, _ in BOTS))
    sites = [f"{draw.slug(draw.randrange(1, 3))}.{draw.choice(_TLDS)}" for _ in range(3_000)]
    day_table = tuple(accumulate((0.75 if (start + dt.timedelta(d)).weekday() >= 5 else 1.0)
                                 * (1 + 0.5 * d / days) for d in range(days)))
    hour_table = tuple(accumulate(1.2 + math.sin((h - 9) * math.pi / 12) for h in range(24)))
    people_seen: dict[int, tuple[str, str, bool]] = {}
    crawlers: dict[tuple[int, int], tuple[str, str]] = {}

    def person(who: int) -> tuple[str, str, bool]:
        found = people_seen.get(who)
        if found is None:
            agent, mobile = browsers[draw.ranked(browser_table)]
            found = people_seen[who] = (draw.address(), agent, mobile)
        return found

    def status(who: str) -> int:
        codes, table = _STATUS[who]
        return codes[bisect(table, draw.random() * table[-1])]

    def size(code: int, typical: int) -> int:
        if code == 304:
            return 0
        if code in (301, 302):
            return draw.randrange(180, 260)
        if code >= 400:
            return draw.randrange(300, 700)
        return max(1, int(typical * draw.gauss(1.0, .03)))

    def visit(t: int, rows: list) -> None:
        address, agent, mobile = person(draw.ranked(people_table))
        r = draw.random()
        referrer = ("-" if r < .38 else draw.choice(SEARCH) if r < .73
                    else draw.choice(SOCIAL) if r < .87
                    else f"https://{draw.choice(sites)}/{draw.slug(draw.randrange(1, 4))}/")
        for _ in range(draw.geometric(.45)):
            rank = draw.ranked(page_table)
            page = names[rank]
            request = page
            if draw.random() < .07:
                request += draw.choice(_QUERIES).format(w=draw.word(), v=draw.word(),
                                                        n=draw.randrange(2, 30))
            code = status("person")
            method = ("POST" if page in ("/login", "/cart", "/search") and draw.random() < .3
                      else "GET")
            rows.append((t, address, method, request, code, size(code, page_bytes[rank]),
                         referrer, agent))
            if (code == 200 and draw.random() < (.25 if mobile else .4)
                    and not page.endswith((".xml", ".txt", ".jpg", ".png"))):
                for asset in draw.sample(range(len(ASSETS)), draw.randrange(1, 4)):
                    cached = draw.random() < .3
                    rows.append((t + draw.randrange(2), address, "GET", ASSETS[asset],
                                 304 if cached else 200,
                                 0 if cached else size(200, asset_bytes[asset]),
                                 f"https://{SITE_HOST}{page}", agent))
            referrer = f"https://{SITE_HOST}{page}"
            t += int(draw.expovariate(1 / 45)) + 1

    def crawl(t: int, rows: list) -> None:
        which = bisect(bot_table, draw.random() * bot_table[-1])
        agent, _, hosts = BOTS[which]
        key = (which, draw.randrange(40 if hosts else 2_000))
        if key not in crawlers:
            crawlers[key] = ((hosts.format(draw.randrange(256), draw.randrange(1, 255))
                              if hosts else draw.address()),
                             agent.format(chrome=draw.randrange(119, 131),
                                          minor=draw.randrange(20, 33)))
        address, agent = crawlers[key]
        script = agent.startswith(("curl", "Go-http", "python", "Wget"))
        for _ in range(draw.geometric(.08)):
            rank = (draw.randrange(len(names)) if draw.random() < .5
                    else draw.ranked(page_table))
            code = status("crawler")
            head = script and draw.random() < .3
            rows.append((t, address, "HEAD" if head else "GET", names[rank], code,
                         0 if head else size(code, page_bytes[rank]), "-", agent))
            t += int(draw.expovariate(1 / 20)) + 1

    def probe(t: int, rows: list) -> None:
        address, agent = draw.address(), draw.choice(SCANNER_AGENTS)
        for i in range(draw.randrange(3, 15)):
            rows.append((t + i, address, "POST" if draw.random() < .2 else "GET",
                         draw.choice(PROBES), 404 if draw.random() < .95 else 403,
                         draw.randrange(150, 600), "-", agent))

    rows: list[tuple] = []
    while len(rows) < lines:
        day = bisect(day_table, draw.random() * day_table[-1])
        hour = bisect(hour_table, draw.random() * hour_table[-1])
        t = day * 86_400 + hour * 3_600 + draw.randrange(3_600)
        r = draw.random()
        (visit if r < .86 else crawl if r < .995 else probe)(t, rows)
    del rows[lines:]
    rows.sort(key=itemgetter(0))
    last = days * 86_400 - 1            # a visit begun late on the last day ends with it
    dates = [f"{start + dt.timedelta(days=d):%d/%b/%Y}" for d in range(days)]
    with target.open("w", encoding="utf-8", newline="\n") as out:
        for t, address, method, request, code, sent, referrer, agent in rows:
            day, second = divmod(min(t, last), 86_400)
            out.write(f'{address} - - [{dates[day]}:{second // 3600:02d}:'
                      f'{second // 60 % 60:02d}:{second % 60:02d} +0000] "{method} {request} '
                      f'HTTP/{"2.0" if ":" in address else "1.1"}" {code} {sent or "-"} '
                      f'"{referrer}" "{agent}"\n')
    return len(rows)
