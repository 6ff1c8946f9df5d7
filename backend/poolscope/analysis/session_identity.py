"""Remembers who each connection is (user, host, db), so idle connections can be named cheaply.

A session is learnt when the processlist shows it (every session in the SHOW FULL PROCESSLIST
form, active ones in the information_schema form), or from an on-demand lookup by id
(poller/collectors/session_lookup.py). A listing of every session (the SHOW form) is kept as it
came, not copied entry by entry: a server's idle application pool lists hundreds of sessions
every second, and the poll needs to name only the few that are queued or hold a transaction.
The db is the one of its last statement, which is the one a queued request of it will most
likely run in.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import NamedTuple

MAX_REMEMBERED = 20_000  # bounded: connection ids are unbounded over a server's life


class SessionIdentity(NamedTuple):
    user: str | None
    host: str | None
    db: str | None


class SessionIdentities:
    def __init__(self, max_entries: int = MAX_REMEMBERED) -> None:
        self.max_entries = max_entries
        # Learnt one by one since the last complete listing (newer than it), oldest first.
        self._known: OrderedDict[int, SessionIdentity] = OrderedDict()
        # The last listing of every session the server had, read as it came (decoded on lookup).
        self._listing: Mapping[int, SessionIdentity] = {}

    def learn(self, identities: Mapping[int, SessionIdentity], complete: bool = False) -> None:
        """Remember who these sessions are. `complete`: they are every session the server has, so
        whatever was learnt before is either listed again, fresher, or has disconnected (ids are
        not reused): the listing replaces it, without copying its entries."""
        if complete:
            self._listing = identities
            self._known.clear()
            return
        for connection_id, identity in identities.items():
            self._known[connection_id] = identity
            self._known.move_to_end(connection_id)
        while len(self._known) > self.max_entries:
            self._known.popitem(last=False)

    def get(self, connection_id: int) -> SessionIdentity | None:
        known = self._known.get(connection_id)
        return self._listing.get(connection_id) if known is None else known

    def unknown(self, ids: Iterable[int | None]) -> set[int]:
        return {i for i in ids if i is not None and i not in self._known and i not in self._listing}

    def forget(self) -> None:
        self._known.clear()
        self._listing = {}
