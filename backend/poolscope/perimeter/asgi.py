"""Small helpers for the pure ASGI middlewares here: read a header, answer with a JSON error."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from starlette.types import Scope, Send


def header(scope: Scope, name: bytes) -> bytes | None:
    """The first value of header `name` (lower-case bytes), or None."""
    for key, value in scope.get("headers", ()):
        if key == name:
            return value  # type: ignore[no-any-return]
    return None


async def send_error(
    send: Send, status: int, detail: str, extra_headers: Iterable[tuple[bytes, bytes]] = ()
) -> None:
    """A complete `{"detail": ...}` answer; `Connection: close` since the request may be unread."""
    body = json.dumps({"detail": detail}).encode("utf-8")
    headers: list[Any] = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode("ascii")),
        (b"connection", b"close"),
        *extra_headers,
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
