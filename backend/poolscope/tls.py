"""TLS to a target (monitoring and admin connections): the `tls` table of a target and its SSLContext.

The knobs are the MySQL client's (`--ssl-ca`, `--ssl-cert`, `--ssl-key`, `--ssl-mode=VERIFY_IDENTITY`
/ `VERIFY_CA` / `REQUIRED`) under the names mysqld_exporter's `[client]` file and PMM use. With a
`tls` table the connection is TLS or nothing: a server that does not offer TLS is refused before
the credential is sent (poller/connection.py).
"""

from __future__ import annotations

import ssl
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from pydantic import BaseModel, ConfigDict, Field, model_validator


class TlsError(ValueError):
    """A tls table whose files cannot be used; the message names the setting and the file."""


class TlsConfig(BaseModel):
    """`tls = {}` = verify against the system's CAs; `ca` = only that CA; `verify = false` = encrypt only."""

    model_config = ConfigDict(extra="forbid")

    ca: Path | None = Field(
        default=None,
        description="PEM file of the CA(s) that signed the server certificate (default: system CAs)",
    )
    verify: bool = Field(
        default=True, description="check the server certificate; false = encrypted but unauthenticated"
    )
    verify_hostname: bool = Field(
        default=True, description="also check that the certificate names the DSN's host (VERIFY_IDENTITY)"
    )
    cert: Path | None = Field(default=None, description="client certificate (PEM), for REQUIRE X509 accounts")
    key: Path | None = Field(default=None, description="its private key (PEM, unencrypted); default: in cert")

    @model_validator(mode="after")
    def _consistent(self) -> TlsConfig:
        if self.key is not None and self.cert is None:
            raise ValueError("tls.key is set without tls.cert")
        if self.ca is not None and not self.verify:
            raise ValueError("tls.ca is set but verify = false would ignore it: drop one of them")
        return self


def _encrypted_key() -> NoReturn:
    # Without a callback OpenSSL would prompt on the terminal and hang a server.
    raise TlsError("is encrypted: give an unencrypted key file (readable only by Poolscope)")


def client_context(tls: TlsConfig, what: str) -> ssl.SSLContext:
    """The SSLContext for `tls`; `what` names the setting in errors (e.g. "tls of target db1")."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # certificate and host name checked by default
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    if not tls.verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    else:
        context.check_hostname = tls.verify_hostname
        if tls.ca is None:
            context.load_default_certs()
        else:
            # Only this CA: a certificate from any public CA must not pass for the database's.
            _load(what, "ca", tls.ca, lambda path: context.load_verify_locations(cafile=path))
    if tls.cert is not None:
        key = str(tls.key) if tls.key else None
        _load(
            what, "cert", tls.cert, lambda path: context.load_cert_chain(path, key, password=_encrypted_key)
        )
    return context


def _load(what: str, setting: str, path: Path, load: Callable[[str], object]) -> None:
    try:
        load(str(path))
    except TlsError as exc:
        raise TlsError(f"{what}: the key file {exc}") from None
    except ssl.SSLError as exc:
        raise TlsError(f"{what}: the {setting} file {path} is not usable PEM ({exc.reason or exc})") from None
    except OSError as exc:
        raise TlsError(f"{what}: cannot read the {setting} file {path}: {exc.strerror or exc}") from None
