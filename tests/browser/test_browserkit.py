"""browserkit's wait: a read that meets an element replaced by a re-render (found, then
stale before its text was read: the History page after ``back()``) is read again, never
the test's failure; any other error is, at once."""

from pathlib import Path

import pytest
from browserkit import until
from dash.testing.errors import TestingTimeoutError
from selenium.common.exceptions import (
    JavascriptException,
    NoSuchElementException,
    StaleElementReferenceException,
)


def reads(*answers):
    """A read giving ``answers`` in turn, raising those that are exceptions."""
    left = iter(answers)

    def read():
        answer = next(left)
        if isinstance(answer, Exception):
            raise answer
        return answer
    return read


def test_a_read_that_meets_a_replaced_element_is_read_again():
    read = reads(StaleElementReferenceException("replaced"), NoSuchElementException("not yet"),
                 JavascriptException("null"), "", "4 visits")
    assert until(read) == "4 visits"


def test_the_limit_says_what_the_last_read_met():
    def read():
        raise StaleElementReferenceException("stale element reference")

    with pytest.raises(TestingTimeoutError,
                       match="never shown .the last read met StaleElementReferenceException"):
        until(read, timeout=0.3, msg=lambda: "never shown")


def test_any_other_error_fails_the_test_at_once():
    with pytest.raises(ZeroDivisionError):
        until(reads(ZeroDivisionError()))


def test_every_browser_test_waits_and_clicks_with_browserkit_alone():
    """One way to wait on a re-rendered page: no test keeps its own stale-element catch."""
    own = ("dash.testing.wait", "StaleElementReferenceException", "except Exception")
    wrong = sorted(f"{path.name}: {word}" for path in Path(__file__).parent.glob("test_*.py")
                   if path.name != Path(__file__).name
                   for word in own if word in path.read_text())
    assert wrong == []
