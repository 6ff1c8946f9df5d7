"""Held, stalled and queued seconds per digest, and their bounds."""

from poolscope.analysis.held_time import MAX_DIGESTS, OTHER, HeldTime, rank
from poolscope.schemas import GroupHolders, Holder, QueuedConnection


def _holder(cid: int, sql_digest: str, time_s: float = 5.0) -> Holder:
    return Holder(
        connection_id=cid,
        user="app",
        host="10.0.0.9:4567",
        command="Query",
        time_s=time_s,
        digest=sql_digest,
        digest_text=f"SHAPE {sql_digest}",
    )


def _totals(samples):
    """What the store's totals give for one poll's samples: (metric, labels, value, 1)."""
    return [(s.metric, s.labels, s.value, 1) for s in samples]


def test_a_stalled_group_counts_held_and_stalled_seconds_and_one_episode():
    held = HeldTime(1.0)
    stalled = GroupHolders(
        group_id=1, stalled=True, queue_length=3, holders=[_holder(7, "a"), _holder(8, "a")]
    )
    queue = [
        QueuedConnection(
            group_id=1, position=0, priority="low", connection_id=9, queueing_time_ms=900, last_sql="SELECT 1"
        )
    ]
    polls = [held.count(100.0 + i, [stalled], queue) for i in range(3)]
    sums = [row for samples in polls for row in _totals(samples)]
    (a, queued) = rank(sums, [], "stalled", 10)
    assert (a.digest, a.held_s, a.stalled_s, a.stall_episodes, a.groups) == ("a", 6.0, 6.0, 1, ["1"])
    assert a.clients == ["app@10.0.0.9"] and a.calls == 2  # two executions, seen on three polls
    assert queued.text == "SELECT ?" and queued.queued_s == 3.0 and queued.stalled_s == 0


def test_a_new_stall_is_a_new_episode_and_a_gap_is_not_held_time():
    held = HeldTime(1.0)
    stalled = GroupHolders(group_id=0, stalled=True, queue_length=1, holders=[_holder(7, "a")])
    calm = GroupHolders(group_id=0, stalled=False, queue_length=1, holders=[_holder(7, "a")])
    samples = held.count(1.0, [stalled], []) + held.count(2.0, [calm], []) + held.count(60.0, [stalled], [])
    (a,) = rank(_totals(samples), [], "stalled", 10)
    assert a.stall_episodes == 2
    assert a.held_s == 1.0 + 1.0 + 2.0  # the 58 s gap counts as two intervals at most


def test_digests_per_poll_are_bounded_the_rest_count_as_other():
    held = HeldTime(1.0)
    many = GroupHolders(
        group_id=0,
        stalled=True,
        queue_length=1,
        holders=[_holder(i, f"d{i}", time_s=float(i)) for i in range(MAX_DIGESTS + 5)],
    )
    samples = held.count(1.0, [many], [])
    digests = {s.labels["digest"] for s in samples}
    assert len(digests) == MAX_DIGESTS + 1 and OTHER in digests
