"""The shape of synthetic traffic: which sites and pages exist, how popular each page is
(Zipf), how busy each hour of the day is (diurnal cycle) and how many hits fall in an
interval (Poisson). Pure and seeded: the same seed gives the same sites, pages and counts.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import HitboardError

MINUTES_PER_DAY = 1440
PEAK_HOUR_UTC = 15.0
MAX_SITES = 20
MAX_PAGES = 500
# Reserved names (RFC 2606 / RFC 6761): never a real site, so synthetic traffic cannot be
# mistaken for, or mixed into, a real site's statistics.
SITE_NAMES = ("shop.example", "blog.example", "news.example", "docs.example", "forum.example",
              "status.example", "careers.example", "api.example")
_WORDS = ("mongodb", "dashboards", "scaling", "traffic", "python", "charts", "release",
          "notes", "winter", "sale", "guide", "indexes", "latency", "tuning", "pandas",
          "analytics", "shipping", "returns", "pricing", "roadmap", "security", "cache")
_STATIC = ("/static/css/main.{h}.css", "/static/js/app.{h}.js", "/static/js/vendor.{h}.js",
           "/static/img/logo.{h}.png", "/static/fonts/inter.{h}.woff2")


@dataclass
class TrafficModel:
    """Sites × pages with Zipf(``zipf_s``) popularity and a daily cycle of relative
    amplitude ``diurnal`` (0 = flat; the cycle averages to 1 over a day, so a rate is a
    daily mean). Sites get shares of the traffic proportional to 1/rank."""

    sites: int = 2
    pages: int = 15
    zipf_s: float = 1.1
    diurnal: float = 0.5
    seed: int = 0
    site_names: list[str] = field(init=False, repr=False, compare=False)
    page_names: dict[str, list[str]] = field(init=False, repr=False, compare=False)
    weights: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        _check(_is_int(self.sites) and 1 <= self.sites <= MAX_SITES,
               f"sites must be an integer from 1 to {MAX_SITES}, got {self.sites!r}")
        _check(_is_int(self.pages) and 1 <= self.pages <= MAX_PAGES,
               f"pages must be an integer from 1 to {MAX_PAGES}, got {self.pages!r}")
        _check(_is_number(self.zipf_s) and 0 <= self.zipf_s <= 5,
               f"the Zipf exponent must be from 0 to 5, got {self.zipf_s!r}")
        _check(_is_number(self.diurnal) and 0 <= self.diurnal < 1,
               f"the diurnal amplitude must be in [0, 1), got {self.diurnal!r}")
        _check(_is_int(self.seed) and self.seed >= 0,
               f"the seed must be a non-negative integer, got {self.seed!r}")
        self.site_names = site_names(self.sites)
        self.page_names = {name: page_names(self.pages, self.seed * 1000 + i)
                           for i, name in enumerate(self.site_names)}
        shares = 1.0 / np.arange(1, self.sites + 1)
        # weights[i, j]: share of all traffic going to page j of site i (sums to 1).
        self.weights = np.outer(shares / shares.sum(), zipf_weights(self.pages, self.zipf_s))

    def cells(self) -> list[tuple[str, str]]:
        """(site, page) in the row-major order of ``weights``."""
        return [(s, p) for s in self.site_names for p in self.page_names[s]]

    def diurnal_factor(self, when: dt.datetime) -> float:
        hours = when.hour + when.minute / 60 + when.second / 3600
        return 1.0 + self.diurnal * math.cos(2 * math.pi * (hours - PEAK_HOUR_UTC) / 24)

    def minute_factors(self) -> np.ndarray:
        """The diurnal factor of each minute of a UTC day (mean exactly 1)."""
        hours = (np.arange(MINUTES_PER_DAY) + 0.5) / 60
        return 1.0 + self.diurnal * np.cos(2 * np.pi * (hours - PEAK_HOUR_UTC) / 24)

    def sample(self, rng: np.random.Generator, expected_hits: float) -> np.ndarray:
        """Hits per (site, page) cell for an interval expecting ``expected_hits`` in all:
        a Poisson total split by popularity (flattened like ``cells()``)."""
        total = rng.poisson(expected_hits)
        return rng.multinomial(total, self.weights.ravel())

    def day_counts(self, site_index: int, day: dt.datetime, rate: float,
                   until: dt.datetime | None = None) -> np.ndarray:
        """Hits per page and minute of one UTC ``day`` for the site at ``site_index``,
        shape (pages, 1440), for a mean total ``rate`` (hits/s over all sites). Nothing at
        or after ``until``: its minute keeps the share of hits before it, so live traffic
        continues without a dip. Seeded by (seed, site, day): any order, same counts."""
        rng = np.random.default_rng([self.seed, site_index, day.toordinal()])
        lam = np.outer(self.weights[site_index], self.minute_factors() * rate * 60)
        counts = rng.poisson(lam)
        if until is not None:
            seconds = (until - day).total_seconds()
            cut = int(seconds // 60)
            if 0 <= cut < MINUTES_PER_DAY:
                counts[:, cut] = rng.binomial(counts[:, cut], seconds / 60 - cut)
            counts[:, max(cut + 1, 0):] = 0
        return counts


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise HitboardError(message)


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def zipf_weights(n: int, s: float) -> np.ndarray:
    weights = 1.0 / np.arange(1, n + 1) ** s
    return weights / weights.sum()


def site_names(n: int) -> list[str]:
    return [SITE_NAMES[i] if i < len(SITE_NAMES) else f"site-{i + 1}.example" for i in range(n)]


def page_names(n: int, seed: int) -> list[str]:
    """``/`` first (the most popular), then a seeded mix of blog posts, products and
    static assets, every name distinct."""
    rng = np.random.default_rng(seed)
    names = ["/"]
    seen = set(names)
    while len(names) < n:
        kind = rng.choice(("blog", "products", "static"), p=(0.45, 0.35, 0.2))
        if kind == "blog":
            words = rng.choice(_WORDS, size=int(rng.integers(2, 5)), replace=False)
            name = "/blog/" + "-".join(words)
        elif kind == "products":
            name = f"/products/{int(rng.integers(1000, 99999))}"
        else:
            name = str(rng.choice(_STATIC)).format(h=f"{int(rng.integers(16**7)):07x}")
        if name not in seen:
            seen.add(name)
            names.append(name)
    return names
