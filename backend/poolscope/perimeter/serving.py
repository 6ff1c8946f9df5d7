"""How `poolscope serve` binds: refuse an open network port nobody guards, and believe proxy headers only from trusted_proxies.

tests/served.py starts its uvicorn with the same options, so what the tests see is what serve does.
"""

from __future__ import annotations

from typing import Any

from poolscope.config import Settings
from poolscope.perimeter.hosts import is_loopback


def exposure_problem(settings: Settings) -> str | None:
    """Why serving on `listen_host` would be unsafe, or None when it is fine."""
    host = settings.listen_host
    if is_loopback(host) or settings.users or settings.allow_unauthenticated_network:
        return None
    return (
        f"refusing to listen on {host!r}: it is not a loopback address and no [[users]] are configured,"
        " so anyone who reaches the port could read everything (SQL text, user@host, the audit log)."
        " Add [[users]] (and anonymous_read = true if reads should stay open), listen on 127.0.0.1,"
        " or set allow_unauthenticated_network = true to accept that."
    )


def uvicorn_options(settings: Settings) -> dict[str, Any]:
    """Proxy-header handling for uvicorn.Config / uvicorn.run.

    uvicorn's own default believes X-Forwarded-For from 127.0.0.1 (or $FORWARDED_ALLOW_IPS);
    that would let anyone on this host pick their address, and so their rate limit and the
    audit log's address. Here only `trusted_proxies` are believed, none by default.
    """
    if not settings.trusted_proxies:
        return {"proxy_headers": False, "forwarded_allow_ips": []}
    return {"proxy_headers": True, "forwarded_allow_ips": list(settings.trusted_proxies)}
