"""README's "Adding an alert rule" and "Adding a recommendation rule" examples run as written."""

from __future__ import annotations

import re
import types
from pathlib import Path

from poolscope.alerts.model import AlertContext, AlertRule
from poolscope.recommend.base import Clear, RecommendRule
from poolscope.rules.base import thresholds_model
from tests.alerts.states import info, state, threads
from tests.recommend.builders import ctx

README = Path(__file__).resolve().parents[3] / "README.md"


def _example(path: str) -> types.ModuleType:
    """The README code block that starts with `# <path>`, loaded as a module."""
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    (code,) = [b for b in blocks if b.startswith(f"# {path}\n")]
    module = types.ModuleType(Path(path).stem)
    exec(compile(code, path, "exec"), module.__dict__)
    return module


def test_the_alert_rule_example_is_a_working_rule_named_after_its_file():
    module = _example("backend/poolscope/alerts/rules/threads_running_high.py")
    rule = module.RULE
    assert isinstance(rule, AlertRule) and rule.name == module.__name__
    values = thresholds_model("T", "the example's", rule.thresholds)()

    def run(running: int):  # noqa: ANN202
        s = state(1, threads=threads(running=running))
        return rule.evaluate(
            AlertContext(target="db1", now=1, info=info(1), state=s, history=(), thresholds=values)
        )

    assert run(65)[0].level == "breach" and run(60)[0].level == "hold" and run(10) == []
    assert rule.for_s(values) == 30.0


def test_the_recommendation_rule_example_is_a_working_rule_named_after_its_file():
    module = _example("backend/poolscope/recommend/rules/thread_pool_idle_timeout.py")
    rule = module.RULE
    assert isinstance(rule, RecommendRule) and rule.name == module.__name__
    busy = ctx({"thread_pool_idle_timeout": "60"}, {"tp_group_thread_creations_per_s": [3.0] * 60})
    assert rule.evaluate(busy).proposed == "120"
    calm = ctx({"thread_pool_idle_timeout": "60"}, {"tp_group_thread_creations_per_s": [0.0] * 60})
    assert isinstance(rule.evaluate(calm), Clear)
