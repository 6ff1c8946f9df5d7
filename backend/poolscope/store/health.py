"""What this process knows of the store: it takes writes, or it fails since when and why.

Each part of the process that writes (the poll writer, lease rounds, alert changes) says how its
last store operation went. A change of state is one log line: WARNING when the store fails, INFO
when it takes writes again; while it stays down, one line a minute with the failures counted,
never a traceback per attempt. The state (with what the writer holds for the store) is also
written to a small JSON status file, replaced atomically, so that the API process of a fleet on
this host can say so (api/store.py): it may read the store fine while the pollers cannot write
to it (a full disk).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
from collections.abc import Callable, Iterable
from pathlib import Path

from sqlalchemy import exc as sa_exc

from poolscope.clock import SYSTEM, Clock
from poolscope.dsn import redact_userinfo
from poolscope.schemas import StoreWriter

log = logging.getLogger(__name__)

# While the store stays down, one log line per this many seconds says so (with a count).
REPEAT_LOG_S = 60.0
# A status file older than this is from a process that is gone (api/store.py ignores it).
STATUS_FRESH_S = 15.0
STATUS_SUFFIX = ".status.json"

# Errors of one write's data, not of the store: a duplicate row, a value the column refuses.
_DATA_ERRORS: tuple[type[BaseException], ...] = (
    sa_exc.IntegrityError,
    sa_exc.DataError,
    sqlite3.IntegrityError,
)
try:  # the PostgreSQL driver's own, raised by its COPY (store/ingest.py)
    import asyncpg

    _DATA_ERRORS += (asyncpg.IntegrityConstraintViolationError, asyncpg.DataError)
except ImportError:  # pragma: no cover
    pass


def is_outage(error: BaseException) -> bool:
    """True when `error` says the store cannot take writes (unreachable, disk full, read-only, a
    timeout); False when it refuses this one write's data (which no retry would fix)."""
    return not isinstance(error, _DATA_ERRORS)


def describe(error: BaseException, secrets: Iterable[str] = ()) -> str:
    """The error's kind and the first line of its message, without the SQL SQLAlchemy adds (it
    can carry the data) and without any of `secrets` (the store URL's user and password)."""
    cause = getattr(error, "orig", None) or error
    lines = str(cause).strip().splitlines()
    text = f"{type(cause).__name__}: {lines[0]}" if lines else type(cause).__name__
    return redact_userinfo(text, [s for s in secrets if s])[:300]


class StoreHealth:
    def __init__(
        self,
        node: str,
        *,
        status_dir: Path | None = None,
        secrets: Iterable[str] = (),
        counts: Callable[[], dict[str, int]] | None = None,
        clock: Clock = SYSTEM,
    ) -> None:
        self.node = node
        self.status_dir = status_dir
        self.secrets = tuple(secrets)
        # What the writer holds for the store (store/writer.py BatchWriter.counts).
        self.counts = counts or dict
        self.clock = clock
        self.failing_since: float | None = None  # epoch seconds
        self.error: str | None = None
        self._failing_at = 0.0  # monotonic, for the outage's length
        self._failures = 0  # since the last line about them
        self._logged_at = 0.0

    @property
    def failing(self) -> bool:
        return self.failing_since is not None

    def failed(self, error: BaseException, doing: str) -> None:
        """A store operation (`doing`: "writing polls", "renewing leases"...) failed with an outage."""
        self.error = describe(error, self.secrets)
        now = self.clock.monotonic()
        if self.failing_since is None:
            self.failing_since, self._failing_at, self._logged_at, self._failures = (
                self.clock.time(),
                now,
                now,
                0,
            )
            log.warning(
                "store unreachable (%s): %s; polling and alerting go on from memory, and what is"
                " written to the store is held until it is back",
                doing,
                self.error,
            )
        else:
            self._failures += 1
            if now - self._logged_at >= REPEAT_LOG_S:
                held = self.counts()
                log.warning(
                    "store still unreachable after %.0f s (%d failures in the last %.0f s): %s; %d"
                    " poll(s) held (%d samples, %.1f MiB), %d dropped",
                    now - self._failing_at,
                    self._failures,
                    now - self._logged_at,
                    self.error,
                    held.get("buffered_polls", 0),
                    held.get("buffered_samples", 0),
                    held.get("buffered_bytes", 0) / 2**20,
                    held.get("dropped_polls", 0),
                )
                self._logged_at, self._failures = now, 0
        self.publish()

    def ok(self) -> None:
        """A store operation went through: the store is back if it was failing."""
        if self.failing_since is None:
            return
        held = self.counts()
        log.info(
            "store back after %.1f s; writing the %d poll(s) held for it (%d dropped while it was down)",
            self.clock.monotonic() - self._failing_at,
            held.get("buffered_polls", 0),
            held.get("dropped_polls", 0),
        )
        self.failing_since = self.error = None
        self.publish()

    def status(self) -> StoreWriter:
        return StoreWriter(
            node=self.node,
            status="failing" if self.failing else "ok",
            since=self.failing_since,
            error=self.error,
            updated_at=self.clock.time(),
            **self.counts(),
        )

    # --- the status file, for the API process of this host ----------------------------------

    def status_path(self) -> Path | None:
        if self.status_dir is None:
            return None
        return self.status_dir / f"{safe_name(self.node)}{STATUS_SUFFIX}"

    def publish(self) -> None:
        """Replace this process's status file (atomically: a reader sees the old or the new)."""
        path = self.status_path()
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            temporary = path.with_name(f".{path.name}.{os.getpid()}")
            temporary.write_text(self.status().model_dump_json())
            os.replace(temporary, path)
        except OSError as error:  # a full disk: the API says the store fails by its own reads, or not
            log.debug("store status file %s not written: %s", path, error)

    def withdraw(self) -> None:
        """This process stops: its status no longer counts."""
        path = self.status_path()
        if path is not None:
            with contextlib.suppress(OSError):
                path.unlink()


def safe_name(node: str) -> str:
    """A node id as a file name (host:pid/N has characters a file name should not)."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in node)


def read_statuses(status_dir: Path, now: float) -> list[StoreWriter]:
    """The fresh status files of the writers of this host (stale ones are of stopped processes)."""
    out = []
    with contextlib.suppress(OSError):
        for path in sorted(status_dir.glob(f"*{STATUS_SUFFIX}")):
            try:
                writer = StoreWriter.model_validate_json(path.read_bytes())
            except (OSError, ValueError):
                continue  # being replaced, or not ours
            if now - writer.updated_at <= STATUS_FRESH_S:
                out.append(writer)
    return out


class FailureLog:
    """What a repeated store operation (a periodic read, maintenance) says when it fails: one
    line when it starts failing, then at most one per REPEAT_LOG_S with the count, and one when
    it works again. A traceback only for an error that is not the store's outage (a bug)."""

    def __init__(self, logger: logging.Logger, doing: str, clock: Clock = SYSTEM) -> None:
        self.logger = logger
        self.doing = doing
        self.clock = clock
        self._since: float | None = None
        self._logged_at = 0.0
        self._count = 0

    def failed(self, error: BaseException) -> None:
        if not is_outage(error):
            self.logger.error("%s failed", self.doing, exc_info=error)
            return
        now = self.clock.monotonic()
        self._count += 1
        if self._since is None:
            self._since, self._logged_at, self._count = now, now, 0
            self.logger.warning("%s failed: %s (the store fails; tried again)", self.doing, describe(error))
        elif now - self._logged_at >= REPEAT_LOG_S:
            self.logger.warning(
                "%s still fails after %.0f s (%d more failures): %s",
                self.doing,
                now - self._since,
                self._count,
                describe(error),
            )
            self._logged_at, self._count = now, 0

    def ok(self) -> None:
        if self._since is not None:
            self.logger.info("%s works again after %.0f s", self.doing, self.clock.monotonic() - self._since)
            self._since = None
