"""History in a browser: how long each interaction takes to be fully drawn, this tree
against a baseline tree.

For each tree (this one, and ``--baseline PATH``: a worktree of another commit with its
own ``.venv``) the log is ingested into a fresh embedded store with that tree's
``hitboard ingest``, and that tree's ``hitboard serve`` serves it. One headless Chromium
(1280×1000) then runs, ``--runs`` times for each tree in turn, the analyst's sequence:

    first render   open /history on "All time" (from navigation start)
    filter click   a click on the referrer panel's first value
    filter removed the chip's ×
    per day        the granularity "day" (All time on a few days is drawn per hour)
    day → hours    a click on the busiest day of the chart
    hour → minutes a click on the busiest hour
    back           the browser's back button (to the hours)

An interaction is fully drawn when no callback request is in flight and nothing in the
page has changed for ``QUIET_S``: its time runs from the click (or navigation start) to
the last change of the page (a MutationObserver over the whole document: Dash's renders,
Plotly's drawing, the loading spinner). Prints the median over the runs of each tree,
their ratio, and the callback requests each interaction made.

    .venv/bin/python bench/browser.py --baseline /work/base45
    .venv/bin/python bench/browser.py --baseline /work/base45 --runs 5 --tz Asia/Kolkata
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from benchkit import load
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.common.action_chains import ActionChains

HERE = Path(__file__).resolve().parent
TREE = HERE.parent
LOG = Path("/work/shared/data/apache_combined_2015.log")
SITE = "semicomplete.com"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--disable-background-networking", "--disable-component-update",
         "--no-first-run", "--window-size=1280,1000")
QUIET_S = 0.8
LIMIT_S = 60
STEPS = ("first render", "filter click", "filter removed", "per day", "day → hours",
         "hour → minutes", "back")

# Installed before any script of every document: counts Dash's callback requests and
# keeps the time of the page's last change.
PROBE = """
window.__bench = {inflight: 0, requests: 0, last: 0, mark: 0, armed: false, log: []};
const fetched = window.fetch;
window.fetch = function(input, init) {
  const url = typeof input === 'string' ? input : (input && input.url) || '';
  const dash = url.includes('_dash-update-component');
  if (!dash) return fetched.apply(this, arguments);
  __bench.inflight += 1; __bench.requests += 1;
  const entry = {start: performance.now(), size: 0};
  try { entry.output = JSON.parse(init.body).output; } catch (e) {}
  __bench.log.push(entry);
  return fetched.apply(this, arguments).then(async response => {
    const copy = response.clone();
    try { entry.size = (await copy.arrayBuffer()).byteLength; } catch (e) {}
    return response;
  }).finally(() => { __bench.inflight -= 1; __bench.last = entry.end = performance.now(); });
};
new MutationObserver(() => { __bench.last = performance.now(); }).observe(
  document, {subtree: true, childList: true, attributes: true, characterData: true});
window.addEventListener('mousedown', () => {
  if (__bench.armed) { __bench.armed = false; __bench.mark = performance.now();
                       __bench.before = __bench.requests; }
}, true);
"""
STATE = """return [__bench.inflight, performance.now() - __bench.last,
                   __bench.last - __bench.mark, __bench.requests - (__bench.before || 0)];"""
MARK = "__bench.mark = performance.now(); __bench.before = __bench.requests;"
ARM = "__bench.armed = true; __bench.before = __bench.requests;"
# The x of the trace's busiest point, and its offset from the plot's centre in pixels.
BUSIEST = """const plot = document.querySelector('#history-graph .js-plotly-plot');
if (!plot || !plot.calcdata || !plot.calcdata.length || !plot._fullLayout.xaxis) return null;
const points = plot.calcdata[0];
let k = 0;
points.forEach((p, i) => { if ((p.y || 0) > (points[k].y || 0)) k = i; });
const xa = plot._fullLayout.xaxis;
return [k, xa.c2p(points[k].x) - xa._length / 2];"""
HOVERED = """const plot = document.querySelector('#history-graph .js-plotly-plot');
return plot && plot._hoverdata ? plot._hoverdata[0].pointNumber : null;"""


@dataclass
class Tree:
    """A tree served on its own store and port."""

    name: str
    path: Path
    port: int = 0
    server: subprocess.Popen | None = None
    times: dict[str, list[float]] = field(default_factory=dict)
    requests: dict[str, list[int]] = field(default_factory=dict)

    def command(self, name: str) -> str:
        return str(self.path / ".venv" / "bin" / name)


def ingest(tree: Tree, store: Path, log: Path) -> None:
    subprocess.run([tree.command("hitboard"), "ingest", "--site", SITE, "--store",
                    str(store), str(log)], check=True, cwd=tree.path,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env={**os.environ, "HITBOARD_INGEST_JOBS": "1"})


def serve(tree: Tree, store: Path, directory: Path) -> None:
    bench = load("bench_dashboard", tree.path / "bench" / "dashboard.py") \
        if (tree.path / "bench" / "dashboard.py").exists() else load(
            "bench_dashboard", HERE / "dashboard.py")
    tree.port = bench.free_port()
    hitboard = tree.command("hitboard")
    env = {**os.environ, "HITBOARD_STORE": str(store)}
    log = directory / f"{tree.name}-serve.log"
    with log.open("wb") as out:
        tree.server = subprocess.Popen(
            [hitboard, "serve", "--port", str(tree.port), "--threads", "8"], env=env,
            cwd=tree.path, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if tree.server.poll() is not None:
            raise SystemExit(f"{tree.name}: hitboard serve exited:\n{log.read_text()[-2000:]}")
        try:
            bench.health(tree.port)
            return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"{tree.name}: hitboard serve did not answer within 90 s")


def browser() -> webdriver.Chrome:
    options = Options()
    for flag in FLAGS:
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options)
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": PROBE})
    return driver


def settled(driver, what: str) -> tuple[float, int]:
    """(seconds from the mark to the page's last change, callback requests made), once
    nothing is in flight and nothing has changed for ``QUIET_S``."""
    deadline = time.monotonic() + LIMIT_S
    while time.monotonic() < deadline:
        time.sleep(0.05)
        inflight, quiet_ms, drawn_ms, requests = driver.execute_script(STATE)
        if inflight == 0 and quiet_ms >= QUIET_S * 1000 and drawn_ms > 0:
            return drawn_ms / 1000, requests
    raise SystemExit(f"{what}: the page did not settle within {LIMIT_S} s")


def wait_for(driver, script: str, what: str):
    deadline = time.monotonic() + LIMIT_S
    while time.monotonic() < deadline:
        found = driver.execute_script(script)
        if found:
            return found
        time.sleep(0.05)
    raise SystemExit(f"{what}: not found within {LIMIT_S} s")


def click_busiest(driver, what: str) -> None:
    """Hover the chart's busiest point until Plotly says so, then click it."""
    deadline = time.monotonic() + LIMIT_S
    while time.monotonic() < deadline:
        found = driver.execute_script(BUSIEST)
        drags = driver.find_elements("css selector", "#history-graph .nsewdrag")
        if found and drags:
            x, offset = found
            ActionChains(driver).move_to_element(drags[0]).move_by_offset(
                round(offset), 0).perform()
            if driver.execute_script(HOVERED) == x:
                driver.execute_script(ARM)
                ActionChains(driver).click().perform()
                return
        time.sleep(0.1)
    raise SystemExit(f"{what}: could not hover the busiest point")


def period_says(driver, text: str) -> bool:
    found = driver.find_elements("css selector", "#history-period")
    return bool(found) and text in found[0].text


def run_once(driver, tree: Tree, tz: str) -> dict[str, tuple[float, int]]:
    """The sequence once, from a fresh load of All time."""
    out = {}
    driver.get("about:blank")
    driver.get(f"http://127.0.0.1:{tree.port}/history?site={SITE}&tz={quote(tz)}&range=all")
    out["first render"] = settled(driver, "first render")
    link = "return document.querySelector('#history-panel-referrer a.bd-link')"
    wait_for(driver, link, "a referrer link")
    driver.execute_script(MARK + " document.querySelector("
                          "'#history-panel-referrer a.bd-link').click();")
    out["filter click"] = settled(driver, "filter click")
    wait_for(driver, "return document.querySelector('#history-chip-remove')", "the chip")
    driver.execute_script(MARK + " document.querySelector('#history-chip-remove').click();")
    out["filter removed"] = settled(driver, "filter removed")
    assert "filter=" not in driver.current_url, driver.current_url
    driver.execute_script(MARK + " document.querySelector("
                          "\"#history-granularity input[value='day']\").click();")
    out["per day"] = settled(driver, "per day")
    assert period_says(driver, "per day"), "the granularity did not change to days"
    click_busiest(driver, "day → hours")
    out["day → hours"] = settled(driver, "day → hours")
    assert period_says(driver, "per hour"), "the click did not open the day's hours"
    click_busiest(driver, "hour → minutes")
    out["hour → minutes"] = settled(driver, "hour → minutes")
    assert period_says(driver, "per minute"), "the click did not open the hour's minutes"
    driver.execute_script(MARK + " history.back();")
    out["back"] = settled(driver, "back")
    assert period_says(driver, "per hour"), "back did not return to the hours"
    logs = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
    if logs:
        print(f"  {tree.name}: browser errors: {json.dumps(logs)[:500]}")
    return out


def report(trees: list[Tree], runs: int) -> None:
    base, ours = trees[0], trees[-1]
    print(f"\nmedian of {runs} runs, seconds to fully drawn (callback requests)")
    head = "".join(f"{t.name:>22}" for t in trees)
    print(f"{'interaction':<16}{head}{'ratio':>8}")
    for step in STEPS:
        cells = "".join(f"{statistics.median(t.times[step]):>14.2f} s "
                        f"({statistics.median(t.requests[step]):>3.0f})" for t in trees)
        ratio = statistics.median(ours.times[step]) / statistics.median(base.times[step])
        print(f"{step:<16}{cells}{ratio:>7.2f}×" if len(trees) > 1 else f"{step:<16}{cells}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, help="a worktree to compare with, set up "
                        "with `make .venv/.installed`")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--log", type=Path, default=LOG)
    parser.add_argument("--tz", default="UTC")
    args = parser.parse_args()
    trees = ([Tree("baseline", args.baseline.resolve())] if args.baseline else []) + [
        Tree("this tree", TREE)]
    directory = Path(tempfile.mkdtemp(prefix="hitboard-browser-"))
    driver = None
    try:
        for tree in trees:
            started = time.perf_counter()
            ingest(tree, directory / f"{tree.name}-store", args.log)
            serve(tree, directory / f"{tree.name}-store", directory)
            commit = subprocess.run(["git", "-C", str(tree.path), "rev-parse", "--short",
                                     "HEAD"], capture_output=True, text=True).stdout.strip()
            print(f"{tree.name}: {tree.path} at {commit}, {args.log.name} ingested and "
                  f"served in {time.perf_counter() - started:.1f} s on port {tree.port}")
        print(f"{os.cpu_count()} CPUs; site {SITE}, tz {args.tz}; quiet {QUIET_S} s")
        driver = browser()
        for run in range(args.runs):
            for tree in trees:
                for step, (seconds, requests) in run_once(driver, tree, args.tz).items():
                    tree.times.setdefault(step, []).append(seconds)
                    tree.requests.setdefault(step, []).append(requests)
            print(f"run {run + 1}: " + "; ".join(
                f"{t.name} " + " ".join(f"{t.times[s][-1]:.2f}" for s in STEPS)
                for t in trees), flush=True)
        report(trees, args.runs)
    finally:
        if driver is not None:
            driver.quit()
        for tree in trees:
            if tree.server is not None:
                tree.server.terminate()
                tree.server.wait(timeout=30)
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
