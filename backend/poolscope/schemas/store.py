"""The store's health as the processes that write to it see it (store/health.py)."""

from __future__ import annotations

from typing import Literal

from poolscope.schemas.base import Schema

StoreCondition = Literal["ok", "failing"]


class StoreWriter(Schema):
    """One process that writes to the store (a poller, or the one process that polls and serves)."""

    node: str
    """The process: its fleet node_id, or `local` for the one process of `workers = 0`."""
    status: StoreCondition
    """ok: its last write went through; failing: its writes fail (unreachable, disk full, ...)."""
    since: float | None = None
    """While failing: when its first write failed, Unix time in seconds."""
    error: str | None = None
    """While failing: the store's last error (its kind and first line; never a credential)."""
    buffered_polls: int = 0
    """Polls held for the store, written in order when it takes writes again."""
    buffered_samples: int = 0
    """Their samples."""
    buffered_bytes: int = 0
    """What everything held takes, in memory and in the spool file, in bytes."""
    spooled_bytes: int = 0
    """Of that, in the spool file on disk."""
    dropped_polls: int = 0
    """Polls dropped since the process started because the buffer was full (their samples are lost)."""
    dropped_samples: int = 0
    """Their samples."""
    updated_at: float
    """When this was last said, Unix time in seconds."""


class StoreOut(Schema):
    """GET /api/store: whether the store takes writes and answers reads, and what waits for it."""

    status: StoreCondition
    """failing when this process cannot read the store or any writer's writes fail."""
    since: float | None = None
    """When it started failing (the earliest of the failing parts), Unix time in seconds."""
    error: str | None = None
    """The store's error as the first failing part saw it."""
    reads: StoreCondition
    """Whether this process (the API) can read the store."""
    writers: list[StoreWriter]
    """Each process that writes to the store, as it last said (pollers of this host)."""
    buffered_samples: int = 0
    """Samples all writers hold for the store."""
    dropped_samples: int = 0
    """Samples all writers dropped because their buffers were full."""
