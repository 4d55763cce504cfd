#!/usr/bin/env bash
# Install everything the tests need into a virtual environment (.venv, or $VENV) and run them all.
#
# Works on Debian's externally managed python3 (nothing is installed into the system Python).
# Debian's Chromium is installed with apt for the browser tests when this runs as root or with
# password-less sudo; otherwise those tests skip, saying why, and the rest still run.
# Arguments are passed to pytest (bash scripts/test.sh -q -k lenient; -n 0 for one process).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${VENV:-.venv}"

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif sudo -n true 2>/dev/null; then sudo "$@"; else return 1; fi
}

if [ ! -x "$VENV/bin/python" ]; then
  if ! python3 -m venv "$VENV"; then
    echo "python3 -m venv failed; on Debian it needs the python3-venv package: trying apt" >&2
    rm -rf "$VENV"
    as_root apt-get install -y python3-venv || { echo "error: install python3-venv (apt-get install python3-venv), then run this again" >&2; exit 1; }
    python3 -m venv "$VENV"
  fi
fi
"$VENV/bin/python" -m pip install --disable-pip-version-check -q -e ".[test]"

if [ ! -x /usr/bin/chromium ]; then
  if as_root apt-get update -q && as_root apt-get install -y -q chromium; then
    :
  else
    echo "note: Chromium could not be installed (needs root or password-less sudo, and apt): the browser tests will skip" >&2
  fi
fi

# The engine's modules run beside the app's in a second worker (pytest-xdist; tests/conftest.py
# keeps the app's tests together in one worker). `-n 0` runs everything in this process.
exec "$VENV/bin/python" -m pytest -n auto --maxprocesses 4 --dist loadscope "$@"
