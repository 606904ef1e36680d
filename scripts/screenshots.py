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
import io
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from PIL import Image
from selenium import webdriver
from selenium.webdriver.chrome.options import Options

ROOT = Path(__file__).resolve().parent.parent
IMAGES = ROOT / "docs" / "images"
WIDTHS = {"": (1280, 860), "-390": (390, 844)}     # file suffix: the window's size
THEMES = ("light", "dark")
# name: (path, the themes and widths it is drawn in)
PAGES = {
    "history": ("/history?range=30d", THEMES, WIDTHS),
    "present": ("/present", THEMES, WIDTHS),
    "live": ("/", ("light",), {"": WIDTHS[""]}),
    "sources": ("/sources", ("light",), {"": WIDTHS[""]}),
    "sites": ("/sites", ("light",), {"": WIDTHS[""]}),
    "data": ("/data", ("light",), {"": WIDTHS[""]}),
    "loadgen": ("/loadgen", ("light",), {"": WIDTHS[""]}),
    "rollups": ("/rollups", ("light",), {"": WIDTHS[""]}),
}
SETTLE_SECONDS = 2.0    # no Dash callback pending this long: the page is drawn
PAGE_LIMIT = 60.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_demo(store: Path, port: int) -> subprocess.Popen:
    """The demo server, ready once it says what its demo did ("demo: backfilled 30
    days ..., live traffic at ..."), which it prints after the backfill."""
    env = {**os.environ, "HITBOARD_STORE": str(store), "HITBOARD_DEMO": "1"}
    log = store / "serve.log"
    with log.open("w") as out:
        server = subprocess.Popen(
            [str(Path(sys.executable).parent / "hitboard"), "serve", "--port", str(port)],
            env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"hitboard serve exited:\n{log.read_text()}")
        said = [line for line in log.read_text().splitlines() if line.startswith("demo")]
        if said:
            if "failed" in said[0] or "not started" in said[0]:
                raise SystemExit(said[0])
            time.sleep(10)      # a few minutes of live traffic on Live and the presenter
            return server
        time.sleep(1)
    raise SystemExit("the demo did not start within 15 minutes")


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


def shoot(driver: webdriver.Chrome, base: str, only: set[str] | None) -> list[Path]:
    made = []
    for name, (path, themes, widths) in PAGES.items():
        if only and name not in only:
            continue
        for theme in themes:
            for suffix, (width, height) in widths.items():
                driver.set_window_size(width, height)
                joiner = "&" if "?" in path else "?"
                driver.get(f"{base}{path}{joiner}theme={theme}")
                settled(driver)
                out = IMAGES / f"{name}-{theme}{suffix}.png"
                size = save(driver.get_screenshot_as_png(), out)
                print(f"{out.relative_to(ROOT)}  {width}x{height}  {size / 1024:.0f} KiB")
                made.append(out)
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", choices=sorted(PAGES), help="these pages only")
    parser.add_argument("--keep", action="store_true", help="keep the demo store")
    parser.add_argument("--url", help="a demo server already running (none is started)")
    args = parser.parse_args()
    IMAGES.mkdir(parents=True, exist_ok=True)
    store = Path(tempfile.mkdtemp(prefix="hitboard-screenshots-"))
    server = None
    if args.url is None:
        port = free_port()
        server = start_demo(store, port)
    driver = browser()
    try:
        made = shoot(driver, args.url or f"http://127.0.0.1:{port}", set(args.only or ()))
    finally:
        driver.quit()
        if server is not None:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=60)
    total = sum(path.stat().st_size for path in IMAGES.glob("*.png"))
    print(f"{len(made)} pictures; docs/images holds {total / 1024 ** 2:.2f} MiB"
          + (f"; the demo store is in {store}" if args.keep else ""))


if __name__ == "__main__":
    main()
