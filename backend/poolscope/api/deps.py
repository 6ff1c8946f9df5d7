"""Typed dependencies shared by the routers: the settings, and each service of services.py."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, HTTPException, Path, Request

from poolscope.actions.apply import Applier
from poolscope.actions.audit import AuditLog
from poolscope.actions.guard import Guard
from poolscope.config import Settings
from poolscope.recommend.engine import Recommender
from poolscope.schemas import TargetInfo, TargetState
from poolscope.services import Services
from poolscope.snapshots.service import SnapshotService
from poolscope.store.sql import SqlStore

ALERTS_NOT_RUNNING = "the alert engine is not running"


def get_settings(request: Request) -> Settings:
    return request.app.state.settings  # type: ignore[no-any-return]


def _running(request: Request, not_yet: str) -> Services:
    services: Services | None = request.app.state.services
    if services is None:  # the lifespan has not started them (yet)
        raise HTTPException(status_code=503, detail=not_yet)
    return services


def get_services(request: Request) -> Services:
    return _running(request, "the backend is starting")


ServicesDep = Annotated[Services, Depends(get_services)]


def get_store(services: ServicesDep) -> SqlStore:
    return services.store


def get_recommender(services: ServicesDep) -> Recommender:
    return services.recommender


def get_applier(services: ServicesDep) -> Applier:
    return services.applier


def get_audit(services: ServicesDep) -> AuditLog:
    return services.audit


def get_guard(services: ServicesDep) -> Guard:
    return services.guard


def get_snapshots(request: Request) -> SnapshotService:
    return _running(request, "snapshots are not available yet (starting)").snapshots


StoreDep = Annotated[SqlStore, Depends(get_store)]
RecommenderDep = Annotated[Recommender, Depends(get_recommender)]
ApplierDep = Annotated[Applier, Depends(get_applier)]
AuditDep = Annotated[AuditLog, Depends(get_audit)]
GuardDep = Annotated[Guard, Depends(get_guard)]
SnapshotsDep = Annotated[SnapshotService, Depends(get_snapshots)]
# A stored row's id in a path: the stores' ids are signed 64-bit, so a larger number is a 422
# here rather than an overflow in the database driver.
RowId = Annotated[int, Path(ge=1, le=2**63 - 1)]
SettingsDep = Annotated[Settings, Depends(get_settings)]


def configured_target(name: str, settings: SettingsDep) -> str:
    if name not in {t.name for t in settings.targets}:
        raise HTTPException(status_code=404, detail=f"unknown target {name!r}")
    return name


TargetName = Annotated[str, Depends(configured_target)]


def never_polled(settings: Settings, name: str) -> TargetInfo:
    config = next((t for t in settings.targets if t.name == name), None)
    return TargetInfo(
        name=name,
        tags=dict(config.tags) if config else {},
        status="starting",
        reason="not polled yet",
        poll_interval_s=settings.poll_interval_s,
    )


async def current_state(store: SqlStore, name: str) -> TargetState:
    latest = await store.latest(name)
    if latest is None or latest[1] is None:
        info = latest[0] if latest else None
        reason = info.reason if info and info.reason else "no successful poll yet"
        raise HTTPException(status_code=503, detail=f"no state for {name!r}: {reason}")
    return latest[1]
