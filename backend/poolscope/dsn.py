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
from urllib.parse import unquote

from pydantic import BaseModel, SecretStr

DEFAULT_MYSQL_PORT = 3306
SCHEMES = ("mysql", "mariadb")
UNPARSEABLE = "<unparseable DSN>"

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
    secret = ":***" if parts.has_password else ""
    return f"{parts.scheme}://{parts.raw_user}{secret}@{parts.authority}/{parts.raw_database}"
