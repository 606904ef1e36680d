"""What the Sites page shows and does, computed without Dash: the registered sites as
rows, a site's settings, the form's text read into registry settings, and what a change
did, in words. Every write goes through the registry (``queries.stats.sites``) and
``queries.sitedata``, which validate it: one way to add, change or remove a site, the
same as ``hitboard site``.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from dashboard.authority import who
from dashboard.state import SHELL_KEYS, Query, encode
from queries import sitedata, validation
from queries.errors import InvalidSiteError, InvalidTimeZoneError
from queries.stats import sites
from queries.stats.catalog import last_hit
from queries.stats.goals import goal
from queries.stats.sites import (
    SiteSettings,
    register,
    registered_sites,
    site_settings,
    unregister,
    update_site,
)

PATH = "/sites"
SOURCE_WORDS = {"log": "its access log", "beacon": "its beacon", "generator": "the load generator"}
EDIT_KEY = "edit"
MAX_LISTED = 200          # rows the list shows at once (each reads the site's last hit)
MAX_ORIGINS_TEXT = 4000   # characters of the origins box read (20 origins at most)
VIA = {"admin": "the admin", "ingest": "a log ingest", "beacon": "its first beacon hit",
       "loadgen": "the load generator", "existing": "its data (held before the registry)"}
SEPARATORS = re.compile(r"[\s,]+")


def zone_shown(tz: str) -> str:
    """The URL's zone, or UTC when it names none that exists (the shell says so)."""
    try:
        return validation.timezone(tz).key
    except InvalidTimeZoneError:
        return "UTC"


def when(moment: dt.datetime | None, tz: str) -> str | None:
    """A stored UTC time in the viewer's zone, to the minute."""
    if moment is None:
        return None
    return f"{moment.astimezone(validation.timezone(tz)):%Y-%m-%d %H:%M}"


def via_words(via: str | None) -> str:
    return VIA.get(via or "", "an unknown source")


def shell_part(query: Query) -> Query:
    return {key: values for key, values in query.items() if key in SHELL_KEYS}


def settings_href(name: str, query: Query) -> str:
    """The settings of ``name``, keeping the shell's site, zone and theme."""
    return PATH + encode({**shell_part(query), EDIT_KEY: [name]})


def list_href(query: Query) -> str:
    return PATH + encode(shell_part(query))


def history_href(name: str, query: Query) -> str:
    shell = {k: v for k, v in shell_part(query).items() if k not in ("site", "page")}
    return "/history" + encode({"site": [name], **shell})


@dataclass(frozen=True)
class Listing:
    rows: list[dict]
    total: int            # registered sites
    matching: int         # of which match the filter


def listing(db, query: Query, tz: str, needle: str | None = None,
            limit: int = MAX_LISTED) -> Listing:
    """The registered sites whose name holds ``needle`` (any case), by name, at most
    ``limit`` of them, as rows for ``components.sites.sites_table``."""
    found = [site for site in registered_sites(db) if who().sees(site.name)]
    needle = (needle or "").strip().lower()
    matching = [s for s in found if needle in s.name.lower()]
    rows = [row(settings, last_hit(db, settings.name), query, tz)
            for settings in matching[:limit]]
    return Listing(rows, len(found), len(matching))


def row(settings: SiteSettings, last: dt.datetime | None, query: Query, tz: str) -> dict:
    return {"name": settings.name, "href": settings_href(settings.name, query),
            "synthetic": settings.synthetic, "via": via_words(settings.via),
            "registered": when(settings.since, tz), "origins": list(settings.origins),
            "tz": settings.tz, "agents": settings.unknown_agents,
            "last_hit": when(last, tz)}


def listing_note(found: Listing, needle: str | None, tz: str) -> str:
    """What the list holds, in words."""
    if not found.total:
        return "No site is registered yet: the beacon counts none. Add one below."
    if needle and needle.strip() and not found.matching:
        return f"No registered site's name holds {needle.strip()!r}."
    shown = len(found.rows)
    count = (f"{found.total} site{'s' if found.total != 1 else ''} registered"
             + (f", {found.matching} matching" if found.matching != found.total else ""))
    more = (f"; showing the first {shown} by name: type part of a name to find the others"
            if shown < found.matching else "")
    return f"{count}{more}. Times in {tz}."


@dataclass(frozen=True)
class Edited:
    """The site a settings view is about: its settings, or why there are none."""

    name: str
    settings: SiteSettings | None
    problem: str | None = None
    last: dt.datetime | None = None


def edited(db, name: str) -> Edited:
    try:
        settings = site_settings(db, name)
    except InvalidSiteError as exc:
        return Edited(name, None, str(exc))
    if not settings.registered:
        return Edited(name, None, f"No site named {name!r} is registered.")
    return Edited(name, settings, None, last_hit(db, name))


def origins_from_text(text: str | None) -> list[str]:
    """The origins box: one origin a line (commas and spaces separate too)."""
    text = (text or "")[:MAX_ORIGINS_TEXT]
    return [item for item in SEPARATORS.split(text) if item]


def form_settings(tz: str | None, origins: str | None, agents: str | None) -> dict:
    """The registry settings a form sends (a zone or an agents rule left empty: not
    given); the registry validates each."""
    settings: dict = {"origins": origins_from_text(origins)}
    if tz:
        settings["tz"] = tz
    if agents:
        settings["unknown_agents"] = agents
    return settings


def add(db, name: str | None, tz: str | None, origins: str | None, agents: str | None) -> str:
    """Register ``name`` from the add form; returns its name. Refuses a name already
    registered (its settings are changed on its own page)."""
    name = (name or "").strip()
    if not name:
        raise InvalidSiteError("type the site's name (e.g. blog.example.com)")
    host = _host(name)
    if host:
        origin = validation.origin(name) or name
        raise InvalidSiteError(f"invalid site {name[:100]!r}: a site is named, not addressed: "
                               f"name it {host} and give {origin} as its origin")
    if not register(db, name, "admin", **form_settings(tz, origins, agents)):
        raise InvalidSiteError(f"site {name!r} is already registered: change its settings "
                               "on its own page")
    return name


def _host(text: str) -> str | None:
    """The host of an address typed where a name goes (``https://blog.example.com/``)."""
    if "://" not in text:
        return None
    try:
        host = urlsplit(text).hostname
    except ValueError:
        return None
    return host if host and validation.SITE_RE.fullmatch(host) else None


def save(db, name: str, tz: str | None, origins: str | None, agents: str | None,
         visit_minutes=None, source: str | None = None) -> SiteSettings:
    """The settings form saved; a visit timeout left empty, a primary source not
    chosen, are not changed."""
    settings = form_settings(tz, origins, agents)
    if visit_minutes not in (None, ""):
        settings["visit_minutes"] = _whole_minutes(visit_minutes)
    if source:
        settings["primary_source"] = source
    return update_site(db, name, **settings)


def _whole_minutes(value) -> int | object:
    """A number box's value as whole minutes (``30.0`` is 30); anything else as sent,
    for the registry to refuse in words."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def saved_words(settings: SiteSettings) -> str:
    origins = ", ".join(settings.origins) or "any origin"
    agents = {"human": "people", "bot": "bots"}.get(settings.unknown_agents,
                                                   settings.unknown_agents)
    return (f"Saved. Time zone {settings.tz or 'not set'} · beacon hits from {origins} · "
            f"hits without a user agent count as {agents} · a visit ends after "
            f"{settings.visit_minutes} minutes without a pageview · its counters count "
            f"{SOURCE_WORDS.get(settings.primary_source, 'the first source to feed it')}.")


def goals_of(db, name: str) -> list[tuple[str, str]]:
    """The site's goals as ``(kind, value)``, in the order they were added."""
    return [tuple(goal) for goal in site_settings(db, name).goals]


def add_goal(db, name: str, kind: str | None, value: str | None) -> str:
    """A goal from the form added; returns what was done, in words."""
    wanted = goal(kind or "", (value or "").strip())
    if not sites.add_goal(db, name, wanted):
        return f"{wanted.label} is already a goal."
    return f"Added the goal {wanted.label}."


def remove_goal(db, name: str, index: int) -> str:
    """The ``index``-th goal removed (as listed); returns what was done."""
    goals = site_settings(db, name).goals
    if not 0 <= index < len(goals):
        raise InvalidSiteError("that goal is no longer there: the list is shown again")
    sites.remove_goal(db, name, goals[index])
    return f"Removed the goal {goals[index].label}."


def remove(db, name: str, with_data: bool, typed: str | None) -> str:
    """Unregister ``name``, or with ``with_data`` delete everything it holds once
    ``typed`` is its name; returns what was done, in words."""
    name = validation.site(name)
    if not with_data:
        if not unregister(db, name):
            raise InvalidSiteError(f"site {name!r} is not registered")
        return (f"Unregistered {name}: the beacon refuses its hits from now on; its counts "
                "stay.")
    if (typed or "").strip() != name:
        raise InvalidSiteError(f"type the site's name, {name}, to confirm deleting its data")
    removed = sitedata.remove(db, name)
    documents = sum(removed.values())
    return (f"Deleted {name} and its data: {documents:,} document"
            f"{'s' if documents != 1 else ''} from {len(removed)} collection"
            f"{'s' if len(removed) != 1 else ''}." if removed else f"Deleted {name}: it held "
            "nothing.")


def script_url(base: str) -> str:
    """The tracking script's address on this server (``base``: its public URL)."""
    return base.rstrip("/") + "/hit.js"


def edit_name(query: Mapping[str, list[str]]) -> str | None:
    values = query.get(EDIT_KEY) or []
    return values[0] if values and values[0] else None
