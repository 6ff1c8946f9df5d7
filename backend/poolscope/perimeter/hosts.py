"""The Host allow-list (against DNS rebinding) and the validation of host and proxy settings.

A page on an attacker's site can make the browser resolve the attacker's name to 127.0.0.1 and
read Poolscope as "same origin"; the browser then still sends the attacker's name as Host. So
only loopback names, the listen address, `public_url`'s host and `allowed_hosts` are answered.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from poolscope.perimeter.asgi import header, send_error

HOST_NAME = re.compile(r"^[a-z0-9_]([a-z0-9_.-]{0,251}[a-z0-9_])?$")
WILDCARD_ADDRESSES = frozenset({"", "0.0.0.0", "::"})


def _ip(name: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(name)
    except ValueError:
        return None


def is_loopback(name: str) -> bool:
    """localhost, or a loopback IP literal (127.0.0.0/8, ::1)."""
    address = _ip(name.strip("[]"))
    return name.lower() == "localhost" or (address is not None and address.is_loopback)


def check_host_name(value: str) -> str:
    """A host name or IP literal as `allowed_hosts` holds it: lower case, no scheme, port or path."""
    name = value.strip().lower().strip("[]").rstrip(".")
    if _ip(name) is None and not HOST_NAME.match(name):
        raise ValueError(
            f"allowed_hosts: {value!r} is not a host name or IP address (no scheme, port or path)"
        )
    return name


def check_proxy_network(value: str) -> str:
    """An IP address or network (CIDR) for `trusted_proxies`."""
    try:
        ipaddress.ip_network(value.strip())  # strict, as uvicorn parses it: no host bits set
        return value.strip()
    except ValueError:
        raise ValueError(
            f"trusted_proxies: {value!r} is not an IP address or network (with no host bits set)"
        ) from None


def host_of_url(url: str) -> str:
    """The host of an http(s) URL such as `public_url`; ValueError otherwise."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"public_url {url!r} must be an http:// or https:// URL with a host")
    return check_host_name(parts.hostname)


def host_name(value: str) -> str | None:
    """The name in a Host header (`name`, `name:port`, `[v6]:port`), lower case; None if malformed."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        rest = value[end + 1 :]
        if end < 0 or (rest and not (rest[:1] == ":" and rest[1:].isdigit())):
            return None
        return value[1:end]
    name, colon, port = value.partition(":")
    if colon and not port.isdigit():
        return None
    return name.rstrip(".") or None


def allowed_host_names(listen_host: str, public_url: str | None, allowed_hosts: Iterable[str]) -> set[str]:
    """Every name answered besides loopback ones: the listen address (unless a wildcard), public_url's host and allowed_hosts."""
    names = set(allowed_hosts)
    if listen_host not in WILDCARD_ADDRESSES:
        names.add(check_host_name(listen_host))
    if public_url:
        names.add(host_of_url(public_url))
    return names


class HostAllowList:
    """Pure ASGI: a request whose Host is not allowed gets 400 before anything else runs."""

    def __init__(self, app: ASGIApp, allowed: Iterable[str]) -> None:
        self.app = app
        self.allowed = frozenset(allowed)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        raw = header(scope, b"host")
        name = host_name(raw.decode("latin-1")) if raw else None
        if name is not None and (name in self.allowed or is_loopback(name)):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        shown = repr(raw.decode("latin-1")[:100]) if raw else "missing"
        await send_error(
            send,
            400,
            f"Host {shown} is not served here: add the name to allowed_hosts (or set public_url)",
        )
