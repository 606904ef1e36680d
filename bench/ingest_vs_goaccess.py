"""`hitboard ingest` against GoAccess on the same access log, in one run.

    .venv/bin/python bench/ingest_vs_goaccess.py [LOG] [--lines 500000] [--runs 3] [--shifted]
        [--baseline OTHER/.venv/bin/hitboard] [--hitboard-args "--no-events"]

LOG (default: the shared 10,000-line Apache log) is repeated until it holds ``--lines``
lines: the same days again and again, or with ``--shifted`` each copy dated one span
later, in time order as a real log (``bench/logs.py``). Both tools read that file from
the page cache, end to end, as whole processes:

- ``hitboard ingest FILE --site bench`` with default settings (hit counters and raw
  events) into a fresh embedded store each run;
- ``goaccess FILE --log-format=COMBINED -o report.json`` (Debian's goaccess: installed
  here with apt-get when run as root, else the comparison is skipped with the reason).
  GoAccess needs an IP address as the client: host names are rewritten to documentation
  addresses (192.0.2.x) in its copy, a copy made before timing.

``--baseline`` times a second ``hitboard`` (another checkout's) in the same runs,
alternating with this one, so a before/after comparison shares the machine's load.

Prints each run's seconds and lines/s, the medians, the CPU seconds (user + system, of
the process and its children: steadier than wall time on a shared machine), the load
average before and after, and the ratio (hitboard's lines/s over GoAccess's: above 1.0
hitboard is faster).
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import logs

ROOT = Path(__file__).resolve().parent.parent
SHARED_LOG = ROOT.parent / "shared" / "data" / "apache_combined_2015.log"


def with_ip_clients(source: Path, target: Path) -> int:
    """GoAccess's copy: a line whose client is a host name gets an address instead."""
    names: dict[bytes, bytes] = {}
    with source.open("rb") as src, target.open("wb") as out:
        for line in src:
            head, sep, rest = line.partition(b" ")
            try:
                ipaddress.ip_address(head.decode("ascii", "replace"))
            except ValueError:
                head = names.setdefault(head, f"192.0.2.{len(names) % 254 + 1}".encode())
            out.write(head + sep + rest)
    return len(names)


def goaccess() -> tuple[str | None, str]:
    found = shutil.which("goaccess")
    if found:
        return found, ""
    if os.geteuid() != 0:
        return None, "goaccess is not installed and this is not root (apt-get install goaccess)"
    result = subprocess.run(["apt-get", "install", "-y", "-qq", "goaccess"],
                            capture_output=True, text=True)
    if result.returncode:
        subprocess.run(["apt-get", "update", "-qq"], capture_output=True)
        result = subprocess.run(["apt-get", "install", "-y", "-qq", "goaccess"],
                                capture_output=True, text=True)
    found = shutil.which("goaccess")
    return (found, "") if found else (None, f"apt-get install goaccess failed: "
                                           f"{result.stderr.strip()[-200:]}")


def timed(command: list[str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process and its children)."""
    before = os.times()
    started = time.perf_counter()
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    after = os.times()
    if result.returncode:
        raise SystemExit(f"{command[0]} failed ({result.returncode}): {result.stderr[-1500:]}")
    return elapsed, (after.children_user - before.children_user
                     + after.children_system - before.children_system)


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", nargs="?", type=Path, default=SHARED_LOG)
    parser.add_argument("--lines", type=int, default=500_000)
    parser.add_argument("--shifted", action="store_true",
                        help="each copy of the log dated one span later (time order, as "
                             "a real log), instead of the same days repeated")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline", type=Path, default=None,
                        help="another hitboard executable to time in the same runs")
    parser.add_argument("--hitboard-args", default="",
                        help="extra arguments of this checkout's hitboard ingest")
    args = parser.parse_args()
    tools = {"hitboard ingest": [str(Path(sys.executable).parent / "hitboard"),
                                 *args.hitboard_args.split()]}
    if args.baseline:
        tools["baseline ingest"] = [str(args.baseline)]
    with tempfile.TemporaryDirectory(prefix="hitboard-bench-goaccess-") as tmp:
        work = Path(tmp)
        log = work / "access.log"
        lines = (logs.shifted if args.shifted else logs.repeated)(args.log, args.lines, log)
        results: dict[str, list[tuple[float, float]]] = {name: [] for name in tools}
        tool, reason = goaccess()
        if tool:
            renamed = with_ip_clients(log, work / "access-ip.log")
            results["goaccess"] = []
        load_before = load()
        for run in range(args.runs):
            for name, command in tools.items():
                store = work / f"store-{run}"
                results[name].append(timed(
                    [command[0], "ingest", str(log), "--site", "bench", "--store", str(store),
                     *command[1:]], work))
                shutil.rmtree(store, ignore_errors=True)
            if tool:
                results["goaccess"].append(timed(
                    [tool, str(work / "access-ip.log"), "--log-format=COMBINED",
                     "-o", str(work / "report.json"), "--no-progress"], work))
        print(f"{lines:,} lines of {args.log.name}"
              f"{' (copies shifted in time)' if args.shifted else ''}, {args.runs} runs, "
              f"{os.cpu_count()} cores, load average {load_before} before, {load()} after\n")
        print("| tool | runs (s) | median s | lines/s | median CPU s |")
        print("|---|---|---|---|---|")
        medians = {}
        for name, runs in results.items():
            medians[name] = statistics.median(wall for wall, _ in runs)
            cpu = statistics.median(cpu for _, cpu in runs)
            print(f"| {name} | {', '.join(f'{wall:.2f}' for wall, _ in runs)} | "
                  f"{medians[name]:.2f} | {lines / medians[name]:,.0f} | {cpu:.2f} |")
        if tool:
            for name in tools:
                ratio = medians["goaccess"] / medians[name]
                print(f"\nratio ({name} lines/s ÷ goaccess lines/s): {ratio:.2f}×")
            print(f"({renamed} host names given addresses for GoAccess)")
        else:
            print(f"\ngoaccess skipped: {reason}")


if __name__ == "__main__":
    main()
