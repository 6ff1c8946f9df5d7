"""Remembers the last SQL seen per connection, to name what a queued connection has been running.

A request waiting in THREAD_POOL_QUEUES has not been read yet: PROCESSLIST shows the connection
as Sleep with no INFO. The statement it ran last is the best evidence there is of what it is.
"""

from __future__ import annotations

from collections import OrderedDict

from poolscope.schemas import QueuedConnection, Session

MAX_REMEMBERED = 20_000  # bounded: connection ids are unbounded over a server's life


class LastStatementMemory:
    def __init__(self, max_entries: int = MAX_REMEMBERED) -> None:
        self.max_entries = max_entries
        self._seen: OrderedDict[int, tuple[str, float]] = OrderedDict()

    def observe(self, sessions: list[Session], now: float) -> None:
        for session in sessions:
            if session.info:
                self._seen[session.id] = (session.info, now)
                self._seen.move_to_end(session.id)
        while len(self._seen) > self.max_entries:
            self._seen.popitem(last=False)

    def annotate(self, queue: list[QueuedConnection], now: float) -> None:
        for entry in queue:
            if entry.connection_id is None:
                continue
            seen = self._seen.get(entry.connection_id)
            if seen is not None:
                entry.last_sql, seen_at = seen
                entry.last_sql_seen_s_ago = round(now - seen_at, 3)

    def forget(self) -> None:
        self._seen.clear()
