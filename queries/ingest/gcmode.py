"""The garbage collector's setting for bulk ingest (``hitboard ingest``'s process).

Ingest allocates a few objects per line and frees nearly all of them at once (by
reference counting), yet every 700 allocations the cyclic collector would scan the young
objects, and ever more often the old ones: the pending events, the counters, the
parser's caches (measured: 1,130 collections, ~8 % of a 100,000-line ingest). Objects
alive when bulk work starts (modules, caches) leave its scans for good and it runs far
less often; cycles, rare here, are still collected.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager

THRESHOLDS = (50_000, 20, 10)


def enter() -> tuple[int, int, int]:
    """Switch this process to the bulk setting; returns the thresholds it replaced."""
    previous = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
    return previous


@contextmanager
def bulk():
    """The bulk setting for the duration of a ``with`` block, undone on leaving."""
    previous = enter()
    try:
        yield
    finally:
        gc.set_threshold(*previous)
        gc.unfreeze()
