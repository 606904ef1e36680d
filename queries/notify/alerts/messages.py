"""What an alert says: the site, the window, observed against expected, links to Live
and to History of that window, as an email (text and HTML) and as a webhook's JSON
(``text`` for Slack/Mattermost, the rest for ``--format json``)."""

from __future__ import annotations

import datetime as dt
import html
from urllib.parse import urlencode

from ...reads.expected import WindowBand

HEADLINES = {"above": "traffic above the expected range",
             "below": "traffic below the expected range",
             "stopped": "traffic stopped"}


def note_text(kind: str, band: WindowBand, page: str | None) -> str:
    """The incident's note: what the charts and Live's banner show."""
    where = f" on {page}" if page else ""
    return (f"{HEADLINES[kind].capitalize()}{where}: {band.current:,} hits in the last "
            f"{band.minutes} minutes, usually {band.low:,.0f}–{band.high:,.0f}")


def links(base: str, site: str, page: str | None, band: WindowBand, tz: str) -> dict:
    """Live of the site and History of the window, in the site's zone."""
    shell = {"site": site, "tz": tz, **({"page": page} if page else {})}
    start, end = (t.astimezone(band.zone) for t in (band.start, band.end))
    span = {"range": "custom", "start": f"{start:%Y-%m-%dT%H:%M}",
            "end": f"{end:%Y-%m-%dT%H:%M}", "gran": "minute"}
    base = base.rstrip("/")
    return {"live": f"{base}/?{urlencode(shell)}",
            "history": f"{base}/history?{urlencode({**shell, **span})}"}


def message(*, state: str, kind: str, site: str, page: str | None, band: WindowBand,
            tz: str, base: str, incident: str, since: dt.datetime | None = None) -> dict:
    """``deliver``'s keyword arguments (but the claim and channel) for the incident's
    ``alert`` or its ``resolved`` notice."""
    start, end = (t.astimezone(band.zone) for t in (band.start, band.end))
    window = f"{start:%a %d %b %H:%M}–{end:%H:%M} ({tz})"
    where = f" {page}" if page else ""
    urls = links(base, site, page, band, tz)
    if state == "alert":
        head = f"{site}{where}: {HEADLINES[kind]}"
    else:
        began = (f" since {since.astimezone(band.zone):%H:%M}" if since is not None else "")
        head = f"{site}{where}: back to normal ({HEADLINES[kind]}{began})"
    figures = (f"{band.current:,} hits in the last {band.minutes} minutes, {window}; "
               f"expected {band.low:,.0f}–{band.high:,.0f} (median {band.usual:,.0f}, "
               f"{band.weeks} past weeks)")
    text = f"{head}\n{figures}\nLive: {urls['live']}\nHistory: {urls['history']}\n"
    body = (f"<p><strong>{html.escape(head)}</strong></p><p>{html.escape(figures)}</p>"
            f"<p><a href=\"{html.escape(urls['live'])}\">Live</a> · "
            f"<a href=\"{html.escape(urls['history'])}\">History of the window</a></p>")
    payload = {"event": "alert" if state == "alert" else "resolved", "kind": kind,
               "site": site, "page": page, "incident": incident,
               "window": {"start": band.start.isoformat(), "end": band.end.isoformat(),
                          "minutes": band.minutes},
               "observed": band.current,
               "expected": {"low": band.low, "median": band.usual, "high": band.high,
                            "weeks": band.weeks},
               "links": urls, "text": f"{head}: {figures}"}
    subject = f"[hitboard] {head}"
    return {"subject": subject, "text": text, "html": body, "payload": payload}
