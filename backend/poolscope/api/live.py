"""The live channel: Server-Sent Events, one `poll` event per poll of each target, and `alert` events."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from poolscope.api.deps import SettingsDep, StoreDep
from poolscope.auth.deps import client_address, get_auth, request_session
from poolscope.auth.gate import may_read
from poolscope.schemas import AlertEvent, PollEvent
from poolscope.schemas.base import Schema
from poolscope.store.live import ClientSubscription

router = APIRouter(prefix="/api", tags=["live"])

KEEPALIVE_S = 15.0
# An open stream re-checks its session this often, so a logout or a password change ends it too.
SESSION_RECHECK_S = 15.0
FULL_RETRY_AFTER_S = 10


def stream_owner(request: Request) -> str:
    """Whose stream it is, for live_max_streams_per_user: the user, or an anonymous reader's address."""
    found = request_session(request)
    return f"user:{found[0].name}" if found else f"anonymous:{client_address(request)}"


class LiveEvents(Schema):
    """The stream's events by name: each `event: NAME` frame's `data:` line is the JSON of that field.

    Documentation only (OpenAPI cannot describe an event stream), so the UI's types know the payloads.
    """

    poll: PollEvent
    """`event: poll`: one per poll of each target."""
    alert: AlertEvent
    """`event: alert`: one per change of an alert."""


class EventStream(StreamingResponse):
    """The media type the OpenAPI document names for the stream."""

    media_type = "text/event-stream"


class _LiveResponse(EventStream):
    """Gives the client's place back however the response ends, even if the stream never started."""

    def __init__(self, client: ClientSubscription, content: AsyncIterator[bytes]) -> None:
        super().__init__(
            content,
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
        self.client = client

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.client.close()


@router.get(
    "/live",
    response_class=EventStream,
    responses={200: {"model": LiveEvents, "description": "one frame per event, see LiveEvents"}},
)
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
    owner = stream_owner(request)
    per_user = settings.live_max_streams_per_user
    if store.hub.clients_of(owner) >= per_user:
        get_auth(request).live_refused += 1
        raise HTTPException(
            status_code=429,
            detail=f"{per_user} live streams are open for you already (live_max_streams_per_user); close one",
            headers={"Retry-After": str(FULL_RETRY_AFTER_S)},
        )
    client = store.hub.open_client(settings.live_max_subscribers, frozenset(kinds), target, owner)
    if client is None:
        raise HTTPException(
            status_code=503,
            detail=f"the live channel is full ({settings.live_max_subscribers} streams open); try again later",
            headers={"Retry-After": str(FULL_RETRY_AFTER_S)},
        )

    async def stream() -> AsyncIterator[bytes]:
        recheck_at = time.monotonic() + SESSION_RECHECK_S
        try:
            yield b": connected\n\n"
            while not await request.is_disconnected():
                if time.monotonic() >= recheck_at:
                    if not may_read(request):
                        return
                    recheck_at = time.monotonic() + SESSION_RECHECK_S
                try:
                    wait_s = min(KEEPALIVE_S, max(0.0, recheck_at - time.monotonic()))
                    frame = await asyncio.wait_for(client.queue.get(), timeout=wait_s)
                except TimeoutError:
                    yield b": keepalive\n\n"
                    continue
                yield frame.data  # only frames the client asked for are queued for it
        finally:
            client.close()

    return _LiveResponse(client, stream())
