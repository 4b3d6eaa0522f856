# Patience Hall: the app and its pinned runtime dependencies (no test tools), run as a
# non-root user. The start command migrates the database, then serves with several workers.
#   docker build -t patience-hall .
#   docker compose up        (with Postgres; see docker-compose.yml and .env.example)
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:$PATH \
    APP_ENV=production \
    HOST=0.0.0.0 \
    PORT=8000 \
    WEB_CONCURRENCY=4

RUN python -m venv /opt/venv \
    && useradd --system --uid 10001 --user-group --home-dir /srv/patience-hall \
       --shell /usr/sbin/nologin patience

WORKDIR /srv/patience-hall

# The pinned dependencies first, in a layer of their own that only pyproject.toml invalidates.
COPY pyproject.toml ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" \
       > /tmp/requirements.txt \
    && pip install -r /tmp/requirements.txt \
    && rm /tmp/requirements.txt

# The app itself, installed in place: it finds templates/, static/ and docs/ beside app/.
COPY app/ app/
COPY migrations/ migrations/
COPY templates/ templates/
COPY static/ static/
COPY docs/ docs/
COPY alembic.ini ./
COPY scripts/docker-start.sh scripts/docker-start.sh
RUN pip install --no-deps -e . \
    && mkdir -p data \
    && chown patience:patience data

USER patience

EXPOSE 8000

HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen(f\"http://127.0.0.1:{os.environ.get('PORT', '8000')}/healthz\", timeout=4)"]

CMD ["scripts/docker-start.sh"]
