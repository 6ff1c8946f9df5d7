"""`make demo`'s opening act (poolscope_dev/demochanges.py): its plan gives a "better" and an
"inconclusive: load changed" verdict on a recording of itself, and its operator applies a change
through the real API as the UI does."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from poolscope.actions.models import Judgement, OverlappingChange
from poolscope.actions.verdict import JUDGED, headline, judge
from poolscope.config import Settings, TargetConfig
from poolscope_dev.demochanges import ACT, DEFAULT_WINDOW_S, ApiOperator, Step
from poolscope_dev.sandbox import ADMIN_USER, MONITOR_USER, MariaDBSandbox
from tests.actions.live import OPERATOR_PW, global_value, running_app, set_global
from tests.served import logged_in

RECORDING = Path(__file__).parent.parent / "fixtures" / "verdict" / "demo-act.json"
FLOOR = {metric: floor for metric, _, floor in JUDGED}


def act_verdicts() -> list[tuple[Step, Judgement]]:
    """Each change of the recorded act judged as Poolscope judges it: the polls of the guard
    window on each side, the other change named when it lies inside them (actions/compare.py)."""
    rec = json.loads(RECORDING.read_text())
    polls = [(ts, row) for ts, row in rec["seconds"]]
    changes = rec["changes"]
    judged = []
    for step, change in zip((ACT.improve, ACT.shift), changes, strict=True):
        at, w = change["ts"], DEFAULT_WINDOW_S
        assert change["set"] == f"{step.variable}={step.value}"
        others = [
            OverlappingChange(id=i, ts=c["ts"], variable=c["set"].split("=")[0], old_value=None, new_value="")
            for i, c in enumerate(changes)
            if c is not change and at - w <= c["ts"] <= at + w
        ]
        before = [p for p in polls if at - w <= p[0] <= at - 1.0]
        after = [p for p in polls if at + 1.0 <= p[0] <= at + w]
        judged.append((step, judge(before, after, variable=step.variable, overlaps=others)))
    return judged


def test_the_recording_is_of_this_act():
    rec = json.loads(RECORDING.read_text())
    assert rec["command"].startswith("python -m poolscope_dev.record_change --demo-act")
    assert [c["set"] for c in rec["changes"]] == [f"{s.variable}={s.value}" for s in (ACT.improve, ACT.shift)]
    gap = rec["changes"][1]["ts"] - rec["changes"][0]["ts"]
    assert gap == pytest.approx(ACT.shift_at(DEFAULT_WINDOW_S) - ACT.improve_at(DEFAULT_WINDOW_S), abs=5)


def test_the_change_under_the_steady_load_is_better_with_an_interval():
    (step, j), _ = act_verdicts()
    assert step.expect == "better"
    assert not any(s.shifted for s in j.load), j.load
    assert j.verdict == "better", headline(j)
    better = [e for e in j.effects if e.verdict == "better"]
    assert better
    for e in better:
        assert e.low is not None and e.high is not None and e.difference is not None
        assert e.low <= e.difference <= e.high < -FLOOR[e.metric]
    assert "interval" in headline(j)


def test_the_change_as_the_load_changes_phase_is_inconclusive_load_changed():
    _, (step, j) = act_verdicts()
    assert step.expect == "inconclusive: load changed"
    assert not j.overlaps, "the first change lies outside this one's windows"
    assert j.verdict == "inconclusive"
    assert headline(j).startswith("inconclusive: load changed by +"), headline(j)


@pytest.mark.parametrize("window_s", [10.0, DEFAULT_WINDOW_S, 600.0])
def test_neither_change_lies_in_the_others_windows(window_s):
    improve, shift = ACT.improve_at(window_s), ACT.shift_at(window_s)
    assert improve - window_s >= ACT.settle_s > 0  # a whole window of steady load before the first
    assert shift - window_s > improve + 1  # the first change is outside the second's window before
    assert ACT.seconds(window_s) == shift + window_s


def test_the_operator_applies_a_step_through_the_api_as_the_ui_does(mariadb: MariaDBSandbox, tmp_path):
    """A live smoke: log in, preview, apply (guarded as by default), through a served Poolscope."""
    settings = Settings(
        poll_interval_s=0.5,
        store_url=f"sqlite+aiosqlite:///{tmp_path / 'store.db'}",
        targets=[TargetConfig(name="sb", dsn=mariadb.dsn(MONITOR_USER), admin_dsn=mariadb.dsn(ADMIN_USER))],
    )
    password = tmp_path / "operator-password"
    password.write_text(OPERATOR_PW + "\n")
    was = global_value(mariadb, "thread_pool_oversubscribe")
    step = Step("thread_pool_oversubscribe", str(int(was) + 1), "n/a")
    with running_app(settings) as base:

        async def act() -> float | None:
            operator = ApiOperator(base, "sb", password, user="op")
            try:
                window = await operator.ready()
                await operator.apply(step)
                return window
            finally:
                await operator.close()

        try:
            assert asyncio.run(act()) == settings.guard_window_s
            client = logged_in(base, "op", OPERATOR_PW)
            try:
                entry = client.get("/api/targets/sb/audit").json()[0]
                assert (entry["user"], entry["variable"], entry["old_value"], entry["new_value"]) == (
                    "op",
                    step.variable,
                    was,
                    step.value,
                )
                assert entry["result"] == "applied" and entry["manual"] and entry["guarded"]
                assert global_value(mariadb, step.variable) == step.value
                assert client.post(f"/api/targets/sb/audit/{entry['id']}/revert").status_code == 200
            finally:
                client.close()
        finally:
            if global_value(mariadb, step.variable) != was:
                set_global(mariadb, **{step.variable: int(was)})
