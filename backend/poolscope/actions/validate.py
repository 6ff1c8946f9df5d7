"""Check a requested value against the server's own description of the variable, before SET GLOBAL.

The server clamps out-of-range numbers with only a warning (SET GLOBAL succeeds), so the range,
type, enum and read-only checks happen here, from information_schema.SYSTEM_VARIABLES, and the
value is converted to a typed Python value that the driver binds as a parameter.
"""

from __future__ import annotations

import re

from poolscope.actions.models import VariableMeta

INTEGER_TYPES = {"INT", "INT UNSIGNED", "BIGINT", "BIGINT UNSIGNED", "INTEGER"}
_INTEGER = re.compile(r"[+-]?\d{1,20}")
_TRUE = {"ON", "1", "TRUE", "YES"}
_FALSE = {"OFF", "0", "FALSE", "NO"}


class InvalidValue(ValueError):
    """A value the server would reject or silently change; the message says which rule it broke."""


def validate(meta: VariableMeta, raw: str) -> int | str:
    """The value to bind (int for numbers, the server's own spelling for enums/booleans)."""
    text = raw.strip()
    if meta.read_only:
        raise InvalidValue(
            f"{meta.name} is read-only while the server runs: change it in the config and restart"
        )
    # MariaDB says "SESSION" for variables with a session AND a global value; only
    # "SESSION ONLY" ones have no global value to set.
    if meta.scope is not None and meta.scope.upper() == "SESSION ONLY":
        raise InvalidValue(f"{meta.name} has no global value (scope {meta.scope})")
    kind = meta.type.upper()
    if kind in INTEGER_TYPES:
        if not _INTEGER.fullmatch(text):
            raise InvalidValue(f"{meta.name} takes a whole number")
        value = int(text)
        low = int(meta.min) if meta.min not in (None, "") else None
        high = int(meta.max) if meta.max not in (None, "") else None
        if (low is not None and value < low) or (high is not None and value > high):
            raise InvalidValue(f"{meta.name} is out of range: it must be between {low} and {high}")
        block = int(meta.block_size) if meta.block_size not in (None, "", "0") else 1
        if block > 1 and value % block:
            raise InvalidValue(f"{meta.name} must be a multiple of {block}")
        return value
    if kind == "BOOLEAN":
        upper = text.upper()
        if upper in _TRUE:
            return "ON"
        if upper in _FALSE:
            return "OFF"
        raise InvalidValue(f"{meta.name} takes ON or OFF")
    if kind in ("ENUM", "ENUMERATION"):
        for allowed in meta.enum_values:
            if allowed.lower() == text.lower():
                return allowed
        raise InvalidValue(f"{meta.name} takes one of {', '.join(meta.enum_values)}")
    raise InvalidValue(f"{meta.name} has type {meta.type}, which Poolscope does not change")


def normalise(meta: VariableMeta, value: object) -> str:
    """A value as read back (@@GLOBAL gives booleans as 1/0) in the spelling validate() returns."""
    if isinstance(value, bytes):
        value = value.decode()
    text = str(value)
    if meta.type.upper() == "BOOLEAN" and text in ("0", "1"):
        return "ON" if text == "1" else "OFF"
    return text
