"""A poller process for the API-role tests: `python -m tests.live.poller_process CONFIG`.

It polls the config's targets (fixture:// replays too) and evaluates alerts until stdin closes.
"""

from __future__ import annotations

import asyncio
import sys

from poolscope.auth import AuthService
from poolscope.config import load_settings
from poolscope.services import run_services
from poolscope_dev import replay
from tests import FIXTURES_ROOT


async def main(config: str) -> None:
    replay.register(FIXTURES_ROOT)
    settings = load_settings(config)
    async with run_services(settings, AuthService(settings), role="poller"):
        print("polling", flush=True)
        await asyncio.to_thread(sys.stdin.read)  # the test closes stdin to stop it


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
