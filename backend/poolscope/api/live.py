"""The live channel: Server-Sent Events, one `poll` event per poll of each target, and `alert` events."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import StreamingResponse

from poolscope.api.deps import SettingsDep, StoreDep
from poolscope.schemas import AlertEvent

router = APIRouter(prefix="/api", tags=["live"])

KEEPALIVE_S = 15.0


@router.get("/live", response_class=StreamingResponse)
async def live(
    request: Request,
    store: StoreDep,
    settings: SettingsDep,
    target: Annotated[str | None, Query(description="only this target's polls")] = None,
    events: Annotated[
        str | None,
        Query(pattern=r"^(poll|alert)(,(poll|alert))?$", description="poll, alert or both (default)"),
    ] = None,
) -> StreamingResponse:
    """Server-Sent Events stream of every poll's result (target info, state and samples) and alert changes."""
    kinds = set((events or "poll,alert").split(","))
    if target is not None and target not in {t.name for t in settings.targets}:
        raise HTTPException(status_code=404, detail=f"unknown target {target!r}")

    async def stream() -> AsyncIterator[str]:
        async with store.hub.subscribe() as queue:
            yield ": connected\n\n"
            while not await request.is_disconnected():
                try:
                    event = await asyncio.wait_for(queue.get(), timeout=KEEPALIVE_S)
                except TimeoutError:
                    yield ": keepalive\n\n"
                    continue
                if target is not None and event.target != target:
                    continue
                kind = "alert" if isinstance(event, AlertEvent) else "poll"
                if kind in kinds:
                    yield f"event: {kind}\ndata: {event.model_dump_json()}\n\n"

    return StreamingResponse(
        stream(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
