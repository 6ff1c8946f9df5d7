"""The change recorder's command line (poolscope_dev/record_change.py): what is set, and when."""

from __future__ import annotations

import pytest

from poolscope_dev.record_change import parse_set


def test_a_variable_is_set_half_way_unless_a_second_is_named():
    assert parse_set("thread_pool_size=4", 60) == ("thread_pool_size", "4", 60)
    assert parse_set("thread_pool_oversubscribe=5@80", 60) == ("thread_pool_oversubscribe", "5", 80)


@pytest.mark.parametrize("bad", ["thread_pool_size", "=4", "thread_pool_size=", "x=1@soon"])
def test_a_malformed_assignment_is_refused(bad):
    with pytest.raises(SystemExit, match="expected NAME=VALUE"):
        parse_set(bad, 60)
