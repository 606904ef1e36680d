"""Which sites and pages the ``/hit`` beacon counts: strangers' browsers call it, so a
flood of made-up names must not grow the store, the memory or the site list.

A site is counted when it is registered (``hitboard site add``, ingest, the load
generator, ``beacon_sites``; see ``queries.stats.sites``), from the origins its record
names, if any; a first hit may register a new one (the stricter name rule) only while
``beacon_new_sites`` per hour allow it. A site gets at most ``beacon_pages_per_day`` new
pages a UTC day through the beacon: past that, hits still count for the site, under the
page ``/(other)``, as GA and Plausible do. The pages a day already has are read from the
store and recounted every ``REFRESH`` seconds, so several server processes together go
past the cap by at most the pages each admits meanwhile.

A page the site never had (no hit this month or last) costs a daily and a monthly
document, ~0.7 KiB, from its first hit: a flood of made-up pages, each sent once, would
grow the store by the cap's worth. So past ``beacon_unseen_pages`` such pages a day (per
process), an unseen page gets its own name when it comes back (``beacon_waiting``: at its
second hit, or its third after a flood), its first hits counted under ``/(other)``: real
pages come back, made-up ones do not. Each site's day waits on its own pages, so one
site's flood delays no other site's; past ``MAX_TRACKED`` entries in all, the days
holding the most are forgotten first.
"""

from __future__ import annotations

import datetime as dt
import threading
import time

from pymongo.errors import PyMongoError

from queries import validation
from queries.errors import HitboardError
from queries.stats import schema
from queries.stats.sites import SettingsCache, register, registered_since

from .beacon_waiting import Waiting

OTHER_PAGE = "/(other)"
REFRESH = 60.0
MAX_TRACKED = 200_000        # (site, day, page) entries held in memory, at most
HOUR = dt.timedelta(hours=1)


class GateError(HitboardError):
    def __init__(self, message: str, status: int = 403):
        super().__init__(message)
        self.status = status


class SiteGate:
    """The beacon's admission of sites (:meth:`site`) and pages (:meth:`page`)."""

    def __init__(self, db, sites: SettingsCache, new_per_hour: int, pages_per_day: int,
                 unseen_per_day: int):
        self.db, self.sites = db, sites
        self.new_per_hour, self.pages_per_day = new_per_hour, pages_per_day
        self.unseen_per_day = unseen_per_day
        self._days: dict[tuple[str, dt.date], _Day] = {}
        self._lock = threading.Lock()

    def site(self, name: str, origin: str | None) -> None:
        """Refuse (403) a site that is not registered and may not be, or an origin its
        record does not name."""
        settings = self.sites.get(name)
        if not settings.registered:
            self._register(name)
            settings = self.sites.get(name)
        if origin and settings.origins and validation.origin(origin) not in settings.origins:
            raise GateError(f"origin {origin[:100]!r} may not send hits for site {name!r}")

    def _register(self, name: str) -> None:
        if not self.new_per_hour:
            raise GateError(f"site {name!r} is not registered on this server (hitboard site "
                            "add)")
        since = dt.datetime.now(dt.UTC) - HOUR
        if registered_since(self.db, "beacon", since) >= self.new_per_hour:
            raise GateError(f"site {name!r} is not registered, and this hour's "
                            f"{self.new_per_hour} new sites are taken", 429)
        try:
            register(self.db, name, "beacon", new_name=True)
        except HitboardError as exc:
            raise GateError(str(exc), 400) from None
        self.sites.forget(name)

    def page(self, site: str, page: str, now: dt.datetime) -> str:
        """``page``, or ``/(other)`` once the site's day has its new pages' share, or for
        the first hit of an unseen page past the day's ``unseen_per_day``."""
        key = (site, now.date())
        with self._lock:
            day = self._days.get(key)
            if day is None:
                self._make_room()
                day = self._days[key] = _Day(self._stored_pages(site, now),
                                             self.pages_per_day)
            elif day.stale():
                day.recount(self._stored_pages(site, now))
            if page in day.pages:
                return page
            if day.count >= self.pages_per_day and not self._stored(site, page, now):
                return OTHER_PAGE
            if not self._seen(site, page, now):
                if day.unseen < self.unseen_per_day:
                    day.unseen += 1
                elif not day.waiting.returned(page):
                    return OTHER_PAGE
            day.pages.add(page)
            day.count += 1
            return page

    def _make_room(self) -> None:
        """Forget the days holding the most entries while all hold ``MAX_TRACKED``: a
        flooded site's, not its neighbours'."""
        held = sum(day.cost for day in self._days.values())
        for key in sorted(self._days, key=lambda k: self._days[k].cost, reverse=True):
            if held < MAX_TRACKED:
                return
            held -= self._days.pop(key).cost

    def _seen(self, site: str, page: str, now: dt.datetime) -> bool:
        """Whether the site had the page this month or last (a document for either)."""
        month = schema.month_start(now)
        ids = [schema.monthly_id(month, site, page),
               schema.monthly_id(schema.month_start(month - dt.timedelta(days=1)), site, page)]
        try:
            return self.db[schema.MONTHLY].find_one({"_id": {"$in": ids}}, {"_id": 1}) is not None
        except PyMongoError:
            return True       # the store is failing: the recorder says so, count on

    def _stored(self, site: str, page: str, now: dt.datetime) -> bool:
        """Whether the site's day holds the page already (it counted before the cap)."""
        doc_id = schema.daily_id(schema.day_start(now), site, page)
        try:
            return self.db[schema.DAILY].find_one({"_id": doc_id}, {"_id": 1}) is not None
        except PyMongoError:
            return False

    def _stored_pages(self, site: str, now: dt.datetime) -> int:
        """The pages the site's day holds already (documents with hits, ``*`` left out:
        a document pre-allocated for a page active yesterday is not a new page)."""
        try:
            return max(0, self.db[schema.DAILY].count_documents(
                {"metadata.site": site, "metadata.date": schema.day_start(now),
                 "daily": {"$gt": 0}}) - 1)
        except PyMongoError:
            return 0          # the store is failing: the recorder says so, count on


class _Day:
    """A site's UTC day: how many pages it holds (recounted from the store), the pages
    admitted here, the unseen ones admitted at their first hit and those waiting for
    their second."""

    def __init__(self, count: int, waiting: int):
        self.pages: set[str] = set()
        self.waiting = Waiting(waiting)
        self.unseen = 0
        self.recount(count)

    @property
    def cost(self) -> int:
        return len(self.pages) + self.waiting.cost

    def recount(self, count: int) -> None:
        self.count, self.read = count, time.monotonic()

    def stale(self) -> bool:
        return time.monotonic() - self.read > REFRESH
