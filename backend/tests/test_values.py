"""The one integer reader of server values (poolscope/values.py)."""

from __future__ import annotations

import pytest

from poolscope.values import int_or_none


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("151", 151),
        (" 42 ", 42),
        ("-1", -1),
        ("1.0", 1),
        ("2.7", 2),
        ("1e3", 1000),
        (7, 7),
        (2.7, 2),
        # An unsigned 64-bit variable (thread_pool_high_prio_tickets' kin) stays exact, where a
        # float would round it to 18446744073709551616.
        ("18446744073709551615", 18446744073709551615),
    ],
)
def test_reads_numbers(value: str | float, expected: int) -> None:
    assert int_or_none(value) == expected


@pytest.mark.parametrize("value", [None, "", "abc", "ON", "inf", "nan", float("nan"), float("inf")])
def test_missing_or_not_a_number_is_none(value: str | float | None) -> None:
    assert int_or_none(value) is None
