"""Probes for container healthchecks, systemd and load balancers: `/healthz` and `/readyz`.

They sit at the top level, outside /api, and answer without a login: an orchestrator has none.
Where reads need a login (auth/gate.py), /readyz tells a caller without a session only whether
it is ready; the parts and their reasons (target names, what failed) are for those who may read.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from sqlalchemy import text

from poolscope import __version__
from poolscope.api.deps import SettingsDep, StoreDep
from poolscope.auth.gate import may_read
from poolscope.config import Settings
from poolscope.schemas import TargetInfo

router = APIRouter(tags=["health"])

PROBE_PATHS = frozenset({"/healthz", "/readyz"})

STORE_TIMEOUT_S = 3.0


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """Liveness: the process serves requests (says nothing about the store or the targets)."""
    return {"status": "ok", "version": __version__}


@router.get("/readyz", responses={503: {"description": "the store or every target does not answer"}})
async def readyz(request: Request, store: StoreDep, settings: SettingsDep) -> JSONResponse:
    """Readiness: 200 when the store answers and at least one target was polled successfully of late."""
    store_status = await _store_status(store.engine)
    infos = await store.latest_rows.infos([t.name for t in settings.targets])
    targets = {t.name: _target_status(infos.get(t.name), settings) for t in settings.targets}
    ready = store_status == "ok" and any(status == "up" for status in targets.values())
    status_code = 200 if ready else 503
    if not may_read(request):
        return JSONResponse(status_code=status_code, content={"ready": ready})
    body: dict[str, Any] = {"ready": ready, "store": store_status, "targets": targets}
    if not settings.targets:
        body["reason"] = "no targets configured"
    return JSONResponse(status_code=status_code, content=body)


async def _store_status(engine: Any) -> str:
    try:
        async with asyncio.timeout(STORE_TIMEOUT_S), engine.connect() as conn:
            await conn.execute(text("SELECT 1"))
    except TimeoutError:
        return f"down: no answer within {STORE_TIMEOUT_S:g} s"
    except Exception as exc:
        # Driver messages can name the host and user: the kind of failure is enough here.
        return f"down: {type(exc).__name__}"
    return "ok"


def _target_status(info: TargetInfo | None, settings: Settings) -> str:
    if info is None:
        return "starting: not polled yet"
    if info.status != "up":
        return f"{info.status}: {info.reason or 'no reason given'}"
    # The latest state can be a row from before a restart: only a recent success counts.
    fresh_s = settings.poll_timeout_s + 3 * settings.poll_interval_s
    if info.last_success_at is None or time.time() - info.last_success_at > fresh_s:
        return f"stale: no successful poll in the last {fresh_s:g} s"
    return "up"
