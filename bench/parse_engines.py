"""The parse of a chunk of log lines by Polars and by ``pyarrow.compute`` (RE2), on the
same chunk, one thread each: the figures behind the mapper's choice of engine.
pyarrow is not a dependency: ``.venv/bin/pip install pyarrow`` for this measurement.

    .venv/bin/python bench/parse_engines.py LOG [LOG ...]
"""

from __future__ import annotations

import os

os.environ.setdefault("POLARS_MAX_THREADS", "1")

import sys  # noqa: E402
import time  # noqa: E402

import pyarrow.compute as pc  # noqa: E402

from queries.ingest import frames  # noqa: E402
from queries.ingest.chunks import CHUNK_BYTES  # noqa: E402
from queries.ingest.logformat import LineParser  # noqa: E402


def best(work, runs: int = 3) -> float:
    """The least CPU seconds of ``runs`` calls of ``work``."""
    seconds = []
    for _ in range(runs):
        started = time.process_time()
        work()
        seconds.append(time.process_time() - started)
    return min(seconds)


def engines(lines) -> dict[str, float]:
    """CPU seconds of each way to parse the frame ``lines``."""
    arrow, text = lines["line"].to_arrow(), lines["line"]
    return {
        "pyarrow extract_regex (RE2)": best(lambda: pc.extract_regex(arrow, frames.PATTERN)),
        "polars extract_groups": best(lambda: text.str.extract_groups(frames.PATTERN)),
        "polars match + cuts (the mapper's)": best(lambda: frames.parse(lines,
                                                                        LineParser())),
    }


def main() -> None:
    for path in sys.argv[1:]:
        with open(path, "rb") as handle:
            data = handle.read(CHUNK_BYTES)
        lines = frames.lines_frame(data[:data.rfind(b"\n") + 1], 0)
        print(f"{os.path.basename(path)}: {lines.height:,} lines, one thread")
        for name, seconds in engines(lines).items():
            print(f"  {name:38} {seconds:6.3f} CPU s  {lines.height / seconds:>12,.0f} lines/s")


if __name__ == "__main__":
    main()
