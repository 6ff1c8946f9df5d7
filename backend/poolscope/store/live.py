"""Fan-out of poll events to live subscribers (SSE clients); a slow client never slows the poller."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from poolscope.schemas import AlertEvent, PollEvent

# Poll results, and (issue #3) alert changes; subscribers pick what they need.
LiveEvent = PollEvent | AlertEvent

SUBSCRIBER_BUFFER = 64


class LiveHub:
    def __init__(self) -> None:
        self._subscribers: set[asyncio.Queue[LiveEvent]] = set()

    def publish(self, event: LiveEvent) -> None:
        for queue in self._subscribers:
            if queue.full():
                # Drop the oldest: a live view wants the newest state, not a backlog.
                with contextlib.suppress(asyncio.QueueEmpty):
                    queue.get_nowait()
            queue.put_nowait(event)

    @contextlib.asynccontextmanager
    async def subscribe(self) -> AsyncIterator[asyncio.Queue[LiveEvent]]:
        queue: asyncio.Queue[LiveEvent] = asyncio.Queue(maxsize=SUBSCRIBER_BUFFER)
        self._subscribers.add(queue)
        try:
            yield queue
        finally:
            self._subscribers.discard(queue)

    @property
    def subscriber_count(self) -> int:
        return len(self._subscribers)
