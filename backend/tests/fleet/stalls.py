"""A recorded stall on the test clock: targets `stalling://<name>` replay the MariaDB 10.11 fixture
(poolscope_dev/replay.py), except that each thread group's STALLS counter rises by STALLS_PER_S
during the stall windows a test sets, by the clock's time, as one server's counters would whoever
polls it. A test can also make a poll take server time (`slow_at`): it is in flight, asleep on
the clock, while the test moves a lease.

Every poll of such a target has IS_STALLED = 0, so a stored tp_group_stalled = 1 is a verdict
that alerts (STALLS rose, analysis/stalls.py): what `stalled_polls` reads back.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pydantic import SecretStr
from sqlalchemy import text

from poolscope.config import TargetConfig
from poolscope.poller.connection import StatementResult, register_scheme
from poolscope.store.head import readable_samples_sql
from poolscope.store.sql import SqlStore
from poolscope_dev.replay import FixtureConnection
from tests import FIXTURES_ROOT
from tests.clock import FakeClock

SCHEME = "stalling"
FIXTURE_DSN = "fixture://mariadb/10.11"
STALLS_PER_S = 10


@dataclass
class StallScript:
    """What the stalling targets do, on one clock (monotonic instants)."""

    clock: FakeClock
    windows: list[tuple[float, float]] = field(default_factory=list)
    # Polls that start at these instants take this long (on the clock) to answer.
    slow: dict[float, float] = field(default_factory=dict)

    def stall(self, start: float, end: float) -> None:
        self.windows.append((start, end))

    def slow_at(self, instant: float, seconds: float) -> None:
        self.slow[round(instant, 6)] = seconds

    def stalls(self, now: float) -> int:
        """How far STALLS rose by `now`: STALLS_PER_S for every second of the windows so far."""
        return sum(int(max(0.0, min(now, end) - start) * STALLS_PER_S) for start, end in self.windows)


_script: StallScript | None = None


def use(script: StallScript) -> StallScript:
    """Make `script` the one every stalling target follows (one test at a time in a process)."""
    global _script
    _script = script
    register_scheme(SCHEME, lambda config: StallingConnection(config, FIXTURES_ROOT))
    return script


def target(name: str, **values: Any) -> TargetConfig:
    return TargetConfig(name=name, dsn=f"{SCHEME}://{name}", **values)


class StallingConnection(FixtureConnection):
    async def connect(self) -> None:
        self.config = self.config.model_copy(update={"dsn": SecretStr(FIXTURE_DSN)})
        await super().connect()

    async def run_batch(self, statements: list[str]) -> list[StatementResult]:
        assert _script is not None
        now = _script.clock.monotonic()
        results = await super().run_batch(statements)
        risen = _script.stalls(now)
        for statement, result in zip(statements, results, strict=True):
            if self._files.get(statement) == "thread_pool_stats" and result.rows:
                for row in result.rows:
                    row["stalls"] = int(row["stalls"]) + risen
        if (seconds := _script.slow.get(round(now, 6))) is not None:
            await _script.clock.sleep(seconds)
        return results


async def _stored(store: SqlStore, target: str, metric: str, where: str = "") -> list[tuple[float, str]]:
    async with store.engine.connect() as conn:
        rows = await conn.execute(
            text(
                f"SELECT s.ts, series.labels FROM {readable_samples_sql(store.dialect)} s"
                " JOIN series ON series.id = s.series_id"
                f" WHERE series.target = :t AND series.metric = :m {where} ORDER BY s.ts"
            ),
            {"t": target, "m": metric},
        )
        return [(float(r.ts), r.labels) for r in rows]


async def stalled_polls(store: SqlStore, target: str) -> list[tuple[float, str]]:
    """(ts, group) of every stored poll of `target` whose stall verdict alerts."""
    rows = await _stored(store, target, "tp_group_stalled", "AND s.value = 1")
    return [(ts, json.loads(labels)["group"]) for ts, labels in rows]


async def poll_times(store: SqlStore, target: str) -> list[float]:
    """The ts of every stored poll of `target` (each has one target_up sample)."""
    return [ts for ts, _ in await _stored(store, target, "target_up")]
