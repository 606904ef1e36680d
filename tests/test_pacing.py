"""The paced refresh timer: the ids its page and the shell lay out, and the flags its
callbacks raise (the gate runs in the browser: tests/browser/test_browser_data.py)."""

from __future__ import annotations

import pytest

from dashboard.pacing import flag_stores
from dashboard.pages.live.pacer import PACER


def test_the_tick_is_on_the_page_and_a_flag_per_job_in_the_shell():
    assert [store.id for store in PACER.stores()] == ["live-interval-tick"]
    flags = [store.id for store in flag_stores()]
    assert [f"live-interval-busy-{job}" for job in PACER.jobs] == [
        flag for flag in flags if flag.startswith("live-")]
    assert len(flags) == len(set(flags))
    assert PACER.tick.component_id == "live-interval-tick"
    ((output, on, off),) = PACER.running("recent")
    assert (output.component_id, output.component_property, on, off) == (
        "live-interval-busy-recent", "data", True, False)


def test_a_job_the_pacer_does_not_wait_for_is_refused():
    with pytest.raises(ValueError, match="export"):
        PACER.running("export")
