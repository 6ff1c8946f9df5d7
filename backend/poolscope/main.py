"""The FastAPI application: the services (services.py) in the lifespan, API routers, and the built UI."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import Depends, FastAPI
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles

from poolscope import __version__
from poolscope.api import (
    alerts,
    changes,
    contract,
    live,
    metrics,
    probes,
    prometheus,
    snapshots,
    store,
    targets,
)
from poolscope.api.docs import docs_router
from poolscope.api.errors import add_error_handlers
from poolscope.auth import AuthService
from poolscope.auth.gate import read_gate
from poolscope.auth.router import router as auth_router
from poolscope.config import Settings, load_settings
from poolscope.perimeter.body_limit import BodyLimit
from poolscope.perimeter.headers import SecurityHeaders
from poolscope.perimeter.hosts import HostAllowList, allowed_host_names
from poolscope.schemas import Health
from poolscope.services import ServiceRole, run_services

log = logging.getLogger(__name__)

SNAPSHOT_IMPORT_PATH = "/api/snapshots/import"
# An installed wheel carries the built UI as package data (scripts/dist.sh); a checkout has
# frontend/dist beside the backend (`make build`).
PACKAGED_STATIC_DIR = Path(__file__).resolve().parent / "ui"
CHECKOUT_STATIC_DIR = Path(__file__).resolve().parents[2] / "frontend" / "dist"


def default_static_dir() -> Path:
    return PACKAGED_STATIC_DIR if (PACKAGED_STATIC_DIR / "index.html").is_file() else CHECKOUT_STATIC_DIR


def create_app(
    settings: Settings | None = None, *, start_poller: bool = True, role: ServiceRole = "all"
) -> FastAPI:
    settings = settings or load_settings()
    auth = AuthService(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with run_services(settings, auth, start_poller=start_poller, role=role) as services:
            app.state.services = services
            yield

    app = FastAPI(
        title="Poolscope",
        summary="Live observability for the MySQL / MariaDB thread pool",
        version=__version__,
        lifespan=lifespan,
        openapi_url="/api/openapi.json",
        docs_url=None,  # api/docs.py, when api_docs is on
        redoc_url=None,
        # Every route passes the gate: /api needs a login once users exist (auth/gate.py).
        dependencies=[Depends(read_gate)],
    )
    _add_perimeter(app, settings)
    add_error_handlers(app)
    store.add_store_handlers(app)
    app.state.settings = settings
    app.state.auth = auth
    app.state.services = None  # set while the lifespan runs (api/deps.py reads it)
    app.include_router(auth_router)
    app.include_router(targets.router)
    app.include_router(targets.overview_router)
    app.include_router(metrics.router)
    app.include_router(live.router)
    app.include_router(changes.router)
    app.include_router(alerts.router)
    app.include_router(snapshots.router)
    # Before the SPA catch-all below, which would otherwise answer /metrics with index.html.
    app.include_router(prometheus.router)
    app.include_router(probes.router)
    app.include_router(store.router)
    static_dir = settings.static_dir or default_static_dir()
    if settings.api_docs:
        app.include_router(docs_router(static_dir))

    @app.get("/api/health", tags=["health"], response_model=Health)
    async def health() -> Health:
        """Liveness of the Poolscope backend itself, and its version (shown in the UI footer)."""
        return Health(status="ok", version=__version__)

    @app.get("/api/{path:path}", include_in_schema=False)
    async def api_not_found(path: str) -> JSONResponse:
        return JSONResponse(status_code=404, content={"detail": f"no API route /api/{path}"})

    _mount_ui(app, static_dir)
    contract.install(app)
    return app


def _add_perimeter(app: FastAPI, settings: Settings) -> None:
    """Body limit, then the Host allow-list (checked first), both before any parsing; outermost, the
    security headers, so every answer has them, the perimeter's refusals included."""
    by_path = {SNAPSHOT_IMPORT_PATH: int(settings.snapshots.import_max_mb * 1024 * 1024)}
    by_path.update(settings.max_body_bytes_by_path)
    app.add_middleware(BodyLimit, default=settings.max_body_bytes, by_path=by_path)
    app.add_middleware(
        HostAllowList,
        allowed=allowed_host_names(settings.listen_host, settings.public_url, settings.allowed_hosts),
    )
    app.add_middleware(SecurityHeaders)


def _mount_ui(app: FastAPI, static_dir: Path) -> None:
    """Serve the built single-page app; unknown paths get index.html so deep links work."""
    index = static_dir / "index.html"
    if not index.is_file():
        log.warning("no built UI at %s (run `make build`); serving the API only", static_dir)
        return
    assets = static_dir / "assets"
    if assets.is_dir():
        app.mount("/assets", StaticFiles(directory=assets), name="assets")

    root = static_dir.resolve()
    top_level_files = {p.name: p for p in root.iterdir() if p.is_file()}

    @app.get("/{path:path}", include_in_schema=False)
    async def spa(path: str) -> FileResponse:
        # Only files that were in the build's top level (favicon, ...) are served by name;
        # nothing a request names can walk out of the build directory.
        return FileResponse(top_level_files.get(path, index))
