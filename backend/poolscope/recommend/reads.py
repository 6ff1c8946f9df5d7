"""The connection an evaluation reads the store on (its latest row, then its history window).

One connection per evaluation, not one per read. While the recommender's run loop runs on SQLite,
one connection is kept for all of them: a pool checkout and its rollback on return are each a trip
to aiosqlite's thread and cost as much CPU as the evaluation's reads (measured at 300 targets).
The reads are plain SELECTs on the driver, which open no transaction on SQLite, so
the kept connection holds no snapshot between them (it never holds back a WAL checkpoint); one that
SQLAlchemy began (the store's tier marks, read every few seconds) is rolled back after the
evaluation. A connection that failed is closed, and the next evaluation takes a new one.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from sqlalchemy.ext.asyncio import AsyncConnection

from poolscope.store.sql import SqlStore


class Reads:
    def __init__(self, store: SqlStore) -> None:
        self.store = store
        self._keeping = 0
        self._kept: AsyncConnection | None = None
        self._lock = asyncio.Lock()

    @contextlib.asynccontextmanager
    async def kept(self) -> AsyncIterator[None]:
        """While inside (the run loop), evaluations on SQLite share one kept connection; it is
        closed on the way out."""
        self._keeping += 1
        try:
            yield
        finally:
            self._keeping -= 1
            if not self._keeping:
                async with self._lock:
                    await self._drop()

    @contextlib.asynccontextmanager
    async def connection(self) -> AsyncIterator[AsyncConnection]:
        if not self._keeping or self.store.dialect != "sqlite":
            async with self.store.reading() as conn:
                yield conn
            return
        async with self._lock:
            if self._kept is None:
                self._kept = await self.store.engine.connect()
            conn = self._kept
            try:
                yield conn
                if conn.in_transaction():
                    await conn.rollback()
            except BaseException:
                await self._drop()
                raise

    async def _drop(self) -> None:
        conn, self._kept = self._kept, None
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.close()
