"""Targets, their status and current state."""

from __future__ import annotations

import time
from collections import Counter
from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, Response
from pydantic_core import to_json

from poolscope.alerts.repository import AlertRepository
from poolscope.analysis.held_time import MAX_TIME, SUMMED, rank
from poolscope.api.deps import SettingsDep, StoreDep, TargetName, current_state, never_polled
from poolscope.schemas import (
    HeldOut,
    HeldSort,
    Overview,
    QueuedConnection,
    TargetInfo,
    TargetState,
    Transactions,
)
from poolscope.store.latest import overview_fields_json

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


@router.get("/{name}/held", response_model=HeldOut, response_model_by_alias=True)
async def get_held(
    name: TargetName,
    store: StoreDep,
    from_: Annotated[float | None, Query(alias="from", description="epoch seconds")] = None,
    to: Annotated[float | None, Query(description="epoch seconds")] = None,
    sort: Annotated[HeldSort, Query(description="rank by stalled, held or queued seconds")] = "stalled",
    limit: Annotated[int, Query(ge=1, le=200, description="digests listed")] = 50,
) -> HeldOut:
    """Who held the pool over [from, to] (default: the last hour): statement digests ranked by
    the worker-seconds they held stalled groups (or held, or queued)."""
    end = time.time() if to is None else to
    start = end - 3600 if from_ is None else from_
    if start > end:
        raise HTTPException(status_code=422, detail="from must not be after to")
    if end - start > MAX_HELD_RANGE_S:
        raise HTTPException(
            status_code=422, detail=f"the range may span at most {MAX_HELD_RANGE_S // 86400} days"
        )
    sums = await store.totals(name, SUMMED, start, end)
    maxima = await store.totals(name, [MAX_TIME.name], start, end, agg="max")
    return HeldOut(from_=start, to=end, sort=sort, digests=rank(sums, maxima, sort, limit))


MAX_HELD_RANGE_S = 31 * 86400


# --- the fleet overview: one compact row per target, polled by the UI every ~2 s ---
overview_router = APIRouter(prefix="/api/overview", tags=["targets"])


def overview_row_json(name: str, tags: dict[str, str], fields: str, active_alerts: int) -> str:
    """An OverviewRow's JSON around the poll's fields as stored (store/latest.py overview_fields_json)."""
    return (
        f'{{"name":{to_json(name).decode()},"tags":{to_json(tags).decode()},'
        f'{fields[1:-1]},"active_alerts":{active_alerts}}}'
    )


@overview_router.get("", response_model=Overview)
async def get_overview(store: StoreDep, settings: SettingsDep) -> Response:
    """Every configured target as one small row (status, stalls, queue, longest wait, alerts):
    what a table of hundreds of servers needs, without each target's full info."""
    firing = Counter(a.target for a in await AlertRepository(store.engine).open_alerts())
    targets = settings.targets  # a snapshot: a reload replaces the list, never edits it
    # One read of every target's overview fields as the poller stored them: nothing is decoded.
    stored = await store.latest_rows.overview_json([t.name for t in targets])
    rows = []
    for target in targets:
        fields = stored.get(target.name) or overview_fields_json(never_polled(settings, target.name))
        # Tags from the config as it is now (a reload may have changed them since the last poll).
        rows.append(overview_row_json(target.name, dict(target.tags), fields, firing.get(target.name, 0)))
    body = (
        f'{{"ts":{to_json(time.time()).decode()},"poll_interval_s":{to_json(settings.poll_interval_s).decode()},'
        f'"targets":[{",".join(rows)}]}}'
    )
    return Response(content=body, media_type="application/json")
