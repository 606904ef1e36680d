"""The collector's bulk setting: entered by ``hitboard ingest`` and its workers, undone."""

from __future__ import annotations

import gc

from queries.ingest import gcmode


def test_bulk_raises_the_thresholds_freezes_what_lives_and_undoes_both():
    before = gc.get_threshold()
    kept = [object() for _ in range(10)]   # noqa: F841 - alive when the block starts
    with gcmode.bulk():
        assert gc.get_threshold() == gcmode.THRESHOLDS
        assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
