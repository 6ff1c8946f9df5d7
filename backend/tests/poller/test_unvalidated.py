"""The models a poll makes without validation (analysis/last_made.py Unvalidated: the collector
statuses, the target's state, the pool groups) are what validated construction makes of the same
values: equal, encoded byte for byte the same, with the same fields set, and no list or dict
shared with what the collectors keep between polls."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from poolscope.analysis.last_made import Unvalidated, _Required
from poolscope.poller.collectors import all_collectors
from poolscope.poller.collectors.thread_pool_waits import ThreadPoolWaits
from poolscope.poller.target_poller import PollResult
from poolscope.schemas import CollectorStatus, GroupState, TargetState

from .helpers import poller_for


class WaitsEvery5(ThreadPoolWaits):
    """A slow source whose resolution is an int: its statuses' every_s must still encode as 5.0."""

    every_s = 5  # type: ignore[assignment]


def _validated(model: BaseModel) -> BaseModel:
    given = {name: model.__dict__[name] for name in model.__pydantic_fields_set__}
    return type(model)(**given)


def _assert_as_validated(model: BaseModel) -> None:
    validated = _validated(model)
    assert model == validated
    assert model.model_dump_json() == validated.model_dump_json()
    assert model.__pydantic_fields_set__ == validated.__pydantic_fields_set__
    assert list(model.__dict__) == list(validated.__dict__)
    # Of the same types too (an int where validation makes a float would compare equal).
    assert list(map(type, model.__dict__.values())) == list(map(type, validated.__dict__.values()))
    assert _Required not in model.__dict__.values()


def _made(result: PollResult) -> list[BaseModel]:
    assert result.state is not None
    return [*result.info.collectors, result.state, *result.state.groups]


async def _polls(dsn: str, count: int) -> list[PollResult]:
    collectors = [c for c in all_collectors() if not isinstance(c, ThreadPoolWaits)]
    poller = poller_for(dsn)
    poller.collectors = [*collectors, WaitsEvery5()]
    try:
        return [await poller.poll_once() for _ in range(count)]
    finally:
        await poller.close()


async def test_a_polls_models_are_what_validation_makes(monitor_dsn: str) -> None:
    results = await _polls(monitor_dsn, 4)
    kinds = set()
    for result in results:
        assert result.info.status == "up", result.info.reason
        for model in _made(result):
            _assert_as_validated(model)
            kinds.add(type(model))
    assert kinds == {CollectorStatus, TargetState, GroupState}
    statuses = [s for r in results for s in r.info.collectors]
    # Both the read and the carried statuses of the slow source were compared.
    waits = [s for s in statuses if s.name == ThreadPoolWaits.name]
    assert {s.carried_s is None for s in waits} == {True, False}
    assert {s.model_dump_json().count('"every_s":5.0') for s in waits} == {1}


async def test_a_failing_sources_status_is_what_validation_makes(noproc_dsn: str) -> None:
    (result,) = await _polls(noproc_dsn, 1)
    failed = [s for s in result.info.collectors if s.error]
    assert failed
    for status in failed:
        _assert_as_validated(status)


async def test_states_share_no_list_with_each_other_or_the_collectors(monitor_dsn: str) -> None:
    first, second = await _polls(monitor_dsn, 2)
    assert first.state is not None and second.state is not None
    # The waits are carried between their reads: the same section, but each state its own list.
    for name in ("groups", "queue", "waits", "sessions", "variables", "missing_privileges"):
        assert getattr(first.state, name) is not getattr(second.state, name), name
    assert first.state.waits == second.state.waits


def test_a_mutable_default_is_never_shared() -> None:
    make = Unvalidated(TargetState)
    # A field with a default_factory is not filled with one shared object: the caller must give it.
    with pytest.raises(TypeError, match=r"missing \[.*'groups'"):
        make(target="t", ts=1.0, status="up")
    assert "groups" in make._required and "queued_connections" not in make._required


def test_a_misspelt_or_missing_field_is_refused_not_dropped():
    make = Unvalidated(CollectorStatus)
    with pytest.raises(TypeError, match=r"unknown \['carried'\]"):
        make(name="x", ok=True, carried=1.0)
    with pytest.raises(TypeError, match=r"missing \['ok'\]"):
        make(name="x")
    assert make(name="x", ok=True).ok is True


def test_a_model_with_a_validator_is_refused():
    from pydantic import field_validator

    class Checked(BaseModel):
        value: int

        @field_validator("value")
        @classmethod
        def positive(cls, v: int) -> int:
            return abs(v)

    with pytest.raises(TypeError, match="validators"):
        Unvalidated(Checked)


def test_a_maker_is_the_same_construction_for_fixed_fields():
    make = Unvalidated(CollectorStatus)
    ran = make.maker("name", "ok", "duration_ms", "every_s", "error")
    model = ran(name="x", ok=True, duration_ms=1.5, every_s=None, error=None)
    _assert_as_validated(model)
    assert model.__dict__ == make(name="x", ok=True, duration_ms=1.5, every_s=None, error=None).__dict__
    # Its parameters are exactly the fields named: Python refuses anything else.
    with pytest.raises(TypeError, match="carried"):
        ran(name="x", ok=True, duration_ms=1.5, every_s=None, error=None, carried=1.0)
    with pytest.raises(TypeError, match="error"):
        ran(name="x", ok=True, duration_ms=1.5, every_s=None)
    # Fields it cannot make are refused when it is built.
    with pytest.raises(TypeError, match=r"unknown \['carried'\]"):
        make.maker("name", "ok", "carried")
    with pytest.raises(TypeError, match=r"missing \[.*'groups'"):
        Unvalidated(TargetState).maker("target", "ts", "status")
    state = Unvalidated(TargetState).maker(*TargetState.model_fields)
    assert state.__kwdefaults__ is None
