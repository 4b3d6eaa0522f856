#!/usr/bin/env bash
# Creates .venv and installs the app with its pinned dependencies (and, with --dev, the test
# tools and the browser the end-to-end tests drive). Safe to run again: it only adds what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

dev=0
[ "${1:-}" = "--dev" ] && dev=1

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
stamp=.venv/.installed-$(sha256sum pyproject.toml | cut -c1-16)-$dev
if [ ! -f "$stamp" ]; then
  .venv/bin/pip install --quiet --upgrade pip
  if [ "$dev" = 1 ]; then
    .venv/bin/pip install --quiet -e '.[dev]'
  else
    .venv/bin/pip install --quiet -e .
  fi
  touch "$stamp"
fi

if [ "$dev" = 1 ] && [ ! -x /usr/bin/chromium ]; then
  # Playwright's own browser download cannot work here; Debian's Chromium is what the
  # end-to-end tests drive.
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  fi
fi
