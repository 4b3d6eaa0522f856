#!/usr/bin/env bash
# Installs everything, then runs the whole test suite: lint, types, layer rules, tests.
# Postgres tests use TEST_POSTGRES_URL (default: the local server's "test" database); without a
# usable server they fail (skip them explicitly: -m "not postgres", or TEST_SKIP_POSTGRES=1).
# install.sh installs Chromium (the browser tests) only where it can, and says what it skipped.
# Arguments go to pytest instead of the whole run: ./scripts/test.sh -m "not slow and not e2e"
# is the fast lane.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install.sh --dev

export TEST_POSTGRES_URL=${TEST_POSTGRES_URL:-postgresql+psycopg://postgres@127.0.0.1:5432/test}

.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy
.venv/bin/lint-imports
if [ "$#" -gt 0 ]; then
  # A chosen part of the suite (the fast lane, a file): no coverage gate.
  exec .venv/bin/pytest -n 2 "$@"
fi
# The engine carries the strictest bar: its own tests cover at least 95% of its branches.
# Coverage is measured by its rule, golden and perft tests (the Hypothesis property tests run in
# the second run, with the rest): tracing makes CPU-heavy tests two to five times slower (the
# engine's property tests four times: 60 s of the suite where 15 s do).
.venv/bin/pytest -n 2 --cov=app/engine --cov-branch --cov-report=term-missing:skip-covered \
  tests/engine -m "not hypothesis"
.venv/bin/coverage report --fail-under=95 > /dev/null \
  || { echo "app/engine branch coverage is below 95%"; .venv/bin/coverage report; exit 1; }
echo "app/engine branch coverage by tests/engine: $(.venv/bin/coverage report --format=total)%"
.venv/bin/pytest -n 2 -m "not engine or hypothesis"
