"""The flight recorder: who held and who queued in each thread group, second by second, over the last
two minutes, so that a snapshot taken when an alert fires carries the run-up as well as the moment.

Every poll adds one entry (at most one per `resolution_s`); entries older than `span_s` go. An
entry of an idle pool is its timestamp alone. An entry with pressure is kept as its compact JSON
text, so the recorder's size is counted in bytes and bounded: past `max_bytes` the oldest entries
go first. Per group an entry keeps the longest-running MAX_HOLDERS holders and the longest-waiting
MAX_QUEUED queued requests, with the counts of those left out. Statements are kept as their shape
(literals replaced by ?), never as the text the client sent.
"""

from __future__ import annotations

import json
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence

from poolscope.analysis.digest import digest_of
from poolscope.schemas import (
    FlightEntry,
    FlightGroup,
    FlightHolder,
    FlightQueued,
    GroupHolders,
    QueuedConnection,
)

MAX_HOLDERS = 10
MAX_QUEUED = 20
MAX_TEXT_CHARS = 200
MAX_TEXTS = 512


class FlightRecorder:
    """The last `span_s` of per-group holders and queued requests of one target, in memory."""

    def __init__(self, span_s: float = 120.0, resolution_s: float = 1.0, max_bytes: int = 4 << 20) -> None:
        self.span_s = span_s
        self.resolution_s = resolution_s
        self.max_bytes = max_bytes
        # (ts, the entry's groups as JSON, or None for a second without pressure)
        self._entries: deque[tuple[float, bytes | None]] = deque()
        self._texts: OrderedDict[str, str] = OrderedDict()  # digest -> statement shape, last seen last
        self.bytes = 0

    def record(self, now: float, holders: Sequence[GroupHolders], queue: Sequence[QueuedConnection]) -> None:
        entries = self._entries
        if entries and now - entries[-1][0] < self.resolution_s * 0.95:
            if entries[-1][1] is not None or not (holders or queue):
                return  # this second is recorded; a poll that first sees pressure replaces an idle one
            entries.pop()
        while entries and entries[0][0] <= now - self.span_s:
            self._drop()
        if not holders and not queue:
            entries.append((now, None))
            return
        text = _groups_json(holders, queue, self._remember)
        entries.append((now, text))
        self.bytes += len(text)
        while self.bytes > self.max_bytes and len(entries) > 1:
            self._drop()

    def _remember(self, digest: str, text: str) -> None:
        texts = self._texts
        if digest in texts:
            texts.move_to_end(digest)
            return
        texts[digest] = text
        added = len(digest) + len(text)
        self.bytes += added
        while len(texts) > MAX_TEXTS:
            old_digest, old_text = texts.popitem(last=False)
            self.bytes -= len(old_digest) + len(old_text)

    def _drop(self) -> None:
        _, text = self._entries.popleft()
        if text is not None:
            self.bytes -= len(text)

    def entries(self, until: float | None = None) -> list[FlightEntry]:
        """The recorded seconds, oldest first (up to `until` when given), statements filled in."""
        out = []
        for ts, text in self._entries:
            if until is not None and ts > until:
                continue
            groups = [FlightGroup.model_validate(g) for g in json.loads(text)] if text else []
            for group in groups:
                items: list[FlightHolder | FlightQueued] = [*group.holders, *group.queued]
                for item in items:
                    if item.statement is None and item.digest is not None:
                        item.statement = self._texts.get(item.digest)
            out.append(FlightEntry(ts=ts, groups=groups))
        return out

    def forget(self) -> None:
        self._entries.clear()
        self._texts.clear()
        self.bytes = 0


def _groups_json(
    holders: Sequence[GroupHolders], queue: Sequence[QueuedConnection], remember: Callable[[str, str], None]
) -> bytes:
    """The entry's groups as compact JSON; each statement goes to `remember` under its digest."""

    def shape(digest: str | None, text: str | None) -> str | None:
        """The statement kept in the entry: none when its digest names it."""
        if not text:
            return None
        if digest is None:
            return text[:MAX_TEXT_CHARS]
        remember(digest, text[:MAX_TEXT_CHARS])
        return None

    groups: dict[int | None, FlightGroup] = {}
    for group in holders:
        kept = sorted(group.holders, key=lambda h: -(h.time_s or 0.0))
        groups[group.group_id] = FlightGroup(
            group=group.group_id,
            stalled=group.stalled,
            queue_length=group.queue_length,
            holders=[
                FlightHolder(
                    connection_id=h.connection_id,
                    user=h.user,
                    host=h.host,
                    time_s=h.time_s,
                    state=h.state,
                    digest=h.digest,
                    statement=shape(h.digest, h.digest_text),
                    waits_on=h.waits_on,
                    blocked_by=[b.connection_id for b in h.blockers if b.connection_id is not None],
                )
                for h in kept[:MAX_HOLDERS]
            ],
            holders_left_out=max(len(kept) - MAX_HOLDERS, 0),
        )
    by_group: dict[int, list[QueuedConnection]] = {}
    for entry in queue:
        by_group.setdefault(entry.group_id, []).append(entry)
    for group_id, entries in by_group.items():
        flight = groups.get(group_id)
        if flight is None:
            flight = groups[group_id] = FlightGroup(group=group_id, queue_length=len(entries))
        entries.sort(key=lambda q: -q.queueing_time_ms)
        flight.queued = [_queued(q, shape) for q in entries[:MAX_QUEUED]]
        flight.queued_left_out = max(len(entries) - MAX_QUEUED, 0)
    ordered = sorted(groups.values(), key=lambda g: -1 if g.group is None else g.group)
    return b"[" + b",".join(g.model_dump_json(exclude_defaults=True).encode() for g in ordered) + b"]"


def _queued(q: QueuedConnection, shape: Callable[[str | None, str | None], str | None]) -> FlightQueued:
    sql = q.info or q.last_sql
    digest = digest_of(sql) if sql else None
    return FlightQueued(
        connection_id=q.connection_id,
        user=q.user,
        host=q.host,
        waited_ms=round(q.queueing_time_ms, 1),
        digest=digest.digest if digest else None,
        statement=shape(digest.digest, digest.text) if digest else None,
    )
