"""The flight recorder's bounds: its span, one entry a second, its size in bytes, per-group caps."""

from poolscope.analysis.flight_recorder import MAX_HOLDERS, MAX_QUEUED, FlightRecorder
from poolscope.schemas import Blocker, GroupHolders, Holder, QueuedConnection


def _holders(n: int, group_id: int | None = 1, stalled: bool = True) -> GroupHolders:
    return GroupHolders(
        group_id=group_id,
        stalled=stalled,
        queue_length=3,
        holders=[
            Holder(
                connection_id=10 + i,
                user="app",
                host="10.0.0.9:4567",
                command="Query",
                time_s=float(i),
                info=f"SELECT * FROM t WHERE secret = 'literal-{i}'",
                digest="d1",
                digest_text="SELECT * FROM t WHERE secret = ?",
                waits_on="row lock" if i == 0 else None,
                blockers=[Blocker(kind="row_lock", connection_id=99)] if i == 0 else [],
            )
            for i in range(n)
        ],
    )


def _queued(n: int, group_id: int = 1) -> list[QueuedConnection]:
    return [
        QueuedConnection(
            group_id=group_id,
            position=i,
            priority="low",
            connection_id=100 + i,
            queueing_time_ms=10.0 * i,
            last_sql=f"UPDATE t SET v = {i}",
        )
        for i in range(n)
    ]


def test_it_keeps_the_last_span_one_entry_a_second_idle_seconds_as_timestamps():
    recorder = FlightRecorder(span_s=120, resolution_s=1.0)
    for i in range(300):
        recorder.record(1000.0 + i * 0.5, [], [])  # two polls a second
    entries = recorder.entries()
    assert len(entries) == 120 and (entries[0].ts, entries[-1].ts) == (1030.0, 1149.0)
    assert {round(b.ts - a.ts, 3) for a, b in zip(entries[:-1], entries[1:], strict=True)} == {1.0}
    assert all(not e.groups for e in entries) and recorder.bytes == 0


def test_a_poll_that_first_sees_pressure_replaces_its_seconds_idle_entry():
    recorder = FlightRecorder()
    recorder.record(1000.0, [], [])
    recorder.record(1000.5, [_holders(2)], _queued(1))
    recorder.record(1000.7, [], [])  # the second is recorded, with its pressure
    (entry,) = recorder.entries()
    assert entry.ts == 1000.5 and entry.groups[0].group == 1


def test_an_entry_names_holders_their_blockers_and_the_queue_by_shape_never_by_text():
    recorder = FlightRecorder()
    recorder.record(1000.0, [_holders(MAX_HOLDERS + 5)], _queued(MAX_QUEUED + 3))
    (entry,) = recorder.entries()
    (group,) = entry.groups
    assert group.stalled and group.queue_length == 3
    assert len(group.holders) == MAX_HOLDERS and group.holders_left_out == 5
    assert group.holders[0].time_s == MAX_HOLDERS + 4  # longest running first
    assert len(group.queued) == MAX_QUEUED and group.queued_left_out == 3
    assert (
        group.queued[0].waited_ms == 10.0 * (MAX_QUEUED + 2)
        and group.queued[0].statement == "UPDATE t SET v = ?"
    )
    assert "literal" not in entry.model_dump_json()
    recorder.record(1001.0, [_holders(1)], [])
    blocked = recorder.entries()[-1].groups[0].holders[0]
    assert blocked.waits_on == "row lock" and blocked.blocked_by == [99]


def test_its_size_is_bounded_in_bytes_the_oldest_seconds_going_first():
    recorder = FlightRecorder(max_bytes=20_000)
    for i in range(120):
        recorder.record(1000.0 + i, [_holders(8), _holders(8, group_id=2)], _queued(15))
    assert 0 < recorder.bytes <= 20_000
    entries = recorder.entries()
    assert entries[-1].ts == 1119.0 and 1 < len(entries) < 120
    assert entries[0].ts == 1120.0 - len(entries)  # contiguous: only the oldest went
    recorder.forget()
    assert recorder.entries() == [] and recorder.bytes == 0


def test_a_whole_pool_view_is_one_group_without_an_id():
    recorder = FlightRecorder()
    recorder.record(1000.0, [_holders(1, group_id=None, stalled=False)], [])
    (group,) = recorder.entries()[0].groups
    assert group.group is None and group.holders[0].statement == "SELECT * FROM t WHERE secret = ?"
