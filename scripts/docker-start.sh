#!/bin/sh
# The container's start command: check the settings, bring the database schema up to date
# (MIGRATE=0 skips it: docker-compose.yml's one-shot "migrate" service does it), check the
# DEAL_KEY against the database, then serve with several uvicorn workers. It runs as is outside
# Docker too, e.g.
#   APP_ENV=production DEAL_KEY=… SESSION_SECRET=… DATABASE_URL=… HOST=127.0.0.1 PORT=8001 \
#     PATH=.venv/bin:$PATH scripts/docker-start.sh
set -eu
cd "$(dirname "$0")/.."

python=${PYTHON:-python}
# The settings check below reads it too: several workers need REDIS_URL in production.
export WEB_CONCURRENCY="${WEB_CONCURRENCY:-4}"

# Fail fast with one clear line when the settings are refused (e.g. production with the
# development DEAL_KEY), rather than with a traceback from the migration step.
"$python" - <<'PY'
import logging
import sys

from pydantic import ValidationError

from app.cli import say  # one JSON object a line with JSON_LOGS (the default)
from app.config import get_settings, refusals

try:
    settings = get_settings()
except ValidationError as exc:
    for error in exc.errors():
        say(error["msg"], logging.ERROR)
    sys.exit(78)  # EX_CONFIG
for problem in refusals(settings):  # production on SQLite, several workers without Redis
    say(problem, logging.ERROR)
    sys.exit(78)
say(f"settings ok (APP_ENV={settings.app_env})")
PY

# alembic upgrade head under PostgreSQL's advisory lock, then the DEAL_KEY's fingerprint
# (exit 78 when the key is not the database's own).
if [ "${MIGRATE:-1}" = 1 ]; then
  "$python" -m app.cli migrate
else
  "$python" -m app.cli preflight
fi

# Metrics of every worker are added up from files in one directory (prometheus-client's
# multiprocess mode), emptied at each start.
export PROMETHEUS_MULTIPROC_DIR="${PROMETHEUS_MULTIPROC_DIR:-${TMPDIR:-/tmp}/patience-hall-metrics-$$}"
rm -rf "$PROMETHEUS_MULTIPROC_DIR" && mkdir -p "$PROMETHEUS_MULTIPROC_DIR"

# app.serve is uvicorn with a deadline for reading each request (REQUEST_READ_TIMEOUT, 10 s);
# idle keep-alive connections close after 5 s; the app logs one JSON line per request itself.
exec "$python" -m app.serve --factory app.main:create_app \
  --host "${HOST:-0.0.0.0}" --port "${PORT:-8000}" \
  --workers "$WEB_CONCURRENCY" --http httptools \
  --timeout-keep-alive 5 --timeout-graceful-shutdown 10 --no-access-log \
  --proxy-headers --no-server-header "$@"
