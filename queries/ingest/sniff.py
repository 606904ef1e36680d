"""Whether a file is an access log at all, told from its first lines before anything is
written: a binary file or a JSON document given by mistake stops the run with one line,
instead of a store holding a checkpoint and millions of refused lines."""

from __future__ import annotations

import os
from collections import Counter

from . import chunks
from .mapper import LineMapper

SNIFF_BYTES = 256 * 2**10      # the first lines read: ~1,000 of a real log
SNIFF_LIMIT = 64 * 2**20       # lines too long to read, skipped to find them, at most
# Lines refused for their site or page have a log line's shape: the file is a log.
SHAPED = frozenset({"bad_site", "bad_target"})


def not_a_log(path: str | os.PathLike, default_site: str, format: str = "auto") -> str | None:
    """Why ``path`` is no access log in ``format``, or None: none of its first lines
    (``SNIFF_BYTES``, after any too long to read) is a log line. Undecided (None) for a
    file empty so far, or whose first ``SNIFF_LIMIT`` bytes are lines too long to read.
    Maps them as the ingest would, without the store."""
    mapper = LineMapper(None, format, dimensions=False)
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        too_long = 0
        for chunk in chunks.read(handle, 0, size, SNIFF_BYTES):
            if chunk.start > SNIFF_LIMIT:
                return None
            if chunk.data is None:
                too_long += 1
                continue
            tally = mapper.map_chunk(chunk.data, chunk.start, default_site, 0, None)
            shaped = tally.parsed + sum(tally.rejected[r] for r in SHAPED) + sum(
                tally.apart.values())
            if shaped:
                return None
            refused = Counter(tally.rejected) + Counter({chunks.TOO_LONG: too_long})
            reasons = ", ".join(f"{n:,} {reason}" for reason, n in refused.most_common())
            return (f"{os.fspath(path)} is not an access log ({format}): none of its first "
                    f"{tally.lines + too_long:,} lines is one ({reasons}); nothing was written")
    return None
