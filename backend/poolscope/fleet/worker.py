"""One poller process (role "poller"): polls the targets it holds leases for, runs the alert engine,
notifications and automatic snapshots; serves no HTTP. `poolscope poller` runs one; `poolscope
serve` forks `workers` of them (fleet/supervisor.py)."""

from __future__ import annotations

import asyncio
import logging
import signal

from poolscope.config import Settings
from poolscope.services import run_services

log = logging.getLogger(__name__)


async def poll_until_stopped(settings: Settings) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    async with run_services(settings, None, role="poller") as services:
        assert services.fleet is not None
        log.info("poller %s started", services.fleet.node_id)
        await stop.wait()
    log.info("poller stopped; its leases are free")


def run_poller(settings: Settings) -> None:
    asyncio.run(poll_until_stopped(settings))
