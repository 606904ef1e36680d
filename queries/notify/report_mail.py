"""A report as an email's two parts, the same figures in each: plain text, and HTML whose
every name (site, page, referrer, goal, note) is escaped text, its chart an inline image
(``cid:chart``: mail clients block remote ones)."""

from __future__ import annotations

import calendar
import datetime as dt
from html import escape

from .. import validation
from .figures import METRICS, Report

CHART_CID = "chart"
RATES = ("bounce_rate",)            # changes in points, the others in percent


def subject(report: Report) -> str:
    return f"{report.site}: {period_name(report)} report"


def period_name(report: Report) -> str:
    zone = validation.timezone(report.tz)
    first = report.start.astimezone(zone).date()
    if report.period == "month":
        return f"{calendar.month_name[first.month]} {first.year}"
    last = (report.end.astimezone(zone) - dt.timedelta(days=1)).date()
    return f"week of {first.isoformat()} to {last.isoformat()}"


def shown(key: str, value: float | None) -> str:
    if value is None:
        return "–"
    if key == "bounce_rate":
        return f"{value:.1f} %"
    if key == "visit_duration":
        minutes, seconds = divmod(round(value), 60)
        return f"{minutes} min {seconds:02d} s" if minutes else f"{seconds} s"
    if key == "views_per_visit":
        return f"{value:.2f}"
    return f"{int(value):,}"


def change(key: str, value: float | None, before: float | None) -> str:
    """Against the previous period: points for a rate, percent otherwise."""
    if value is None or before is None:
        return "no previous figure"
    if key in RATES:
        return f"{_signed(value - before)} pts"
    if before == 0:
        return "new" if value else "±0 %"
    return f"{_signed(100 * (value - before) / before)} %"


def _signed(number: float) -> str:
    """One decimal with its sign, ±0.0 when it rounds to nothing (never "-0.0")."""
    shown = f"{number:+.1f}"
    return "±0.0" if shown in ("+0.0", "-0.0") else shown


def text_part(report: Report, chart_note: str, unsubscribe: str | None) -> str:
    lines = [f"{report.site}, {period_name(report)} ({report.tz})", ""]
    lines += [f"{label}: {shown(key, report.figures[key])} "
              f"({change(key, report.figures[key], report.before[key])})"
              for key, label in METRICS]
    if chart_note:
        lines += ["", chart_note]
    for title, rows in (("Top pages", report.pages), ("Top referrers", report.referrers)):
        lines += ["", f"{title}:"] + ([f"  {name}  {hits:,}" for name, hits in rows]
                                      or ["  none"])
    if report.goals:
        lines += ["", "Goals (conversions, revenue):"]
        lines += [f"  {name}  {n:,}  {revenue}".rstrip() for name, n, revenue in report.goals]
    if report.notes:
        lines += ["", "Notes:"] + [f"  {_when(t, report.tz)}  {text}"
                                   for t, text in report.notes]
    lines += ["", f"In History: {report.link}"]
    if unsubscribe:
        lines += ["", f"Unsubscribe: {unsubscribe}"]
    return "\n".join(lines) + "\n"


def html_part(report: Report, chart_note: str, with_chart: bool,
              unsubscribe: str | None) -> str:
    e = escape
    rows = "".join(
        f"<tr><td>{e(label)}</td><td style='text-align:right'><b>"
        f"{e(shown(key, report.figures[key]))}</b></td><td style='color:#666'>"
        f"{e(change(key, report.figures[key], report.before[key]))}</td></tr>"
        for key, label in METRICS)
    parts = [f"<h2>{e(report.site)}</h2><p>{e(period_name(report))} ({e(report.tz)})</p>",
             f"<table cellpadding='4'>{rows}</table>"]
    if with_chart:
        parts.append(f"<p><img src='cid:{CHART_CID}' alt='Hits per day' width='700' "
                     "style='max-width:100%;height:auto'></p>")
    else:
        parts.append(f"<p><i>{e(chart_note)}</i></p>")
    for title, found in (("Top pages", report.pages), ("Top referrers", report.referrers)):
        items = "".join(f"<tr><td>{e(name)}</td><td style='text-align:right'>{hits:,}</td>"
                        "</tr>" for name, hits in found) or "<tr><td>none</td></tr>"
        parts.append(f"<h3>{title}</h3><table cellpadding='2'>{items}</table>")
    if report.goals:
        items = "".join(f"<tr><td>{e(name)}</td><td style='text-align:right'>{n:,}</td>"
                        f"<td>{e(revenue)}</td></tr>" for name, n, revenue in report.goals)
        parts.append("<h3>Goals</h3><table cellpadding='2'><tr><th>goal</th>"
                     f"<th>conversions</th><th>revenue</th></tr>{items}</table>")
    if report.notes:
        items = "".join(f"<li>{e(_when(t, report.tz))}: {e(text)}</li>"
                        for t, text in report.notes)
        parts.append(f"<h3>Notes</h3><ul>{items}</ul>")
    parts.append(f"<p><a href='{e(report.link, quote=True)}'>Open in History</a></p>")
    if unsubscribe:
        parts.append(f"<p style='color:#666;font-size:small'><a href='"
                     f"{e(unsubscribe, quote=True)}'>Unsubscribe</a></p>")
    return ("<!DOCTYPE html><html><head><meta name='viewport' content='width=device-width'>"
            "</head><body style='font-family:sans-serif'><div style='max-width:700px'>"
            + "".join(parts) + "</div></body></html>")


def _when(moment: dt.datetime, tz: str) -> str:
    return moment.astimezone(validation.timezone(tz)).strftime("%Y-%m-%d %H:%M")
