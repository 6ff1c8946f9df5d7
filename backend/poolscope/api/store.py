"""The truth about the store, for /api/store, /readyz, /metrics and every read the store fails.

Whether the store answers this process's reads (a probe), and whether the processes that write to
it can (store/health.py): the process itself when it polls (workers = 0), else the pollers of this
host through their status files, and any poller through its heartbeat in the store (a full disk
still answers reads, but no poller's heartbeat is written any more). A read that the store fails
is answered 503 with this in JSON, never a bare 500.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse
from sqlalchemy import exc as sa_exc
from sqlalchemy import func, select, text

from poolscope.api.deps import ServicesDep
from poolscope.fleet.tables import fleet_members
from poolscope.schemas import StoreOut, StoreWriter
from poolscope.services import Services
from poolscope.store.health import describe, read_statuses

router = APIRouter(prefix="/api/store", tags=["store"])

PROBE_TIMEOUT_S = 3.0
# Pollers whose newest heartbeat is this many lease TTLs old are not writing to the store.
SILENT_TTLS = 2

try:
    import asyncpg

    _DRIVER_DOWN: tuple[type[Exception], ...] = (
        asyncpg.PostgresConnectionError,
        asyncpg.CannotConnectNowError,
        asyncpg.InterfaceError,
    )
except ImportError:  # pragma: no cover
    _DRIVER_DOWN = ()

# What a read raises when the store is down (SQLAlchemy's wrappers, and what drivers raise raw).
STORE_DOWN: tuple[type[Exception], ...] = (
    sa_exc.OperationalError,
    sa_exc.InterfaceError,
    sa_exc.TimeoutError,
    ConnectionError,
    *_DRIVER_DOWN,
)


@router.get("", response_model=StoreOut)
async def get_store_status(services: ServicesDep) -> StoreOut:
    """Whether the store answers reads and takes writes, since when, and what the pollers hold for it."""
    return await store_status(services)


async def store_status(services: Services, read_error: BaseException | None = None) -> StoreOut:
    """The store as this process and its writers see it; `read_error`: a read just failed so."""
    now = time.time()
    store = services.store
    secrets = store.health.secrets
    failure = read_error if read_error is not None else await _probe(services)
    reads_error = describe(failure, secrets) if failure is not None else None
    if services.role == "api":  # its own health is its reads' (a poller's is its writes')
        if failure is not None:
            store.health.failed(failure, "reading")
        else:
            store.health.ok()
    writers = _writers(services, now)
    if reads_error is None and services.role == "api":
        silent = await _silent_pollers(services, now)
        if silent is not None:
            writers.append(silent)
    failing = [w for w in writers if w.status == "failing"]
    since = min((w.since for w in failing if w.since is not None), default=None)
    error = failing[0].error if failing else None
    if reads_error is not None:
        since, error = since or store.health.failing_since or now, reads_error
    return StoreOut(
        status="failing" if reads_error is not None or failing else "ok",
        since=since,
        error=error,
        reads="failing" if reads_error is not None else "ok",
        writers=writers,
        buffered_samples=sum(w.buffered_samples for w in writers),
        dropped_samples=sum(w.dropped_samples for w in writers),
    )


async def _probe(services: Services) -> BaseException | None:
    """None when the store answers a read; else its error."""
    try:
        async with asyncio.timeout(PROBE_TIMEOUT_S), services.store.engine.connect() as conn:
            await conn.execute(text("SELECT 1"))
    except TimeoutError:
        return TimeoutError(f"no answer within {PROBE_TIMEOUT_S:g} s")
    except Exception as error:
        return error
    return None


def _writers(services: Services, now: float) -> list[StoreWriter]:
    if services.role == "all":
        return [services.store.health.status()]
    return read_statuses(services.settings.spool_directory(), now)


async def _silent_pollers(services: Services, now: float) -> StoreWriter | None:
    """In a fleet: when no poller's heartbeat has reached the store for SILENT_TTLS lease TTLs,
    the pollers cannot write to it (or none runs) whatever this process can read."""
    try:
        async with asyncio.timeout(PROBE_TIMEOUT_S), services.store.engine.connect() as conn:
            newest = (await conn.execute(select(func.max(fleet_members.c.heartbeat_at)))).scalar()
    except Exception:
        return None
    silent_after = SILENT_TTLS * services.settings.lease_ttl_s
    if newest is None or now - float(newest) <= silent_after:
        return None
    return StoreWriter(
        node="pollers",
        status="failing",
        since=float(newest),
        error=f"no poller has written to the store for {now - float(newest):.0f} s (heartbeats)",
        updated_at=now,
    )


def unavailable_body(status: StoreOut) -> dict[str, Any]:
    """A read's 503 answer: the reason in words (the UI shows it), and the store's status."""
    held = f"; {status.buffered_samples} samples held by the pollers" if status.buffered_samples else ""
    return {
        "detail": f"store unreachable: {status.error}{held}",
        "store": status.model_dump(mode="json"),
    }


async def store_down_answer(request: Request, error: Exception) -> JSONResponse:
    services: Services | None = request.app.state.services
    if services is None:
        return JSONResponse({"detail": f"store unreachable: {type(error).__name__}"}, status_code=503)
    status = await store_status(services, read_error=error)
    return JSONResponse(unavailable_body(status), status_code=503, headers={"Retry-After": "5"})


def add_store_handlers(app: FastAPI) -> None:
    for kind in STORE_DOWN:
        app.add_exception_handler(kind, store_down_answer)
