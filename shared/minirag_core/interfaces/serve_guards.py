"""What ``minirag serve`` checks before its app reads a request (ASGI middleware, outermost first):
the Host header names this machine or an ``--allowed-host`` (so a web page cannot reach a loopback
server through DNS rebinding), the API token when one is set (before the body is read, on every
path), and the body's size. Each refusal is JSON ``{"error": "one line"}``."""

from __future__ import annotations

import secrets
from typing import Any, Awaitable, Callable, Sequence

from starlette.datastructures import Headers
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.responses import JSONResponse

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")


def json_error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": " ".join(str(message).split())}, status_code=status, headers=headers)


class HostCheck:
    """Serve only requests whose Host header (any port) is a loopback name or one of ``allowed``
    (names, IP addresses with IPv6 in brackets, ``*.example.com`` or ``*``); others get 400.
    Starlette's ``TrustedHostMiddleware`` decides; its plain-text refusal becomes a JSON one."""

    ADMITTED = "minirag.host_admitted"

    def __init__(self, app: ASGIApp, allowed: Sequence[str] = ()) -> None:
        self.app = app
        self.allowed = list(dict.fromkeys([*LOOPBACK_HOSTS, *allowed]))
        self.check = TrustedHostMiddleware(self._admit, allowed_hosts=self.allowed, www_redirect=False)

    async def _admit(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope[self.ADMITTED] = True
        await self.app(scope, receive, send)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_or_refuse(message: dict[str, Any]) -> None:
            if scope.get(self.ADMITTED):
                await send(message)
            elif message["type"] == "http.response.start":  # the middleware's own refusal
                await self._refuse(scope, receive, send)

        await self.check(scope, receive, send_or_refuse)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        host = Headers(scope=scope).get("host", "")[:100]
        names = ", ".join(h for h in self.allowed)
        await json_error(400, f"Host header {host!r} is not a name of this server ({names}); a client that "
                              "reaches it by another name needs `minirag serve --allowed-host NAME`")(scope, receive, send)


class TokenCheck:
    """Every request must carry ``Authorization: Bearer TOKEN``, checked before anything reads its
    body; 401 otherwise, on any path (the schema and API pages included)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app, self.token = app, token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            scheme, _, given = Headers(scope=scope).get("authorization", "").partition(" ")
            if scheme.lower() != "bearer" or not secrets.compare_digest(given.strip().encode(), self.token):
                response = json_error(401, "missing or wrong API token: send `Authorization: Bearer TOKEN`",
                                      headers={"WWW-Authenticate": "Bearer"})
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


class BodyLimit:
    """A request whose body passes ``limit`` bytes gets 413 before the app sees it (by its
    Content-Length, or counted as it arrives when it has none)."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers", [])).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await self._refuse(scope, receive, send)
            return
        body, more = bytearray(), True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.limit:
                await self._refuse(scope, receive, send)
                return
        sent = False

        async def replay() -> dict[str, Any]:
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": bytes(body), "more_body": False}

        await self.app(scope, replay, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = json_error(413, f"request body larger than {self.limit} bytes (minirag serve --max-request-bytes)")
        await response(scope, receive, send)
