"""Recommendations, one-click apply, revert and the audit log of a target."""

from __future__ import annotations

import time
from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Query, Request

from poolscope.actions.apply import Actor
from poolscope.actions.compare import compare
from poolscope.actions.models import ApplyIn, ApplyPreview, AuditEntry, Comparison
from poolscope.api.deps import (
    ApplierDep,
    AuditDep,
    GuardDep,
    RecommenderDep,
    RowId,
    SettingsDep,
    StoreDep,
    TargetName,
)
from poolscope.auth import User, require_role
from poolscope.auth.deps import check_limit, client_address, get_auth
from poolscope.recommend.models import RecommendationsOut

router = APIRouter(prefix="/api/targets", tags=["recommendations"])

Operator = Annotated[User, Depends(require_role("operator"))]


@router.get("/{name}/recommendations", response_model=RecommendationsOut, response_model_by_alias=True)
async def get_recommendations(
    name: TargetName,
    recommender: RecommenderDep,
    fresh: Annotated[
        bool, Query(description="evaluate now instead of returning the last evaluation")
    ] = False,
) -> RecommendationsOut:
    """Active recommendations with their evidence, the ones that went away (and why), each rule's verdict."""
    if fresh:
        return await recommender.evaluate(name)
    return recommender.get(name)


@router.get("/{name}/apply/preview", response_model=ApplyPreview)
async def preview_apply(
    name: TargetName,
    user: Operator,
    request: Request,
    applier: ApplierDep,
    variable: Annotated[str, Query(min_length=1, max_length=64)],
    value: Annotated[str, Query(min_length=1, max_length=64)],
) -> ApplyPreview:
    """What applying would do: current → proposed as the server will store it, limits, persistence."""
    # Each preview logs in with the admin credential: limited like a change (previews_per_minute).
    check_limit(get_auth(request).preview_limiter, user, request, "previews")
    return await applier.preview(name, variable, value)


@router.post("/{name}/apply", response_model=AuditEntry)
async def apply_change(
    name: TargetName,
    body: ApplyIn,
    user: Operator,
    request: Request,
    applier: ApplierDep,
    recommender: RecommenderDep,
    guard: GuardDep,
    settings: SettingsDep,
) -> AuditEntry:
    """SET GLOBAL one allow-listed variable through the admin credential; audited; optionally guarded.

    200 with result "unverified" when the SET was accepted but its value could not be read back.
    """
    if body.recommendation_id is not None:
        rec = recommender.find(name, body.recommendation_id)
        if rec is None:
            raise HTTPException(
                status_code=409,
                detail="the recommendation no longer holds (see the vanished list)",
            )
        if rec.variable != body.variable:
            raise HTTPException(
                status_code=422, detail=f"the recommendation is about {rec.variable}, not this variable"
            )
    entry = await applier.apply(
        name,
        body.variable,
        body.value,
        Actor(user.name, client_address(request)),
        recommendation_id=body.recommendation_id,
        guard=settings.guard_by_default if body.guard is None else body.guard,
    )
    if entry.guard_status == "watching":
        guard.watch(entry)
    # So the page never shows a proposal this change just fulfilled.
    recommender.evaluate_after_change(name, entry.variable, entry.new_value)
    return entry


@router.post("/{name}/audit/{change_id}/revert", response_model=AuditEntry)
async def revert_change(
    name: TargetName,
    change_id: RowId,
    user: Operator,
    request: Request,
    applier: ApplierDep,
    recommender: RecommenderDep,
) -> AuditEntry:
    """Put back the value change #id replaced (refused when the variable was changed since).

    Works for "applied" and "unverified" changes; it ends a guard still watching the change.
    """
    entry = await applier.revert(name, change_id, Actor(user.name, client_address(request)))
    recommender.evaluate_after_change(name, entry.variable, entry.new_value)
    return entry


@router.get("/{name}/audit", response_model=list[AuditEntry])
async def list_changes(
    name: TargetName, audit: AuditDep, limit: Annotated[int, Query(ge=1, le=1000)] = 200
) -> list[AuditEntry]:
    """Every change made (or attempted) on this target, newest first."""
    return await audit.list(name, limit)


@router.get("/{name}/audit/{change_id}/compare", response_model=Comparison)
async def compare_change(
    name: TargetName,
    change_id: RowId,
    audit: AuditDep,
    store: StoreDep,
    settings: SettingsDep,
    window_s: Annotated[float | None, Query(ge=10, le=86400)] = None,
) -> Comparison:
    """The verdict of change #id: load change, queue wait and stall rate at matched load with intervals."""
    entry = await audit.get(change_id)
    if entry is None or entry.target != name:
        raise HTTPException(status_code=404, detail=f"no change #{change_id} on {name}")
    return await compare(store, audit, entry, window_s or settings.guard_window_s, settings, time.time())
