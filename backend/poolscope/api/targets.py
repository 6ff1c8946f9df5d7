"""Targets, their status and current state."""

from __future__ import annotations

from fastapi import APIRouter, Response

from poolscope.api.deps import SettingsDep, StoreDep, TargetName, current_state, never_polled
from poolscope.schemas import QueuedConnection, TargetInfo, TargetState, Transactions

router = APIRouter(prefix="/api/targets", tags=["targets"])


@router.get("", response_model=list[TargetInfo])
async def list_targets(store: StoreDep, settings: SettingsDep) -> Response:
    """Every configured target with its status, last poll and summary."""
    # One read for all of them, answered as stored (an API process has no copy in memory, and
    # decoding a thousand rows to encode them again would cost more than the read).
    infos = await store.latest_rows.info_json([t.name for t in settings.targets])
    body = ",".join(
        infos.get(t.name) or never_polled(settings, t.name).model_dump_json() for t in settings.targets
    )
    return Response(content=f"[{body}]", media_type="application/json")


@router.get("/{name}", response_model=TargetInfo)
async def get_target(name: TargetName, store: StoreDep, settings: SettingsDep) -> TargetInfo:
    """One target's status: up/down and why, server detected, port used, collectors' health."""
    latest = await store.latest(name)
    return latest[0] if latest else never_polled(settings, name)


@router.get("/{name}/state", response_model=TargetState)
async def get_state(name: TargetName, store: StoreDep) -> TargetState:
    """Everything the last successful poll saw: groups, queue, transactions, threads, ratios."""
    return await current_state(store, name)


@router.get("/{name}/queue", response_model=list[QueuedConnection])
async def get_queue(name: TargetName, store: StoreDep) -> list[QueuedConnection]:
    """Queued connections, longest wait first, with user, db and SQL."""
    return (await current_state(store, name)).queue


@router.get("/{name}/transactions", response_model=Transactions)
async def get_transactions(name: TargetName, store: StoreDep) -> Transactions:
    """Open InnoDB transactions, oldest first, with lock waits."""
    state = await current_state(store, name)
    return state.transactions or Transactions()
