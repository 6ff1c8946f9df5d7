"""Nothing stored is lost when the backend is killed: SIGKILL `poolscope serve`, read the store, restart.

What the API served is compared with raw samples, not with a chart: a chart's buckets start at its
`from`, so with 0.5 s polls in 0.5 s buckets two charts of the same samples drawn a moment apart can
count one bucket more or less (CI once saw 6 served, 5 charted from the store afterwards)."""

from __future__ import annotations

import contextlib
import math
import os
import signal
import subprocess
import sys
import time

import httpx

from poolscope.store.query import count_samples
from poolscope_dev.sandbox import free_port
from tests.stores import make_store
from tests.waiting import wait_for


def start_serve(config, port):
    return subprocess.Popen(
        [sys.executable, "-m", "poolscope.cli", "--config", str(config), "serve", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def served_ts(port):
    """The ts of the last poll the API serves (its state), or None before the first."""
    reply = httpx.get(f"http://127.0.0.1:{port}/api/targets/db/state", timeout=3)
    return reply.json()["ts"] if reply.status_code == 200 else None


def chart_buckets(port):
    """How many buckets of target_up the API's chart of the last 300 s has."""
    now = time.time()
    body = httpx.get(
        f"http://127.0.0.1:{port}/api/targets/db/metrics",
        params={"metric": "target_up", "from": now - 300, "to": now + 1},
        timeout=3,
    ).json()
    return sum(len(s["points"]) for s in body.get("series", []))


def answered(read, port):
    """read(port), or None while the API does not answer (yet) or answers something malformed."""
    with contextlib.suppress(httpx.TransportError, ValueError):
        return read(port)
    return None


def wait_for_state_after(port, ts):
    wait_for(
        lambda: answered(served_ts, port),
        30,
        f"no state at or after {ts} served",
        every_s=0.3,
        until=lambda served: served is not None and served >= ts,
    )


def wait_for_polls(port, minimum):
    return wait_for(
        lambda: answered(chart_buckets, port) or 0,
        30,
        lambda seen: f"only {seen} polls stored",
        every_s=0.3,
        until=lambda seen: seen >= minimum,
    )


async def test_sigkill_loses_nothing_committed_and_restart_continues(tmp_path, monitor_dsn):
    db = tmp_path / "store.db"
    config = tmp_path / "poolscope.toml"
    # workers = 1: the API is a process of its own and serves only what is committed (with
    # workers = 0 it would serve the poller's copy, made before the commit).
    config.write_text(
        f'poll_interval_s = 0.5\nworkers = 1\nstore_url = "sqlite+aiosqlite:///{db}"\n'
        f'[[targets]]\nname = "db"\ndsn = "{monitor_dsn}"\n'
    )
    port = free_port()
    proc = start_serve(config, port)
    try:
        buckets = wait_for_polls(port, minimum=6)
        last_ts = served_ts(port)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert last_ts is not None

    store = make_store(f"sqlite+aiosqlite:///{db}")
    now = time.time()
    async with store.engine.connect() as conn:
        stored = await count_samples(conn, "db", ["target_up"], now - 300, now + 1)
    # Each bucket the API served holds at least one sample, and the last state it served is stored.
    assert stored >= buckets, "every poll the API had served must still be in the store"
    latest = await store.latest("db")
    assert latest is not None and latest[1] is not None and latest[1].groups
    assert latest[1].ts >= last_ts, (
        "the last state the API served must still be in the store (or a newer one)"
    )
    await store.close()

    port = free_port()
    proc = start_serve(config, port)
    try:
        # The restarted backend polls on into the same store: it serves a state polled after the
        # killed one's last, and its chart (the old polls and the new) grows past what was served.
        wait_for_state_after(port, math.nextafter(latest[1].ts, math.inf))
        wait_for_polls(port, minimum=buckets + 3)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=15)
