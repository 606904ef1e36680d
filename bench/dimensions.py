"""Which libraries classify hits: user-agent parsers, crawler lists, IP-to-country, HLL.

Usage: .venv/bin/python bench/dimensions.py [LOG]

On the distinct user agents and addresses of the shared log it prints, per candidate:
parse time per agent (cold: first parse; warm: parsed again without a cache; cached:
through hitboard's LRU cache), installed size, the share of lines whose agent says
bot/crawler/spider that each crawler list catches, country lookup time and agreement with
a few addresses whose country is known, and the HyperLogLog error per day at two
precisions. Candidates not installed (device-detector, crawler-user-agents) are skipped
with the pip command that adds them.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import importlib.metadata
import re
import time
from pathlib import Path

DEFAULT_LOG = Path(__file__).resolve().parents[2] / "shared" / "data" / "apache_combined_2015.log"
LINE = re.compile(r'^(\S+) \S+ \S+ \[(\d\d)/\w+/\d{4}:[^\]]*\] "[^"]*" \d{3} \S+ '
                  r'"[^"]*" "([^"\n]*)"?')
BOTWORD = re.compile(r"bot|crawler|spider", re.IGNORECASE)
# Addresses whose country is public knowledge (operators' own documentation).
KNOWN = {"8.8.8.8": "US", "1.1.1.1": "AU", "9.9.9.9": "US", "193.51.208.14": "FR",
         "194.25.2.129": "DE", "212.58.244.20": "GB", "133.242.0.1": "JP",
         "200.160.2.3": "BR", "2001:4860:4860::8888": "US", "2a00:1450:4001::1": "IE"}


def size(*dists: str) -> str:
    total = 0
    for dist in dists:
        try:
            files = importlib.metadata.files(dist) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for file in files:
            path = Path(file.locate())
            total += path.stat().st_size if path.is_file() else 0
    return f"{total / 1e6:.1f} MB"


def timed(fn, items) -> float:
    started = time.perf_counter()
    for item in items:
        fn(item)
    return (time.perf_counter() - started) / max(len(items), 1) * 1e6


def agent_parsers(agents: list[str]) -> None:
    print("\n== user-agent parsers (µs per distinct agent) ==")
    from ua_parser import BasicResolver, BestAvailableResolver, Parser, load_builtins

    from queries.dimensions import agents as chosen

    rules = load_builtins()
    fast = Parser(BestAvailableResolver(rules))
    rows = [("ua-parser + builtins + ua-parser-rs (chosen)", fast.parse,
             size("ua-parser", "ua-parser-builtins", "ua-parser-rs")),
            ("ua-parser + builtins, pure Python", Parser(BasicResolver(rules)).parse,
             size("ua-parser", "ua-parser-builtins"))]
    try:
        from device_detector import DeviceDetector
        rows.append(("device-detector", lambda ua: DeviceDetector(ua).parse(),
                     size("device-detector", "regex", "yaml-rs")))
    except ImportError:
        print("device-detector: not installed (pip install device-detector to compare)")
    for name, parse, installed in rows:
        sample = agents if "device" not in name else agents[:200]
        cold = timed(parse, sample[:1])
        warm = timed(parse, sample)
        print(f"{name:48} first {cold:>10,.0f}  warm {warm:>9,.0f}  size {installed}")
    chosen.clear_cache()
    first = timed(chosen.parse, agents)
    cached = timed(chosen.parse, agents)
    print(f"{'hitboard agents.parse (+ crawler list)':48} uncached {first:>7,.0f}  "
          f"cached {cached:>8,.2f}")


def crawler_lists(lines_agents: list[str]) -> None:
    print("\n== crawler lists: lines whose agent says bot/crawler/spider ==")
    said = [a for a in lines_agents if BOTWORD.search(a)]
    distinct = sorted(set(lines_agents))
    from crawlerdetect import CrawlerDetect

    from queries.dimensions import agents as chosen
    detector = CrawlerDetect()
    rows = [("crawlerdetect", detector.isCrawler, size("crawlerdetect")),
            ("its list run by RE2 (agents.CrawlerList)", chosen.CrawlerList().is_crawler,
             size("crawlerdetect", "google-re2")),
            ("hitboard (crawler list + non-browser list)", lambda a: chosen.parse(a).bot, "")]
    try:
        crawleruseragents = importlib.import_module("crawleruseragents")
        rows.append(("crawler-user-agents", crawleruseragents.is_crawler,
                     size("crawler-user-agents")))
    except ImportError:
        print("crawler-user-agents: not installed (pip install crawler-user-agents)")
    for name, is_bot, installed in rows:
        per = timed(is_bot, distinct)
        caught = sum(bool(is_bot(a)) for a in said) / len(said)
        flagged = sum(bool(is_bot(a)) for a in lines_agents) / len(lines_agents)
        print(f"{name:46} caught {caught:6.1%} of {len(said):,}  all lines flagged "
              f"{flagged:6.1%}  {per:7,.0f} µs/agent  {installed}")


def countries(addresses: list[str]) -> None:
    print("\n== IP to country ==")
    import iptocc

    from queries.dimensions import geo
    per = timed(iptocc.country_code, addresses)
    agree = sum(geo.country(a) == c for a, c in KNOWN.items())
    unknown = sum(geo.country(a) == "unknown" for a in addresses) / len(addresses)
    print(f"iptocc: {per:.2f} µs/address, size {size('iptocc')}, {agree}/{len(KNOWN)} known "
          f"addresses right, {unknown:.1%} of the log's addresses unknown")
    print("(tor-geoipdb is a Debian package, not installable by pip: not compared)")


def sketches(pairs_by_day: dict[int, set]) -> None:
    print("\n== HyperLogLog (datasketches) vs exact distinct (address, agent) ==")
    from datasketches import hll_sketch, hll_union, tgt_hll_type
    for lg_k in (11, 12, 14):
        errors = []
        union = hll_union(lg_k)
        for pairs in pairs_by_day.values():
            sketch = hll_sketch(lg_k, tgt_hll_type.HLL_4)
            for pair in pairs:
                sketch.update("\0".join(pair))
            union.update(sketch)
            errors.append(abs(sketch.get_estimate() / len(pairs) - 1))
        exact = len(set().union(*pairs_by_day.values()))
        overall = abs(union.get_estimate() / exact - 1)
        full = hll_sketch(lg_k, tgt_hll_type.HLL_4)
        for i in range(100_000):
            full.update(str(i))
        print(f"lg_k={lg_k}: worst day error {max(errors):.2%}, all days {overall:.2%}, "
              f"100,000 distinct: error {abs(full.get_estimate() / 1e5 - 1):.2%}, "
              f"{len(full.serialize_compact()):,} bytes")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", nargs="?", default=str(DEFAULT_LOG))
    args = parser.parse_args()
    rows = []
    with open(args.log, encoding="utf-8", errors="replace") as handle:
        for raw in handle:
            match = LINE.match(raw)
            if match:
                rows.append(match.groups())
    agents = sorted({a for _, _, a in rows})
    addresses = sorted({a for a, _, _ in rows})
    print(f"{args.log}: {len(rows):,} lines, {len(agents):,} distinct agents, "
          f"{len(addresses):,} distinct addresses ({dt.date.today()})")
    agent_parsers(agents)
    crawler_lists([a for _, _, a in rows])
    countries(addresses)
    by_day: dict[int, set] = {}
    for address, day, agent in rows:
        by_day.setdefault(int(day), set()).add((address, agent))
    sketches(by_day)


if __name__ == "__main__":
    main()
