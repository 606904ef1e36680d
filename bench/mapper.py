"""The line mapper's throughput in one process, before and after: each tree's
``LineMapper.map_chunk`` over a log's chunks (``chunks.tasks``), events off, in a child
process of its own, the two runs paired.

    .venv/bin/python bench/mapper.py --baseline /work/main LOG [LOG ...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHILD = """
import json, os, resource, sys, time
from queries.ingest.chunks import tasks
from queries.ingest.mapper import LineMapper
path = sys.argv[1]
mapper, lines = LineMapper(), 0
wall, cpu = time.perf_counter(), time.process_time()
with open(path, "rb") as handle:
    for _, (data, start, site, stream) in tasks(handle, 0, os.path.getsize(path), "s", 1):
        lines += mapper.map_chunk(data, start, site, stream, None).lines
print(json.dumps({"lines": lines, "wall": time.perf_counter() - wall,
                  "cpu": time.process_time() - cpu,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def run(tree: Path, log: str) -> dict:
    python = tree / ".venv" / "bin" / "python"
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run([str(python), "-c", CHILD, log], cwd=tree, check=True,
                         capture_output=True, text=True, env=env)
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logs", nargs="+")
    parser.add_argument("--baseline", type=Path, required=True, help="the tree compared with")
    args = parser.parse_args()
    print(f"load {os.getloadavg()[0]:.2f}")
    for log in args.logs:
        before, after = run(args.baseline, log), run(ROOT, log)
        for name, got in (("before", before), ("after", after)):
            print(f"{Path(log).name:24} {name:6} {got['lines']:>9,} lines  {got['wall']:6.2f} s "
                  f"{got['cpu']:6.2f} CPU s  {got['lines'] / got['wall']:>9,.0f} lines/s  "
                  f"peak RSS {got['rss_mb']:.0f} MB")
        print(f"{'':24} ratio  wall {before['wall'] / after['wall']:.2f}x  "
              f"CPU {before['cpu'] / after['cpu']:.2f}x")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
