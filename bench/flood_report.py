"""The report of ``flood.py``: each figure of the flood server against the baseline's,
their ratio and whether it is within the tolerance; every 2xx checked as counted."""

from __future__ import annotations

import os
import statistics
from collections import Counter


def row(name: str, flood: float, base: float, tolerance: float | None, fmt: str) -> str:
    ratio = flood / base if base else float("nan")
    verdict = "" if tolerance is None else ("yes" if ratio <= 1 + tolerance else "NO")
    return (f"{name:34} {format(flood, fmt):>12} {format(base, fmt):>12} {ratio:>7.2f}"
            f"  {verdict}")


def page_rows(results: dict, tolerance: float) -> list[str]:
    lines = []
    flood, base = results["flood"], results["baseline"]
    for view in ("Live", "History"):
        lines.append(row(f"{view} view, ms (median of rounds)", 1000 * _view_median(flood, view),
                         1000 * _view_median(base, view), tolerance, ",.1f"))
        for key in (k for k in flood if k[0] == view):
            lines.append(row(f"  {key[1]}", 1000 * statistics.median(flood[key]["s"]),
                             1000 * statistics.median(base[key]["s"]), None, ",.1f"))
    return lines


def _view_median(steps: dict, view: str) -> float:
    """The median over rounds of a view's requests' seconds, summed within a round."""
    rounds = zip(*(entry["s"] for key, entry in steps.items() if key[0] == view), strict=True)
    return statistics.median(sum(each) for each in rounds)


def print_report(report: dict, args, seeded_bytes: int, elapsed: float,
                 sites: tuple[str, ...]) -> None:
    """Flood against baseline, figure by figure, and whether every 2xx was counted;
    ``sites`` are the registered ones, the first the one viewed."""
    flood, base = report["flood"], report["baseline"]
    mib, tol = 1024 ** 2, args.tolerance
    print(f"\n{'figure':34} {'flood':>12} {'baseline':>12} {'ratio':>7}  within "
          f"{tol:.0%}")
    lines = [
        row("requests sent", args.sites + args.pages, args.sites + args.pages, None, ",d"),
        row("hits answered 2xx", flood["ok"], base["ok"], None, ",d"),
        row("RSS before the hits, MiB", flood["rss_before"], base["rss_before"], None, ",.1f"),
        row("RSS after the hits, MiB", flood["rss_hits"], base["rss_hits"], tol, ",.1f"),
        row("RSS after the pages, MiB", flood["rss_pages"], base["rss_pages"], tol, ",.1f"),
        row("RSS peak (VmHWM), MiB", flood["rss_peak"], base["rss_peak"], tol, ",.1f"),
        row("store, MiB", flood["store"] / mib, base["store"] / mib, tol, ",.2f"),
        row("store growth, MiB", (flood["store"] - seeded_bytes) / mib,
            (base["store"] - seeded_bytes) / mib, tol, ",.2f"),
        row("site dropdown, options", flood["site_options"], base["site_options"], tol, ",d"),
        row(f"pages of {sites[0]} today", flood["pages_today"], base["pages_today"], None,
            ",d"),
        row("rollup run, s", flood["rollup_s"], base["rollup_s"], None, ",.2f"),
        row("CPU while idle, % of a core", 100 * flood["idle_cpu"], 100 * base["idle_cpu"],
            None, ",.1f"),
        row("CPU during the page rounds, s", flood["pages_cpu"], base["pages_cpu"], None,
            ",.2f"),
        *page_rows(report["pages"], tol),
    ]
    print("\n".join(lines))
    for name, entry in (("flood", flood), ("baseline", base)):
        stored = sum(entry["counted"].values()) - entry["before"]
        strangers = sorted(set(entry["counted"]) - set(sites))
        verdict = "ok" if stored == entry["ok"] and not strangers else "MISMATCH"
        print(f"{name}: statuses {_statuses(entry['statuses'])}; 2xx {entry['ok']:,}, "
              f"counted {stored:,}: {verdict}; sites outside the registered: "
              f"{len(strangers)}; flushed {entry['wait_s']:.1f} s after the last answer")
    admitted = flood["pages_today"] - base["pages_today"]
    if admitted > 0:
        extra = (flood["store"] - base["store"]) / admitted
        print(f"the flood's store beyond the baseline's: {extra / 1024:.2f} KiB for each of "
              f"the {admitted:,} pages it admitted today")
    if args.detail:
        print_detail(flood["collections"], base["collections"])
    print(f"load at the end {os.getloadavg()[0]:.1f}; whole run {elapsed:.0f} s")


def _statuses(statuses: Counter) -> str:
    return ", ".join(f"{k}: {v:,}" for k, v in sorted(statuses.items(), key=str))


def print_detail(flood: Counter, base: Counter) -> None:
    print(f"\nstore by collection (tables and indexes), KiB:\n{'collection':34} "
          f"{'flood':>12} {'baseline':>12} {'growth':>10}")
    for name in sorted(set(flood) | set(base), key=lambda n: base[n] - flood[n]):
        print(f"{name:34} {flood[name] / 1024:>12,.0f} {base[name] / 1024:>12,.0f} "
              f"{(flood[name] - base[name]) / 1024:>+10,.0f}")
