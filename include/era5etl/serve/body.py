"""A request's body, let in only for a caller who may read and only up to a limit (an ASGI middleware).

FastAPI reads and parses a route's body before it resolves the route's dependencies, the login
among them: without this, anyone could make the server read and parse as big a body as they send
before being told 401 (a 500 MB POST took the API server from 0.7 to 2.2 GB). So, before any byte
of a body is read:

* the caller is checked (``authorize``, the plugin's login check; a refusal is answered at once and
  the body is never read, so the server holds at most what its socket buffers);
* a ``Content-Length`` over the limit is refused with 413;
* the body is then read while counting, and refused with 413 as soon as it passes the limit (a
  chunked body has no length to check first); what was read is handed on to the app unchanged.

The limit is ``ERA5_HTTP_MAX_BODY_BYTES`` (the settings model): a country's outline at Natural
Earth's 1:10m is a few MB of GeoJSON. Free of Airflow and of any web framework: plain ASGI.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from era5etl.core.errors import Era5Error

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


class Refused(Era5Error):
    """What ``authorize`` raises for a caller who may not read: the status, the detail, extra headers
    (answered by the guard itself, never reaching the error tree's other handlers)."""

    def __init__(self, status: int, detail: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.headers = headers or {}


class BodyGuard:
    """Wraps an ASGI app: a request that carries a body (any method but GET, HEAD, OPTIONS) is
    authorised first and its body held to ``limit()`` bytes."""

    def __init__(self, app: App, authorize: Callable[[Scope], Awaitable[None]], limit: Callable[[], int]) -> None:
        self.app = app
        self.authorize = authorize
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        try:
            await self.authorize(scope)
        except Refused as exc:
            await _answer(send, exc.status, exc.detail, exc.headers)
            return
        limit = self.limit()
        length = _content_length(scope)
        if length is not None and length > limit:
            await _answer(send, 413, _too_large(length, limit))
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await _answer(send, 413, _too_large(size, limit, at_least=True))
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # after the body: only the client's disconnect is left to hear

        await self.app(scope, replay, send)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _too_large(size: int, limit: int, at_least: bool = False) -> str:
    return (f"the request's body is {'over ' if at_least else ''}{size:,} bytes; at most {limit:,} are taken "
            "(ERA5_HTTP_MAX_BODY_BYTES): simplify the outline (a country's at 1:10m is a few MB), or read "
            "it with the CLI (`python -m era5etl series --region-file FILE`)")


async def _answer(send: Send, status: int, detail: str, headers: dict[str, str] | None = None) -> None:
    payload = json.dumps({"detail": detail}).encode()
    head = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode()),
            (b"connection", b"close")]
    head += [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": payload})
