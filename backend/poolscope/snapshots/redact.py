"""Redaction for snapshots: SQL literals (optional, by setting) and secret-looking variables (always)."""

from __future__ import annotations

import re

# Quoted strings (with '' and backslash escapes), hex and binary literals, numbers not part of a name.
_LITERAL = re.compile(
    r"""'(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*"|\b0x[0-9a-fA-F]+\b|\bX'[0-9a-fA-F]*'|(?<![\w.$])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?\b""",
    re.DOTALL,
)
# `pass` and `key` only as a whole word of the name: bypass_*, key_buffer_size and the like are settings.
_SECRET_NAME = re.compile(
    r"pass(?:word|wd|phrase)|pwd|(?:^|_)pass(?:_|$)|secret|_auth\b|auth_|(?:^|_)key$|_key_|credential|token",
    re.IGNORECASE,
)
REDACTED = "<redacted>"


def redact_sql(sql: str | None) -> str | None:
    """`WHERE id = 42 AND name = 'bob'` -> `WHERE id = ? AND name = ?`."""
    if sql is None:
        return None
    return _LITERAL.sub("?", sql)


def is_secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(name))


def redact_variables(variables: dict[str, str]) -> dict[str, str]:
    """Variables whose name suggests a secret never leave the server, whatever their value."""
    return {k: (REDACTED if is_secret_name(k) and v else v) for k, v in variables.items()}
