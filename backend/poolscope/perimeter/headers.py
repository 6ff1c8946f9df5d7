"""Security headers on every answer (pure ASGI, outermost, so the perimeter's own refusals get them too).

- Content-Security-Policy: only Poolscope's own scripts, styles, images and connections; no inline
  script; no framing by any page (clickjacking of Apply). A route may set its own (report.html).
- X-Frame-Options DENY for browsers older than frame-ancestors; X-Content-Type-Options nosniff;
  Referrer-Policy no-referrer (a URL of Poolscope never leaves in a Referer).
- Cache-Control no-store on every /api answer: state, audit, exports and reports are not kept by
  the browser or a proxy.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

# data: images are the UI's favicon and Swagger UI's icons; styles set from script (React's style
# props) are not inline styles to CSP.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self';"
    " font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
ALWAYS = (
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
)
NO_STORE = (b"cache-control", b"no-store")


def is_api(path: str) -> bool:
    return path == "/api" or path.startswith("/api/")


class SecurityHeaders:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        api = is_api(scope["path"])

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [
                    (k, v) for k, v in message.get("headers", ()) if not (api and k == b"cache-control")
                ]
                names = {k for k, _ in headers}
                headers.extend(pair for pair in ALWAYS if pair[0] not in names)
                if b"content-security-policy" not in names:
                    headers.append((b"content-security-policy", CSP.encode("ascii")))
                if api:
                    headers.append(NO_STORE)
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, with_headers)
