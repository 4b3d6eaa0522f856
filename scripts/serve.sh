#!/usr/bin/env bash
# Installs what is missing, brings the database schema up to date, and serves Patience Hall at
# http://127.0.0.1:8000 (SQLite under data/ unless DATABASE_URL says otherwise).
set -euo pipefail
cd "$(dirname "$0")/.."
echo "serve: checking the installation" >&2
./scripts/install.sh
echo "serve: bringing the database schema up to date (DATABASE_URL, or SQLite under data/)" >&2
.venv/bin/alembic upgrade head
host=${HOST:-127.0.0.1}
port=${PORT:-8000}
echo "serve: starting the server; Patience Hall is at http://$host:$port/ (Ctrl+C stops it)"
exec .venv/bin/python -m app.serve --factory app.main:create_app --host "$host" --port "$port" \
  --workers "${WEB_CONCURRENCY:-1}" --http httptools --timeout-keep-alive 5 --no-access-log \
  --proxy-headers "$@"
