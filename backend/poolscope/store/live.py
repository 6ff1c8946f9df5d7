"""Fan-out of poll events to live subscribers (SSE clients); a slow client never slows the poller.

In-process subscribers (the alert change log, the Alertmanager notifier) get the event objects. SSE clients get `Frame`s: each
event is encoded once, at publish, and the same bytes go to every client that asked for it (its
kinds, its target); nothing is encoded for nobody.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TypeVar

from poolscope.schemas import AlertEvent, PollEvent

# Poll results and alert changes; subscribers pick what they need.
LiveEvent = PollEvent | AlertEvent

SUBSCRIBER_BUFFER = 64
KINDS = frozenset({"poll", "alert"})

T = TypeVar("T")


@dataclass(frozen=True)
class Frame:
    """One event as a ready Server-Sent Events message."""

    kind: str  # "poll" or "alert"
    target: str
    data: bytes


def encode(event: LiveEvent) -> Frame:
    kind = "alert" if isinstance(event, AlertEvent) else "poll"
    data = b"event: " + kind.encode() + b"\ndata: " + event.model_dump_json().encode("utf-8") + b"\n\n"
    return Frame(kind=kind, target=event.target, data=data)


def _offer(queue: asyncio.Queue[T], item: T) -> None:
    if queue.full():
        # Drop the oldest: a live view wants the newest state, not a backlog.
        with contextlib.suppress(asyncio.QueueEmpty):
            queue.get_nowait()
    queue.put_nowait(item)


class ClientSubscription:
    """An SSE client's place in the hub: the frames of `kinds` (of `target` only, when given) are
    queued for it, no others (a queue full of polls would drop an alert change); `close()`
    (idempotent) gives the place back."""

    def __init__(
        self, hub: LiveHub, kinds: frozenset[str] = KINDS, target: str | None = None, owner: str = ""
    ) -> None:
        self.queue: asyncio.Queue[Frame] = asyncio.Queue(maxsize=SUBSCRIBER_BUFFER)
        self.kinds = kinds
        self.target = target
        self.owner = owner  # whose stream (api/live.py caps them per user)
        self._hub = hub

    def wants(self, kind: str, target: str) -> bool:
        return kind in self.kinds and (self.target is None or self.target == target)

    def close(self) -> None:
        self._hub._clients.discard(self)


class LiveHub:
    def __init__(self) -> None:
        # In-process subscribers, each with the kinds it wants ("poll", "alert").
        self._subscribers: dict[asyncio.Queue[LiveEvent], frozenset[str]] = {}
        self._clients: set[ClientSubscription] = set()
        self._client_joined = asyncio.Event()

    def publish(self, event: LiveEvent) -> None:
        kind = "alert" if isinstance(event, AlertEvent) else "poll"
        for queue, kinds in self._subscribers.items():
            if kind in kinds:
                _offer(queue, event)
        if self._clients:
            wanting = [c for c in self._clients if c.wants(kind, event.target)]
            if wanting:
                frame = encode(event)
                for client in wanting:
                    _offer(client.queue, frame)

    def publish_frame(self, frame: Frame) -> None:
        """An event another process published, already encoded (store/feed.py): for SSE clients only."""
        for client in self._clients:
            if client.wants(frame.kind, frame.target):
                _offer(client.queue, frame)

    def poll_targets(self) -> set[str] | None:
        """The targets whose polls some SSE client wants: None for every target (a client wants
        them all), an empty set when no client wants polls."""
        wanted: set[str] = set()
        for client in self._clients:
            if "poll" in client.kinds:
                if client.target is None:
                    return None
                wanted.add(client.target)
        return wanted

    async def wait_for_client(self) -> None:
        while not self._clients:
            self._client_joined.clear()
            await self._client_joined.wait()

    @contextlib.asynccontextmanager
    async def subscribe(self, kinds: frozenset[str] = KINDS) -> AsyncIterator[asyncio.Queue[LiveEvent]]:
        """An in-process subscriber's queue of the events of `kinds`: one that wants only alert
        changes never has them pushed out by polls (a full queue drops its oldest)."""
        queue: asyncio.Queue[LiveEvent] = asyncio.Queue(maxsize=SUBSCRIBER_BUFFER)
        self._subscribers[queue] = kinds
        try:
            yield queue
        finally:
            self._subscribers.pop(queue, None)

    def open_client(
        self, limit: int, kinds: frozenset[str] = KINDS, target: str | None = None, owner: str = ""
    ) -> ClientSubscription | None:
        """A place for one more SSE client (of `kinds`, of `target` only when given), or None when
        `limit` are connected already."""
        if len(self._clients) >= limit:
            return None
        client = ClientSubscription(self, kinds, target, owner)
        self._clients.add(client)
        self._client_joined.set()
        return client

    @property
    def subscriber_count(self) -> int:
        return len(self._subscribers) + len(self._clients)

    def clients_of(self, owner: str) -> int:
        """Streams open for `owner`."""
        return sum(1 for client in self._clients if client.owner == owner)

    @property
    def client_count(self) -> int:
        return len(self._clients)
