"""Helpers for the flavor tests: poll a fixture, copy one with a few values changed, freeze a stall."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

from poolscope.poller.target_poller import PollResult
from tests import FIXTURES_ROOT
from tests.poller.helpers import poller_for


async def polls(fixture: str, count: int = 3) -> list[PollResult]:
    """`count` polls of a fixture (`percona/8.4.10`, or an absolute directory) through the real poller."""
    poller = poller_for(f"fixture://{fixture}")
    results = [await poller.poll_once() for _ in range(count)]
    await poller.close()
    return results


def fixture_copy(tmp: Path, fixture: str, **variables: str | int) -> str:
    """A copy of a fixture under `tmp` with these server variables changed (discovery and polled
    rows alike, as a server would report them); returns its directory for `polls`."""
    target = tmp / fixture.replace("/", "_")
    shutil.copytree(FIXTURES_ROOT / fixture, target)
    for name in ("discovery_variables.json", "global_variables.json"):
        path = target / name
        data = json.loads(path.read_text())
        for row in data["rows"]:
            for variable, value in variables.items():
                if row.get("Variable_name") == variable:
                    row["Value"] = str(value)
                elif variable in row:  # the one-row @@GLOBAL answer
                    row[variable] = value
        path.write_text(json.dumps(data))
    return str(target)


async def stalled_poll(fixture: str) -> PollResult:
    """A poll after the counters froze on frame 2 (queues in every group) for longer than the 60 ms
    stall limit of the MySQL Enterprise fixtures: every queued group is judged stalled."""
    poller = poller_for(f"fixture://{fixture}")
    await poller.poll_once()
    frozen = poller.connection.run_batch

    async def same_frame(statements: list[str], **options):  # type: ignore[no-untyped-def]
        poller.connection.polls = 2  # type: ignore[attr-defined]
        return await frozen(statements, **options)

    poller.connection.run_batch = same_frame  # type: ignore[method-assign]
    await poller.poll_once()
    await asyncio.sleep(0.1)  # the behaviour: frozen for longer than the 60 ms stall limit
    result = await poller.poll_once()
    await poller.close()
    return result
