"""Browser tests: dash[testing]'s ``dash_duo`` driving Debian's headless Chromium.

Always headless (CI has no display), with the flags Chromium needs to start quickly and
quietly as root in a container. Skipped, with the reason, when chromedriver is missing
(``scripts/ensure-browser.sh`` installs it when run as root).
"""

import atexit
import shutil
import threading
from contextlib import suppress
from pathlib import Path

import pytest
from browserkit import WAIT_S
from dash.testing.application_runners import BaseDashRunner
from dash.testing.composite import DashComposite
from dashkit import dashboard_app, free_port
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.options import Options
from werkzeug.serving import make_server

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


class WorkerServer(BaseDashRunner):
    """``dash_duo``'s server: one HTTP server per pytest worker, on one port for the
    worker's life, handing each request to the current test's app. One origin lets
    Chromium keep Dash's and Plotly's scripts compiled from test to test (V8's code
    cache is kept per URL: a new port each test cost 2 s of CPU per page load), and no
    server thread is killed between tests (Dash's runner raises SystemExit in every
    thread started after it, the app's own included)."""

    _http = None
    _port = 0
    _current = None

    def __init__(self):
        super().__init__(keep_open=False, stop_timeout=3)

    @classmethod
    def _dispatch(cls, environ, start_response):
        app = cls._current
        if app is None:
            start_response("503 Service Unavailable", [("Content-Type", "text/plain")])
            return [b"no test app is being served"]
        return app(environ, start_response)

    def start(self, app):
        """Serve ``app`` as Dash's threaded runner would (``app.run`` without a server)."""
        app.scripts.config.serve_locally = True
        app.css.config.serve_locally = True
        app.enable_dev_tools(debug=False, dev_tools_disable_version_check=True)
        if WorkerServer._http is None:
            WorkerServer._port = free_port()
            WorkerServer._http = make_server("127.0.0.1", WorkerServer._port,
                                             WorkerServer._dispatch, threaded=True)
            threading.Thread(target=WorkerServer._http.serve_forever, name="dash-duo-http",
                             daemon=True).start()
        WorkerServer._current = app.server
        self.port = WorkerServer._port
        self.started = True

    def stop(self):
        WorkerServer._current = None
        self.started = False


class SharedChromium(DashComposite):
    """``dash_duo`` on one Chromium per pytest worker: starting and quitting one for each
    test took 3-5 s, a fifth of the suite. After each test the browser is left as a new
    one: a blank page (the test's timers stop), no cookies (signing in), no device
    emulation, the default window, no other tab, its log read, the test server's origin's
    storage cleared; downloads go to each test's own directory."""

    driver_of_worker = None

    def start_server(self, app, navigate=True, path=""):
        """Start ``app``'s server, then open ``path`` (the app's root by default) and wait
        for Dash's entry point; with ``navigate=False`` open nothing (``server_url`` is
        set either way). A test that opens its own page says so with ``path`` or
        ``navigate=False``: each page load costs Chromium 3-4 s of CPU, and opening the
        root first (Dash's ``start_server``) only to leave it was a fifth of the browser
        tests' time."""
        self.server(app)
        self._url = self.server.url
        if navigate:
            self.wait_for_page(self._url + path)

    def get_webdriver(self):
        driver = SharedChromium.driver_of_worker
        if driver is not None:
            try:
                driver.current_url  # noqa: B018 -- still alive?
            except WebDriverException:
                driver = None
        if driver is None:
            driver = SharedChromium.driver_of_worker = super().get_webdriver()
            atexit.register(driver.quit)
        driver.execute_cdp_cmd("Page.setDownloadBehavior",
                               {"behavior": "allow", "downloadPath": self.download_path})
        return driver

    def __exit__(self, *exc) -> None:
        driver = self.driver
        try:
            with suppress(WebDriverException):
                driver.switch_to.alert.dismiss()
            for handle in driver.window_handles[1:]:
                driver.switch_to.window(handle)
                driver.close()
            driver.switch_to.window(driver.window_handles[0])
            origin = getattr(self, "_url", "") or ""
            driver.get("about:blank")
            if origin.startswith("http"):
                driver.execute_cdp_cmd("Storage.clearDataForOrigin",
                                       {"origin": origin.rstrip("/"), "storageTypes": "all"})
            driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
            driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
            driver.set_window_size(1280, 1000)
            driver.get_log("browser")
        except WebDriverException:       # a browser left broken: the next test starts one
            SharedChromium.driver_of_worker = None
            with suppress(WebDriverException):
                driver.quit()


@pytest.fixture
def dash_duo(request, dash_thread_server, tmp_path):
    """Replaces dash[testing]'s fixture of the same name with one on a shared Chromium."""
    downloads = tmp_path / "download"
    downloads.mkdir()
    with SharedChromium(
        server=dash_thread_server,
        browser=request.config.getoption("webdriver"),
        headless=True,
        options=request.config.hook.pytest_setup_options(),
        download_path=str(downloads),
        pause=request.config.getoption("pause"),
        wait_timeout=WAIT_S,
    ) as dc:
        yield dc


@pytest.fixture
def dash_thread_server():
    """Replaces dash[testing]'s fixture of the same name, which ``dash_duo`` uses."""
    with WorkerServer() as runner:
        yield runner


@pytest.fixture
def app(tmp_path):
    """The dashboard on a fresh store. Request it before ``dash_duo`` so the browser and
    the server stop before the app's services close."""
    with dashboard_app(tmp_path / "store") as app:
        yield app
