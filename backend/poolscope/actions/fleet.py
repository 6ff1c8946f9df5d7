"""Changes across the processes of a fleet: one apply or revert on a target at a time, whichever
process runs it, and whether the process that runs a guard is still there.

- TargetLocks: an asyncio.Lock per target inside the process, then, across processes, a session
  advisory lock on PostgreSQL (freed by the server if the process dies) or, on SQLite (one host),
  an exclusive flock on a file beside the database.
- Presence: this API process as the owner of the guards it runs. On PostgreSQL it holds an advisory
  lock named after itself for as long as it lives, so another process can tell it is gone; on
  SQLite the owner names this host's process id and start time.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import os
import socket
from collections import defaultdict
from collections.abc import AsyncIterator
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from poolscope.errors import Unavailable

# How long an apply waits for another process's change of the same target to end.
WAIT_S = 30.0
RETRY_S = 0.1


def lock_key(kind: str, name: str) -> int:
    """A signed 64-bit advisory lock key, the same in every process (hash() is not)."""
    digest = hashlib.sha256(f"poolscope-{kind}|{name}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def _sqlite_path(engine: AsyncEngine) -> Path | None:
    database = engine.url.database
    if engine.dialect.name != "sqlite" or not database or database == ":memory:":
        return None
    return Path(database)


class TargetLocks:
    def __init__(self, engine: AsyncEngine, *, wait_s: float = WAIT_S) -> None:
        self.engine = engine
        self.wait_s = wait_s
        self._local: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._postgres = engine.dialect.name == "postgresql"
        self._sqlite = _sqlite_path(engine)

    @contextlib.asynccontextmanager
    async def hold(self, target: str) -> AsyncIterator[None]:
        async with self._local[target]:
            if self._postgres:
                async with self._advisory(target):
                    yield
            elif self._sqlite is not None:
                async with self._flock(target, self._sqlite):
                    yield
            else:
                yield

    def _busy(self, target: str) -> Unavailable:
        return Unavailable(
            f"another Poolscope process is changing {target}; try again in a few seconds", retry_after_s=5
        )

    @contextlib.asynccontextmanager
    async def _advisory(self, target: str) -> AsyncIterator[None]:
        key = lock_key("apply", target)
        async with self.engine.connect() as conn:
            if not await _try_until(conn, key, self.wait_s):
                raise self._busy(target)
            try:
                yield
            finally:
                await conn.execute(select(func.pg_advisory_unlock(key)))
                await conn.commit()

    @contextlib.asynccontextmanager
    async def _flock(self, target: str, database: Path) -> AsyncIterator[None]:
        path = database.with_name(f"{database.name}.apply-{lock_key('apply', target) & 0xFFFFFFFF:08x}.lock")
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            loop = asyncio.get_running_loop()
            deadline = loop.time() + self.wait_s
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if loop.time() > deadline:
                        raise self._busy(target) from None
                    await asyncio.sleep(RETRY_S)
            yield
        finally:
            os.close(fd)  # closing it frees the lock


async def _try_until(conn: AsyncConnection, key: int, wait_s: float) -> bool:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait_s
    while True:
        got = bool((await conn.execute(select(func.pg_try_advisory_lock(key)))).scalar())
        await conn.commit()  # a session lock outlives the transaction; no transaction stays open
        if got or loop.time() > deadline:
            return got
        await asyncio.sleep(RETRY_S)


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (tells a reused pid apart), or None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(") ", 1)[1].split()[19]


def process_owner() -> str:
    """This process as a guard's owner: host, pid and start time."""
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{_start_time(pid) or '?'}"


class Presence:
    def __init__(self, engine: AsyncEngine, owner: str | None = None) -> None:
        self.engine = engine
        self.owner = owner or process_owner()
        self._postgres = engine.dialect.name == "postgresql"
        self._conn: AsyncConnection | None = None

    async def start(self) -> None:
        if self._postgres:
            self._conn = await self.engine.connect()
            await self._conn.execute(select(func.pg_advisory_lock(lock_key("process", self.owner))))
            await self._conn.commit()

    async def stop(self) -> None:
        if self._conn is not None:
            # The connection goes back to the pool, where its session lives on: unlock first.
            await self._conn.execute(select(func.pg_advisory_unlock(lock_key("process", self.owner))))
            await self._conn.commit()
            await self._conn.close()
            self._conn = None

    async def alive(self, owner: str | None) -> bool:
        """Is the process that owns a guard still running? (An unnamed owner: an older Poolscope's.)"""
        if owner is None:
            return False
        if owner == self.owner:
            return True
        if self._postgres:
            key = lock_key("process", owner)
            async with self.engine.connect() as conn:
                free = bool((await conn.execute(select(func.pg_try_advisory_lock(key)))).scalar())
                if free:
                    await conn.execute(select(func.pg_advisory_unlock(key)))
                await conn.commit()
            return not free
        host, _, rest = owner.partition(":")
        pid, _, started = rest.partition(":")
        if host != socket.gethostname() or not pid.isdigit():
            return True  # another host's process: SQLite is one host's store, so not seen here
        return _start_time(int(pid)) == started
