"""A statement's digest where the server computes none: its text normalised by sqlglot's MySQL tokenizer.

Literals (strings, numbers, hex and bit values) become `?`, an IN or VALUES list of nothing but
literals becomes `(...)` (so `IN (1, 2)` and `IN (1, 2, 3)` are one shape, as in MySQL's own
digests), repeated row lists of a multi-row INSERT fold into one, comments go, keywords are upper
case. The digest is the first 16 hex digits of the normalised text's SHA-256. The tokenizer is the
library's, not a regular expression of ours: it knows MySQL's quoting, escapes and comments.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from typing import NamedTuple

from sqlglot.dialects.mysql import MySQL
from sqlglot.errors import TokenError
from sqlglot.tokens import TokenType

_DIALECT = MySQL()
_LITERALS = frozenset(
    {
        TokenType.STRING,
        TokenType.NUMBER,
        TokenType.HEX_STRING,
        TokenType.BIT_STRING,
        TokenType.BYTE_STRING,
        TokenType.NATIONAL_STRING,
        TokenType.RAW_STRING,
    }
)
_NAMES = frozenset({TokenType.VAR, TokenType.IDENTIFIER})
MAX_TEXT_CHARS = 1024


class Digest(NamedTuple):
    digest: str
    text: str


def digest_of(sql: str) -> Digest:
    """The statement's shape and its digest."""
    return _digest(sql.strip())


# Statements repeat from poll to poll (a holder is seen every second it runs, a workload has few
# shapes): 4 µs per cached statement against 60 µs tokenised (`make bench`, holders).
@lru_cache(maxsize=2048)
def _digest(sql: str) -> Digest:
    text = normalise(sql)
    return Digest(hashlib.sha256(text.encode()).hexdigest()[:16], text)


def normalise(sql: str) -> str:
    try:
        tokens = _DIALECT.tokenize(sql)
    except TokenError:
        # Not tokenisable (cut mid-literal at 2,048 characters): what comes before its first
        # quoted literal stands for it, so no literal leaks into the shape.
        quotes = [i for i in (sql.find("'"), sql.find('"')) if i >= 0]
        head = sql[: min(quotes)] + "?" if quotes else sql
        return " ".join(head.split())[:MAX_TEXT_CHARS]
    words: list[str] = []
    for token in tokens:
        if token.token_type in _LITERALS:
            word = "?"
        elif token.token_type in _NAMES:
            word = token.text
        else:
            word = token.text.upper()
        words.append(word)
        _fold(words)
    return _join(words)[:MAX_TEXT_CHARS]


def _fold(words: list[str]) -> None:
    """After each word: `( ? , ? )` -> `(...)`, and `(...) , (...)` -> `(...)`."""
    if words[-1] != ")":
        return
    try:
        start = len(words) - 1 - words[::-1].index("(")
    except ValueError:
        return
    inside = words[start + 1 : -1]
    listed = start > 0 and words[start - 1] in ("IN", "VALUES", ",")
    if listed and inside and all(w in ("?", ",", "(...)") for w in inside):
        del words[start:]
        words.append("(...)")
        if len(words) >= 3 and words[-2] == "," and words[-3] == "(...)":
            del words[-2:]


def _join(words: list[str]) -> str:
    out = ""
    for word in words:
        if not out or out.endswith(("(", ".")) or word in (")", ",", ".", ";"):
            out += word
        elif word in ("(", "(...)") and out[-1:].isalnum() and not out.endswith(("IN", "VALUES")):
            out += word  # a function call: MD5(?)
        else:
            out += " " + word
    return out
