"""`poolscope serve` with workers = 2: a supervisor with one API process and two pollers, every
target polled exactly once per interval, a killed poller forked again, and SIGTERM stops them all."""

from __future__ import annotations

import os
import signal
import time

from poolscope_dev.sandbox import free_port
from poolscope_dev.supervisor import pid_alive
from tests.fleet.processes import (
    Proc,
    answers,
    children_of,
    lease_owners,
    poll_times,
    processes,
    split_as_hashed,
)
from tests.waiting import wait_for

TARGETS = [f"db{i}" for i in range(4)]


def three_children(pid: int, without: int | None = None) -> set[int] | None:
    children = children_of(pid)
    return children if len(children) == 3 and without not in children else None


def write_config(path, store_url: str, dsn: str, **extra: object) -> None:
    lines = [f'store_url = "{store_url}"', "poll_interval_s = 1.0"]
    lines += [
        f"{key} = {value!r}" if isinstance(value, str) else f"{key} = {value}" for key, value in extra.items()
    ]
    for name in TARGETS:
        lines += ["[[targets]]", f'name = "{name}"', f'dsn = "{dsn}"', "extra_port = 0"]
    path.write_text("\n".join(lines) + "\n")


def test_serve_forks_an_api_and_two_pollers_that_poll_each_target_once_per_interval(tmp_path, monitor_dsn):
    store_url = f"sqlite+aiosqlite:///{tmp_path / 'store.db'}"
    port = free_port()
    config = tmp_path / "poolscope.toml"
    write_config(config, store_url, monitor_dsn, workers=2, listen_port=port)
    with processes() as started:
        serve = Proc("serve", ["--config", str(config), "serve"], tmp_path)
        started.append(serve)
        try:
            children = wait_for(lambda: three_children(serve.pid), 30, "3 children")
            wait_for(lambda: answers(f"http://127.0.0.1:{port}/api/health"), 30, "the API")
            # Both pollers are members and every target is leased to the one the hash gives it
            # (the first rebalance is over). Which one that is depends on the pollers' pids: all
            # of a few targets may go to one of them (with 4, one run in 16 did), so the split is
            # not asserted to be even.
            wait_for(
                lambda: split_as_hashed(store_url, TARGETS), 30, "the targets leased as the hash splits them"
            )
            owners_before = lease_owners(store_url)
            since = time.time() + 0.5
            # Six intervals' polls of every target (bounded: a poller that skips would never get there).
            window = wait_for(
                lambda: poll_times(store_url, since=since),
                20,
                lambda got: f"not six polls of each target: {got}",
                until=lambda got: all(len(got.get(name, [])) >= 6 for name in TARGETS),
            )
            assert lease_owners(store_url) == owners_before  # nothing moved meanwhile
            for name in TARGETS:
                times = window.get(name, [])
                gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
                # Once per interval: never two polls in one interval, none skipped.
                assert 4 <= len(times) <= 7, (name, times)
                assert min(gaps) >= 0.5 and max(gaps) <= 1.6, (name, gaps)

            # A poller killed outright is forked again (a new pid beside the other two).
            pollers = children - {min(children)}
            victim = max(pollers)
            os.kill(victim, signal.SIGKILL)
            children = wait_for(lambda: three_children(serve.pid, victim), 20, "the poller forked again")

            serve.popen.send_signal(signal.SIGTERM)
            assert serve.popen.wait(timeout=30) == 0
            assert not [pid for pid in children if pid_alive(pid)], "a child outlived the supervisor"
        except BaseException:
            print(serve.tail())
            raise
