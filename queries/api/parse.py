"""A Stats API question (Plausible's v2 JSON) checked whole before anything is read:
every unknown site, metric, dimension, operator, date or field is refused, named."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from .. import validation
from ..errors import HitboardError
from ..reads.stats_api import offered
from ..reads.stats_grid import MAX_DIMENSIONS, MAX_GRID_BUCKETS, grid_offered, grid_refusal
from ..reads.stats_query import (
    COUNTED,
    CUSTOM,
    LOGICAL,
    METRICS,
    OPERATORS,
    PROPS,
    TIME,
    TIMES,
    VISIT_PAGES,
    Logic,
    Match,
    StatsQuery,
    dimensions_of,
)
from ..reads.stats_visits import filtered_refusal
from ..stats.sites import site_settings
from . import dates
from .errors import QueryError, UnknownSiteError

FIELDS = ("site_id", "metrics", "date_range", "dimensions", "filters", "order_by",
          "pagination", "include")
INCLUDE = {"total_rows": False, "imports": True, "bots": False}
MAX_LIMIT = 10_000
MAX_FILTER_DEPTH = 8
MAX_VALUES = 100
MAX_TEXT = 200
FILTERABLE = (*COUNTED, *VISIT_PAGES)


@dataclass(frozen=True)
class Shape:
    """How the rows are given back: their order (``(name, descending)``), the page of
    them, what ``meta`` holds beyond the notes, and the question as understood."""

    order_by: tuple[tuple[str, bool], ...]
    limit: int
    offset: int
    total_rows: bool
    imports: bool
    echoed: dict


def site_of(body: object) -> str:
    """The site a question names (checked first: who may ask is decided by it)."""
    if not isinstance(body, dict):
        raise QueryError("the body must be a JSON object: {\"site_id\": ..., \"metrics\": "
                         "[...], \"date_range\": ...}")
    site = body.get("site_id")
    if not isinstance(site, str):
        raise QueryError("#: Required property site_id was not present, or is not a string")
    try:
        return validation.site(site)
    except HitboardError as exc:
        raise QueryError(f"#/site_id: {exc}") from None


def parse(db, body: object, now: dt.datetime | None = None) -> tuple[StatsQuery, Shape]:
    site = site_of(body)
    extra = [key for key in body if key not in FIELDS]
    if extra:
        raise QueryError(f'#: Unexpected field "{str(extra[0])[:40]}": the fields are '
                         f"{', '.join(FIELDS)}")
    settings = site_settings(db, site)
    if not settings.registered:
        raise UnknownSiteError(f'#/site_id: Site "{site}" is not registered: '
                               "`hitboard site list` names the sites")
    tz = settings.tz or "UTC"
    now = now or dt.datetime.now(dt.UTC)
    metrics = _metrics(body.get("metrics"))
    dimensions = _dimensions(body.get("dimensions", []))
    filters = tuple(_filter(f, f"#/filters/{i}", 0)
                    for i, f in enumerate(_list(body.get("filters", []), "#/filters")))
    include = _include(body.get("include", {}))
    if "date_range" not in body:
        raise QueryError("#: Required property date_range was not present")
    start, end = dates.resolve(db, site, body["date_range"], tz, now)
    dimension = dimensions[0] if len(dimensions) == 1 else None
    time = next((d for d in dimensions if d.startswith(TIME)), None)
    granularity = None
    if time is not None:
        granularity = TIMES.get(time) or dates.granularity_for(start, end)
        dates.check_buckets(start, end, granularity)
        if len(dimensions) > 1:
            _check_grid_buckets(start, end, granularity)
    _check_page_filters(filters, dimensions)
    _check_metrics(metrics, dimensions, filters)
    query = StatsQuery(site, start, end, tz, metrics, dimension, granularity, filters,
                       include["bots"], now,
                       dimensions=dimensions if len(dimensions) > 1 else ())
    order_by = _order_by(body.get("order_by"), metrics, dimensions)
    limit, offset = _pagination(body.get("pagination", {}))
    echoed = {"site_id": site, "metrics": list(metrics),
              "date_range": [start.isoformat(), end.isoformat()],
              "dimensions": list(dimensions), "filters": body.get("filters", []),
              "order_by": [[name, "desc" if down else "asc"] for name, down in order_by],
              "include": include, "pagination": {"limit": limit, "offset": offset},
              "time_zone": tz}
    return query, Shape(order_by, limit, offset, include["total_rows"], include["imports"],
                        echoed)


def _list(value: object, where: str) -> list:
    if not isinstance(value, list):
        raise QueryError(f"{where}: must be a list")
    return value


def _metrics(value: object) -> tuple[str, ...]:
    if value is None:
        raise QueryError("#: Required property metrics was not present")
    found = _list(value, "#/metrics")
    if not found:
        raise QueryError("#/metrics: at least one metric")
    for i, metric in enumerate(found):
        if metric not in METRICS:
            raise QueryError(f'#/metrics/{i}: Invalid metric "{str(metric)[:40]}": one of '
                             f"{', '.join(METRICS)}")
    if len(set(found)) != len(found):
        raise QueryError("#/metrics: a metric is named twice")
    return tuple(found)


def known_dimension(name: object) -> bool:
    return isinstance(name, str) and (
        name in COUNTED or name in VISIT_PAGES or name in CUSTOM or name == TIME
        or name in TIMES or (name.startswith(PROPS) and 0 < len(name) - len(PROPS) <= 64))


def _dimensions(value: object) -> tuple[str, ...]:
    found = _list(value, "#/dimensions")
    for i, name in enumerate(found):
        if not known_dimension(name):
            raise QueryError(f'#/dimensions/{i}: Invalid dimension "{str(name)[:40]}"')
    if len(found) > MAX_DIMENSIONS:
        raise QueryError(f"#/dimensions: {MAX_DIMENSIONS} dimensions at most")
    if len(set(found)) != len(found):
        raise QueryError("#/dimensions: a dimension is named twice")
    if sum(1 for name in found if name == TIME or name in TIMES) > 1:
        raise QueryError("#/dimensions: one time dimension at most")
    return tuple(found)


def _check_grid_buckets(start: dt.datetime, end: dt.datetime, granularity: str) -> None:
    if (end - start) / dates.BUCKET[granularity] > MAX_GRID_BUCKETS:
        raise QueryError(f"#/dimensions: over {MAX_GRID_BUCKETS:,} {granularity} buckets "
                         "beside another dimension: ask for a shorter range or a longer "
                         "time dimension")


def _check_page_filters(filters: tuple, dimensions: tuple[str, ...]) -> None:
    """A filter on entry or exit pages reads the visits' page rows: no other filter's
    dimension and no dimension but time can be counted beside it."""
    named = set().union(*(dimensions_of(f) for f in filters)) if filters else set()
    pages = sorted(named & set(VISIT_PAGES))
    if pages and (len(named) > 1 or any(not d.startswith(TIME) for d in dimensions)):
        raise QueryError(f"#/filters: a filter on {pages[0]} takes no other filter's "
                         "dimension and no dimension but time (hitboard reads entry and "
                         "exit pages from the visits, which hold no other dimension)")


def _check_metrics(metrics: tuple[str, ...], dimensions: tuple[str, ...],
                   filters: tuple) -> None:
    if len(dimensions) > 1:
        refused = grid_refusal(dimensions, bool(filters))
        if refused:
            raise QueryError(refused)
        allowed = grid_offered(dimensions, bool(filters))
        for metric in metrics:
            if metric not in allowed:
                raise QueryError(f"Metric `{metric}` cannot be queried with dimensions "
                                 f"{', '.join(dimensions)}: it offers {', '.join(allowed)}")
        return
    dimension = dimensions[0] if dimensions else None
    for metric in metrics:
        if metric not in offered(dimension, filters):
            raise QueryError(_not_offered(metric, dimension, filters))


def _filter(node: object, where: str, depth: int) -> Match | Logic:
    if depth > MAX_FILTER_DEPTH:
        raise QueryError(f"{where}: filters nested past {MAX_FILTER_DEPTH} levels")
    if not isinstance(node, list) or not node or not isinstance(node[0], str):
        raise QueryError(f"{where}: Invalid filter: [operator, dimension, [values]], "
                         "or [\"and\"|\"or\", [filters]], or [\"not\", filter]")
    operator = node[0]
    if operator in LOGICAL:
        if operator == "not":
            if len(node) != 2:
                raise QueryError(f'{where}: Invalid filter: ["not", filter]')
            return Logic("not", (_filter(node[1], f"{where}/1", depth + 1),))
        if len(node) != 2 or not isinstance(node[1], list) or not node[1]:
            raise QueryError(f'{where}: Invalid filter: ["{operator}", [filters]]')
        return Logic(operator, tuple(_filter(c, f"{where}/1/{i}", depth + 1)
                                     for i, c in enumerate(node[1])))
    if operator not in OPERATORS:
        raise QueryError(f'{where}/0: Invalid filter operator "{operator[:40]}": one of '
                         f"{', '.join(OPERATORS + LOGICAL)}")
    if len(node) not in (3, 4) or not isinstance(node[2], list) or not node[2]:
        raise QueryError(f"{where}: Invalid filter: [\"{operator}\", dimension, [values]]")
    dimension, values = node[1], node[2]
    if dimension not in FILTERABLE:
        what = ("Invalid filter dimension" if not known_dimension(dimension)
                else "hitboard does not filter on")
        raise QueryError(f'{where}/1: {what} "{str(dimension)[:40]}": filters take '
                         f"{', '.join(FILTERABLE)}")
    if len(values) > MAX_VALUES or not all(
            isinstance(v, str | int) and not isinstance(v, bool) and len(str(v)) <= MAX_TEXT
            for v in values):
        raise QueryError(f"{where}/2: up to {MAX_VALUES} values, each a string of at most "
                         f"{MAX_TEXT} characters")
    values = tuple(str(v) for v in values)
    return Match(operator, dimension, values)


def _include(value: object) -> dict:
    if not isinstance(value, dict):
        raise QueryError("#/include: must be an object")
    for key, flag in value.items():
        if key not in INCLUDE:
            raise QueryError(f'#/include: Unexpected field "{str(key)[:40]}": one of '
                             f"{', '.join(INCLUDE)}")
        if not isinstance(flag, bool):
            raise QueryError(f"#/include/{key}: must be true or false")
    return {**INCLUDE, **value}


def _order_by(value: object, metrics: tuple[str, ...],
              dimensions: tuple[str, ...]) -> tuple[tuple[str, bool], ...]:
    if value is None:
        return ()
    out = []
    for i, item in enumerate(_list(value, "#/order_by")):
        if not (isinstance(item, list) and len(item) == 2 and item[1] in ("asc", "desc")):
            raise QueryError(f'#/order_by/{i}: Invalid order_by: [name, "asc"|"desc"]')
        if item[0] not in metrics and item[0] not in dimensions:
            raise QueryError(f'#/order_by/{i}: Invalid order_by entry "{str(item[0])[:40]}":'
                             " order by a metric or a dimension the query asks for")
        out.append((item[0], item[1] == "desc"))
    return tuple(out)


def _pagination(value: object) -> tuple[int, int]:
    if not isinstance(value, dict) or set(value) - {"limit", "offset"}:
        raise QueryError("#/pagination: {\"limit\": 1 to 10000, \"offset\": 0 or more}")
    limit, offset = value.get("limit", MAX_LIMIT), value.get("offset", 0)
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT:
        raise QueryError(f"#/pagination/limit: 1 to {MAX_LIMIT:,}")
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        raise QueryError("#/pagination/offset: 0 or more")
    return limit, offset


def _not_offered(metric: str, dimension: str | None, filters: tuple) -> str:
    if metric == "conversion_rate" and dimension is None:
        return ('Metric `conversion_rate` can only be queried with event:goal, event:name '
                'or event:props dimensions')
    if filters:
        return filtered_refusal(metric, filters, dimension)
    return (f"Metric `{metric}` cannot be queried with dimension {dimension}: it offers "
            f"{', '.join(offered(dimension))}")
