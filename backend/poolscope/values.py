"""A server's values read as integers, one way everywhere: variables and status arrive as text
("151", "1.0", "" or junk), result columns as numbers or NULL."""

from __future__ import annotations


def int_or_none(value: str | float | None) -> int | None:
    """The value as an integer ("1.0" reads 1, 2.7 reads 2); None when it is missing or not a number."""
    if value is None:
        return None
    try:
        return int(value)  # exact, also past 2**53 (unsigned 64-bit variables)
    except (TypeError, ValueError, OverflowError):
        pass
    try:
        return int(float(value))
    except (TypeError, ValueError, OverflowError):  # "abc", "", "inf", "nan"
        return None
