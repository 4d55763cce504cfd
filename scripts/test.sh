#!/usr/bin/env bash
# Install everything the tests need (Debian's Chromium for the browser tests included) and run them all.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x /usr/bin/chromium ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update
  $SUDO apt-get install -y chromium
fi
python3 -m pip install -r requirements-test.txt
python3 -m pytest "$@"
