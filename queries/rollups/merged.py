"""Rollup buckets merged from the level below in one Polars group-by per piece.

A daily bucket is the sum, page by page, of its hours' rows; a month's of its days'. The
rows of every bucket of a piece become one frame (bucket, page, counts), summed per
bucket and page and sorted by page in Polars: Python only decodes the stored rows and
reads the sums back, never adds a row to another.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl

from ..stats import schema
from . import documents

COUNTS = [f"n{i}" for i in range(documents.WIDTH)]


def merged(starts: list[dt.datetime], decoded: list[tuple[int, list]],
           cached: pl.DataFrame | None = None) -> tuple[dict, pl.DataFrame | None]:
    """Per bucket start (of ``starts``), the rows ``[page, *counts]`` of its sources
    summed per page, sorted by page, and their totals (None: not summed yet); buckets
    without rows left out. Sources: ``decoded`` (a bucket's index in ``starts``, the
    rows of a stored document) and ``cached`` (rows a run computed and kept: columns
    ``bucket``, ``page``, ``n0``...). Also the sums as a frame (``bucket``, ``page``,
    counts), None when summed in Python."""
    bucket, columns = [], [[] for _ in range(documents.WIDTH + 1)]
    for i, rows in decoded:
        if not rows:
            continue
        bucket.append(np.full(len(rows), i, dtype=np.int64))
        for column, values in zip(columns, zip(*rows, strict=True), strict=True):
            column.extend(values)
    frames = [] if cached is None or cached.is_empty() else [cached]
    try:
        if bucket:
            frames.append(pl.DataFrame(
                {"bucket": np.concatenate(bucket),
                 "page": pl.Series(columns[0], dtype=pl.Utf8),
                 **{name: pl.Series(values, dtype=pl.Int64)
                    for name, values in zip(COUNTS, columns[1:], strict=True)}}))
    except (pl.exceptions.PolarsError, TypeError, ValueError, OverflowError):
        return _merged_here(starts, decoded, cached), None
    if not frames:
        return {}, None
    summed = (pl.concat(frames).group_by("bucket", "page").agg(pl.col(COUNTS).sum())
              .sort("bucket", "page"))
    return cut(summed, "bucket", starts), summed


def cut(summed: pl.DataFrame, key: str, starts) -> dict:
    """Rows sorted by ``key`` (an index of ``starts``), then page: per start, its rows
    without the key and their totals."""
    totals = summed.group_by(key).agg(pl.all().exclude("page").sum()).sort(key)
    found, counts = np.unique(summed[key].to_numpy(), return_counts=True)
    rows = summed.drop(key).rows()
    out, end = {}, 0
    for i, n, total in zip(found.tolist(), counts.tolist(), totals.drop(key).rows(),
                           strict=True):
        out[starts[i]] = (rows[end:end + n], list(total))
        end += n
    return out


def _merged_here(starts: list, decoded: list, cached: pl.DataFrame | None
                 ) -> dict[dt.datetime, tuple]:
    """``merged`` in Python, for pages or counts a Polars frame does not hold."""
    pages: dict[int, dict[str, documents.Counts]] = {}
    for i, rows in decoded:
        documents.merge(pages.setdefault(i, {}), rows)
    if cached is not None:
        for i, *row in cached.rows():
            documents.merge(pages.setdefault(i, {}), [row])
    return {starts[i]: ([[page, *found[page]] for page in sorted(found)], None)
            for i, found in sorted(pages.items()) if found}


def within(frames: list, starts: list[dt.datetime], ends: list[dt.datetime]):
    """Rows a run kept (``start`` ms, ``page``, counts) of the buckets in
    [starts[i], ends[i]), with ``bucket`` = i in place of ``start``; None if none kept."""
    if not frames:
        return None
    lows = np.array([schema.epoch_ms(start) for start in starts], dtype=np.int64)
    highs = np.array([schema.epoch_ms(end) for end in ends], dtype=np.int64)
    rows = pl.concat(frames)
    at = rows["start"].to_numpy()
    index = np.searchsorted(lows, at, side="right") - 1
    inside = (index >= 0) & (at < highs[np.maximum(index, 0)])
    return rows.with_columns(start=pl.Series(index)).rename({"start": "bucket"}).filter(
        pl.Series(inside))


def started(frame: pl.DataFrame | None, starts: list[dt.datetime]):
    """``merged``'s sums with each bucket's start (ms) in place of its index, to keep."""
    if frame is None:
        return None
    bounds = pl.Series([schema.epoch_ms(start) for start in starts], dtype=pl.Int64)
    return frame.with_columns(bucket=bounds.gather(frame["bucket"])).rename(
        {"bucket": "start"})
