"""The scheduler's alerts step: each alert's window against its band, one incident per
excursion, one alert and one "back to normal" per incident and channel.

Every send is claimed (``alert/<incident>/<state>/<alert id>``), the incident's note
has a deterministic id, and the state lives in the store, so any number of workers and a
cron may run this at once and a restart repeats nothing. An alert's channel hears of an
incident's end only if it heard of its start.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections import defaultdict

from ... import validation
from ...reads.expected import WindowBand, window_band
from ...stats import schema
from ...stats.generator_state import STATE_ID
from ...stats.sites import site_settings
from .. import deliveries
from . import incidents, messages
from .rules import all_alerts, channel

log = logging.getLogger(__name__)


def run_due(services, now: dt.datetime) -> int:
    """Check every site's alerts at ``now``; the sends made. One site failing is
    logged, the others still checked."""
    now = validation.timestamp(now)
    by_site: dict[str, list[dict]] = defaultdict(list)
    for alert in all_alerts(services.db, secrets_too=True):
        by_site[alert["site"]].append(alert)
    sent = 0
    for site, alerts in by_site.items():
        try:
            sent += check_site(services, site, alerts, now)
        except Exception:
            log.exception("alerts of %s not checked", site)
    return sent


def check_site(services, site: str, alerts: list[dict], now: dt.datetime) -> int:
    db = services.db
    tz = site_settings(db, site).tz or "UTC"
    generated = _generating(db, site)
    windows: dict[tuple, list[dict]] = defaultdict(list)
    for alert in alerts:
        windows[(alert.get("page"), alert["for"])].append(alert)
    sent = 0
    for (page, minutes), group in windows.items():
        band = window_band(db, site, now, minutes, [page] if page else None, tz)
        if band is None:        # under MIN_WEEKS weeks of history: no band, no alert
            continue
        for kind in sorted({a["kind"] for a in group}):
            told = [a for a in group if a["kind"] == kind
                    and (a.get("during_loadgen") or not generated)]
            sent += _step(services, site, page, kind, band, told, tz)
    return sent


def _step(services, site, page, kind, band: WindowBand, alerts: list[dict], tz: str) -> int:
    """Open, extend or resolve the incident of (site, page, kind, window); tell
    ``alerts`` (those not muted) what they have not been told."""
    db = services.db
    previous = incidents.latest(db, site, page, kind, band.minutes)
    is_open = previous is not None and previous.get("resolved") is None
    if band.outside(kind):
        if is_open:
            incidents.extend(db, previous, band.end)
            incident = previous
        elif alerts and incidents.may_open(previous, band.end):
            incident = incidents.open_incident(db, site, page, kind, band.minutes, band.end,
                                               messages.note_text(kind, band, page))
        else:
            return 0
        return _tell(services, "alert", incident, alerts, kind, site, page, band, tz)
    if previous is None:
        return 0
    if is_open:
        incidents.resolve(db, previous, band.end)
    elif validation.stored_time(previous["resolved"]) + incidents.QUIET < band.end:
        return 0            # long told (or a send cut off long ago: not retried)
    return _tell(services, "resolved", previous, alerts, kind, site, page, band, tz)


def _tell(services, state, incident, alerts, kind, site, page, band, tz) -> int:
    db = services.db
    sent = 0
    for alert in alerts:
        key = f"alert/{incident['_id']}/{state}/{alert['id']}"
        opened = f"alert/{incident['_id']}/alert/{alert['id']}"
        if db[deliveries.CLAIMS].find_one({"_id": key}, {"_id": 1}) is not None:
            continue
        if state == "resolved" and db[deliveries.CLAIMS].find_one({"_id": opened}) is None:
            continue        # never told of the start (muted, or added since)
        how, to = channel(alert)
        content = messages.message(state=state, kind=kind, site=site, page=page, band=band,
                                   tz=tz, base=_base(services.settings),
                                   incident=str(incident["_id"]),
                                   since=validation.stored_time(incident["time"]))
        if how == "email" or alert.get("format") != "json":
            content["payload"] = None       # a webhook's body: Slack's {"text": …}
        result = deliveries.deliver(services, claim_id=key, site=site, channel=how, to=to,
                                    **content)
        sent += result in ("sent", "queued")
    return sent


def _generating(db, site: str) -> bool:
    """The load generator runs on ``site``: a synthetic site while its last command was
    a start."""
    doc = db[schema.SITES].find_one({"_id": site}, {"synthetic": 1}) or {}
    if not doc.get("synthetic"):
        return False
    state = db[schema.CHECKPOINTS].find_one({"_id": STATE_ID}) or {}
    return bool(state.get("running"))


def _base(settings) -> str:
    """Where links start: ``public_url``, else the listen address."""
    return getattr(settings, "public_url", None) or f"http://{settings.host}:{settings.port}"
