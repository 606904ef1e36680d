"""A large embedded store: open time, memory and first answers do not grow with it.

    .venv/bin/python bench/bigstore.py [--dir DIR] [--events 5000000] [--pages 1000]
                                      [--days 365]

Builds the store once in DIR (kept, reused on the next run; default a temporary
directory, removed after): a year of pre-aggregated history for 1,000 pages
(`hitboard loadgen --backfill-days 365 --sites 2 --pages 500 --duration 0`: at most 500
pages per synthetic site) and
``--events`` raw events (`hitboard ingest` of the shared log repeated to that many
lines). Then measures, as a user meets them:

- `hitboard report` of a month by day, whole process (interpreter start included), best
  of 3, and its peak RSS;
- `hitboard serve`: seconds from launch to its first page;
- the server's RSS (the gunicorn worker's) after a headless Chromium browsed the History
  page's 12-month view and the Live page (skipped with the reason when no Chromium);
- the recent-hits feed (newest 100 of 10 pages) on all those events, best of 5.
"""

from __future__ import annotations

import argparse
import datetime as dt
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOG = ROOT.parent / "shared" / "data" / "apache_combined_2015.log"
HITBOARD = str(Path(sys.executable).parent / "hitboard")
SITE = "shop.example"  # the first synthetic site `hitboard loadgen` makes
MAX_PAGES_PER_SITE = 500


def build(store: Path, events: int, pages: int, days: int) -> dict:
    marker = store / "BENCH-BUILT"
    if marker.exists():
        return {"built": "reused " + marker.read_text().strip()}
    started = time.perf_counter()
    sites = -(-pages // MAX_PAGES_PER_SITE)  # the load generator's limit per site
    loadgen = subprocess.run(
        [HITBOARD, "loadgen", "--backfill-days", str(days), "--sites", str(sites),
         "--pages", str(pages // sites), "--duration", "0", "--rate", "200",
         "--store", str(store)], check=True, capture_output=True, text=True)
    backfill_s = time.perf_counter() - started
    print(loadgen.stdout.strip().splitlines()[-1], flush=True)     # its own summary
    lines = LOG.read_bytes().splitlines(keepends=True)
    log = store.parent / "bench-events.log"
    with log.open("wb") as out:
        written = 0
        while written < events:
            chunk = lines[:events - written]
            out.writelines(chunk)
            written += len(chunk)
    started = time.perf_counter()
    subprocess.run([HITBOARD, "ingest", str(log), "--site", "logs", "--store", str(store)],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ingest_s = time.perf_counter() - started
    log.unlink()
    note = f"{days} days × {pages} pages in {backfill_s:.0f} s, {events:,} events in " \
           f"{ingest_s:.0f} s ({events / ingest_s:,.0f} lines/s)"
    marker.write_text(note + "\n")
    return {"built": note}


def report(store: Path) -> tuple[float, float]:
    """Best wall time of 3 runs of `hitboard report`, and its largest peak RSS (MB), each
    run measured alone (a wrapper process reports its one child's peak)."""
    command = [HITBOARD, "report", "--site", SITE, "--granularity", "day",
               "--start", "2026-10-01", "--end", "2026-11-01", "--store", str(store)]
    wrapper = ("import resource, subprocess, sys, time\n"
               "t = time.perf_counter()\n"
               "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)\n"
               "print(time.perf_counter() - t, "
               "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)")
    runs = [subprocess.run([sys.executable, "-c", wrapper, *command], check=True,
                           capture_output=True, text=True).stdout.split() for _ in range(3)]
    return min(float(t) for t, _ in runs), max(float(rss) for _, rss in runs)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def worker_rss_mb(master: int) -> float:
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    pids = [int(p) for p in children] or [master]
    return max(_rss(pid) for pid in pids)


def _rss(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def browse(url: str, site: str = SITE) -> str | None:
    """Open ``site``'s History 12-month view and Live page in headless Chromium; the
    reason when no browser is here."""
    if not shutil.which("chromedriver"):
        return "chromedriver not found (scripts/ensure-browser.sh installs it)"
    from selenium import webdriver
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    options = webdriver.ChromeOptions()
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--window-size=1280,1000"):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options)
    try:
        for path in (f"/history?site={site}&range=12m&tz=UTC", f"/?site={site}&tz=UTC"):
            driver.get(url + path)
            WebDriverWait(driver, 60).until(expected_conditions.presence_of_element_located(
                (By.CSS_SELECTOR, ".js-plotly-plot .main-svg")))
            time.sleep(3)
    finally:
        driver.quit()
    return None


def serve(store: Path, site: str = SITE) -> dict:
    """``hitboard serve`` on ``store``: seconds to its first page, and its worker's RSS
    after a browser opened ``site``'s History 12 months and Live."""
    port = free_port()
    started = time.perf_counter()
    proc = subprocess.Popen([HITBOARD, "serve", "--store", str(store), "--port", str(port)],
                            stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        first = None
        while time.perf_counter() - started < 120:
            try:
                with urllib.request.urlopen(url + "/", timeout=5) as response:
                    response.read()
                first = time.perf_counter() - started
                break
            except OSError:
                time.sleep(0.05)
        reason = browse(url, site)
        rss = worker_rss_mb(proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    return {"first_page_s": first, "rss_mb": rss, "browse_skipped": reason}


def recent(store: Path) -> float:
    import queries
    from queries.events import recent as feed

    db = queries.connect(str(store), read_only=True)
    try:
        pages = list(queries.top_pages(db, "logs", dt.datetime(2015, 5, 17, tzinfo=dt.UTC),
                                       dt.datetime(2015, 5, 21, tzinfo=dt.UTC), n=10).index)
        times = []
        for _ in range(5):
            started = time.perf_counter()
            feed.recent_hits(db, "logs", pages, 100)
            times.append(time.perf_counter() - started)
        return min(times) * 1000
    finally:
        db.client.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, help="keep (and reuse) the store here")
    parser.add_argument("--events", type=int, default=5_000_000)
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--days", type=int, default=365)
    args = parser.parse_args()
    tmp = None if args.dir else Path(tempfile.mkdtemp(prefix="hitboard-bigstore-"))
    store = args.dir or tmp / "store"
    store.mkdir(parents=True, exist_ok=True)
    try:
        built = build(store, args.events, args.pages, args.days)
        size = sum(p.stat().st_size for p in store.iterdir() if p.is_file())
        report_s, report_rss = report(store)
        served = serve(store)
        feed_ms = recent(store)
        print(f"store: {built['built']}; {size / 1e9:.2f} GB on disk\n")
        print("| what | figure | goal |")
        print("|---|---|---|")
        print(f"| `hitboard report` (a month by day), whole process | {report_s:.2f} s, "
              f"peak RSS {report_rss:.0f} MB | ≤ 1.5 s |")
        print(f"| `hitboard serve`: launch to first page | {served['first_page_s']:.2f} s "
              "| ≤ 3 s |")
        rss = ("skipped: " + served["browse_skipped"] if served["browse_skipped"]
               else f"{served['rss_mb']:.0f} MB")
        print(f"| server RSS after browsing History 12 months and Live | {rss} | ≤ 400 MB |")
        print(f"| recent-hits feed, newest 100 of 10 pages | {feed_ms:.2f} ms | ≤ 10 ms |")
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
