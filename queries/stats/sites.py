"""The site registry: one settings record per site, read through :func:`site_settings`.

``sites`` holds ``{_id: site, registered: date, via: admin | ingest | beacon | loadgen |
existing | import, synthetic: bool, tz: zone, origins: [origin], unknown_agents: human | bot,
legacy_agents: bool}``. A site is registered by ``hitboard site add`` (or the admin
page), a log ingest, the load generator, ``HITBOARD_BEACON_SITES``, and, where open
registration allows it, a first beacon hit; the sites a store held before the registry
are registered as ``existing`` when it opens (:func:`register_known`). The ``/hit``
beacon counts hits for registered sites only, from their ``origins`` when the record
names some. ``unknown_agents`` says how hits without a user agent count (people by
default); ``legacy_agents`` marks a site that held dimensions before that setting
existed, when such hits were counted as bots: its older counts stay so until re-ingested.
Later settings (visit timeout, goals, reports) extend this same record.
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
from .goals import MAX_GOALS, Goal, from_doc

DEMO_CLAIM = "demo-backfill"
UNKNOWN_AGENTS = ("human", "bot")
SOURCES = ("admin", "ingest", "beacon", "loadgen", "existing", "import")
DIMENSION_COUNTERS = "dims.monthly"     # a site holding any marks it as counted before
MAX_ORIGINS = 20
DEFAULT_VISIT_MINUTES = 30      # a visit ends after this long without a pageview
MAX_VISIT_MINUTES = 24 * 60
# Where a site's hits come from. Its counters count its primary source's alone (the first
# that fed it, unless set), so a site fed by its logs and the beacon never counts a page
# view twice; the other source's hits are kept apart for the Sources view.
HIT_SOURCES = ("log", "beacon", "generator")
_FED_BY = {"ingest": "log", "beacon": "beacon", "loadgen": "generator"}   # via → source


@dataclass(frozen=True)
class SiteSettings:
    """A site's settings, defaults filled in (``registered`` False: no record)."""

    name: str
    registered: bool = False
    synthetic: bool = False
    unknown_agents: str = "human"
    legacy_agents: bool = False
    tz: str | None = None
    origins: tuple[str, ...] = ()
    via: str | None = None
    since: dt.datetime | None = None
    visit_minutes: int = DEFAULT_VISIT_MINUTES
    goals: tuple[Goal, ...] = ()
    primary_source: str | None = None     # None: no source has fed it yet

    @property
    def visit_ms(self) -> int:
        """The visit timeout in milliseconds, as event times are kept."""
        return self.visit_minutes * 60_000

    @property
    def unknown_bots(self) -> bool:
        """Whether hits without a user agent count as bots."""
        return self.unknown_agents == "bot"


def site_settings(db, site: str) -> SiteSettings:
    """The settings of ``site`` (defaults for a site the registry does not hold). A site
    with dimension counters but no ``unknown_agents`` was counted before the setting
    existed: ``legacy_agents``."""
    name = validation.site(site)
    return _settings(db, name, db[schema.SITES].find_one({"_id": name}))


def _settings(db, name: str, doc: dict | None) -> SiteSettings:
    doc = doc or {}
    legacy = doc.get("legacy_agents", False)
    if "unknown_agents" not in doc and not legacy:
        legacy = _has_dimensions(db, name)
    since = doc.get("registered")
    return SiteSettings(name, bool(doc), bool(doc.get("synthetic")),
                        doc.get("unknown_agents", "human"), legacy, doc.get("tz"),
                        tuple(doc.get("origins", ())), doc.get("via"),
                        validation.stored_time(since) if isinstance(since, dt.datetime)
                        else None, doc.get("visit_minutes", DEFAULT_VISIT_MINUTES),
                        tuple(from_doc(goal) for goal in doc.get("goals", ())),
                        doc.get("primary_source"))


def registered_sites(db) -> list[SiteSettings]:
    """Every registered site's settings, by name."""
    return [_settings(db, doc["_id"], doc) for doc in
            db[schema.SITES].find().sort("_id", 1)]


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

    def forget(self, site: str) -> None:
        """Read the site's settings again next time (it was just registered)."""
        self._held.pop(site, None)


def _has_dimensions(db, site: str) -> bool:
    return db[DIMENSION_COUNTERS].find_one({"metadata.site": site}, {"_id": 1}) is not None


def check_unknown_agents(value) -> str:
    if value not in UNKNOWN_AGENTS:
        raise InvalidSiteError(f"hits without a user agent count as one of "
                               f"{', '.join(UNKNOWN_AGENTS)}, got {str(value)[:20]!r}")
    return value


def _origins(values: Iterable[str]) -> list[str]:
    found = []
    for value in values:
        normal = validation.origin(str(value))
        if normal is None:
            raise InvalidSiteError(f"{str(value)[:100]!r} is not an origin (write "
                                   "scheme://host[:port], e.g. https://blog.example.com)")
        found.append(normal)
    if len(found) > MAX_ORIGINS:
        raise InvalidSiteError(f"at most {MAX_ORIGINS} origins a site")
    return sorted(set(found))


def register(db, site: str, via: str, new_name: bool = False, **settings) -> bool:
    """Register ``site`` if it is not (``settings``: ``tz``, ``origins``...); True if
    this call did. ``new_name``: a stranger names it (the stricter ``new_site`` rule)."""
    name = validation.new_site(site) if new_name else validation.site(site)
    fields = _checked(settings)
    found = db[schema.SITES].find_one_and_update(
        {"_id": name}, {"$setOnInsert": {"registered": dt.datetime.now(dt.UTC), "via": via,
                                         **fields}}, upsert=True)
    return found is None


def update_site(db, site: str, **settings) -> SiteSettings:
    """Change a registered site's settings (``tz``, ``origins``, ``unknown_agents``,
    ``visit_minutes``: visits already counted keep the timeout they were cut with; None
    leaves one as it is)."""
    name = validation.site(site)
    fields = _checked({k: v for k, v in settings.items() if v is not None})
    if db[schema.SITES].update_one({"_id": name}, {"$set": fields}).matched_count == 0:
        raise InvalidSiteError(f"site {name!r} is not registered: add it first")
    return site_settings(db, name)


def _checked(settings: dict) -> dict:
    fields = {}
    for key, value in settings.items():
        if key == "tz":
            fields["tz"] = validation.timezone(value).key
        elif key == "origins":
            fields["origins"] = _origins(value)
        elif key == "unknown_agents":
            fields["unknown_agents"] = check_unknown_agents(value)
        elif key == "visit_minutes":
            fields["visit_minutes"] = check_visit_minutes(value)
        elif key == "primary_source":
            fields["primary_source"] = check_source(value)
        elif key == "synthetic":
            fields["synthetic"] = bool(value)
        else:
            raise InvalidSiteError(f"unknown site setting {key!r}")
    return fields


def check_source(value) -> str:
    if value not in HIT_SOURCES:
        raise InvalidSiteError(f"a site's primary source is one of {', '.join(HIT_SOURCES)}, "
                               f"got {str(value)[:20]!r}")
    return value


def primary_source(db, site: str, source: str) -> str:
    """The site's primary source, recorded by the first to ask, whatever the process:
    the source that registered it (a log ingest, the beacon, the load generator: a store
    written before primary sources were has fed the site that way), else ``source``."""
    name = validation.site(site)
    check_source(source)
    found = db[schema.SITES].find_one({"_id": name}, {"via": 1, "primary_source": 1})
    if found is None:                      # not registered: it keeps no setting
        return source
    if found.get("primary_source"):
        return found["primary_source"]
    first = _FED_BY.get(found.get("via"), source)
    db[schema.SITES].update_one({"_id": name, "primary_source": None},
                                {"$set": {"primary_source": first}})
    found = db[schema.SITES].find_one({"_id": name}, {"primary_source": 1})
    return (found or {}).get("primary_source") or source


def counted_source(settings: SiteSettings) -> str | None:
    """The source a site's counters count, without recording one: its primary source,
    else the one that registered it (the load generator's sites never ask which source
    counts: nothing else may feed them); None when neither says."""
    if settings.primary_source:
        return settings.primary_source
    if settings.synthetic:
        return "generator"
    return _FED_BY.get(settings.via)


def check_visit_minutes(value) -> int:
    if type(value) is not int or not 1 <= value <= MAX_VISIT_MINUTES:
        raise InvalidSiteError(f"a visit's timeout is 1 to {MAX_VISIT_MINUTES} minutes, "
                               f"got {str(value)[:20]!r}")
    return value


def add_goal(db, site: str, goal: Goal) -> bool:
    """Add a goal (``goals.goal``) to a registered site; False if it
    already has it."""
    goals = _goals(db, site)
    if goal in goals:
        return False
    if len(goals) >= MAX_GOALS:
        raise InvalidSiteError(f"at most {MAX_GOALS} goals a site")
    return _set_goals(db, site, [*goals, goal])


def remove_goal(db, site: str, goal: Goal) -> bool:
    """Remove a goal from a site; False if it had no such goal."""
    goals = _goals(db, site)
    return goal in goals and _set_goals(db, site, [g for g in goals if g != goal])


def _goals(db, site: str) -> tuple[Goal, ...]:
    _registered(db, site)
    return site_settings(db, site).goals


def _set_goals(db, site: str, goals: list[Goal]) -> bool:
    db[schema.SITES].update_one({"_id": site}, {"$set": {"goals": [g.as_doc() for g in goals]}})
    return True


def _registered(db, site: str) -> str:
    name = validation.site(site)
    if db[schema.SITES].find_one({"_id": name}, {"_id": 1}) is None:
        raise InvalidSiteError(f"site {name!r} is not registered: add it first")
    return name


def unregister(db, site: str) -> bool:
    """Remove a site's record (its data stays: ``queries.sitedata.remove``)."""
    return db[schema.SITES].delete_one({"_id": validation.site(site)}).deleted_count == 1


def register_known(db) -> list[str]:
    """Register the sites holding statistics that have no record (a store written before
    the registry), as ``existing``; returns them."""
    held = set(db[schema.MONTHLY].distinct("metadata.site"))
    known = {doc["_id"] for doc in db[schema.SITES].find({}, {"_id": 1})}
    added = sorted(held - known)
    for name in added:
        register(db, name, "existing")
    return added


def registered_since(db, via: str, since: dt.datetime) -> int:
    """Sites registered by ``via`` since ``since`` (open registration's rate)."""
    return db[schema.SITES].count_documents({"via": via, "registered": {"$gte": since}})


def set_unknown_agents(db, sites: Iterable[str], value: str | None) -> dict[str, str]:
    """Record how the sites count hits without a user agent (``value``; None keeps each
    site's own, "human" by default) before a log ingest writes to them (registering
    them), and return each site's choice. A site holding dimensions counted before the
    setting existed keeps ``legacy_agents``, so its pages can say how to recount."""
    if value is not None:
        check_unknown_agents(value)
    chosen = {}
    for name in {validation.site(s) for s in sites}:
        current = site_settings(db, name)
        chosen[name] = value or current.unknown_agents
        db[schema.SITES].update_one(
            {"_id": name},
            {"$set": {"unknown_agents": chosen[name], "legacy_agents": current.legacy_agents},
             "$setOnInsert": {"registered": dt.datetime.now(dt.UTC), "via": "ingest"}},
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
            {"$set": {"synthetic": True}, "$setOnInsert": {"registered": now, "via": "loadgen"}},
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
