"""Target DSNs: parsed by hand (not urlsplit), redacted whatever their shape, errors that never quote them.

`mysql://user:password@host:port/database`. The RIGHTMOST `@` separates the credentials from the
host, and the first `:` of the credentials separates user from password, so a password may hold
`/ ? # @ :` as typed. Percent-escapes are decoded (a literal `%` followed by two hex digits must
be written `%25`); a password that needs neither is simplest kept in `password_env`.

urlsplit cut such passwords at the first `/ ? #` and then reported the password as the host or
path, or failed; the old error and redaction then quoted the DSN as typed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import unquote

from pydantic import BaseModel, SecretStr

DEFAULT_MYSQL_PORT = 3306
SCHEMES = ("mysql", "mariadb")
UNPARSEABLE = "<unparseable DSN>"
REDACTED = "***"
# A fragment of the userinfo this long is hidden too: a server may quote a user name cut short.
MIN_FRAGMENT = 6
# The only user names redact_dsn shows; any other may hold a password typed after a wrong separator.
_PLAIN_USER = re.compile(r"[A-Za-z0-9_.$-]{1,80}")

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")
# [IPv6] or a name / IPv4 (checked by _HOST_NAME), then an optional :port (checked apart).
_AUTHORITY = re.compile(r"(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<name>[^:\[\]]+))(?::(?P<port>.*))?")
_HOST_NAME = re.compile(r"[A-Za-z0-9._-]+")


class DsnError(ValueError):
    """A DSN that cannot be used; the message names the field and the problem, never the text."""


class ParsedDsn(BaseModel):
    host: str
    port: int
    user: str
    password: SecretStr
    database: str | None = None

    def redact(self, text: str) -> str:
        """`text` (a server's message) without any part of this DSN's user or password."""
        return redact_userinfo(text, (self.user, self.password.get_secret_value()))


def redact_userinfo(text: str, secrets: Iterable[str]) -> str:
    """`text` with every occurrence of each secret, and every run of MIN_FRAGMENT or more
    characters found inside one, replaced by ***.

    `mysql://mon@Secret@host/` (an @ typed for the :) makes the user name "mon@Secret", and the
    server's "Access denied for user 'mon@Secret'@'host'" then quotes the password: so the user
    name counts as a secret too, and so does a piece of it (a server may cut a long name short).
    """
    whole = sorted({s for s in secrets if s}, key=len, reverse=True)
    for secret in whole:
        if len(secret) >= MIN_FRAGMENT:
            text = text.replace(secret, REDACTED)
        else:  # a short name ("mon") only where it stands alone, not inside "month"
            text = re.sub(rf"(?<![\w@.$-]){re.escape(secret)}(?![\w@.$-])", REDACTED, text)
    pieces = [s for s in whole if len(s) >= MIN_FRAGMENT]
    if not pieces:
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        length = max((_common(text, i, s) for s in pieces), default=0)
        if length >= MIN_FRAGMENT:
            out.append(REDACTED)
            i += length
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _common(text: str, start: int, secret: str) -> int:
    """The length of the longest text[start:start + n] found in `secret`."""
    n = 0
    while start + n < len(text) and text[start : start + n + 1] in secret:
        n += 1
    return n


class _Parts:
    """The DSN split into its pieces, still as typed (nothing decoded)."""

    def __init__(self, text: str, what: str) -> None:
        match = _SCHEME.match(text)
        if match is None or match.group(1).lower() not in SCHEMES:
            raise DsnError(f"{what}: must start with mysql:// or mariadb://")
        self.scheme = match.group(1).lower()
        rest = text[match.end() :]
        credentials, at, location = rest.rpartition("@")
        if not at:
            raise DsnError(f"{what}: has no @ before the host (expected mysql://user:password@host:port/)")
        self.raw_user, colon, self.raw_password = credentials.partition(":")
        self.has_password = bool(colon)
        if not self.raw_user:
            raise DsnError(f"{what}: has no user (expected mysql://user@host/)")
        if "?" in location or "#" in location:
            raise DsnError(f"{what}: options after ? or # are not supported (TLS: the target's tls table)")
        self.authority, _, self.raw_database = location.partition("/")
        if not self.authority:
            raise DsnError(f"{what}: has no host")
        host = _AUTHORITY.fullmatch(self.authority)
        if host is None or not (host.group("v6") or _HOST_NAME.fullmatch(host.group("name"))):
            raise DsnError(f"{what}: the host after the last @ is not a host name, IPv4 or [IPv6] address")
        self.host = host.group("v6") or host.group("name")
        port = host.group("port")
        if port is not None and not (port.isascii() and port.isdigit() and 1 <= int(port) <= 65535):
            raise DsnError(f"{what}: the port must be a number 1-65535")
        self.port = int(port) if port else DEFAULT_MYSQL_PORT


def _decode(raw: str, what: str, part: str) -> str:
    try:
        return unquote(raw, errors="strict")
    except UnicodeDecodeError:
        raise DsnError(f"{what}: the {part}'s %-escapes are not UTF-8") from None


def parse_dsn(dsn: str, what: str = "dsn") -> ParsedDsn:
    """Parse a target DSN; `what` names the field in errors (e.g. "admin_dsn of target db1")."""
    parts = _Parts(dsn.strip(), what)
    return ParsedDsn(
        host=parts.host,
        port=parts.port,
        user=_decode(parts.raw_user, what, "user"),
        password=SecretStr(_decode(parts.raw_password, what, "password")),
        database=_decode(parts.raw_database, what, "database") or None,
    )


def redact_dsn(dsn: str) -> str:
    """`mysql://user:***@host:port/db`, safe for logs; a DSN that does not parse shows nothing of itself."""
    try:
        parts = _Parts(dsn.strip(), "dsn")
    except DsnError:
        return UNPARSEABLE
    secret = f":{REDACTED}" if parts.has_password else ""
    user = parts.raw_user if _PLAIN_USER.fullmatch(parts.raw_user) else REDACTED
    return f"{parts.scheme}://{user}{secret}@{parts.authority}/{parts.raw_database}"
