"""History's panels and KPIs computed without a browser, and read back: shared by the
tests of History's panels, KPIs and conditions."""

from components.statictable import rebuilt
from dashboard import reads
from dashboard.pages.history import breakdowns as breakdown_view
from dashboard.pages.history.view import conditions_of
from queries.reads.query import Query


def compute(shown, options, compared=None, tz="UTC", pages=()):
    """The panels and KPIs of a period, against ``compared`` (the previous one)."""
    compared = compared or shown.previous(tz)
    return breakdown_view.compute_panels(query_of(shown, options, compared, tz, pages))


def query_of(shown, options, compared=None, tz="UTC", pages=()):
    """The query value of a view of site ``s`` (as ``history_view`` builds it)."""
    return Query("s", shown.start, shown.end, shown.granularity, tz,
                 conditions_of(tuple(pages), options), options.humans, options.assets,
                 compared=None if compared is None else (compared.start, compared.end),
                 now=reads.now(60))


def cards(out) -> list:
    """The KPI cards of ``render_panels`` (drawn by the browser) or of ``_kpis``."""
    kpis = out["kpis"]
    return kpis if isinstance(kpis, list) else rebuilt(kpis)


def kpi(out, name: str) -> tuple[str, str]:
    """A KPI card's value and note text."""
    for card in cards(out):
        value = card.children[1]
        if value.id == f"history-kpi-{name}":
            note = card.children[2].children
            return value.children, note[1]
    raise AssertionError(name)


def change_shown(out, name: str) -> str:
    for card in cards(out):
        if card.children[1].id == f"history-kpi-{name}":
            return card.children[2].children[0].children
    raise AssertionError(name)


def panel_rows(out, dim: str) -> dict[str, int]:
    """A rendered panel's rows: value -> hits."""
    for section in rebuilt(out["panels"]):
        if section.id == f"history-panel-{dim}":
            rows = section.children[0].children[1].children
            return {tr.children[0].children[-1].title: int(tr.children[1].children
                                                             .replace(",", ""))
                    for tr in rows if len(tr.children) > 2}
    raise AssertionError(dim)


def panel_text(out, dim: str) -> str:
    for section in rebuilt(out["panels"]):
        if section.id == f"history-panel-{dim}":
            return str(section)
    raise AssertionError(dim)

