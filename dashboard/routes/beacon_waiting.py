"""The unseen pages of a site's day that wait for another hit before they get their own
name (``beacon_gate``), bounded however many a flood sends.

A page is promoted by the hits seen of it, not by when it arrived: the last ``size``
pages waiting are held by name (oldest forgotten first), so a page that comes back
before ``size`` other new pages of its site did is promoted at its second hit. A page
pushed out is noted in a count-min sketch (made at the first push, ``DEPTH`` ×
``WIDTH`` one-byte counters, 256 KiB); pushed out twice, it is promoted at its next hit,
its third. The sketch only over-counts, so no noted page that comes back is missed; it
notes ``MAX_NOTED`` pages at most, so a page sent once is almost never taken for one
seen twice (none of 1,000,000 made-up pages, measured), and any that is counts against
the day's ``beacon_pages_per_day`` like every new page.
"""

from __future__ import annotations

import hashlib
import secrets
from collections import OrderedDict

DEPTH = 4
WIDTH = 1 << 16
SATURATED = 255
MAX_NOTED = WIDTH // 2      # past it a made-up page would look seen twice too often


class Waiting:
    """A site's day's waiting pages: :meth:`returned` says whether a hit of a page is
    the page's coming back (promote it) and otherwise notes it."""

    def __init__(self, size: int):
        self.size = max(1, size)
        self.recent: OrderedDict[str, None] = OrderedDict()
        self.sketch: Sketch | None = None

    def __len__(self) -> int:
        return len(self.recent)

    def returned(self, page: str) -> bool:
        if page in self.recent:
            del self.recent[page]
            return True
        if self.sketch is not None and self.sketch.estimate(page) >= 2:
            return True
        self.recent[page] = None
        if len(self.recent) > self.size:
            pushed, _ = self.recent.popitem(last=False)
            if self.sketch is None:
                self.sketch = Sketch()
            self.sketch.add(pushed)
        return False

    @property
    def cost(self) -> int:
        """Entries held, the sketch counted as a tenth of its counters."""
        return len(self.recent) + (DEPTH * WIDTH // 10 if self.sketch is not None else 0)


class Sketch:
    """A count-min sketch with conservative update: ``estimate`` is at least the true
    count. Its hash is keyed per process, so a sender cannot aim at its cells; it notes
    ``MAX_NOTED`` pages at most, after which only the pages held by name come back."""

    def __init__(self):
        self.key = secrets.token_bytes(16)
        self.rows = [bytearray(WIDTH) for _ in range(DEPTH)]
        self.noted = 0

    def _cells(self, key: str) -> list[int]:
        digest = hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=2 * DEPTH,
                                 key=self.key).digest()
        return [int.from_bytes(digest[2 * i:2 * i + 2], "little") for i in range(DEPTH)]

    def estimate(self, key: str) -> int:
        return min(row[cell] for row, cell in zip(self.rows, self._cells(key), strict=True))

    def add(self, key: str) -> None:
        if self.noted >= MAX_NOTED:
            return
        self.noted += 1
        cells = self._cells(key)
        least = min(row[cell] for row, cell in zip(self.rows, cells, strict=True))
        if least >= SATURATED:
            return
        for row, cell in zip(self.rows, cells, strict=True):
            if row[cell] == least:
                row[cell] = least + 1
