#!/usr/bin/env bash
# The wire-protocol test tier runs mongoeco's MongoDB wire server, which needs Python >= 3.13.
# Create .venv-wire with the first such interpreter found (python3.14/python3.13 on PATH,
# then pyenv's) and install mongoeco there; otherwise say so (the wire tests then skip).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=.venv-wire
MONGOECO='mongoeco[wire]==4.11.0'

if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c '
import sys, importlib.metadata, mongoeco.wire, bson
sys.exit(importlib.metadata.version("mongoeco") != sys.argv[1])' "${MONGOECO##*==}" 2>/dev/null; then
  exit 0
fi

newest_pyenv() {
  local root="${PYENV_ROOT:-$HOME/.pyenv}"
  ls -d "$root"/versions/3.1[3-9]*/bin/python 2>/dev/null | sort -V | tail -n 1
}

interpreter=""
for candidate in python3.14 python3.13 "$(newest_pyenv)"; do
  if [ -n "$candidate" ] && command -v "$candidate" >/dev/null \
     && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 13))' 2>/dev/null; then
    interpreter="$candidate"
    break
  fi
done
if [ -z "$interpreter" ]; then
  echo "No Python >= 3.13 found: the wire-protocol tests will be skipped." >&2
  exit 0
fi

echo "Installing $MONGOECO into $VENV with $interpreter for the wire-protocol tests..."
rm -rf "$VENV"
if ! { "$interpreter" -m venv "$VENV" && "$VENV/bin/python" -m pip install --quiet "$MONGOECO"; }; then
  rm -rf "$VENV"
  echo "Could not install $MONGOECO: the wire-protocol tests will be skipped." >&2
fi
