"""Who is told of what: the ``alerts`` list of a site's registry record, beside its
goals: ``{id, page, kind, for, email | webhook, secret, format, during_loadgen}``. ``page`` is
None for the whole site; ``for`` the window in minutes; a webhook's ``secret`` signs its
bodies (shown once, when the alert is added), its ``format`` the body: ``text`` (Slack's
and Mattermost's ``{"text": …}``) or ``json`` (hitboard's whole document)."""

from __future__ import annotations

import datetime as dt
import re
import secrets

from ... import validation
from ...errors import HitboardError
from ...reads.expected import MIN_WEEKS, first_day
from ...stats import schema
from ..channels import check_address, check_url

KINDS = ("above", "below", "stopped")
FORMATS = ("text", "json")  # a webhook's body: Slack/Mattermost's {"text": …}, or all of it
DEFAULT_MINUTES = 15
MAX_MINUTES = 1440
MAX_ALERTS = 50             # a site
_ID = re.compile(r"[A-Za-z0-9_-]{6,32}")


class AlertError(HitboardError):
    """An alert's site, kind, window, page or channel is not acceptable."""


def check_kind(value) -> str:
    if value not in KINDS:
        raise AlertError(f"unknown kind {str(value)[:20]!r}: use one of {', '.join(KINDS)}")
    return value


def check_minutes(value) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise AlertError(f"the window (--for) is whole minutes from 1 to {MAX_MINUTES:,}")
    try:
        minutes = int(value)
    except ValueError:
        raise AlertError(f"the window (--for) is whole minutes from 1 to "
                         f"{MAX_MINUTES:,}") from None
    if not 1 <= minutes <= MAX_MINUTES:
        raise AlertError(f"the window (--for) of {minutes} minutes is outside "
                         f"1–{MAX_MINUTES:,}")
    return minutes


def check_page(value) -> str | None:
    if value in (None, "", validation.WHOLE_SITE):
        return None
    try:
        return validation.page(value)
    except HitboardError as exc:
        raise AlertError(str(exc)) from None


def add_alert(db, site: str, kind: str, minutes=DEFAULT_MINUTES, *, page=None,
              email: str | None = None, webhook: str | None = None,
              during_loadgen: bool = False, fmt: str = "text") -> dict:
    """Store one alert for a registered site; the alert, its webhook's ``secret``
    included (shown once: ``alerts_of`` leaves it out)."""
    name = _registered(db, site)
    alert = {"id": secrets.token_hex(4), "page": check_page(page), "kind": check_kind(kind),
             "for": check_minutes(minutes), "during_loadgen": bool(during_loadgen)}
    if (email is None) == (webhook is None):
        raise AlertError("give the alert one channel: --email ADDR or --webhook URL")
    if email is not None:
        if fmt != "text":
            raise AlertError("--format json is a webhook's body: give --webhook URL")
        alert["email"] = check_address(email)
    else:
        alert["webhook"] = check_url(webhook)
        alert["secret"] = secrets.token_urlsafe(24)
        if fmt not in FORMATS:
            raise AlertError(f"unknown format {str(fmt)[:20]!r}: text or json")
        alert["format"] = fmt
    held = _stored(db, name)
    if len(held) >= MAX_ALERTS:
        raise AlertError(f"at most {MAX_ALERTS} alerts a site")
    _store(db, name, [*held, alert])
    return alert


def remove_alert(db, alert_id: str, site: str | None = None) -> str | None:
    """Remove the alert ``alert_id`` (of ``site``, if given); its site, or None."""
    if not isinstance(alert_id, str) or not _ID.fullmatch(alert_id):
        raise AlertError(f"{str(alert_id)[:40]!r} is not an alert id (see `hitboard alerts "
                         "list`)")
    for held in all_alerts(db, site, secrets_too=True):
        if held["id"] == alert_id:
            kept = [a for a in _stored(db, held["site"]) if a.get("id") != alert_id]
            _store(db, held["site"], kept)
            return held["site"]
    return None


def alerts_of(db, site: str, secrets_too: bool = False) -> list[dict]:
    """The site's alerts, oldest first; without webhook secrets unless asked."""
    return [_shown(a, secrets_too) for a in _stored(db, validation.site(site))]


def all_alerts(db, site: str | None = None, secrets_too: bool = False) -> list[dict]:
    """Every alert (of ``site``), each with its ``site``, by site."""
    query = {"alerts.0": {"$exists": True}} if site is None else {"_id": validation.site(site)}
    return [{"site": doc["_id"], **_shown(a, secrets_too)}
            for doc in db[schema.SITES].find(query, {"alerts": 1}).sort("_id", 1)
            for a in doc.get("alerts") or () if isinstance(a, dict) and "id" in a]


def watched(db, site: str) -> frozenset[str]:
    """The kinds the site's whole-site alerts watch: their checker notes those
    incidents, so Live's banner does not note them again."""
    return frozenset(a["kind"] for a in _stored(db, validation.site(site))
                     if not a.get("page") and a.get("kind") in KINDS)


def active_from(db, site: str) -> dt.datetime | None:
    """The first UTC day the site's alerts can fire: ``MIN_WEEKS`` weeks after its first
    day of traffic (None: no traffic yet)."""
    first = first_day(db, site)
    return None if first is None else first + dt.timedelta(weeks=MIN_WEEKS)


def channel(alert: dict) -> tuple[str, str]:
    """("email", address) or ("webhook", URL)."""
    return ("email", alert["email"]) if alert.get("email") else ("webhook", alert["webhook"])


def _shown(alert: dict, secrets_too: bool) -> dict:
    shown = {key: alert.get(key) for key in ("id", "page", "kind", "for", "during_loadgen")}
    shown.update({k: alert[k] for k in ("email", "webhook", "format") if alert.get(k)})
    if secrets_too and alert.get("secret"):
        shown["secret"] = alert["secret"]
    return shown


def _stored(db, name: str) -> list[dict]:
    doc = db[schema.SITES].find_one({"_id": name}, {"alerts": 1}) or {}
    return [dict(a) for a in doc.get("alerts") or () if isinstance(a, dict)]


def _store(db, name: str, alerts: list[dict]) -> None:
    db[schema.SITES].update_one({"_id": name}, {"$set": {"alerts": alerts}})


def _registered(db, site: str) -> str:
    name = validation.site(site)
    if db[schema.SITES].find_one({"_id": name}, {"_id": 1}) is None:
        raise AlertError(f"unknown site {name!r}: add it first (`hitboard site add {name}`)")
    return name
