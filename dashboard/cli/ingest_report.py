"""What ``hitboard ingest`` shows: a progress line as it goes (on a terminal only) and the
summary at the end, with the peak memory of its process tree."""

from __future__ import annotations

import os
import resource
import sys
import threading
import time

import click

# Both read through the module, so a test can stand in for the terminal and the clock.
clock = time.monotonic


def is_terminal(stream) -> bool:
    return stream.isatty()


class Progress:
    """One file's progress, rewritten in place on ``stream`` (stderr) at most every
    ``every`` seconds when it is a terminal, silent otherwise: the share of its bytes
    read, lines and lines/s so far, and the time left at the rate so far."""

    def __init__(self, label: str, total: int, stream=None, every: float = 0.5):
        self.stream = stream or sys.stderr
        self.shown = is_terminal(self.stream)
        self.label, self.total, self.every = label, total, every
        self.bytes = self.lines = 0
        self.started = self._drawn = clock()

    def update(self, nbytes: int, lines: int) -> None:
        self.bytes += nbytes
        self.lines += lines
        if self.shown and clock() - self._drawn >= self.every:
            self._draw()

    def close(self) -> None:
        if self.shown:
            self._draw()
            self.stream.write("\n")
            self.stream.flush()

    def text(self) -> str:
        elapsed = clock() - self.started
        share = self.bytes / self.total if self.total else 1.0
        rate = f"{self.lines / elapsed:,.0f} lines/s" if elapsed > 0 else "- lines/s"
        if 0 < share < 1 and elapsed > 0:
            left = f"{_duration(elapsed * (1 - share) / share)} left"
        else:
            left = "done" if share >= 1 else "- left"
        return f"{self.label}  {share:4.0%}  {self.lines:,} lines  {rate}  {left}"

    def _draw(self) -> None:
        self._drawn = clock()
        self.stream.write("\r" + self.text() + "\x1b[K")
        self.stream.flush()


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    hours, rest = divmod(seconds, 3600)
    return (f"{hours}:" if hours else "") + f"{rest // 60:0{2 if hours else 1}}:{rest % 60:02}"


class TreeMemory:
    """The peak resident memory of this process and its children (the rollups'
    processes), summed: sampled every ``every`` seconds from ``/proc`` by a thread of its
    own, and never below this process's own peak. A child's ``ru_maxrss`` would not do:
    it counts the parent's pages it had at the fork. Elsewhere than Linux, the sum of
    this process's peak and its largest ended child's."""

    def __init__(self, every: float = 0.25):
        self.every, self.peak = every, 0
        self.sampled = os.path.exists("/proc/self/task")
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="hitboard-memory",
                                        daemon=True)

    def __enter__(self) -> TreeMemory:
        if self.sampled:
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._done.set()
        if self._thread.is_alive():
            self._thread.join()

    def bytes(self) -> int:
        if self.sampled:
            return max(_own_high_water(), self.peak, _tree_rss())
        return (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                + resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) * _RU_SCALE

    def _run(self) -> None:
        while not self._done.wait(self.every):
            self.peak = max(self.peak, _tree_rss())


_RU_SCALE = 1 if sys.platform == "darwin" else 1024      # ru_maxrss: bytes there, KiB here


def _own_high_water() -> int:
    """This process's own peak (``VmHWM``): its ``ru_maxrss`` would start from the
    resident size of the process that forked it (Linux keeps it across exec)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _tree_rss(pid: int | None = None) -> int:
    """Resident bytes of a process (this one by default) and its descendants, now."""
    total, todo = 0, [pid or os.getpid()]
    while todo:
        pid = todo.pop()
        try:
            with open(f"/proc/{pid}/statm", "rb") as statm:
                total += int(statm.read().split()[1]) * _PAGE
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children", "rb") as children:
                    todo.extend(int(child) for child in children.read().split())
        except (OSError, IndexError, ValueError):       # ended meanwhile
            continue
    return total


def _tolerated(tolerated) -> str:
    """Odd lines parsed (a strict parser would lose them): odd request lines, and bytes
    that are not UTF-8 (stored as U+FFFD)."""
    total = sum(tolerated.values())
    oddities = ", ".join(f"{n:,} {oddity}" for oddity, n in tolerated.most_common())
    return f"{total:,}" + (f" ({oddities})" if oddities else "")


def print_summary(summary, elapsed: float, memory: int) -> None:
    unwritten = summary.unwritten
    reasons = ", ".join(f"{n:,} {r}" for r, n in summary.rejected.most_common())
    rows = [
        ("lines", f"{summary.lines:,}"),
        ("parsed", f"{summary.parsed:,}"),
        ("hits", f"{summary.hits - unwritten:,} recorded"
         + (f", {unwritten:,} NOT written (the next run reads their lines again)"
            if unwritten else "")
         + (" on " + ", ".join(f"{s} ({n:,})" for s, n in summary.sites.most_common(5))
            if summary.sites else "")),
        ("kept apart", f"{sum(summary.apart.values()):,}" + (
            ": " + ", ".join(f"{n:,} lines of {site}" for site, n in summary.apart.most_common(5))
            + ": their site counts another source, its beacon (hitboard site list); the "
              "Sources page sets them beside it (hitboard site set NAME --primary-source "
              "log counts the log instead)" if summary.apart else "")),
        ("tolerated", _tolerated(summary.tolerated)),
        ("refused", f"{sum(summary.rejected.values()):,}" + (f" ({reasons})" if reasons else "")),
    ]
    if summary.events is not None:
        ev = summary.events
        text = f"{ev.written:,} written"
        if ev.present:
            text += f", {ev.present:,} already stored"
        if ev.unacknowledged:
            text += f", {ev.unacknowledged:,} sent unacknowledged (w=0)"
        if ev.failed:
            text += f", {ev.failed:,} FAILED: " + "; ".join(ev.errors[:3])
        rows.append(("events", text))
    else:
        rows.append(("events", "not kept (--no-events)"))
    if summary.recovered:
        rows.append(("recovered", f"{summary.recovered:,} lines of an interrupted flush "
                                  "re-sent (counted once)"))
    rows += [("first", summary.first.isoformat() if summary.first else "-"),
             ("last", summary.last.isoformat() if summary.last else "-"),
             ("rate", f"{summary.lines / elapsed:,.0f} lines/s" if elapsed else "-"),
             ("seconds", f"{elapsed:,.2f}"),
             ("peak memory", f"{memory / 1e6:,.0f} MB")]
    for name, value in rows:
        click.echo(f"{name:<9} {value}")
