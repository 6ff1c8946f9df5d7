"""One poller process (role "poller"): polls the targets it holds leases for, runs the alert engine,
notifications and automatic snapshots; serves no HTTP. `poolscope poller` runs one; `poolscope
serve` forks `workers` of them (fleet/supervisor.py)."""

from __future__ import annotations

import asyncio
import logging
import resource
import signal

from poolscope.config import Settings
from poolscope.services import run_services

log = logging.getLogger(__name__)


# Descriptors a poller needs besides one socket per target: the store, logs, the loop's own.
SPARE_FILES = 64


def raise_open_files_limit(targets: int) -> int:
    """Raise this process's soft RLIMIT_NOFILE to its hard limit, as far as the targets need: each
    target it polls holds a socket, and one poller takes over every target when the others die
    (1,000 targets pass the common default soft limit of 1,024). Returns the soft limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = targets + SPARE_FILES
    if soft != resource.RLIM_INFINITY and soft < needed:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            log.info("open files limit raised from %d to %s for %d target(s)", soft, hard, targets)
            soft = hard
        except (ValueError, OSError) as exc:
            log.warning("could not raise the open files limit from %d: %s", soft, exc)
        if soft != resource.RLIM_INFINITY and soft < needed:
            log.warning(
                "open files limit %d is below the %d that %d target(s) may need (hard limit %s):"
                " raise it (ulimit -n) or run more pollers",
                soft,
                needed,
                targets,
                hard,
            )
    return soft


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


def new_event_loop() -> asyncio.AbstractEventLoop:
    """uvloop's loop when it is installed (it comes with uvicorn[standard], and uvicorn already
    runs the API and role "all" on it), else asyncio's: a poller's loop wakes for every poll's
    timer and socket, and uvloop does that work in C (docs/decisions/0012-poller-runtime.md)."""
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


def run_poller(settings: Settings) -> None:
    raise_open_files_limit(len(settings.targets))
    with asyncio.Runner(loop_factory=new_event_loop) as runner:
        runner.run(poll_until_stopped(settings))
