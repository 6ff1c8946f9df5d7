"""Values are checked against the server's own metadata before any SET GLOBAL (pure, no server)."""

from __future__ import annotations

import pytest

from poolscope.actions.allowlist import refusal
from poolscope.actions.models import VariableMeta
from poolscope.actions.validate import InvalidValue, normalise, validate
from poolscope.config import TargetConfig

STALL = VariableMeta(
    name="thread_pool_stall_limit",
    type="INT UNSIGNED",
    min="1",
    max="4294967295",
    block_size="1",
    scope="GLOBAL",
)
PRIORITY = VariableMeta(
    name="thread_pool_priority", type="ENUM", enum_values=["high", "low", "auto"], scope="SESSION"
)
EXACT = VariableMeta(
    name="thread_pool_exact_stats", type="BOOLEAN", enum_values=["OFF", "ON"], scope="GLOBAL"
)


def test_numbers_are_whole_and_in_range():
    assert validate(STALL, " 30 ") == 30
    for bad, why in (
        ("0", "out of range"),
        ("4294967296", "out of range"),
        ("30ms", "whole number"),
        ("3.5", "whole number"),
        ("1; DROP TABLE x", "whole number"),
        ("0x10", "whole number"),
    ):
        with pytest.raises(InvalidValue, match=why):
            validate(STALL, bad)


def test_enums_and_booleans_take_the_servers_spelling():
    assert validate(PRIORITY, "AUTO") == "auto"
    assert validate(EXACT, "1") == "ON" and validate(EXACT, "off") == "OFF"
    with pytest.raises(InvalidValue, match="one of high, low, auto"):
        validate(PRIORITY, "auto' OR '1'='1")
    with pytest.raises(InvalidValue, match="ON or OFF"):
        validate(EXACT, "maybe")
    assert normalise(EXACT, 1) == "ON" and normalise(STALL, 30) == "30"


def test_read_only_session_only_and_unknown_types_are_refused():
    with pytest.raises(InvalidValue, match="read-only"):
        validate(VariableMeta(name="thread_handling", type="ENUM", read_only=True), "pool-of-threads")
    with pytest.raises(InvalidValue, match="no global value"):
        validate(VariableMeta(name="x", type="INT", scope="SESSION ONLY"), "1")
    with pytest.raises(InvalidValue, match="does not change"):
        validate(VariableMeta(name="x", type="VARCHAR"), "a")


def test_allow_list_and_configuration():
    off = TargetConfig(name="a", dsn="mysql://u@h/")
    assert "not configured" in (refusal(off, "thread_pool_size") or "")
    on = TargetConfig(
        name="a", dsn="mysql://u@h/", admin_dsn="mysql://admin@h/", apply_variables=["thread_pool_size"]
    )
    assert refusal(on, "thread_pool_size") is None
    assert "apply_variables" in (refusal(on, "max_connections") or "")
    for bad in (
        "innodb_buffer_pool_size",
        "thread_pool_size; SET GLOBAL x=1",
        "THREAD_POOL_SIZE",
        "sql_log_bin",
    ):
        assert "allow-list" in (refusal(on, bad) or ""), bad
