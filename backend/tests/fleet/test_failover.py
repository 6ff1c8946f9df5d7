"""The fleet on PostgreSQL, as separate processes: two `poolscope poller`s and one `poolscope api`.
One poller is killed with SIGKILL: its targets are polled again by the other within 10 s, no target
is polled by both at once, no alert fires a second time (the survivor continues it), and the API's
live stream goes on with the survivor's polls."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request

from poolscope_dev.sandbox import free_port
from tests.fleet.processes import Proc, answers, lease_owners, poll_times, processes, query
from tests.waiting import wait_for

TARGETS = [f"db{i}" for i in range(8)]
INTERVAL_S = 1.0
MOVE_WITHIN_S = 10.0


def write_config(path, store_url: str, dsn: str, port: int) -> None:
    lines = [f'store_url = "{store_url}"', f"poll_interval_s = {INTERVAL_S}", f"listen_port = {port}"]
    for name in TARGETS:
        # extra_port = 0: the sandbox's extra port takes one connection, and all targets share it.
        lines += ["[[targets]]", f'name = "{name}"', f'dsn = "{dsn}"', "extra_port = 0"]
    # Every target is "near max_connections" at once: an alert that fires on the first poll and
    # stays firing, so a second row for it would be a second firing.
    lines += ["[alerts.thresholds]", "connections_ratio = 0.001", "connections_for_s = 0"]
    path.write_text("\n".join(lines) + "\n")


def fired(url: str) -> dict[str, int]:
    rows = query(
        url, "SELECT target, count(*) FROM alert_alerts WHERE rule = 'connections_near_max' GROUP BY target"
    )
    return {target: int(count) for target, count in rows}


def live_polls(url: str, count: int, within_s: float = 15.0) -> list[float]:
    """The poll timestamps of the first `count` poll events on the SSE stream at url."""
    seen: list[float] = []
    deadline = time.monotonic() + within_s
    with urllib.request.urlopen(url, timeout=within_s) as stream:
        while len(seen) < count and time.monotonic() < deadline:
            line = stream.readline().decode()
            if line.startswith("data: "):
                seen.append(float(json.loads(line[6:])["ts"]))
    return seen


def test_a_killed_pollers_targets_move_to_the_survivor_and_nothing_runs_twice(
    tmp_path, postgres, monitor_dsn
):
    store_url = postgres.create_database("poolscope_failover")
    port = free_port()
    config = tmp_path / "poolscope.toml"
    write_config(config, store_url, monitor_dsn, port)
    subprocess.run(
        [sys.executable, "-m", "poolscope.cli", "--config", str(config), "migrate"],
        check=True,
        capture_output=True,
        timeout=120,
    )
    with processes() as started:
        pollers = {
            node: Proc(node, ["--config", str(config), "poller"], tmp_path, {"POOLSCOPE_NODE_ID": node})
            for node in ("poller-a", "poller-b")
        }
        started += pollers.values()
        api = Proc("api", ["--config", str(config), "api"], tmp_path)
        started.append(api)
        try:
            wait_for(lambda: answers(f"http://127.0.0.1:{port}/api/health"), 60, "the API process")
            wait_for(
                lambda: (
                    set(lease_owners(store_url).values()) == set(pollers)
                    and set(TARGETS) <= set(lease_owners(store_url))
                ),
                60,
                "the targets split over both pollers",
            )
            wait_for(lambda: set(fired(store_url)) == set(TARGETS), 60, "an alert firing on every target")
            owners = lease_owners(store_url)
            victim = "poller-a"
            moved = sorted(t for t in TARGETS if owners[t] == victim)
            assert moved and len(moved) < len(TARGETS), owners

            killed_at = time.time()
            os.kill(pollers[victim].pid, signal.SIGKILL)
            pollers[victim].popen.wait(timeout=10)

            def resumed() -> dict[str, float] | None:
                after = poll_times(store_url, since=killed_at)
                return {t: after[t][0] for t in moved} if all(t in after for t in moved) else None

            first_polls = wait_for(
                resumed, 3 * MOVE_WITHIN_S, "the killed poller's targets to be polled again"
            )
            delays = {t: round(ts - killed_at, 2) for t, ts in first_polls.items()}
            print(f"polled again after (s): {delays}")
            assert max(delays.values()) <= MOVE_WITHIN_S, delays
            assert {t: o for t, o in lease_owners(store_url).items() if t in moved} == dict.fromkeys(
                moved, "poller-b"
            )

            # The survivor evaluates the moved targets' alerts a few times (once a poll).
            wait_for(
                lambda: poll_times(store_url, since=max(first_polls.values())),
                20,
                "the survivor stopped polling the moved targets",
                until=lambda got: all(len(got.get(t, [])) >= 4 for t in moved),
            )
            # The alert that was firing when its poller died is continued, not fired again.
            assert fired(store_url) == dict.fromkeys(TARGETS, 1)
            # Polled by one poller at a time: two polls closer than half an interval happen at most
            # once per target (a hand-over between an old owner's last poll and the new one's first);
            # two pollers polling together would make such a pair every interval.
            for target, times in poll_times(store_url).items():
                close = [b - a for a, b in zip(times, times[1:], strict=False) if b - a < INTERVAL_S / 2]
                assert len(close) <= 1, (target, close)
            # The UI's live feed keeps flowing: the API process streams the survivor's polls of a
            # moved target (it reads them from the store, whichever poller wrote them).
            events = live_polls(f"http://127.0.0.1:{port}/api/live?events=poll&target={moved[0]}", 3)
            assert len(events) == 3 and all(ts > killed_at + delays[moved[0]] - 1 for ts in events), events
            assert events == sorted(events) and len(set(events)) == 3
        except BaseException:
            for proc in started:
                print(proc.tail())
            raise
