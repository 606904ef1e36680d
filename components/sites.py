"""The Sites page's pieces: the registered sites as a table, the form that adds one, a
site's settings form, its goals, its tracking tag and its danger zone.

Rows and settings come in as plain dicts (the page computes them); every name, origin
and zone is a child string, so React renders it as text, never markup. ``disabled``
draws a control greyed out for a visitor who may not change anything: it is shown, not
hidden, and the page says why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from dash import dcc, html

AGENT_LABELS = {"human": "people", "bot": "bots"}
COLUMNS = ("Site", "Registered", "Origins", "Time zone", "No user agent", "Last hit")
NAME_HINT = "1 to 64 letters, digits, '.', '_' or '-' (e.g. blog.example.com)"
VISITS_HINT = ("Minutes without a pageview (1 to 1,440; 30 by default). Visits counted "
               "before keep the timeout they were cut with.")
ORIGINS_HINT = ("One per line, scheme://host[:port]. A browser's beacon hits must then "
                "come from one of them; none: from anywhere.")
SOURCE_LABELS = {"log": "its access log", "beacon": "its beacon"}
SOURCE_HINT = ("The source its counters count; the other's hits are kept apart for the "
               "Sources page, never counted twice. Not set: the first that feeds it. A "
               "change applies to hits from then on.")
GOAL_KINDS = {"event": "Custom event", "page": "Page visit"}
GOALS_HINT = ("An event's name as the site sends it (Signup), or pages: * is one path "
              "segment, ** anything (/blog/*, /checkout/**). Goals count past data too.")
AGENTS_HINT = ("How hits counted from now on that carry no user agent (every line of a "
               "common-format log) count; counts already made stay as they are.")


def _muted(text: str) -> html.Span:
    return html.Span(text, className="muted")


def sites_table(rows: Sequence[Mapping], table_id: str = "sites-table") -> html.Table:
    """One row per site: ``name``, ``href`` (its settings), ``synthetic``, ``via`` (who
    registered it, in words), ``registered`` and ``last_hit`` (formatted, or None),
    ``origins``, ``tz`` (None: not set), ``agents`` (human or bot)."""
    head = html.Thead(html.Tr([html.Th(name) for name in COLUMNS]))
    body = html.Tbody([_row(row) for row in rows])
    return html.Table([head, body], id=table_id,
                      className="totals sites-table stack-on-phone")


def _row(row: Mapping) -> html.Tr:
    name = [dcc.Link(row["name"], href=row["href"], className="site-name")]
    if row.get("synthetic"):
        name.append(html.Span("synthetic", className="site-tag"))
    agents = AGENT_LABELS.get(row["agents"], row["agents"])
    cells = (
        (html.Span(name, className="site-name-cell"), "site-cell"),
        ([html.Span(row["registered"] or "–", className="nowrap"), html.Br(),
          _muted(f"by {row['via']}")], ""),
        (_origins(row["origins"]), "origins-cell"),
        (row["tz"] or _muted("not set"), ""),
        (agents, ""),
        (html.Span(row["last_hit"], className="nowrap") if row["last_hit"]
         else _muted("never"), ""),
    )
    return html.Tr([html.Td(content, className=css or None, **{"data-label": label})
                    for (content, css), label in zip(cells, COLUMNS, strict=True)])


def _origins(origins: Sequence[str]):
    if not origins:
        return _muted("any origin")
    return html.Ul([html.Li(origin) for origin in origins], className="plain-list")


def add_form(zones: Sequence[str], disabled: bool) -> html.Section:
    """The form that registers a site: name, and optionally its zone, origins and how
    hits without a user agent count."""
    return html.Section(className="card", children=[
        html.H2("Add a site", className="card-title"),
        html.Div(className="site-form", children=[
            _field("Name", "sites-add-name", NAME_HINT, dcc.Input(
                id="sites-add-name", type="text", placeholder="blog.example.com",
                debounce=False, autoComplete="off", disabled=disabled,
                className="text-input", maxLength=200)),
            *_settings_fields("sites-add", None, "human", (), zones, disabled),
        ]),
        html.Div(className="toolbar", children=[
            html.Button("Add site", id="sites-add", n_clicks=0, className="btn btn-primary",
                        disabled=disabled),
        ]),
        html.Div(id="sites-add-status", role="status", className="status-line"),
    ])


def settings_form(tz: str | None, agents: str, origins: Sequence[str],
                  zones: Sequence[str], disabled: bool, visit_minutes: int = 30,
                  source: str | None = None) -> html.Section:
    """A registered site's settings as they are, to change and save."""
    visits = _field("A visit ends after", "sites-visit-minutes", VISITS_HINT, dcc.Input(
        id="sites-visit-minutes", type="number", min=1, max=1440, step=1,
        value=visit_minutes, disabled=disabled, className="text-input minutes-input"))
    counted = _field("Its counters count", "sites-source", SOURCE_HINT, dcc.RadioItems(
        id="sites-source", value=source, inline=True, className="segmented",
        options=[{"label": label, "value": value, "disabled": disabled}
                 for value, label in SOURCE_LABELS.items()]))
    return html.Section(className="card", children=[
        html.H2("Settings", className="card-title"),
        html.Div(className="site-form",
                 children=[*_settings_fields("sites", tz, agents, origins, zones, disabled),
                           visits, counted]),
        html.Div(className="toolbar", children=[
            html.Button("Save", id="sites-save", n_clicks=0, className="btn btn-primary",
                        disabled=disabled),
        ]),
        html.Div(id="sites-save-status", role="status", className="status-line"),
    ])


def _settings_fields(prefix: str, tz: str | None, agents: str, origins: Sequence[str],
                     zones: Sequence[str], disabled: bool) -> list:
    zone_options = list(zones)
    if tz and tz not in zone_options:
        zone_options.append(tz)
    return [
        _field("Time zone", f"{prefix}-tz", "The site's own zone (IANA).", dcc.Dropdown(
            id=f"{prefix}-tz", options=zone_options, value=tz, placeholder="Not set",
            clearable=False, disabled=disabled, className="zone-input")),
        _field("Origins", f"{prefix}-origins", ORIGINS_HINT, dcc.Textarea(
            id=f"{prefix}-origins", value="\n".join(origins), disabled=disabled,
            placeholder="https://blog.example.com", className="text-input origins-input",
            rows=3)),
        _field("Hits without a user agent count as", f"{prefix}-agents", AGENTS_HINT,
               dcc.RadioItems(
                   id=f"{prefix}-agents", value=agents, inline=True, className="segmented",
                   options=[{"label": label, "value": value, "disabled": disabled}
                            for value, label in AGENT_LABELS.items()])),
    ]


def _field(label: str, control_id: str, hint: str, control) -> html.Div:
    return html.Div(className="site-field", children=[
        html.Label(label, htmlFor=control_id, className="field-label"),
        control,
        html.Span(hint, className="hint"),
    ])


def site_summary(name: str, synthetic: bool, via: str, registered: str | None,
                 last_hit: str | None, history_href: str) -> html.Div:
    """The heading of a site's settings: its name, who registered it and when, its last
    hit and a link to its traffic."""
    title = [html.Span(name, className="site-title-name")]
    if synthetic:
        title.append(html.Span("synthetic", className="site-tag"))
    return html.Div(className="site-summary", children=[
        html.H1(title, className="site-title", id="sites-title"),
        html.P(className="hint", children=[
            f"Registered by {via}" + (f" on {registered}" if registered else ""),
            " · ", f"last hit {last_hit}" if last_hit else "no hit yet", " · ",
            dcc.Link("its traffic in History", href=history_href),
        ]),
    ])


def goals_card(disabled: bool) -> html.Section:
    """A site's goals (listed by ``goal_list``) and the form that adds one."""
    return html.Section(className="card", id="sites-goals", children=[
        html.H2("Goals", className="card-title"),
        html.Div(id="sites-goal-list"),
        html.Div(className="goal-form", children=[
            dcc.RadioItems(id="sites-goal-kind", value="event", inline=True,
                           className="segmented",
                           options=[{"label": label, "value": value, "disabled": disabled}
                                    for value, label in GOAL_KINDS.items()]),
            html.Label("The goal's event name or page pattern", htmlFor="sites-goal-value",
                       className="visually-hidden"),
            dcc.Input(id="sites-goal-value", type="text", value="", autoComplete="off",
                      placeholder="Signup or /blog/*", disabled=disabled, maxLength=2048,
                      className="text-input goal-input", debounce=False),
            html.Button("Add goal", id="sites-goal-add", n_clicks=0, className="btn",
                        disabled=disabled),
        ]),
        html.P(GOALS_HINT, className="hint"),
        html.Div(id="sites-goal-status", role="status", className="status-line"),
    ])


def goal_list(goals: Sequence[tuple[str, str]], disabled: bool) -> html.Ul | html.P:
    """``(kind, value)`` goals, each with its remove button (its index in the list)."""
    if not goals:
        return html.P("No goals yet.", className="muted", id="sites-goal-none")
    return html.Ul(className="goal-list", children=[
        html.Li(className="goal-item", children=[
            html.Span(GOAL_KINDS[kind], className="site-tag"),
            html.Code(value, className="goal-value"),
            html.Button("Remove", id={"type": "sites-goal-remove", "index": i}, n_clicks=0,
                        className="btn btn-small", disabled=disabled,
                        title=f"Remove the goal {value}"),
        ]) for i, (kind, value) in enumerate(goals)])


def tracking_tag(script_url: str, name: str) -> html.Section:
    """The one tag a site's pages need, with a copy button."""
    tag = f'<script defer src="{script_url}" data-site="{name}"></script>'
    return html.Section(className="card", children=[
        html.H2("Tracking tag", className="card-title"),
        html.P("Put this tag on every page of the site (under 1 KB, no cookie; nothing "
               "is sent when Do-Not-Track is on):", className="hint"),
        html.Div(className="tag-box", children=[
            html.Pre(html.Code(tag), id="sites-tag", className="tag-code"),
            dcc.Clipboard(target_id="sites-tag", title="Copy the tag", className="tag-copy"),
        ]),
    ])


def danger_zone(name: str, disabled: bool) -> html.Section:
    """Removing a site: its registration alone, or with every count it holds, which
    asks for the site's name first."""
    return html.Section(className="card danger-zone", children=[
        html.H2("Danger zone", className="card-title"),
        html.Div(className="danger-row", children=[
            html.Div([
                html.B("Remove the registration"),
                html.P(f"The beacon refuses {name}'s hits from then on; its counts stay "
                       "and History still shows them. Add it again to count it.",
                       className="hint"),
            ]),
            html.Button("Remove registration", id="sites-unregister", n_clicks=0,
                        className="btn btn-danger", disabled=disabled),
        ]),
        html.Div(className="danger-row", children=[
            html.Div([
                html.B("Delete the site and all its data"),
                html.P(["Every hit, dimension, visitor, raw event, rollup and note of ",
                        name, ", for good (as ", html.Code("hitboard site remove --data"),
                        "). To count it again from its logs, ingest them with ",
                        html.Code("--from-start"), "."], className="hint"),
                html.Label(["Type ", html.Code(name), " to confirm"], htmlFor="sites-confirm",
                           className="field-label"),
                dcc.Input(id="sites-confirm", type="text", value="", autoComplete="off",
                          debounce=False, disabled=disabled, className="text-input",
                          maxLength=200),
            ]),
            html.Button("Delete site and data", id="sites-delete", n_clicks=0,
                        className="btn btn-danger", disabled=True),
        ]),
    ])


def shares_card(disabled: bool) -> html.Section:
    """A site's share links (listed by ``share_list``) and the form that makes one:
    a filter, a password, the origins that may embed it."""
    def field(label: str, input_id: str, hint: str, **kwargs):
        return html.Div(className="site-field", children=[
            html.Label(label, htmlFor=input_id, className="field-label"),
            dcc.Input(id=input_id, value="", autoComplete="off", disabled=disabled,
                      className="text-input", debounce=False, **kwargs),
            html.Span(hint, className="hint")])

    return html.Section(className="card", id="sites-shares", children=[
        html.H2("Share links", className="card-title"),
        html.P("A link shows this site's History and Live, read-only, to whoever holds "
               "it; add ?embed=true to put it in an <iframe>.", className="hint"),
        html.Div(id="sites-share-list"),
        html.H3("New link", className="card-subtitle share-new"),
        html.Div(className="site-form", children=[
            field("Filter (optional)", "sites-share-filter",
                  "Shows only this, as report --filter; none: the whole site.",
                  type="text", maxLength=300, placeholder="page:/pricing"),
            field("Password (optional)", "sites-share-password",
                  "10 to 1,024 characters; none: whoever has the link.",
                  type="password", maxLength=1024),
            field("May be embedded by (optional)", "sites-share-origins",
                  "Origins, space-separated; none: any site.",
                  type="text", maxLength=2000, placeholder="https://blog.example.com"),
        ]),
        html.Div(className="toolbar", children=[
            html.Button("Create link", id="sites-share-create", n_clicks=0, className="btn",
                        disabled=disabled)]),
        html.Div(id="sites-share-status", role="status", className="status-line"),
    ])


def share_list(rows: Sequence[dict], disabled: bool) -> html.Ul | html.P:
    """Share links (``prefix``, ``filter``, ``framed``, ``password``), each with its
    revoke button; a link is named by its first characters, never shown whole."""
    if not rows:
        return html.P("No share links.", className="muted", id="sites-share-none")
    return html.Ul(className="goal-list", children=[
        html.Li(className="goal-item", children=[
            html.Code(f"/share/{row['prefix']}…"),
            html.Span(className="share-meta", children=[
                html.Span(row["filter"] or "whole site", className="site-tag"),
                html.Span("password", className="site-tag") if row["password"] else None,
                html.Span(f"embedded by {row['framed'] or 'any site'}", className="hint")]),
            html.Button("Revoke", id={"type": "sites-share-revoke", "index": row["prefix"]},
                        n_clicks=0, className="btn btn-small", disabled=disabled,
                        title=f"Revoke the link {row['prefix']}…"),
        ]) for row in rows])


def new_share(link: str) -> html.Div:
    """A link just made: shown once, with a copy button."""
    return html.Div(className="notice notice-info", role="status", children=[
        html.P("Copy the link now: it is not shown again."),
        html.Div(className="tag-box", children=[
            html.Pre(html.Code(link), id="sites-share-link", className="tag-code"),
            dcc.Clipboard(target_id="sites-share-link", title="Copy the link",
                          className="tag-copy")])])
