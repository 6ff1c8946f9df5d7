"""`poolscope serve` (an API process and two pollers) while its store fails, as an operator's bad
night brings it (issue 34): PostgreSQL stopped for 30 s with 4 targets, and SQLite's disk full.
Real processes, a real MariaDB (its stall provoked), real PostgreSQL, a real full filesystem.

Wall-clock time: the outage is 30 s because that is what was observed to lose 31-33 s of every
target's samples; the stall needs ~15 s of load to show. Everything else waits for a state."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from poolscope_dev.pgsandbox import PostgresSandbox
from poolscope_dev.sandbox import free_port
from tests.alerts.support import Receiver, incident_load
from tests.fleet.processes import Proc, answers, poll_times, processes, split_as_hashed
from tests.poller.helpers import global_variables
from tests.store.outage import fill, small_disk
from tests.store.test_outage import _databases
from tests.waiting import wait_for

TARGETS = [f"db{i}" for i in range(4)]
OUTAGE_S = 30.0


def write_config(
    path: Path, store_url: str, dsn: str, spool: Path, webhook: str | None = None, **extra: object
) -> None:
    lines = [
        f'store_url = "{store_url}"',
        "poll_interval_s = 1.0",
        "workers = 2",
        f'spool_dir = "{spool}"',
        *(f"{k} = {v!r}" if isinstance(v, str) else f"{k} = {v}" for k, v in extra.items()),
    ]
    if webhook is not None:
        lines += ["[[alerts.webhooks]]", 'name = "pager"', f'url = "{webhook}"']
    for name in TARGETS:
        lines += ["[[targets]]", f'name = "{name}"', f'dsn = "{dsn}"']
    path.write_text("\n".join(lines) + "\n")


@contextlib.contextmanager
def serving(tmp_path: Path, config: Path, port: int, store_url: str, settled: bool = True) -> Iterator[str]:
    """`serve` ready; with `settled`, its leases split between its pollers as the hash says."""
    base = f"http://127.0.0.1:{port}"
    with processes() as started:
        serve = Proc("serve", ["--config", str(config), "serve"], tmp_path)
        started.append(serve)
        try:
            wait_for(lambda: answers(f"{base}/api/health"), 60, "the API never answered")
            wait_for(lambda: _status(f"{base}/readyz") == 200, 60, "never ready")
            if settled:
                wait_for(lambda: split_as_hashed(store_url, TARGETS), 60, "the leases never settled")
            yield base
        except BaseException:
            print(serve.tail())
            raise


def _status(url: str) -> int | None:
    try:
        return httpx.get(url, timeout=5).status_code
    except httpx.TransportError:
        return None


def _json(url: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    response = httpx.get(url, timeout=10)
    return response.status_code, response.json()


@pytest.mark.slow
def test_postgresql_stopped_for_30_s_loses_no_sample_and_alerts_the_stall_during_it(
    tmp_path, stoppable_postgres: PostgresSandbox, mariadb, monitor_dsn
):
    receiver = Receiver()
    url = stoppable_postgres.create_database(f"poolscope_serve_outage_{next(_databases)}")
    port = free_port()
    config = tmp_path / "poolscope.toml"
    write_config(config, url, monitor_dsn, tmp_path / "spool", webhook=receiver.url, listen_port=port)
    try:
        # Stopped as soon as it is ready: the leases may still be settling between the pollers
        # (tests/fleet/test_startup_outage.py takes each step of that in turn).
        with serving(tmp_path, config, port, url, settled=False) as base:
            print("leases settled when the store stopped:", split_as_hashed(url, TARGETS))
            down_at = time.time()
            stoppable_postgres.stop()
            up_at = down_at + OUTAGE_S
            try:
                ready = _json(f"{base}/readyz")
                assert ready[0] == 503 and ready[1]["store"].startswith("unreachable: "), ready
                assert "store" in ready[1]["reason"]
                for read in ("/api/overview", "/api/targets", "/api/targets/db0/state", "/api/alerts"):
                    code, body = _json(f"{base}{read}")
                    assert code == 503 and body["detail"].startswith("store unreachable"), (read, code, body)
                with (
                    global_variables(mariadb, thread_pool_size=1, thread_pool_stall_limit=100),
                    incident_load(mariadb, rounds=1),
                ):
                    wait_for(
                        lambda: [b for b in receiver.bodies if _fired(b, "group_stalled")],
                        up_at - time.time() - 1,
                        "no group_stalled alert reached the webhook during the outage",
                    )
                    time.sleep(max(0.0, up_at - time.time()))
                    up_at = time.time()
                    stoppable_postgres.start()
            finally:
                if stoppable_postgres.proc is None:
                    up_at = time.time()
                    stoppable_postgres.start()
            wait_for(
                lambda: _status(f"{base}/readyz") == 200, 60, "not ready again after the store came back"
            )
            wait_for(
                lambda: _json(f"{base}/api/store")[1]["buffered_samples"] == 0,
                60,
                "the pollers never wrote what they held",
            )
            stored = poll_times(url, since=down_at)
            for name in TARGETS:
                kept = [t for t in stored.get(name, []) if down_at <= t < up_at]
                # One poll a second: a second's sample each (not whole seconds by the clock, which
                # a poll's jitter around a boundary would count twice and skip once).
                edges = [down_at, *kept, up_at]
                gap = max(b - a for a, b in zip(edges, edges[1:], strict=False))
                print(
                    f"{name}: {len(kept)} polls kept over the {up_at - down_at:.1f} s outage, longest gap {gap:.1f} s"
                )
                assert len(kept) >= 0.9 * (up_at - down_at), (name, len(kept), up_at - down_at, gap)
                assert len(kept) == len(set(kept)), f"{name}: a poll stored twice"
    finally:
        receiver.close()
        if stoppable_postgres.proc is None:
            stoppable_postgres.start()


def test_serve_started_before_its_store_waits_for_it_saying_so_once_then_serves(
    tmp_path, stoppable_postgres: PostgresSandbox, monitor_dsn
):
    """Not a 144-line traceback and an exit (issue 34): one line that it waits, and it starts
    once the store is there."""
    url = stoppable_postgres.create_database(f"poolscope_serve_late_{next(_databases)}")
    port = free_port()
    config = tmp_path / "poolscope.toml"
    write_config(config, url, monitor_dsn, tmp_path / "spool", listen_port=port)
    base = f"http://127.0.0.1:{port}"
    stoppable_postgres.stop()
    try:
        with processes() as started:
            serve = Proc("serve", ["--config", str(config), "serve"], tmp_path)
            started.append(serve)
            wait_for(
                lambda: "waiting for it" in serve.log.read_text(errors="replace"),
                60,
                lambda _: f"serve never said it waits for its store\n{serve.tail()}",
            )
            # A few tries later (0.5, 1, 2 s apart) it is still there, and has said so once.
            time.sleep(4)
            assert serve.popen.poll() is None, serve.tail()
            log_text = serve.log.read_text(errors="replace")
            assert log_text.count("waiting for it") == 1 and "Traceback" not in log_text, serve.tail()
            stoppable_postgres.start()
            wait_for(lambda: _status(f"{base}/readyz") == 200, 90, lambda _: f"never ready\n{serve.tail()}")
            log_text = serve.log.read_text(errors="replace")
            assert log_text.count("waiting for it") == 1 and "store reachable after" in log_text, serve.tail()
    finally:
        if stoppable_postgres.proc is None:
            stoppable_postgres.start()


def _fired(body: dict, rule: str) -> bool:  # type: ignore[type-arg]
    return any(
        a.get("labels", {}).get("alertname") == rule and a.get("status") == "firing" for a in body["alerts"]
    )


def test_sqlite_disk_full_is_said_by_the_api_and_metrics_within_5_s(tmp_path, monitor_dsn):
    with small_disk(tmp_path / "disk", size_mb=64) as disk:
        url = f"sqlite+aiosqlite:///{disk / 'store.db'}"
        port = free_port()
        config = tmp_path / "poolscope.toml"
        write_config(config, url, monitor_dsn, tmp_path / "spool", listen_port=port)
        with serving(tmp_path, config, port, url) as base:
            filler = fill(disk)
            full_at = time.monotonic()
            store = wait_for(
                lambda: _json(f"{base}/api/store")[1],
                5,
                "the API did not say the store fails within 5 s of the disk filling",
                every_s=0.1,
                until=lambda body: body["status"] == "failing",
            )
            said_in = time.monotonic() - full_at
            assert "full" in (store["error"] or ""), store
            metrics = wait_for(
                lambda: httpx.get(f"{base}/metrics", timeout=10).text,
                max(0.5, 5 - said_in),
                lambda text: (
                    f"/metrics did not say the store fails within 5 s: {[ln for ln in text.splitlines() if 'store' in ln]}"
                ),
                every_s=0.1,
                until=lambda text: "poolscope_store_up 0" in text,
            )
            assert "poolscope_store_buffered_samples" in metrics
            # Once the last numbers are two intervals old, no target is said up from them.
            time.sleep(2.5)
            stale = httpx.get(f"{base}/metrics", timeout=10).text
            assert "poolscope_target_up{" not in stale, stale
            assert "poolscope_target_data_age_seconds{" in stale
            ready = _json(f"{base}/readyz")
            assert ready[0] == 503 and ready[1]["store"].startswith("failing: "), ready
            filler.unlink()
            wait_for(lambda: _json(f"{base}/api/store")[1]["status"] == "ok", 30, "the store never came back")
            wait_for(
                lambda: "poolscope_target_up{" in httpx.get(f"{base}/metrics", timeout=10).text,
                30,
                "targets never said up again",
            )


@pytest.fixture(autouse=True)
def _restarted(request):  # type: ignore[no-untyped-def]
    yield
    if "stoppable_postgres" in request.fixturenames:
        server = request.getfixturevalue("stoppable_postgres")
        if server.proc is None:
            server.start()
