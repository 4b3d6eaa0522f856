#!/usr/bin/env bash
# Creates .venv and installs the app with its locked dependencies (requirements/app.lock, or
# with --dev requirements/dev.lock: every package pinned with its hashes, checked by pip), and,
# with --dev, the test tools, the browser the end-to-end tests drive and the reverse proxy the
# deployment tests run (Debian's chromium and caddy). Safe to run again: it only adds what is
# missing. docs/operating.md says how to regenerate the lock files.
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
lock=requirements/app.lock
[ "$dev" = 1 ] && lock=requirements/dev.lock
stamp=.venv/.installed-$(cat pyproject.toml "$lock" | sha256sum | cut -c1-16)-$dev
if [ ! -f "$stamp" ]; then
  say "installing Patience Hall and its locked dependencies ($lock) into .venv$([ "$dev" = 1 ] && echo ', with the test tools')"
  say "(this takes a minute or so the first time, and is skipped on later runs)"
  .venv/bin/pip install --quiet --upgrade pip
  .venv/bin/pip install --quiet --require-hashes --no-deps -r "$lock"
  # The app itself, in place (its dependencies are all in the lock, installed above).
  .venv/bin/pip install --quiet --no-deps -e .
  touch "$stamp"
  say "dependencies installed"
fi

# Debian packages, only where they can be installed: apt-get there, and root or a sudo that
# asks for no password. Anywhere else, nothing is tried: the caller says what was skipped.
apt_install() {
  if ! command -v apt-get >/dev/null 2>&1; then
    apt_skipped="there is no apt-get here"
    return 1
  fi
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
  else
    apt_skipped="not root, and sudo needs a password (or is missing)"
    return 1
  fi
}
apt_skipped="apt-get failed"

chromium=${E2E_CHROMIUM:-/usr/bin/chromium}
if [ "$dev" = 1 ] && [ ! -x "$chromium" ]; then
  # Playwright's own browser download cannot work here; Debian's Chromium is what the
  # end-to-end tests drive.
  say "installing Debian's Chromium for the browser tests"
  apt_install chromium || {
    say "SKIPPED: Chromium was not installed ($apt_skipped)."
    say "  The browser tests (tests/e2e) will be skipped, saying so; under CI=true they fail."
    say "  Install a Chromium yourself and point E2E_CHROMIUM at it to run them."
  }
fi

if [ "$dev" = 1 ] && ! command -v caddy >/dev/null 2>&1; then
  # The deployment tests put the real reverse proxy of docker-compose.yml in front of two app
  # instances (tests/deploy/test_proxy.py). Its package's service is not started here.
  say "installing Debian's caddy for the reverse-proxy tests"
  apt_install caddy || say "SKIPPED: caddy was not installed ($apt_skipped): the reverse-proxy tests will say so"
fi
