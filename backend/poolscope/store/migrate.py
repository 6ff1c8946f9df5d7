"""Bring a store's schema to the newest Alembic revision (run at start-up and by `poolscope migrate`)."""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import make_url

from poolscope.clock import SYSTEM, Clock
from poolscope.store.health import describe

log = logging.getLogger(__name__)

# The repo keeps migrations/ at its top level; an installed image copies it beside the package.
CANDIDATES = (
    Path(__file__).resolve().parents[3] / "migrations",
    Path(__file__).resolve().parents[1] / "migrations",
)


def migrations_dir() -> Path:
    for candidate in CANDIDATES:
        if (candidate / "env.py").is_file():
            return candidate
    raise FileNotFoundError("Alembic migrations directory not found next to the poolscope package")


def alembic_config(store_url: str) -> Config:
    """Alembic's configuration for the store at `store_url` (migrations/env.py reads it)."""
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    config.attributes["store_url"] = store_url
    return config


def upgrade_to_head(store_url: str) -> None:
    """Blocking (Alembic's env runs its own event loop): call it from a worker thread."""
    command.upgrade(alembic_config(store_url), "head")


# While the store is not up at start-up, the migration is tried again after waits that double up to this.
WAIT_MAX_S = 10.0


def store_not_up(error: BaseException) -> bool:
    """The store does not answer yet (refused, unreachable, starting up): worth waiting for, unlike
    a schema or configuration error."""
    return isinstance(error, (sa_exc.OperationalError, sa_exc.InterfaceError, OSError, TimeoutError))


class StartUpWait:
    """Waiting for a store that is not up yet at start-up (`serve` started before its database):
    one WARNING that it waits and why, one INFO once it is there; waits that double up to WAIT_MAX_S."""

    def __init__(self, store_url: str) -> None:
        self.secrets = [p for p in (make_url(store_url).password,) if p]
        self.waited = 0.0
        self.delay = 0.5

    def failed(self, error: BaseException) -> float:
        """How long to wait before the next try; raises `error` when it is not worth waiting for."""
        if not store_not_up(error):
            raise error
        if not self.waited:
            log.warning(
                "store not reachable at start-up (%s): waiting for it, trying again every %g s at most",
                describe(error, self.secrets),
                WAIT_MAX_S,
            )
        delay, self.delay = self.delay, min(self.delay * 2, WAIT_MAX_S)
        self.waited += delay
        return delay

    def done(self) -> None:
        if self.waited:
            log.info("store reachable after %.0f s of waiting; starting", self.waited)


def upgrade_when_up(store_url: str) -> None:
    """upgrade_to_head, waiting for the store to be up (StartUpWait): the supervisor's, before it forks."""
    wait = StartUpWait(store_url)
    while True:
        try:
            upgrade_to_head(store_url)
        except Exception as error:
            time.sleep(wait.failed(error))
            continue
        wait.done()
        return


async def upgrade_when_up_async(store_url: str, clock: Clock = SYSTEM) -> None:
    """The same in a running event loop (a process of one role): the waits can be cancelled."""
    wait = StartUpWait(store_url)
    while True:
        try:
            await asyncio.to_thread(upgrade_to_head, store_url)
        except Exception as error:
            await clock.sleep(wait.failed(error))
            continue
        wait.done()
        return
