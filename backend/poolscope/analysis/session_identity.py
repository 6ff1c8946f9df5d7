"""Remembers who each connection is (user, host, db), so idle connections can be named cheaply.

A session is learnt when the processlist shows it (every session in the SHOW FULL PROCESSLIST
form, active ones in the information_schema form), or from an on-demand lookup by id
(poller/collectors/session_lookup.py). The db is the one of its last statement, which is the one a
queued request of it will most likely run in.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from typing import NamedTuple

MAX_REMEMBERED = 20_000  # bounded: connection ids are unbounded over a server's life


class SessionIdentity(NamedTuple):
    user: str | None
    host: str | None
    db: str | None


class SessionIdentities:
    def __init__(self, max_entries: int = MAX_REMEMBERED) -> None:
        self.max_entries = max_entries
        self._known: OrderedDict[int, SessionIdentity] = OrderedDict()

    def learn(self, identities: dict[int, SessionIdentity]) -> None:
        for connection_id, identity in identities.items():
            self._known[connection_id] = identity
            self._known.move_to_end(connection_id)
        while len(self._known) > self.max_entries:
            self._known.popitem(last=False)

    def get(self, connection_id: int) -> SessionIdentity | None:
        return self._known.get(connection_id)

    def unknown(self, ids: Iterable[int | None]) -> set[int]:
        return {i for i in ids if i is not None and i not in self._known}

    def forget(self) -> None:
        self._known.clear()
