"""A request body limit enforced before anything parses the body (pure ASGI, so streamed bodies count too).

A declared Content-Length over the limit is answered 413 at once, without reading a byte; a
chunked body is counted as it streams, and the 413 goes out the moment it passes the limit.
The route then sees the client as gone and whatever it answers is dropped.
"""

from __future__ import annotations

from collections.abc import Mapping

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from poolscope.perimeter.asgi import header, send_error


def too_large(limit: int) -> str:
    return f"request body over the limit of {limit} bytes for this path"


class BodyLimit:
    def __init__(self, app: ASGIApp, default: int, by_path: Mapping[str, int]) -> None:
        self.app = app
        self.default = default
        self.by_path = dict(by_path)

    def limit_for(self, path: str) -> int:
        return self.by_path.get(path, self.default)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope["path"])
        declared = header(scope, b"content-length")
        if declared is not None:
            if not declared.isdigit():
                await send_error(send, 400, "malformed Content-Length header")
                return
            if int(declared) > limit:
                await send_error(send, 413, too_large(limit))
                return

        received = 0
        rejected = False
        started = False

        async def counted_receive() -> Message:
            nonlocal received, rejected
            if rejected:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    rejected = True
                    if not started:
                        await send_error(send, 413, too_large(limit))
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if rejected:
                return  # the 413 has been sent; what the route makes of the "disconnect" is not
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted_receive, guarded_send)
        except Exception:
            # The route failed on the cut-off body (ClientDisconnect, ...): already answered.
            if not rejected:
                raise
