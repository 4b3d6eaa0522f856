#!/usr/bin/env bash
# Creates .venv and installs the app with its pinned dependencies (and, with --dev, the test
# tools and the browser the end-to-end tests drive). Safe to run again: it only adds what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

dev=0
[ "${1:-}" = "--dev" ] && dev=1

python=${PYTHON:-python3}
say() { echo "install: $*" >&2; }
if [ ! -x .venv/bin/python ]; then
  say "creating the virtual environment .venv with $("$python" --version 2>&1)"
  "$python" -m venv .venv
fi
stamp=.venv/.installed-$(sha256sum pyproject.toml | cut -c1-16)-$dev
if [ ! -f "$stamp" ]; then
  say "installing Patience Hall and its pinned dependencies into .venv$([ "$dev" = 1 ] && echo ', with the test tools')"
  say "(this takes a minute or so the first time, and is skipped on later runs)"
  .venv/bin/pip install --quiet --upgrade pip
  if [ "$dev" = 1 ]; then
    .venv/bin/pip install --quiet -e '.[dev]'
  else
    .venv/bin/pip install --quiet -e .
  fi
  touch "$stamp"
  say "dependencies installed"
fi

if [ "$dev" = 1 ] && [ ! -x /usr/bin/chromium ]; then
  # Playwright's own browser download cannot work here; Debian's Chromium is what the
  # end-to-end tests drive.
  say "installing Debian's Chromium for the browser tests"
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  fi
fi
