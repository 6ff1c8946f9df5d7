"""Typed dependencies shared by the routers."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, HTTPException, Path, Request

from poolscope.config import Settings
from poolscope.schemas import TargetInfo, TargetState
from poolscope.store.sql import SqlStore


def get_store(request: Request) -> SqlStore:
    return request.app.state.store  # type: ignore[no-any-return]


def get_settings(request: Request) -> Settings:
    return request.app.state.settings  # type: ignore[no-any-return]


StoreDep = Annotated[SqlStore, Depends(get_store)]
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
    return TargetInfo(
        name=name, status="starting", reason="not polled yet", poll_interval_s=settings.poll_interval_s
    )


async def current_state(store: SqlStore, name: str) -> TargetState:
    latest = await store.latest(name)
    if latest is None or latest[1] is None:
        info = latest[0] if latest else None
        reason = info.reason if info and info.reason else "no successful poll yet"
        raise HTTPException(status_code=503, detail=f"no state for {name!r}: {reason}")
    return latest[1]
