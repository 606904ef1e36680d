"""Hit → presenter screen latency, and the presenter page's frame rate, under load.

Starts ``hitboard serve`` on a fresh store, opens ``/present`` for a new site in headless
Chromium (1920×1080), and sends ``GET /hit`` beacons for that site at ``--rate`` hits/s
(default 1,000) from paced sender threads for ``--seconds``. Each successful hit's send
time is kept; the page records, at each update of its line (``window.__present.log``:
browser time, hits its figure holds), how many hits it shows. The latency of hit k is
the first update showing at least k hits minus the time hit k was sent (same machine,
same clock). Also prints the figure's data updates per second and the browser's
rendered frames per second (requestAnimationFrame) during the run.

    .venv/bin/python bench/presenter.py [--rate 1000] [--seconds 30]
"""

from __future__ import annotations

import argparse
import bisect
import http.client
import importlib.util
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.options import Options

HERE = Path(__file__).resolve().parent
SITE = "bench-present"
PAGES = [f"/page-{i:02d}" for i in range(20)]
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--window-size=1920,1080")
COUNT_FRAMES = """
window.__rafFrames = 0;
(function tick() { window.__rafFrames += 1; requestAnimationFrame(tick); })();
"""


def _bench_dashboard():
    """bench/dashboard.py's server helpers (bench/ is not a package)."""
    spec = importlib.util.spec_from_file_location("bench_dashboard", HERE / "dashboard.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench = _bench_dashboard()


class Sender:
    """Paced ``GET /hit`` beacons; keeps the send time of each accepted one."""

    def __init__(self, port: int, rate: float, offset: int):
        self.port, self.interval, self.offset = port, 1.0 / rate, offset
        self.sent: list[float] = []
        self.errors = 0

    def run(self, until: float) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        due, i = time.monotonic(), self.offset
        while time.monotonic() < until:    # behind schedule: send at once, stop on time
            pause = due - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            started = time.time()
            try:
                conn.request("GET", f"/hit?site={SITE}&page={PAGES[i % len(PAGES)]}")
                response = conn.getresponse()
                response.read()
                if response.status == 200:
                    self.sent.append(started)
                else:
                    self.errors += 1
            except (OSError, http.client.HTTPException):
                self.errors += 1
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            i += 1
            due += self.interval
        conn.close()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def latencies(sent: list[float], log: list[list[float]]) -> tuple[list[float], int]:
    """(latency of each hit the screen showed, hits never shown) — see the module doc."""
    sent = sorted(sent)
    shown_at: list[float] = []      # shown_at[k-1]: first browser time showing ≥ k hits
    for at_ms, total in log:
        while len(shown_at) < min(int(total), len(sent)):
            shown_at.append(at_ms / 1000)
    result = [shown - sent[k] for k, shown in enumerate(shown_at)]
    return result, len(sent) - len(shown_at)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=1000.0, help="hits/s asked (1,000)")
    parser.add_argument("--seconds", type=float, default=30.0, help="load duration (30)")
    parser.add_argument("--senders", type=int, default=4, help="sender threads (4)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="hitboard-present-") as directory:
        port = bench.free_port()
        # The beacon counts registered sites only: register the bench's site first.
        subprocess.run([str(Path(sys.executable).parent / "hitboard"), "site", "add", SITE,
                        "--store", str(Path(directory) / "store")], check=True,
                       stdout=subprocess.DEVNULL)
        server = bench.start_server(Path(directory) / "store", port, 8,
                                    Path(directory) / "serve.log")
        options = Options()
        for flag in FLAGS:
            options.add_argument(flag)
        driver = webdriver.Chrome(options=options)
        try:
            driver.get(f"http://127.0.0.1:{port}/present?site={SITE}&tz=UTC")
            deadline = time.monotonic() + 30
            while not driver.execute_script("return !!(window.__present && "
                                            "window.__present.frames);"):
                if time.monotonic() > deadline:
                    raise SystemExit("the presenter page did not draw within 30 s")
                time.sleep(0.2)
            driver.execute_script(COUNT_FRAMES)
            frames_before = driver.execute_script("return window.__present.frames;")
            senders = [Sender(port, args.rate / args.senders, n) for n in range(args.senders)]
            started = time.monotonic()
            until = started + args.seconds
            threads = [threading.Thread(target=s.run, args=(until,)) for s in senders]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            elapsed = time.monotonic() - started
            frames = driver.execute_script("return window.__present.frames;") - frames_before
            raf = driver.execute_script("return window.__rafFrames;")
            time.sleep(5)  # let the screen catch up with the last hits
            log = driver.execute_script("return window.__present.log;")
            browser_errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        finally:
            driver.quit()
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=60)

    sent = [t for s in senders for t in s.sent]
    delays, missing = latencies(sent, log)
    print(f"/hit asked {args.rate:,.0f}/s for {args.seconds:.0f} s: {len(sent):,} accepted "
          f"({len(sent) / elapsed:,.0f}/s), {sum(s.errors for s in senders)} errors")
    print(f"hit → presenter screen latency over {len(delays):,} hits: "
          f"p50 {percentile(delays, 0.5):.2f} s, p95 {percentile(delays, 0.95):.2f} s, "
          f"max {max(delays, default=float('nan')):.2f} s (goal ≤ 2 s); "
          f"{missing} not shown 5 s after the load ended")
    print(f"presenter figure updates: {frames / elapsed:.2f}/s; browser frames rendered: "
          f"{raf / elapsed:.1f}/s; {len(browser_errors)} browser errors")
    if browser_errors:
        print(browser_errors[:3])
    within = bisect.bisect_right(sorted(delays), 2.0)
    print(f"{100 * within / max(len(delays), 1):.1f}% of hits on screen within 2 s")


if __name__ == "__main__":
    main()
