"""One rule shape: each rule is a file named after it, its thresholds declared beside it and
turned into the alert settings, found without a registry list to edit."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest
from pydantic import ValidationError

from poolscope.alerts import rules as alert_rules
from poolscope.alerts.model import AlertContext, AlertFinding, AlertRule
from poolscope.alerts.settings import AlertSettings, Thresholds
from poolscope.recommend import rules as recommend_rules
from poolscope.recommend.base import RecommendRule
from poolscope.rules.base import Threshold, discover, thresholds_model

EXAMPLE = Path(__file__).resolve().parents[3] / "poolscope.example.toml"


def _files(package) -> set[str]:  # noqa: ANN001
    return {p.stem for p in Path(package.__file__).parent.glob("*.py") if not p.stem.startswith("_")}


def test_every_rule_file_holds_the_rule_it_is_named_after():
    assert {r.name for r in alert_rules.all_rules()} == _files(alert_rules)
    assert {r.name for r in recommend_rules.ALL_RULES} == _files(recommend_rules)
    assert all(isinstance(r, AlertRule) for r in alert_rules.all_rules())
    assert all(isinstance(r, RecommendRule) for r in recommend_rules.ALL_RULES)


def _package(tmp_path: Path, name: str, files: dict[str, str]):  # noqa: ANN202
    root = tmp_path / name
    root.mkdir()
    (root / "__init__.py").write_text("")
    for file, text in files.items():
        (root / f"{file}.py").write_text(text)
    sys.path.insert(0, str(tmp_path))
    try:
        return __import__(name)
    finally:
        sys.path.remove(str(tmp_path))


RULE_TEXT = """
from poolscope.alerts.model import AlertRule
RULE = AlertRule(name={name!r}, severity="warning", help="h", evaluate=lambda ctx: [])
"""


def test_discovery_finds_a_new_rule_file_and_refuses_a_misnamed_or_shapeless_one(tmp_path):
    good = _package(tmp_path, "rules_good", {"disk_full": RULE_TEXT.format(name="disk_full")})
    assert [r.name for r in discover(good, AlertRule)] == ["disk_full"]
    misnamed = _package(tmp_path, "rules_misnamed", {"disk": RULE_TEXT.format(name="disk_full")})
    with pytest.raises(ValueError, match="name the file after its rule"):
        discover(misnamed, AlertRule)
    shapeless = _package(tmp_path, "rules_shapeless", {"disk_full": "RULE = object()\n"})
    with pytest.raises(TypeError, match="must define RULE = AlertRule"):
        discover(shapeless, AlertRule)


def test_alert_thresholds_come_from_the_rules_declarations():
    declared = alert_rules.declared_thresholds()
    assert list(Thresholds.model_fields) == [t.name for t in declared]
    defaults = Thresholds()
    for threshold in declared:
        assert defaults.value(threshold) == threshold.default
        assert threshold.help in (Thresholds.model_fields[threshold.name].description or "")
    # A rule's own range check guards the setting: a share above 1 is refused at load time.
    with pytest.raises(ValidationError, match="connections_ratio"):
        AlertSettings(thresholds={"connections_ratio": 1.5})


def test_every_documented_threshold_key_still_works_with_its_documented_default():
    """poolscope.example.toml documents [alerts.thresholds] (commented out): every key is a
    setting and its value there is the declared default."""
    lines = EXAMPLE.read_text().splitlines()
    start = lines.index("# [alerts.thresholds]") + 1
    body = []
    for line in lines[start:]:
        text = line.removeprefix("#").split("#")[0].strip()
        if not line.startswith("# ") or text.startswith("["):
            break
        if text:
            body.append(text)
    documented = tomllib.loads("\n".join(body))
    assert len(documented) >= 14
    settings = AlertSettings(thresholds=documented)
    assert settings.thresholds.model_dump() == Thresholds().model_dump()
    assert set(documented) <= set(Thresholds.model_fields)


def test_a_threshold_name_is_declared_once_and_a_for_duration_is_one_of_the_rules_thresholds():
    a = Threshold(name="x_max", default=1.0, unit="s", help="one")
    b = Threshold(name="x_max", default=2.0, unit="s", help="two")
    with pytest.raises(ValueError, match="declared twice"):
        thresholds_model("T", "doc", [a, b])
    with pytest.raises(ValueError, match="for_duration"):
        AlertRule(name="x", severity="warning", help="h", evaluate=lambda ctx: [], for_duration=a)


def test_an_alert_rule_reads_its_thresholds_through_their_declarations():
    from poolscope.alerts.rules import queue_length_high
    from tests.alerts.states import group, info, state

    t = Thresholds(queue_length_max=5, queue_length_resolve=2)
    ti = info(100.0, "up")
    s = state(1, [group(0, queue_length=6)])
    ctx = AlertContext(target="db1", now=100.0, info=ti, state=s, history=(), thresholds=t)
    (finding,) = queue_length_high.RULE.evaluate(ctx)
    assert isinstance(finding, AlertFinding) and finding.level == "breach"
    assert t.value(queue_length_high.MAX) == 5
    assert queue_length_high.RULE.for_s(t) == 10.0


def test_a_recommendation_rule_reads_its_own_declared_thresholds():
    """Same shape as the alert rules: the thresholds are declared in the rule's file, read through
    the context, at their defaults unless the context carries other values."""
    from dataclasses import replace

    from poolscope.recommend.base import Clear, RecommendFinding
    from poolscope.recommend.rules import max_connections
    from tests.recommend.builders import ctx

    assert {t.name for t in max_connections.RULE.thresholds} == {"near_share", "at_share"}
    c = ctx({"max_connections": "100"}, {"threads_connected": [90.0] * 60})
    assert isinstance(max_connections.RULE.evaluate(c), RecommendFinding)  # 90 % >= 85 %
    values = thresholds_model("T", "per rule", max_connections.RULE.thresholds)
    stricter = replace(c, thresholds=values(near_share=0.95))
    assert isinstance(max_connections.RULE.evaluate(stricter), Clear)
    for rule in recommend_rules.ALL_RULES:
        assert all(t.help and t.unit for t in rule.thresholds), rule.name
