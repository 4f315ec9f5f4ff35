"""serve.body.BodyGuard around a plain ASGI app: the caller checked before a byte of the body is read,
a declared or streamed body over the limit refused with 413, a body within it handed on unchanged."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from era5etl.serve.body import BodyGuard, Message, Receive, Refused, Scope, Send

LIMIT = 1000


class Echo:
    """An app that reads the whole body and answers its length."""

    def __init__(self) -> None:
        self.called = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.called = True
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": str(len(body)).encode()})


async def _allow(scope: Scope) -> None:
    return None


async def _deny(scope: Scope) -> None:
    raise Refused(401, "Not authenticated", {"WWW-Authenticate": "Bearer"})


def _call(authorize: Any, chunks: list[bytes], method: str = "POST",
          length: int | None = None) -> tuple[Echo, int, dict[bytes, bytes], bytes, int]:
    """(app, status, headers, body, chunks the guard took from the client)."""
    app = Echo()
    guard = BodyGuard(app, authorize=authorize, limit=lambda: LIMIT)
    headers = [] if length is None else [(b"content-length", str(length).encode())]
    scope: Scope = {"type": "http", "method": method, "headers": headers}
    pending = list(chunks)
    taken = 0
    sent: list[Message] = []

    async def receive() -> Message:
        nonlocal taken
        taken += 1
        chunk = pending.pop(0)
        return {"type": "http.request", "body": chunk, "more_body": bool(pending)}

    async def send(message: Message) -> None:
        sent.append(message)

    asyncio.run(guard(scope, receive, send))
    start, body = sent[0], b"".join(m.get("body", b"") for m in sent[1:])
    return app, start["status"], dict(start["headers"]), body, taken


def test_a_refused_caller_is_answered_before_the_body_is_read() -> None:
    app, status, headers, body, taken = _call(_deny, [b"x" * 100] * 5_000, length=500_000)
    assert (status, taken, app.called) == (401, 0, False)
    assert json.loads(body) == {"detail": "Not authenticated"} and headers[b"www-authenticate"] == b"Bearer"


def test_a_declared_length_over_the_limit_is_refused_unread() -> None:
    app, status, _, body, taken = _call(_allow, [b"x" * (LIMIT + 1)], length=LIMIT + 1)
    assert (status, taken, app.called) == (413, 0, False)
    assert "1,001 bytes; at most 1,000" in json.loads(body)["detail"]


def test_a_streamed_body_is_refused_once_past_the_limit() -> None:
    # No Content-Length (chunked): read until the limit is passed, and no further.
    app, status, _, body, taken = _call(_allow, [b"x" * 300] * 10)
    assert (status, taken, app.called) == (413, 4, False)
    assert "over 1,200 bytes" in json.loads(body)["detail"]


@pytest.mark.parametrize("chunks", [[b"x" * LIMIT], [b"ab", b"", b"cd" * 10], [b""]])
def test_a_body_within_the_limit_reaches_the_app_whole(chunks: list[bytes]) -> None:
    app, status, _, body, _ = _call(_allow, chunks, length=sum(map(len, chunks)))
    assert (status, app.called, int(body)) == (200, True, sum(map(len, chunks)))


def test_a_get_is_not_held() -> None:
    # No body to guard: the app's own login check (its dependency) answers it.
    app, status, _, body, _ = _call(_deny, [b""], method="GET")
    assert (status, app.called, body) == (200, True, b"0")
