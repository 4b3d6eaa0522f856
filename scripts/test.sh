#!/usr/bin/env bash
# Installs everything, then runs the whole test suite: lint, types, layer rules, tests.
# Postgres tests use TEST_POSTGRES_URL (default: the local server's "test" database); without a
# usable server they fail (skip them explicitly: -m "not postgres", or TEST_SKIP_POSTGRES=1).
# install.sh installs Chromium (the browser tests) only where it can, and says what it skipped.
# Arguments go to pytest: ./scripts/test.sh -m "not slow and not e2e" is the fast lane.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install.sh --dev

export TEST_POSTGRES_URL=${TEST_POSTGRES_URL:-postgresql+psycopg://postgres@127.0.0.1:5432/test}

.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy
.venv/bin/lint-imports
.venv/bin/pytest -n 2 --cov --cov-report=term-missing:skip-covered "$@"
# The engine carries the strictest bar: at least 95% branch coverage on its own.
.venv/bin/coverage report --include='app/engine/*' --fail-under=95 > /dev/null \
  || { echo "app/engine branch coverage is below 95%"; .venv/bin/coverage report --include='app/engine/*'; exit 1; }
echo "app/engine branch coverage: $(.venv/bin/coverage report --include='app/engine/*' --format=total)%"
