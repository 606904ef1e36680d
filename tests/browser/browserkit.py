"""How browser tests wait on the page: ``until`` (a read that Dash re-renders under)
and ``click`` on it, with one limit for every wait."""

from __future__ import annotations

from dash.testing.errors import TestingTimeoutError
from dash.testing.wait import until as _until
from selenium.common.exceptions import (
    JavascriptException,
    NoSuchElementException,
    StaleElementReferenceException,
)

# A limit, not an expectation: a wait ends as soon as its condition holds. Dash's default
# of 10 s failed tests whose page was right on CI's 2 busy cores.
WAIT_S = 30
# A read that met an element being replaced: found, then re-rendered before its text was
# read (stale), not there yet, or gone under a script reading it.
REPLACED = (StaleElementReferenceException, NoSuchElementException, JavascriptException)


def until(read, timeout: float = WAIT_S, msg="expected condition not met"):
    """``dash.testing.wait.until`` for a read of the page: a read that meets an element
    being replaced by a re-render (``REPLACED``) is not yet true and is read again.
    Returns the first true value; on the limit, raises ``msg`` (or what ``msg()`` says
    then), with what the last read met."""
    last: list[Exception] = []

    def attempt():
        last.clear()
        try:
            return read()
        except REPLACED as exc:
            last.append(exc)
            return None

    try:
        return _until(attempt, timeout)
    except TestingTimeoutError as exc:
        text = msg() if callable(msg) else msg
        if last:
            text += f" (the last read met {last[0].__class__.__name__}: {last[0].msg})"
        raise TestingTimeoutError(f"{text} within {timeout} s") from exc


def click(dash_duo, selector: str, timeout: float = WAIT_S) -> None:
    """Click ``selector``, found again if a callback re-rendered it between finding and
    clicking."""
    until(lambda: dash_duo.find_element(selector).click() or True, timeout,
          msg=f"could not click {selector}")
