"""The site registry: one settings record per site, read through :func:`site_settings`.

One document per registered site ``{_id: site, synthetic: bool, registered: date,
unknown_agents: "human" | "bot", legacy_agents: bool}``. Sites that only ever received
real hits with default settings need no entry: a site is synthetic only if the registry
says so, and its hits without a user agent are people unless it says ``bot``.
``legacy_agents`` marks a site that held dimensions before this setting existed, when
such hits were counted as bots: its older counts stay so until re-ingested.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterable
from dataclasses import dataclass

from pymongo.errors import DuplicateKeyError

from .. import validation
from ..errors import InvalidSiteError
from . import schema

DEMO_CLAIM = "demo-backfill"
UNKNOWN_AGENTS = ("human", "bot")
DIMENSION_COUNTERS = "dims.monthly"     # a site holding any marks it as counted before


@dataclass(frozen=True)
class SiteSettings:
    """A site's settings, defaults filled in."""

    name: str
    synthetic: bool = False
    unknown_agents: str = "human"
    legacy_agents: bool = False

    @property
    def unknown_bots(self) -> bool:
        """Whether hits without a user agent count as bots."""
        return self.unknown_agents == "bot"


def site_settings(db, site: str) -> SiteSettings:
    """The settings of ``site`` (defaults for a site the registry does not hold). A site
    with dimension counters but no ``unknown_agents`` was counted before the setting
    existed: ``legacy_agents``."""
    name = validation.site(site)
    doc = db[schema.SITES].find_one({"_id": name}) or {}
    legacy = doc.get("legacy_agents", False)
    if "unknown_agents" not in doc and not legacy:
        legacy = _has_dimensions(db, name)
    return SiteSettings(name, bool(doc.get("synthetic")), doc.get("unknown_agents", "human"),
                        legacy)


class SettingsCache:
    """Site settings read at most once per ``seconds`` for each site: the beacon's hot
    path reads them for every hit. Holds at most ``max_sites`` sites."""

    def __init__(self, db, seconds: float = 60.0, max_sites: int = 10_000):
        self.db, self.seconds, self.max_sites = db, seconds, max_sites
        self._held: dict[str, tuple[float, SiteSettings]] = {}

    def get(self, site: str) -> SiteSettings:
        now = time.monotonic()
        held = self._held.get(site)
        if held is not None and now - held[0] < self.seconds:
            return held[1]
        if len(self._held) >= self.max_sites:
            self._held.clear()
        settings = site_settings(self.db, site)
        self._held[site] = (now, settings)
        return settings


def _has_dimensions(db, site: str) -> bool:
    return db[DIMENSION_COUNTERS].find_one({"metadata.site": site}, {"_id": 1}) is not None


def check_unknown_agents(value) -> str:
    if value not in UNKNOWN_AGENTS:
        raise InvalidSiteError(f"hits without a user agent count as one of "
                               f"{', '.join(UNKNOWN_AGENTS)}, got {str(value)[:20]!r}")
    return value


def set_unknown_agents(db, sites: Iterable[str], value: str | None) -> dict[str, str]:
    """Record how the sites count hits without a user agent (``value``; None keeps each
    site's own, "human" by default) before a source writes to them, and return each
    site's choice. A site holding dimensions counted before the setting existed keeps
    ``legacy_agents``, so its pages can say how to recount."""
    if value is not None:
        check_unknown_agents(value)
    chosen = {}
    for name in {validation.site(s) for s in sites}:
        current = site_settings(db, name)
        chosen[name] = value or current.unknown_agents
        db[schema.SITES].update_one(
            {"_id": name},
            {"$set": {"unknown_agents": chosen[name], "legacy_agents": current.legacy_agents},
             "$setOnInsert": {"registered": dt.datetime.now(dt.UTC)}},
            upsert=True)
    return chosen


def register_synthetic(db, sites: Iterable[str]) -> list[str]:
    """Mark ``sites`` as synthetic before the generator writes to them. A site that holds
    traffic but is not registered as synthetic is real: refused, never mixed."""
    names = [validation.site(s) for s in sites]
    known = set(synthetic_sites(db))
    with_data = set(db[schema.MONTHLY].distinct("metadata.site", {"metadata.site": {"$in": names}}))
    real = sorted(with_data - known)
    if real:
        raise InvalidSiteError(f"site {real[0]!r} holds real traffic: the load generator only "
                               "writes to sites registered as synthetic")
    now = dt.datetime.now(dt.UTC)
    for name in names:
        db[schema.SITES].update_one(
            {"_id": name},
            {"$set": {"synthetic": True}, "$setOnInsert": {"registered": now}},
            upsert=True,
        )
    return names


def synthetic_sites(db) -> list[str]:
    return sorted(doc["_id"] for doc in db[schema.SITES].find({"synthetic": True}, {"_id": 1}))


def claim_demo_backfill(db) -> bool:
    """True for the one caller that may backfill the demo's history: the first to insert
    a fixed ``_id``, even when several server processes start at once on one database."""
    try:
        db[schema.CHECKPOINTS].insert_one({"_id": DEMO_CLAIM, "at": dt.datetime.now(dt.UTC)})
    except DuplicateKeyError:
        return False
    return True
