#!/usr/bin/env bash
# The seeded fault simulator's long search (tests/simrun.py): many schedules of every
# writer through lost replies, kills, restarts, a full disk and clock jumps, each checked
# against the truth of what was acknowledged. Prints progress, the seeds that failed
# (replay one: HITBOARD_SIM_SEED=N pytest tests/test_simulation.py) and a last line
# "N schedules, M failed"; exits 1 if any failed.
# Usage: scripts/simulate.sh [--schedules 20000] [--first 0] [--jobs 2] [--every 100]
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
PYTHONPATH=tests exec "$PY" tests/simsearch.py "$@"
