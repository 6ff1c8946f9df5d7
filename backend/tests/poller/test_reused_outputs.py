"""What a poll makes again unchanged every second is reused: samples of unchanged series, standing statuses."""

from __future__ import annotations

import math

from poolscope.poller.collectors.base import sample
from poolscope.poller.collectors.thread_pool_stats import ThreadPoolStats
from poolscope.poller.target_poller import Snapshot, copy_with
from poolscope.schemas import CollectorStatus, Sample, ServerInfo, TargetInfo, TargetSummary

from .helpers import poller_for


def _value(made: Sample) -> float:
    assert made.value is not None
    return made.value


def test_an_unchanged_series_reuses_its_sample_and_a_changed_one_gets_a_new_one() -> None:
    first = sample("tp_group_stalls_per_s", 0.5, group="1")
    assert sample("tp_group_stalls_per_s", 0.5, group="1") is first
    assert first == Sample(metric="tp_group_stalls_per_s", labels={"group": "1"}, value=0.5)
    changed = sample("tp_group_stalls_per_s", 0.75, group="1")
    assert changed.value == 0.75 and first.value == 0.5, "a made sample never changes"
    assert sample("tp_group_stalls_per_s", 0.5, group="2").labels == {"group": "2"}
    assert sample("qps", None) is sample("qps", None)
    # What a fresh Sample would hold, exactly: the sign of a zero, NaN, an int made a float.
    assert math.copysign(1.0, _value(sample("qps", 0.0))) == 1.0
    assert math.copysign(1.0, _value(sample("qps", -0.0))) == -1.0
    assert math.isnan(_value(sample("qps", math.nan)))
    whole = sample("qps", 3)  # type: ignore[arg-type]
    assert whole.value == 3.0 and isinstance(whole.value, float)


async def test_standing_statuses_are_reused_while_unchanged(monitor_dsn: str) -> None:
    poller = poller_for(monitor_dsn)
    try:
        first = {c.name: c for c in (await poller.poll_once()).info.collectors}
        second = {c.name: c for c in (await poller.poll_once()).info.collectors}
    finally:
        await poller.close()
    skipped = [name for name, status in second.items() if status.skipped]
    assert skipped, "the sandbox's MariaDB pool skips the other flavors' sources"
    for name in skipped:
        assert second[name] is first[name]
        assert second[name] == CollectorStatus(name=name, ok=False, skipped=second[name].skipped)
    ran = [name for name, status in second.items() if status.duration_ms is not None]
    assert ran and all(second[name] is not first[name] for name in ran), "timed per poll"


async def test_skip_reasons_and_the_info_snapshots_follow_the_server_as_it_changes(monitor_dsn: str) -> None:
    poller = poller_for(monitor_dsn)
    try:
        first = (await poller.poll_once()).info
        second = (await poller.poll_once()).info
        server = poller.connection.server
        assert server is not None and first.server is not None
        # Unchanged: the same snapshots, equal to what a copy made now would be, and not the
        # connection's own object (it keeps changing it).
        assert second.server is first.server and second.connection is first.connection
        assert second.server == server.model_copy() and second.server is not server
        assert second.connection == poller.connection.info

        # Changed in place, as learn_server changes it: the next poll's snapshot and skip reasons
        # show it, and the earlier snapshots stay as they were.
        server.edition = f"{server.edition} (changed)"
        server.pool_tables = [t for t in server.pool_tables if t != "THREAD_POOL_STATS"]
        third = (await poller.poll_once()).info
        assert third.server is not second.server and third.server == server.model_copy()
        assert second.server.edition != server.edition
        stats = {c.name: c for c in third.collectors}["thread_pool_stats"]
        assert stats.skipped == ThreadPoolStats().applies(server) and stats.skipped is not None
        assert "THREAD_POOL_STATS" in second.server.pool_tables

        # Back as it was: the source runs again.
        server.pool_tables = [*server.pool_tables, "THREAD_POOL_STATS"]
        fourth = (await poller.poll_once()).info
        assert {c.name: c for c in fourth.collectors}["thread_pool_stats"].duration_ms is not None
    finally:
        await poller.close()


def test_a_snapshot_is_made_again_for_another_object_with_the_same_fields() -> None:
    made: list[ServerInfo] = []

    def copy(server: ServerInfo) -> ServerInfo:
        made.append(server.model_copy())
        return made[-1]

    snapshot = Snapshot(copy)
    one = ServerInfo(flavor="mariadb", version="10.11", thread_handling="pool-of-threads", pool_enabled=True)
    other = one.model_copy()
    assert snapshot(one) is snapshot(one) and len(made) == 1
    assert snapshot(other) is made[1] and len(made) == 2
    other.version = "11.4"
    assert snapshot(other).version == "11.4" and made[1].version == "10.11"


def test_copy_with_is_model_copy_with_an_update() -> None:
    info = TargetInfo(name="t", tags={"role": "primary"}, poll_interval_s=1.0, reason="starting")
    update = {"status": "up", "reason": None, "last_poll_at": 12.5, "summary": TargetSummary(qps=1.0)}
    copied, expected = copy_with(info, update), info.model_copy(update=update)
    assert type(copied) is TargetInfo and copied == expected
    assert copied.__dict__ == expected.__dict__ and copied.model_dump_json() == expected.model_dump_json()
    assert copied.model_fields_set == expected.model_fields_set
    assert (copied.__pydantic_extra__, copied.__pydantic_private__) == (None, None)
    copied.retry_in_s = 2.0  # set on the copy only, as the scheduler does
    assert info.retry_in_s is None and info.status == "starting" and info.reason == "starting"
