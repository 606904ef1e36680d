"""A share page's HTML: plain markup (no Dash, so no callback a holder could call with
another site), every stored name escaped; the figures come from the link's own data
route, drawn by ``static/share.js`` with Plotly."""

from __future__ import annotations

import json
from urllib.parse import urlencode

from markupsafe import Markup, escape

from dashboard.ranges import PRESETS
from queries.shares import Share

from .views import Params

STATIC = "/share/static"
RANGES = ("today", "yesterday", "7d", "30d", "90d", "12m", "all")


def _config(values: dict) -> Markup:
    """JSON the page's script reads, safe inside ``<script>`` (no ``</script>``)."""
    text = json.dumps(values).replace("<", "\\u003c").replace(">", "\\u003e")
    return Markup(text.replace("&", "\\u0026"))


def _head(title: str, params: Params) -> str:
    return (f'<!doctype html><html lang="en" data-theme="{params.theme}"><head>'
            '<meta charset="utf-8"><meta name="viewport" '
            'content="width=device-width, initial-scale=1">'
            '<meta name="referrer" content="no-referrer">'
            f'<title>{escape(title)}</title>'
            f'<link rel="stylesheet" href="{STATIC}/share.css">'
            f'<script src="{STATIC}/plotly.min.js" defer></script>'
            f'<script src="{STATIC}/share.js" defer></script></head>')


def _body_class(params: Params) -> str:
    return " ".join(["share", f"theme-{params.theme}",
                     *(["embed"] if params.embed else []),
                     *(["transparent"] if params.transparent else [])])


def _link(base: str, params: Params, **changes) -> str:
    query = {**params.query(), **changes}
    query = {k: v for k, v in query.items() if v is not None}
    return f"{base}?{urlencode(query)}" if query else base


def share_page(base: str, share: Share, params: Params, live: bool) -> str:
    """The page of a link (``base``: its path, ``/share/<token>``): History and, when
    the filter allows it, Live; ``embed`` drops the header and the range links."""
    scope = escape(share.site) + (Markup(" · ") + escape(share.filter_text)
                                  if share.filter else "")
    if params.embed:
        head = Markup(f'<p class="share-caption" id="share-site">{scope}</p>')
    else:
        ranges = Markup("").join(
            Markup('<a class="share-range{}" href="{}">{}</a>').format(
                " active" if name == params.range else "",
                _link(base, params, range=name, start=None, end=None), PRESETS[name])
            for name in RANGES)
        head = Markup(
            '<header class="share-head"><span class="brand">hitboard</span>'
            '<h1 id="share-site">{}</h1><span class="hint">read-only view</span>'
            '<nav class="share-ranges">{}</nav></header>').format(scope, ranges)
    csv = _link(f"{base}/history.csv", params)
    live_part = Markup(
        '<section class="card" id="share-live"><h2>Live · hits per minute</h2>'
        '<div class="kpis" id="share-live-kpis"></div>'
        '<div class="graph" id="share-live-graph"></div></section>') if live else Markup(
        '<p class="hint" id="share-live">Live counts pages alone: this link\'s filter '
        'is shown in History.</p>')
    config = {"data": _link(f"{base}/data", params), "live": _link(f"{base}/live", params),
              "refresh_ms": 10_000 if live else 0}
    return _head(f"hitboard · {share.site}", params) + str(Markup(
        '<body class="{}">{}<main>'
        '<section class="card" id="share-history"><h2>History</h2>'
        '<p class="hint" id="share-period"></p>'
        '<div class="kpis" id="share-kpis"></div>'
        '<div class="graph" id="share-history-graph"></div>'
        '<p><a id="share-csv" href="{}" download>Download CSV</a></p></section>'
        '<section class="card" id="share-panels"><div class="panels" id="share-tables">'
        '</div><p class="hint" id="share-notes"></p></section>'
        '{}<p class="alert" id="share-alert" role="status"></p></main>'
        '<script type="application/json" id="share-config">{}</script>'
        '</body></html>').format(_body_class(params), head, csv, live_part,
                                 _config(config)))


def password_page(base: str, params: Params) -> str:
    """A password link before it is unlocked: nothing of the site, not even its name."""
    config = {"unlock": f"{base}/unlock"}
    return _head("hitboard · shared view", params) + str(Markup(
        '<body class="{}"><main class="share-lock card">'
        '<h1>This shared view needs a password</h1>'
        '<form id="share-unlock"><label for="share-password">Password</label>'
        '<input type="password" id="share-password" autocomplete="current-password" '
        'required><button class="btn" type="submit">Open</button></form>'
        '<p class="alert" id="share-alert" role="status"></p></main>'
        '<script type="application/json" id="share-config">{}</script>'
        '</body></html>').format(_body_class(params), _config(config)))
