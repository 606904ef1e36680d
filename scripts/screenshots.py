"""Every picture of README.md and docs/, made again from the demo (``make screenshots``).

Starts ``hitboard serve --demo`` on a fresh store in a temporary directory (30 days
backfilled, then live traffic), opens each page in headless Chromium at 1280 px and
390 px wide, in the light and the dark theme, and writes ``docs/images/NAME.png``,
quantized to 256 colours so the pictures stay small. A UI change updates them with this
one command; ``tests/test_docs.py`` checks that each picture the docs name exists.

    .venv/bin/python scripts/screenshots.py [--only history present] [--keep]
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

from PIL import Image
from selenium import webdriver
from selenium.webdriver.chrome.options import Options

import queries

ROOT = Path(__file__).resolve().parent.parent
IMAGES = ROOT / "docs" / "images"
DEMO_SITE = "blog.example"        # one of the demo's sites
BOTH_SOURCES = "www.example.org"  # a site this script feeds with a log and the beacon
WIDE, PHONE = (1280, 900), (390, 844)
THEMES = ("light", "dark")
# name: (path, the themes it is drawn in, {file suffix: viewport})
PAGES = {
    "history": (f"/history?site={DEMO_SITE}&range=30d", THEMES,
                {"": (1280, 1180), "-390": PHONE}),
    "present": (f"/present?site={DEMO_SITE}", THEMES, {"": WIDE, "-390": PHONE}),
    "live": (f"/?site={DEMO_SITE}", ("light",), {"": WIDE}),
    "sources": (f"/sources?site={BOTH_SOURCES}&range=today", ("light",), {"": (1280, 1100)}),
    "sites": (f"/sites?site={DEMO_SITE}", ("light",), {"": WIDE}),
    "data": (f"/data?site={DEMO_SITE}", ("light",), {"": WIDE}),
    "loadgen": (f"/loadgen?site={DEMO_SITE}", ("light",), {"": WIDE}),
    "rollups": (f"/rollups?site={DEMO_SITE}", ("light",), {"": WIDE}),
}
SETTLE_SECONDS = 2.0    # no Dash callback pending this long: the page is drawn
ANIMATION_SECONDS = 1.0  # then the presenter's ticker and rows finish moving
PAGE_LIMIT = 60.0
CACHE_SECONDS = 5


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_demo(store: Path, port: int) -> subprocess.Popen:
    """The demo server, ready once it says what its demo did ("demo: backfilled 30
    days ..., live traffic at ..."), which it prints after the backfill."""
    # One trusted proxy: the two-source site's beacon hits come from its log's addresses.
    # Results cached CACHE_SECONDS: a page's "now" is the start of its cache bucket, so
    # the beacon's hits show once the bucket they came in has ended.
    env = {**os.environ, "HITBOARD_STORE": str(store / "store"), "HITBOARD_DEMO": "1",
           "HITBOARD_TRUSTED_PROXIES": "1", "HITBOARD_CACHE_SECONDS": str(CACHE_SECONDS)}
    log = store / "serve.log"
    with log.open("w") as out:
        server = subprocess.Popen(
            [str(Path(sys.executable).parent / "hitboard"), "serve", "--port", str(port)],
            env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"hitboard serve exited:\n{log.read_text()}")
        said = [line for line in log.read_text().splitlines()
                if line.startswith("demo") and "backfilling" not in line]
        if said:
            if "failed" in said[0] or "not started" in said[0]:
                raise SystemExit(said[0])
            time.sleep(10)      # a few minutes of live traffic on Live and the presenter
            return server
        time.sleep(1)
    raise SystemExit("the demo did not start within 15 minutes")


def feed_both_sources(base: str, store: Path) -> None:
    """A site fed by its access log and by the beacon, for the Sources page: a log of the
    last two hours of today ingested (its primary source), and three in four of its people's page
    views sent to ``/hit`` too (kept apart), as a quarter of visitors blocking the script
    would leave them. Seeded: the same picture each run."""
    rng = random.Random(7)
    now = dt.datetime.now(dt.UTC)
    pages = ["/", "/pricing", "/docs/", "/docs/install", "/blog/", "/blog/launch",
             "/blog/release-notes", "/about", "/contact", "/careers"]
    people = [f"Mozilla/5.0 (X11; Linux x86_64) Firefox/{v}.0" for v in range(120, 132)]
    bots = ["Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
            "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; "
            "+https://openai.com/gptbot)", "CCBot/2.0 (https://commoncrawl.org/faq/)"]
    lines, beacon = [], []
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    span = max(120.0, min(7200.0, (now - midnight).total_seconds()))  # today's, as the beacon's
    for i in range(600):
        when = now - dt.timedelta(seconds=rng.uniform(60, span))
        page = rng.choices(pages, weights=[30, 12, 10, 8, 8, 6, 5, 4, 3, 2])[0]
        bot = rng.random() < 0.2
        agent = rng.choice(bots if bot else people)
        client = f"203.0.113.{rng.randrange(1, 250)}"
        lines.append((when, f'{client} - - [{when:%d/%b/%Y:%H:%M:%S} +0000] "GET {page} '
                            f'HTTP/1.1" 200 {rng.randrange(900, 30000)} '
                            f'"https://news.example/item/{i % 40}" "{agent}"'))
        if not bot and rng.random() < 0.75:
            beacon.append((page, agent, client))
    log = store / f"{BOTH_SOURCES}.log"
    log.write_text("".join(line + "\n" for _when, line in sorted(lines)))
    subprocess.run([str(Path(sys.executable).parent / "hitboard"), "ingest", str(log),
                    "--site", BOTH_SOURCES, "--store", str(store / "store")],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for page, agent, client in beacon:     # the same people, from the same addresses
        query = urllib.parse.urlencode({"site": BOTH_SOURCES, "page": page,
                                        "referrer": "https://news.example/"})
        request = urllib.request.Request(f"{base}/hit?{query}", headers={
            "User-Agent": agent, "X-Forwarded-For": client})
        with urllib.request.urlopen(request, timeout=30) as answer:
            answer.read()
    wait_for_beacon(store / "store", len(beacon))


def wait_for_beacon(store: Path, sent: int) -> None:
    """Until the server has counted the beacon hits sent (kept apart: the site counts
    its log), so the Sources page shows both sources."""
    db = queries.connect(str(store), read_only=True)    # beside the server: readers never block
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        kept = sum(doc.get("n", 0) for doc in db["events.apart"].find(
            {"site": BOTH_SOURCES}, {"n": 1}))
        if kept >= sent:
            time.sleep(CACHE_SECONDS + 1)
            return
        time.sleep(2)
    raise SystemExit(f"the beacon's {sent} hits were not counted within 5 minutes")


def browser() -> webdriver.Chrome:
    options = Options()
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                 "--hide-scrollbars", "--force-device-scale-factor=1"):
        options.add_argument(flag)
    return webdriver.Chrome(options=options)


def settled(driver: webdriver.Chrome) -> None:
    """Wait until no Dash callback has been pending for ``SETTLE_SECONDS``."""
    deadline, quiet_since = time.monotonic() + PAGE_LIMIT, None
    while time.monotonic() < deadline:
        busy = driver.execute_script(
            "return document.querySelector('[data-dash-is-loading=\"true\"]') !== null"
            " || document.querySelector('._dash-loading') !== null"
            " || document.querySelector('.pending') !== null")
        if busy:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since >= SETTLE_SECONDS:
            return
        time.sleep(0.25)


def save(png: bytes, path: Path) -> int:
    """The screenshot quantized to 256 colours (a dashboard's flat colours lose
    nothing a reader sees) and written optimised; returns its bytes."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    image.quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)
    return path.stat().st_size


def shoot(driver: webdriver.Chrome, base: str, names: list[str]) -> list[Path]:
    made = []
    for name in names:
        path, themes, widths = PAGES[name]
        for theme in themes:
            for suffix, (width, height) in widths.items():
                driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
                    "width": width, "height": height, "deviceScaleFactor": 1,
                    "mobile": width < 600})
                driver.get(f"{base}{path}&theme={theme}")
                settled(driver)
                time.sleep(ANIMATION_SECONDS)
                out = IMAGES / f"{name}-{theme}{suffix}.png"
                size = save(driver.get_screenshot_as_png(), out)
                print(f"{out.relative_to(ROOT)}  {width}x{height}  {size / 1024:.0f} KiB")
                made.append(out)
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", choices=sorted(PAGES), help="these pages only")
    parser.add_argument("--keep", action="store_true", help="keep the demo store")
    parser.add_argument("--url", help="a demo server already running: none is started, and "
                        "the Sources page's two-source site is not made")
    args = parser.parse_args()
    IMAGES.mkdir(parents=True, exist_ok=True)
    store = Path(tempfile.mkdtemp(prefix="hitboard-screenshots-"))
    server = None
    if args.url is None:
        port = free_port()
        server = start_demo(store, port)
    driver = None
    try:
        base = args.url or f"http://127.0.0.1:{port}"
        names = [name for name in PAGES if not args.only or name in args.only]
        driver = browser()
        # Sources last: feeding its site (an ingest on the same store) slows the demo's
        # live traffic for a minute, which Live and the presenter would show.
        made = shoot(driver, base, [name for name in names if name != "sources"])
        if "sources" in names:
            if server is not None:
                feed_both_sources(base, store)
            made += shoot(driver, base, ["sources"])
    finally:
        if driver is not None:
            driver.quit()
        if server is not None:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=60)
    if not args.keep:
        shutil.rmtree(store, ignore_errors=True)
    total = sum(path.stat().st_size for path in IMAGES.glob("*.png"))
    print(f"{len(made)} pictures; docs/images holds {total / 1024 ** 2:.2f} MiB"
          + (f"; the demo store is in {store}" if args.keep else ""))


if __name__ == "__main__":
    main()
