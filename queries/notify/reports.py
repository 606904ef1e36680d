"""Email reports: the due ones sent by the scheduler (``run_due``), one sent or written now
(``send_report``). A report is claimed by its site, period, period start and recipient
before it is built, so a restart, a second worker or a cron never sends it twice, and a
due report missed while nothing ran goes out at the next run (the latest due one alone).

The chart is History's figure as a PNG, drawn by the caller's ``render_chart(frame,
granularity) -> bytes`` (Kaleido, in ``dashboard/``: ``queries`` draws nothing); without
one, or when it fails, the email says the chart is left out and the log says why.
"""

from __future__ import annotations

import datetime as dt
import logging
import uuid

from ..stats.sites import site_settings
from . import deliveries, report_mail
from .figures import Report, gather
from .periods import check_period, last_send, period_before
from .subscriptions import all_reports

log = logging.getLogger(__name__)
NO_CHART = "The chart is left out: {reason}."


def public_base(settings) -> str:
    """Where links start: ``public_url``, else the listen address."""
    return settings.public_url or f"http://{settings.host}:{settings.port}"


def claim_id(site: str, period: str, start: dt.datetime, to: str) -> str:
    return f"report/{site}/{period}/{start.astimezone(dt.UTC):%Y-%m-%dT%H:%MZ}/{to.lower()}"


def run_due(services, now: dt.datetime) -> list[str]:
    """Send every subscription's latest due report not sent yet; their results. One
    that cannot be built (a store error) is logged and tried again at the next run; the
    others go on. A chart is drawn once per site and period, whatever its recipients."""
    results, charts = [], {}
    for sub in all_reports(services.db):
        try:
            results.extend(_due(services, sub, now, charts))
        except Exception:
            log.exception("the %s report of %s to %s could not be built", sub.get("period"),
                          sub.get("site"), sub.get("to"))
    return results


def _due(services, sub: dict, now: dt.datetime, charts: dict) -> list[str]:
    tz = site_settings(services.db, sub["site"]).tz or "UTC"
    due = last_send(sub["period"], sub["hour"], now, tz)
    since = sub.get("since")
    if since is not None and due < _aware(since):
        return []                 # due before it was subscribed to
    start, end = period_before(sub["period"], due, tz)
    key = claim_id(sub["site"], sub["period"], start, sub["to"])
    if services.db[deliveries.CLAIMS].find_one({"_id": key}, {"_id": 1}):
        return []                 # sent (or being sent): nothing to build
    return [deliver_report(services, sub["site"], sub["period"], start, end, tz, sub["to"],
                           sub.get("token"), key, charts)]


def send_report(services, site: str, period: str, to: str, end: dt.datetime) -> str:
    """Send the report of the last complete ``period`` before ``end`` to ``to`` now,
    whatever the schedule (``hitboard reports send``)."""
    tz = site_settings(services.db, site).tz or "UTC"
    start, stop = period_before(check_period(period), end, tz)
    token = _token(services.db, site, period, to)
    key = f"{claim_id(site, period, start, to)}/now/{uuid.uuid4().hex[:12]}"
    return deliver_report(services, site, period, start, stop, tz, to, token, key)


def deliver_report(services, site, period, start, end, tz, to, token, key,
                   charts: dict | None = None) -> str:
    fields = message(services, site, period, start, end, tz, token, charts)
    return deliveries.deliver(services, claim_id=key, site=site, channel="email", to=to,
                              **fields)


def message(services, site: str, period: str, start: dt.datetime, end: dt.datetime,
            tz: str, token: str | None, charts: dict | None = None) -> dict:
    """``deliver``'s keyword arguments for the report: subject, text, html, images,
    headers (RFC 8058's one-click unsubscribe when it is a subscription's). ``charts``:
    those drawn already in this run, by site, period and start."""
    base = public_base(services.settings)
    report = gather(services.db, site, period, start, end, tz, base)
    drawn = (site, period, start, tz)
    if charts is not None and drawn in charts:
        png, note = charts[drawn]
    else:
        png, note = _chart(services, report)
        if charts is not None:
            charts[drawn] = png, note
    unsubscribe = f"{base}/unsubscribe/{token}" if token else None
    headers = ({"List-Unsubscribe": f"<{unsubscribe}>",
                "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"} if token else {})
    return {"subject": report_mail.subject(report),
            "text": report_mail.text_part(report, note, unsubscribe),
            "html": report_mail.html_part(report, note, png is not None, unsubscribe),
            "images": {report_mail.CHART_CID: png} if png is not None else None,
            "headers": headers}


def _chart(services, report: Report) -> tuple[bytes | None, str]:
    render = getattr(services, "render_chart", None)
    if render is None:
        reason = "this process draws no charts"
    else:
        try:
            return render(report.chart, "day"), ""
        except Exception as exc:      # no browser for Kaleido, most often
            reason = f"{type(exc).__name__}: {exc}"[:200]
    log.warning("report of %s without its chart: %s", report.site, reason)
    return None, NO_CHART.format(reason="no chart could be drawn here (see the server's log)"
                                 if render is not None else reason)


def _token(db, site: str, period: str, to: str) -> str | None:
    for sub in all_reports(db, site):
        if sub["period"] == period and sub["to"].lower() == to.lower():
            return sub.get("token")
    return None


def _aware(moment: dt.datetime) -> dt.datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)
