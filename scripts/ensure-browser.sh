#!/usr/bin/env bash
# Browser tests need Chromium and its driver. Install Debian's when missing and root;
# otherwise say so (the browser tests then skip with that reason).
set -euo pipefail
if command -v chromedriver >/dev/null && { command -v chromium >/dev/null || command -v chromium-browser >/dev/null; }; then
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "Installing Debian's chromium and chromium-driver for the browser tests..."
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
else
  echo "chromium/chromedriver not found and not root: browser tests will be skipped." >&2
fi
