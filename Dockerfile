# Poolscope image: the backend (pinned deps from requirements.lock) serving the built UI.
# For users with Docker (see docker-compose.yml); tests and CI never use it.

# ---- UI build ---------------------------------------------------------------
FROM node:20-bookworm-slim AS ui
WORKDIR /src/frontend
COPY frontend/package.json frontend/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY frontend/ ./
RUN npm run build

# ---- runtime ----------------------------------------------------------------
FROM python:3.11-slim
ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /app

COPY backend/requirements.lock backend/requirements.lock
RUN pip install -r backend/requirements.lock

# Same layout as the repo (/app/backend, /app/migrations, /app/frontend/dist), so the
# package finds its migrations and the UI where it looks for them in a checkout.
COPY alembic.ini ./
COPY migrations/ migrations/
COPY backend/ backend/
RUN pip install --no-deps -e ./backend
COPY --from=ui /src/frontend/dist frontend/dist

RUN useradd --system --uid 10001 --home-dir /data --create-home poolscope
USER poolscope
VOLUME ["/data"]
EXPOSE 8000

# Listen on all interfaces inside the container; docker-compose.yml publishes the port on
# the host's 127.0.0.1 only.
CMD ["poolscope", "serve", "--config", "/etc/poolscope/poolscope.toml", "--host", "0.0.0.0"]
