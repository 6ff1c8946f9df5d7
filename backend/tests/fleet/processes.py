"""Poolscope processes for the fleet tests: started with a log file, always stopped, and what they
wrote read straight from the store."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from poolscope.fleet.leases import rendezvous_owner
from poolscope.poller.scheduler import MAINTENANCE_LEASE
from poolscope.store.head import readable_samples_sql


class Proc:
    def __init__(self, name: str, args: list[str], log_dir: Path, env: dict[str, str] | None = None) -> None:
        self.name = name
        self.log = log_dir / f"{name}.log"
        with self.log.open("ab") as out:
            self.popen = subprocess.Popen(
                [sys.executable, "-m", "poolscope.cli", *args],
                stdout=out,
                stderr=subprocess.STDOUT,
                env={**os.environ, **(env or {})},
                start_new_session=True,
            )

    @property
    def pid(self) -> int:
        return self.popen.pid

    def tail(self) -> str:
        with contextlib.suppress(OSError):
            return f"--- {self.name} ---\n" + self.log.read_text(errors="replace")[-3000:]
        return ""

    def stop(self, timeout_s: float = 20) -> None:
        """SIGTERM, wait, then SIGKILL the whole session (a supervisor's children included)."""
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(timeout=timeout_s)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=timeout_s)


@contextlib.contextmanager
def processes() -> Iterator[list[Proc]]:
    """A list the test appends its processes to; every one is stopped on the way out."""
    started: list[Proc] = []
    try:
        yield started
    finally:
        for proc in reversed(started):
            proc.stop()


def query(url: str, sql: str, **params: object) -> list[tuple]:  # type: ignore[type-arg]
    """Rows of one statement on the store (from a synchronous test: its own short event loop)."""

    async def run() -> list[tuple]:  # type: ignore[type-arg]
        engine = create_async_engine(url)
        try:
            async with engine.connect() as conn:
                return [tuple(row) for row in await conn.execute(text(sql), params)]
        finally:
            await engine.dispose()

    return asyncio.run(run())


def poll_times(url: str, since: float = 0.0) -> dict[str, list[float]]:
    """Each target's poll timestamps (its target_up samples), oldest first."""
    rows = query(
        url,
        f"SELECT s.target, x.ts FROM {readable_samples_sql(make_url(url).get_backend_name())} x"
        " JOIN series s ON s.id = x.series_id"
        " WHERE s.metric = 'target_up' AND x.ts >= :since ORDER BY x.ts",
        since=since,
    )
    found: dict[str, list[float]] = {}
    for target, ts in rows:
        found.setdefault(target, []).append(float(ts))
    return found


def lease_owners(url: str) -> dict[str, str]:
    return dict(query(url, "SELECT target, owner FROM target_leases"))  # type: ignore[arg-type]


def split_as_hashed(store_url: str, targets: list[str], members: int = 2) -> bool:
    """`members` pollers are members and every target (and the maintenance lease, hashed like a
    target) is leased to the one the hash gives it: the first rebalance is over."""
    names = [str(row[0]) for row in query(store_url, "SELECT node_id FROM fleet_members")]
    owners = lease_owners(store_url)
    leases = [*targets, MAINTENANCE_LEASE]
    return len(names) == members and all(owners.get(t) == rendezvous_owner(t, names) for t in leases)


def children_of(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, IndexError):
            stat = (entry / "stat").read_text()
            fields = stat.rsplit(") ", 1)[1].split()
            if int(fields[1]) == pid and fields[0] != "Z":
                found.add(int(entry.name))
    return found


def answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).is_success
    except httpx.TransportError:
        return False
