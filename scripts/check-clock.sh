#!/usr/bin/env bash
# The History, Live and presenter tests at instants where clocks bite: UTC midnight,
# 22:30 UTC (tomorrow already in zones east of UTC), the day Europe's clocks go forward,
# the last seconds of a year. Each run pins the tests' clock (tests/conftest.py,
# HITBOARD_TEST_NOW); prints one line per instant and exits non-zero if any failed.
# Usage: scripts/check-clock.sh [INSTANT...]   (run from the repository, after `make test`)
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
TESTS=(
  tests/test_pages_history.py tests/test_pages_live.py tests/test_pages_present.py
  tests/test_compare_view.py tests/test_history_panels.py tests/test_history_opening.py
  tests/test_notes_view.py tests/test_reads_panels.py tests/test_live_panels.py
  tests/test_presenter.py tests/test_expected.py tests/test_app_ranges.py tests/test_kpis.py
  tests/browser/test_browser_history.py tests/browser/test_browser_history_ranges.py
  tests/browser/test_browser_live.py tests/browser/test_browser_live_people.py
  tests/browser/test_browser_live_top.py tests/browser/test_browser_live_views.py
  tests/browser/test_browser_present.py tests/browser/test_browser_breakdowns.py
  tests/browser/test_browser_annotations.py tests/browser/test_browser_controls.py
  tests/browser/test_browser_data.py tests/browser/test_browser_first_start.py
)
INSTANTS=("$@")
if [ ${#INSTANTS[@]} -eq 0 ]; then
  INSTANTS=(2026-03-18T00:00:00Z 2026-03-18T22:30:00Z 2026-03-29T01:30:00Z
            2026-12-31T23:59:30Z)
fi
failed=0
for instant in "${INSTANTS[@]}"; do
  if out=$(HITBOARD_TEST_NOW=$instant "$PY" -m pytest -p no:cacheprovider -q "${TESTS[@]}" 2>&1); then
    echo "$instant: $(echo "$out" | tail -1)"
  else
    failed=1
    echo "$instant: FAILED"
    echo "$out" | grep -E "^(FAILED|ERROR)" | sed 's/^/    /'
  fi
done
exit $failed
