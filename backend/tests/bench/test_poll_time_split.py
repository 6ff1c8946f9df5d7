"""The split `make bench` prints for a poll's time: the server's own clock, and the poller's wait for a core."""

from __future__ import annotations

import time

from poolscope.poller.collectors.base import Collector
from poolscope.schemas import ServerInfo
from poolscope_bench.common import BenchConfig, BenchContext
from poolscope_bench.polltime import _ServerClock
from poolscope_bench.stats import thread_run_delay_ms
from tests.poller.helpers import poller_for


class _Sleep(Collector):
    """A stand-in every-second source whose server time is known: 0.2 s."""

    name = "sleep"

    def sql(self, server: ServerInfo) -> str:
        return "DO SLEEP(0.2)"


async def test_server_clock_times_the_every_second_statements_by_the_servers_clock(
    mariadb, monitor_dsn, tmp_path
):
    poller = poller_for(monitor_dsn)
    await poller.poll_once()
    poller.collectors = [_Sleep()]
    clock = _ServerClock("clock", BenchContext(BenchConfig(), mariadb, tmp_path), mariadb.extra_port, poller)
    await clock.open()
    try:
        await clock.measure()
    finally:
        clock.close()
        await poller.close()
    report = clock.report()
    assert report["statements"] == 1 and report["failed"] == 0
    assert 195 <= report["p50"] < 2000, report


def test_run_delay_is_read_for_this_thread_and_never_goes_back():
    first = thread_run_delay_ms()
    assert first is not None and first >= 0
    deadline = time.monotonic() + 0.05
    while time.monotonic() < deadline:  # bounded busy loop: give the scheduler a chance to run others
        pass
    second = thread_run_delay_ms()
    assert second is not None and second >= first
