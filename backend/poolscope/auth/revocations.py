"""Logouts seen by every API process of a fleet within seconds, not only by the one that took them.

A logout writes its session id to the store (auth_revoked_sessions). Each API process keeps the
revoked ids in memory (auth/service.py) and learns the others' from the store:
  - PostgreSQL: LISTEN on CHANNEL, which the logout's transaction NOTIFYs with the id; the whole
    table is read again on (re)connecting and every SAFETY_POLL_S, for one missed while the
    connection was down.
  - SQLite (one host): the table is read every POLL_S.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Any

import asyncpg

from poolscope.clock import SYSTEM, Clock
from poolscope.store.feed import asyncpg_dsn

if TYPE_CHECKING:
    from poolscope.auth.service import AuthService

log = logging.getLogger(__name__)

CHANNEL = "poolscope_revoked"
POLL_S = 2.0
SAFETY_POLL_S = 30.0
RECONNECT_S = 2.0


class RevocationWatcher:
    def __init__(self, auth: AuthService, store_url: str, *, postgres: bool, clock: Clock = SYSTEM) -> None:
        self.auth = auth
        self.store_url = store_url
        self.postgres = postgres
        self.clock = clock
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="revocations")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        while True:
            try:
                if self.postgres:
                    await self._listen()
                else:
                    await self.clock.sleep(POLL_S)
                    await self.auth.load_revoked()
            except Exception as exc:  # the store is down or restarting: keep what is known, retry
                log.warning("revoked sessions not read (%s); trying again", type(exc).__name__)
                await self.clock.sleep(RECONNECT_S)

    async def _listen(self) -> None:
        conn = await asyncpg.connect(asyncpg_dsn(self.store_url))
        try:

            def heard(_conn: Any, _pid: int, _channel: str, payload: str) -> None:
                sid, _, expires = payload.partition(" ")
                with contextlib.suppress(ValueError):
                    self.auth.note_revoked(sid, float(expires))

            lost = asyncio.Event()
            conn.add_termination_listener(lambda _conn: lost.set())
            await conn.add_listener(CHANNEL, heard)
            await self.auth.load_revoked()  # those revoked while nobody listened
            while not lost.is_set():
                # Real time, not the clock: it bounds how long a lost connection goes unnoticed.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(lost.wait(), SAFETY_POLL_S)
                await self.auth.load_revoked()
        finally:
            with contextlib.suppress(Exception):
                await conn.close()
