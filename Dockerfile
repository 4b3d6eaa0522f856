# Patience Hall: the app and its locked runtime dependencies (requirements/app.lock, every file
# checked against its hash; no test tools), run as a non-root user. The start command checks
# the settings, migrates the database (MIGRATE=0: not), checks the DEAL_KEY, then serves with
# several workers. The same image runs the one-shot migration (python -m app.cli migrate) and
# the solver workers (python -m app.jobs): docker-compose.yml, docs/operating.md.
#   docker build -t patience-hall:0.3.0 .
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:$PATH \
    PYTHONPATH=/srv/patience-hall \
    APP_ENV=production \
    HOST=0.0.0.0 \
    PORT=8000 \
    WEB_CONCURRENCY=2

RUN python -m venv /opt/venv \
    && useradd --system --uid 10001 --user-group --home-dir /srv/patience-hall \
       --shell /usr/sbin/nologin patience

WORKDIR /srv/patience-hall

# The locked dependencies first, in a layer of their own that only the lock file invalidates.
COPY requirements/app.lock requirements/app.lock
RUN pip install --require-hashes --no-deps -r requirements/app.lock

# The app itself, run in place from its directory (PYTHONPATH): it finds templates/, static/
# and docs/ beside app/. Nothing is built or fetched here without a hash.
COPY pyproject.toml ./
COPY app/ app/
COPY migrations/ migrations/
COPY templates/ templates/
COPY static/ static/
COPY docs/ docs/
COPY alembic.ini ./
COPY scripts/docker-start.sh scripts/docker-start.sh
RUN mkdir -p data \
    && chown patience:patience data

USER 10001:10001

EXPOSE 8000

HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen(f\"http://127.0.0.1:{os.environ.get('PORT', '8000')}/healthz\", timeout=4)"]

CMD ["scripts/docker-start.sh"]
