"""Browser tests: dash[testing]'s ``dash_duo`` driving Debian's headless Chromium.

Always headless (CI has no display), with the flags Chromium needs to start quickly and
quietly as root in a container. Skipped, with the reason, when chromedriver is missing
(``scripts/ensure-browser.sh`` installs it when run as root).
"""

import shutil
from pathlib import Path

import pytest
from dash.testing.application_runners import ThreadedRunner
from dashkit import dashboard_app, free_port
from selenium.webdriver.chrome.options import Options

HERE = Path(__file__).parent
CHROME_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update",
                "--no-first-run", "--window-size=1280,1000")


def _missing_browser() -> str | None:
    if shutil.which("chromedriver") is None:
        return "chromedriver not found: run scripts/ensure-browser.sh (as root) to install it"
    if not any(shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome")):
        return "Chromium not found: run scripts/ensure-browser.sh (as root) to install it"
    return None


def pytest_configure(config):
    config.option.headless = True


def pytest_setup_options():
    options = Options()
    for flag in CHROME_FLAGS:
        options.add_argument(flag)
    return options


def pytest_collection_modifyitems(config, items):
    reason = _missing_browser()
    for item in items:
        if HERE in Path(item.fspath).parents:
            item.add_marker(pytest.mark.browser)
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))


class FreePortRunner(ThreadedRunner):
    """``dash_duo``'s server thread, on a free port unless the test names one (Dash's
    default counts up from 58050 in every process: two pytest-xdist workers would take
    the same port), and given time to answer its first request on a busy machine (Dash
    waits 3 s, then restarts the thread)."""

    def start(self, app, start_timeout=60, **kwargs):
        kwargs.setdefault("port", free_port())
        super().start(app, start_timeout=start_timeout, **kwargs)


@pytest.fixture
def dash_thread_server():
    """Replaces dash[testing]'s fixture of the same name, which ``dash_duo`` uses."""
    with FreePortRunner() as runner:
        yield runner


@pytest.fixture
def app(tmp_path):
    """The dashboard on a fresh store. Request it before ``dash_duo`` so the browser and
    the server stop before the app's services close."""
    with dashboard_app(tmp_path / "store") as app:
        yield app
