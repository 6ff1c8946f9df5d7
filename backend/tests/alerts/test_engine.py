"""The alert lifecycle on a real (SQLite) store: for-duration, hysteresis, flap damping, dedup,
silences, acknowledgement, restore after a restart, and a down target that neither fires nor resolves."""

from __future__ import annotations

import asyncio
import time

import pytest
from sqlalchemy.ext.asyncio import create_async_engine

from poolscope.alerts.engine import AlertEngine
from poolscope.alerts.repository import AlertRepository
from poolscope.alerts.settings import AlertSettings
from poolscope.schemas import AlertEvent, GroupHolders, Holder
from poolscope.store.live import LiveHub
from poolscope.store.migrate import upgrade_to_head
from tests.alerts.states import calm, group, poll, stalled, state


class Recorder:
    """Stands in for the webhook dispatcher's interface: records what would be sent."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []

    def notify(self, alert) -> None:  # noqa: ANN001
        self.sent.append((alert.rule, alert.status))


@pytest.fixture
async def make_engine(tmp_path):
    url = f"sqlite+aiosqlite:///{tmp_path / 'alerts.db'}"
    await asyncio.to_thread(upgrade_to_head, url)
    db = create_async_engine(url)
    made = []

    async def make(shared_silences: bool = False, restore: bool = True, **settings):
        hub = LiveHub()
        engine = AlertEngine(
            AlertSettings(**settings), hub, AlertRepository(db), shared_silences=shared_silences
        )
        engine.dispatcher = Recorder()  # type: ignore[assignment]
        await engine.start(restore=restore)
        made.append(engine)
        return engine

    yield make
    for engine in made:
        await engine.stop()
    await db.dispose()


def statuses(engine: AlertEngine) -> dict[tuple[str, str | None], str]:
    return {(a.rule, a.group): a.status for a in engine.current()}


async def test_stall_fires_on_the_poll_that_shows_it_and_resolves_after_the_hysteresis(make_engine):
    engine = await make_engine(resolve_after_s=5)
    await engine.evaluate(calm(100))
    assert engine.current() == []
    await engine.evaluate(stalled(101))
    (alert,) = engine.current()
    assert (alert.rule, alert.status, alert.group, alert.poll_ts) == ("group_stalled", "firing", "0", 101)
    assert alert.id is not None
    await engine.evaluate(calm(102))
    await engine.evaluate(calm(105.9))
    assert statuses(engine) == {("group_stalled", "0"): "firing"}  # one clear poll resolves nothing
    await engine.evaluate(calm(106))
    assert engine.current() == []
    (stored,) = await engine.repo.history()
    assert stored.status == "resolved" and stored.resolved_at == 106
    assert engine.dispatcher.sent == [("group_stalled", "firing"), ("group_stalled", "resolved")]


async def test_for_duration_keeps_a_short_spike_pending(make_engine):
    engine = await make_engine(thresholds={"queue_length_for_s": 10})
    long_queue = lambda ts: poll(ts, state(ts, [group(0, queue_length=50)]))  # noqa: E731
    await engine.evaluate(long_queue(100))
    assert statuses(engine) == {("queue_length_high", "0"): "pending"}
    await engine.evaluate(calm(105))  # gone before the for-duration: never fires
    assert engine.current() == [] and engine.dispatcher.sent == []
    for ts in (110, 115, 120):
        await engine.evaluate(long_queue(ts))
    assert statuses(engine) == {("queue_length_high", "0"): "firing"}
    # Hysteresis: 15 is under the firing level (20) but over the resolve level (10): still firing.
    for ts in range(121, 140):
        await engine.evaluate(poll(ts, state(ts, [group(0, queue_length=15)])))
    assert statuses(engine) == {("queue_length_high", "0"): "firing"}
    assert engine.dispatcher.sent == [("queue_length_high", "firing")]


async def test_one_alert_per_target_and_group(make_engine):
    engine = await make_engine()
    for ts in (100, 101, 102):
        await engine.evaluate(
            poll(
                ts,
                state(
                    ts,
                    [
                        group(0, stall_reason="no_dequeue", queue_length=3),
                        group(1, stall_reason="stalls_counter", queue_length=3),
                    ],
                ),
            )
        )
    assert statuses(engine) == {("group_stalled", "0"): "firing", ("group_stalled", "1"): "firing"}
    assert len(await engine.repo.history()) == 2


async def test_flapping_alert_is_damped(make_engine):
    engine = await make_engine(
        resolve_after_s=1, flap_max_fires=3, flap_window_s=600, flap_resolve_after_s=60
    )
    ts = 100.0
    for _ in range(3):  # fire, resolve, fire, resolve, fire
        await engine.evaluate(stalled(ts))
        await engine.evaluate(calm(ts + 2))
        ts += 10
    sent_before = list(engine.dispatcher.sent)
    (alert,) = engine.current()  # the third fire made it flapping: it did not resolve after 1 s
    assert alert.flapping and alert.status == "firing"
    for step in range(1, 30):
        await engine.evaluate(stalled(ts + step * 2) if step % 3 == 0 else calm(ts + step * 2))
    assert engine.dispatcher.sent == sent_before  # nobody paged again while it flapped
    await engine.evaluate(calm(ts + 200))
    assert engine.current() == []


async def test_silence_mutes_notifications_but_not_the_alert(make_engine):
    engine = await make_engine(resolve_after_s=0)
    silence = await engine.repo.add_silence("db1", "group_stalled", None, 10**10, "op", "maintenance")
    await engine.add_silence(silence)
    now = time.time()  # silences are wall-clock ranges
    await engine.evaluate(stalled(now))
    (alert,) = engine.current()
    assert alert.status == "firing" and alert.silenced_by == silence.id
    await engine.evaluate(calm(now + 1))
    assert engine.dispatcher.sent == []
    await engine.expire_silence(silence.id)
    await engine.evaluate(stalled(time.time() + 2))
    assert engine.current()[0].silenced_by is None
    assert engine.dispatcher.sent == [("group_stalled", "firing")]


async def test_a_poller_engine_follows_silences_another_process_stored(make_engine, monkeypatch):
    """In a fleet the API node stores a silence; the poller's engine picks it up, and its end."""
    monkeypatch.setattr("poolscope.alerts.engine.SILENCE_REFRESH_S", 0.0)
    engine = await make_engine(shared_silences=True, resolve_after_s=0)
    api_repo = AlertRepository(engine.repo.engine)  # what an API process holds
    silence = await api_repo.add_silence("db1", "group_stalled", None, 10**10, "op", "maintenance")
    await engine.evaluate(stalled(time.time()))
    (alert,) = engine.current()
    assert alert.silenced_by == silence.id and engine.dispatcher.sent == []
    await api_repo.expire_silence(silence.id, time.time())
    await engine.evaluate(stalled(time.time() + 1))
    assert engine.current()[0].silenced_by is None


async def test_an_engine_without_shared_silences_keeps_its_own(make_engine, monkeypatch):
    monkeypatch.setattr("poolscope.alerts.engine.SILENCE_REFRESH_S", 0.0)
    engine = await make_engine(resolve_after_s=0)
    await AlertRepository(engine.repo.engine).add_silence("db1", None, None, 10**10, "op", "")
    await engine.evaluate(stalled(time.time()))
    assert engine.current()[0].silenced_by is None  # one process: silences come through the engine


async def test_a_target_taken_over_continues_the_alert_its_previous_poller_left_firing(make_engine):
    """The previous poller judged its last poll and left the alert firing in the store: the new
    one continues it (no second firing row, no second notification) and resolves it."""
    before = await make_engine(resolve_after_s=0)
    await before.evaluate(stalled(100))
    await before.hand_over({"db1"})
    assert before.current() == []
    after = await make_engine(restore=False, resolve_after_s=0)  # a fleet poller's
    assert after.current() == []
    await after.take_over({"db1"})
    assert [a.status for a in after.current()] == ["firing"]
    await after.evaluate(stalled(101))
    await after.evaluate(calm(102))
    (stored,) = await after.repo.history()
    assert stored.status == "resolved" and stored.resolved_at == 102
    assert before.dispatcher.sent == [("group_stalled", "firing")]
    assert after.dispatcher.sent == [("group_stalled", "resolved")]


async def test_an_ack_stored_by_another_process_survives_the_engines_next_save(make_engine):
    engine = await make_engine(resolve_after_s=0)
    await engine.evaluate(stalled(100))
    (alert,) = engine.current()
    stored = await engine.repo.get(alert.id)
    stored.acked_by, stored.acked_at = "op", 101.0
    await AlertRepository(engine.repo.engine).save(stored)  # an API node acknowledges
    await engine.evaluate(calm(102))  # the engine resolves and saves its copy (no ack in it)
    after = await engine.repo.get(alert.id)
    assert after.status == "resolved" and after.acked_by == "op" and after.acked_at == 101.0


async def test_a_poller_engine_learns_an_ack_another_process_took_and_says_it_from_then_on(
    make_engine, monkeypatch
):
    """In a fleet the API process takes the ack (and announces it); the poller that judges the
    alert must not go on announcing it unacknowledged (the UI showed Acknowledge again)."""
    monkeypatch.setattr("poolscope.alerts.engine.SILENCE_REFRESH_S", 0.0)
    engine = await make_engine(shared_silences=True, resolve_after_s=0)
    now = time.time()
    await engine.evaluate(stalled(now))
    (alert,) = engine.current()
    stored = await engine.repo.get(alert.id)
    stored.acked_by, stored.acked_at = "op", now + 0.5
    await AlertRepository(engine.repo.engine).save(stored)  # an API process acknowledges
    async with engine.hub.subscribe() as events:
        await engine.evaluate(stalled(now + 1))
        assert [(a.acked_by, a.acked_at) for a in engine.current()] == [("op", now + 0.5)]
        assert events.empty()  # taken in silently: the API process announced it
        await engine.evaluate(calm(now + 2))
        resolved = await events.get()
    assert isinstance(resolved, AlertEvent) and resolved.transition == "resolved"
    assert resolved.alert.acked_by == "op"


async def test_acknowledge_and_alert_events_on_the_hub(make_engine):
    engine = await make_engine()
    async with engine.hub.subscribe() as queue:
        await engine.evaluate(stalled(100))
        alert = engine.current()[0]
        acked = await engine.acknowledge(alert.id, "op")
        assert acked.acked_by == "op"
        events = [queue.get_nowait() for _ in range(queue.qsize())]
    transitions = [e.transition for e in events if isinstance(e, AlertEvent)]
    assert transitions == ["firing", "acknowledged"]
    assert (await engine.repo.get(alert.id)).acked_by == "op"
    assert await engine.acknowledge(999999, "op") is None


async def test_a_down_target_fires_target_down_and_keeps_state_alerts_as_they_were(make_engine):
    engine = await make_engine(resolve_after_s=1, thresholds={"target_down_for_s": 10})
    await engine.evaluate(stalled(100))
    for ts in (101, 105, 111):
        await engine.evaluate(poll(ts, None))
    assert statuses(engine) == {("group_stalled", "0"): "firing", ("target_down", None): "firing"}
    await engine.evaluate(calm(113))
    await engine.evaluate(calm(115))
    assert engine.current() == []


async def test_firing_alerts_survive_a_restart(make_engine):
    first = await make_engine(resolve_after_s=5)
    await first.evaluate(stalled(100))
    await first.stop()
    second = await make_engine(resolve_after_s=5)
    (restored,) = second.current()
    assert restored.rule == "group_stalled" and restored.status == "firing"
    # Nobody judged the 100 s between, and the first poll after a restart cannot show a stall (the
    # verdict needs a poll before it): it resolves after resolve_after_s of polls here, not at once.
    await second.evaluate(calm(200))
    await second.evaluate(calm(204.9))
    assert [a.status for a in second.current()] == ["firing"]
    await second.evaluate(calm(205))
    assert second.current() == []
    stored = await second.repo.get(restored.id)
    assert stored.status == "resolved" and stored.resolved_at == 205


async def test_a_failing_rule_does_not_resolve_its_alerts_or_stop_the_others(make_engine):
    engine = await make_engine(resolve_after_s=0)
    await engine.evaluate(stalled(100))

    class Broken:
        name, severity, help, needs_state = "group_stalled", "critical", "boom", True
        reads_history = False

        def for_s(self, thresholds):  # noqa: ANN001
            return 0.0

        def evaluate(self, ctx):  # noqa: ANN001
            raise RuntimeError("bug")

    engine.rules = [Broken(), *[r for r in engine.rules if r.name != "group_stalled"]]
    await engine.evaluate(poll(101, None))
    await engine.evaluate(calm(102))
    assert statuses(engine) == {("group_stalled", "0"): "firing"}


async def test_a_firing_alert_is_never_seen_without_its_id(make_engine):
    """An API read while the firing alert is being written must not list it firing with no id
    (acknowledging it would then name alert "None"), nor as pending when its rule has no
    for-duration (a CI run saw "pending" where only "firing" can be)."""
    engine = await make_engine()
    seen: list[tuple[str, int | None]] = []
    inserts = 0
    insert = engine.repo.upsert

    async def observed_insert(alert):  # noqa: ANN001, ANN202
        nonlocal inserts
        inserts += 1
        # What a concurrent reader (the API) sees while the real insert is under way.
        seen.extend((a.status, a.id) for a in engine.current())
        return await insert(alert)

    engine.repo.upsert = observed_insert  # type: ignore[method-assign]
    await engine.evaluate(calm(100))
    await engine.evaluate(stalled(101))
    assert inserts, "the firing alert was never written"
    assert ("firing", None) not in seen
    assert not [s for s in seen if s[0] == "pending"]
    assert all(a.id is not None for a in engine.current() if a.status == "firing")


async def test_the_resolution_keeps_the_holder_a_later_poll_of_the_stall_no_longer_names(make_engine):
    # Alertmanager replaces an alert's annotations with each update: a resolution without the top
    # holder would erase who held the group from the alert it closes.
    engine = await make_engine(resolve_after_s=2)
    sent: list[tuple[str, dict[str, str]]] = []
    engine.dispatcher.notify = lambda alert: sent.append((alert.status, dict(alert.annotations)))  # type: ignore[method-assign]
    held = GroupHolders(
        group_id=0,
        stalled=True,
        holders=[Holder(connection_id=12, command="Query", time_s=9.0, digest="7fde")],
    )
    first = stalled(101)
    assert first.state is not None
    first.state.holders = [held]
    await engine.evaluate(first)
    await engine.evaluate(stalled(102))  # the statement ended: no holder read this poll
    await engine.evaluate(calm(103))
    await engine.evaluate(calm(105))
    assert [status for status, _ in sent] == ["firing", "resolved"]
    assert sent[0][1]["top_holder_connection"] == sent[1][1]["top_holder_connection"] == "12"
    assert sent[1][1]["top_holder_digest"] == "7fde"
