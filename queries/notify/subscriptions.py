"""Who gets which report: the ``reports`` list of a site's registry record, beside its
goals: ``{period, to, hour, token, since}``. ``token`` is the subscription's own
unsubscribe secret (RFC 8058's one-click link); ``since`` keeps a new subscription from
receiving the report that was due before it existed."""

from __future__ import annotations

import datetime as dt
import re
import secrets

from .. import validation
from ..errors import InvalidSiteError
from ..stats import schema
from ..stats.sites import site_settings
from .channels import check_address
from .periods import DEFAULT_HOUR, check_hour, check_period

MAX_REPORTS = 50            # subscriptions a site
_TOKEN = re.compile(r"[A-Za-z0-9_-]{20,64}")


def add_report(db, site: str, period: str, to: str, hour: int = DEFAULT_HOUR,
               now: dt.datetime | None = None) -> tuple[dict, bool]:
    """Subscribe ``to`` to ``site``'s report of ``period`` at ``hour`` local; (the
    subscription, whether it is new). The same address and period again changes the
    hour only."""
    name = _registered(db, site)
    period, to, hour = check_period(period), check_address(to), check_hour(hour)
    held = reports_of(db, name)
    for held_one in held:
        if held_one["period"] == period and held_one["to"].lower() == to.lower():
            held_one["hour"] = hour
            _store(db, name, held)
            return held_one, False
    if len(held) >= MAX_REPORTS:
        raise InvalidSiteError(f"at most {MAX_REPORTS} report subscriptions a site")
    added = {"period": period, "to": to, "hour": hour, "token": secrets.token_urlsafe(24),
             "since": now or dt.datetime.now(dt.UTC)}
    _store(db, name, [*held, added])
    return added, True


def remove_report(db, site: str, period: str, to: str) -> bool:
    """Unsubscribe ``to`` from ``site``'s report of ``period``; False if it was not."""
    name = _registered(db, site)
    period, to = check_period(period), check_address(to)
    held = reports_of(db, name)
    kept = [r for r in held if not (r["period"] == period and r["to"].lower() == to.lower())]
    if len(kept) == len(held):
        return False
    _store(db, name, kept)
    return True


def reports_of(db, site: str) -> list[dict]:
    doc = db[schema.SITES].find_one({"_id": site}, {"reports": 1}) or {}
    return [dict(r) for r in doc.get("reports") or () if isinstance(r, dict)]


def all_reports(db, site: str | None = None) -> list[dict]:
    """Every subscription (of ``site``), each with its ``site``, by site."""
    query = {} if site is None else {"_id": validation.site(site)}
    return [{"site": doc["_id"], **r} for doc in
            db[schema.SITES].find(query, {"reports": 1}).sort("_id", 1)
            for r in doc.get("reports") or () if isinstance(r, dict)]


def by_token(db, token: str) -> dict | None:
    """The subscription holding ``token`` (with its ``site``), or None."""
    if not isinstance(token, str) or not _TOKEN.fullmatch(token):
        return None
    found = [r for r in all_reports(db) if secrets.compare_digest(r["token"], token)]
    return found[0] if found else None


def unsubscribe(db, token: str) -> dict | None:
    """Remove the one subscription holding ``token``; it, or None if none does."""
    found = by_token(db, token)
    if found is None:
        return None
    held = reports_of(db, found["site"])
    _store(db, found["site"], [r for r in held if r["token"] != token])
    return found


def _store(db, site: str, reports: list[dict]) -> None:
    db[schema.SITES].update_one({"_id": site}, {"$set": {"reports": reports}})


def _registered(db, site: str) -> str:
    if not site_settings(db, site).registered:
        raise InvalidSiteError(f"site {str(site)[:100]!r} is not registered: add it first")
    return validation.site(site)
