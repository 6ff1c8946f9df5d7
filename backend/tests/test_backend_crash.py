"""Nothing stored is lost when the backend is killed: SIGKILL `poolscope serve`, read the store, restart."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import httpx

from poolscope.store.sql import SqlStore
from poolscope_dev.sandbox import free_port


def start_serve(config, port):
    return subprocess.Popen(
        [sys.executable, "-m", "poolscope.cli", "--config", str(config), "serve", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def wait_for_polls(port, minimum, timeout_s=30.0):
    deadline = time.monotonic() + timeout_s
    seen = 0
    while time.monotonic() < deadline:
        try:
            now = time.time()
            body = httpx.get(
                f"http://127.0.0.1:{port}/api/targets/db/metrics",
                params={"metric": "target_up", "from": now - 300, "to": now + 1},
                timeout=3,
            ).json()
            seen = sum(len(s["points"]) for s in body.get("series", []))
            if seen >= minimum:
                return seen
        except (httpx.TransportError, ValueError):
            pass
        time.sleep(0.3)
    raise AssertionError(f"only {seen} polls stored within {timeout_s} s")


async def test_sigkill_loses_nothing_committed_and_restart_continues(tmp_path, monitor_dsn):
    db = tmp_path / "store.db"
    config = tmp_path / "poolscope.toml"
    config.write_text(
        f'poll_interval_s = 0.5\nstore_url = "sqlite+aiosqlite:///{db}"\n'
        f'[[targets]]\nname = "db"\ndsn = "{monitor_dsn}"\n'
    )
    port = free_port()
    proc = start_serve(config, port)
    try:
        served = wait_for_polls(port, minimum=6)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)

    store = SqlStore(f"sqlite+aiosqlite:///{db}", raw_retention_s=3600, rollup_retention_s=86400)
    now = time.time()
    out = await store.query("db", ["target_up"], now - 300, now + 1, points=5000, min_step_s=0.5)
    stored = len(out.series[0].points)
    assert stored >= served, "every poll the API had served must still be in the store"
    latest = await store.latest("db")
    assert latest is not None and latest[1] is not None and latest[1].groups
    await store.close()

    port = free_port()
    proc = start_serve(config, port)
    try:
        assert wait_for_polls(port, minimum=stored + 3) >= stored + 3
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=15)
