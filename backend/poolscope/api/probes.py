"""Probes for container healthchecks, systemd and load balancers: `/healthz` and `/readyz`.

They sit at the top level, outside /api, and answer without a login: an orchestrator has none.
Where reads need a login (auth/gate.py), /readyz tells a caller without a session only whether
it is ready; the parts and their reasons (target names, what failed) are for those who may read.
"""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from poolscope import __version__
from poolscope.api.deps import ServicesDep, SettingsDep
from poolscope.api.store import store_status
from poolscope.auth.gate import may_read
from poolscope.config import Settings
from poolscope.schemas import TargetInfo

router = APIRouter(tags=["health"])

PROBE_PATHS = frozenset({"/healthz", "/readyz"})


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """Liveness: the process serves requests (says nothing about the store or the targets)."""
    return {"status": "ok", "version": __version__}


@router.get("/readyz", responses={503: {"description": "the store fails, or no target answers"}})
async def readyz(request: Request, services: ServicesDep, settings: SettingsDep) -> JSONResponse:
    """Readiness: 200 when the store answers and takes writes and at least one target was polled
    successfully of late; a 503 names what fails (the store first, with its error)."""
    store = await store_status(services)
    if store.status == "ok":
        infos = await services.store.latest_rows.infos([t.name for t in settings.targets])
        targets = {t.name: _target_status(infos.get(t.name), settings) for t in settings.targets}
        store_text = "ok"
    else:
        # The targets' rows are the store's: while it fails they say nothing (the pollers go on).
        targets = dict.fromkeys((t.name for t in settings.targets), "unknown: the store fails")
        kind = "unreachable" if store.reads == "failing" else "failing"
        store_text = f"{kind}: {store.error}"
    ready = store.status == "ok" and any(status == "up" for status in targets.values())
    status_code = 200 if ready else 503
    if not may_read(request):
        return JSONResponse(status_code=status_code, content={"ready": ready})
    body: dict[str, Any] = {"ready": ready, "store": store_text, "targets": targets}
    if store.status != "ok":
        body["reason"] = f"store {store_text}"
        body["store_since"] = store.since
    elif not settings.targets:
        body["reason"] = "no targets configured"
    return JSONResponse(status_code=status_code, content=body)


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
