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

from . import documents

_COUNTS = [f"n{i}" for i in range(documents.WIDTH)]


def merged(spanned: dict[dt.datetime, list[list[list]]]
           ) -> dict[dt.datetime, tuple[list, list[int] | None]]:
    """Per bucket start, the rows ``[page, *counts]`` of its source documents (each a
    list of rows) summed per page, sorted by page, and their totals (None: not summed
    yet); buckets without rows left out."""
    starts = list(spanned)
    bucket, columns = [], [[] for _ in range(documents.WIDTH + 1)]
    for i, start in enumerate(starts):
        for rows in spanned[start]:
            if not rows:
                continue
            bucket.append(np.full(len(rows), i, dtype=np.int64))
            for column, values in zip(columns, zip(*rows, strict=True), strict=True):
                column.extend(values)
    if not bucket:
        return {}
    try:
        frame = pl.DataFrame({"bucket": np.concatenate(bucket),
                              "page": pl.Series(columns[0], dtype=pl.Utf8),
                              **{name: pl.Series(values, dtype=pl.Int64)
                                 for name, values in zip(_COUNTS, columns[1:], strict=True)}})
    except (pl.exceptions.PolarsError, TypeError, ValueError, OverflowError):
        return _merged_here(starts, spanned)
    summed = (frame.group_by("bucket", "page").agg(pl.col(_COUNTS).sum())
              .sort("bucket", "page"))
    return cut(summed, "bucket", starts)


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


def _merged_here(starts: list, spanned: dict) -> dict[dt.datetime, list]:
    """``merged`` in Python, for pages or counts a Polars frame does not hold."""
    out = {}
    for start in starts:
        pages: dict[str, documents.Counts] = {}
        for rows in spanned[start]:
            documents.merge(pages, rows)
        if pages:
            out[start] = ([[page, *pages[page]] for page in sorted(pages)], None)
    return out
