#!/usr/bin/env bash
# Installs what is missing, brings the database schema up to date, and serves Patience Hall at
# http://127.0.0.1:8000 (SQLite under data/ unless DATABASE_URL says otherwise).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install.sh
.venv/bin/alembic upgrade head
host=${HOST:-127.0.0.1}
port=${PORT:-8000}
echo "Patience Hall is at http://$host:$port/"
exec .venv/bin/python -m app.serve --factory app.main:create_app --host "$host" --port "$port" \
  --workers "${WEB_CONCURRENCY:-1}" --http httptools --timeout-keep-alive 5 --no-access-log \
  --proxy-headers "$@"
