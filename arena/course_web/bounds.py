"""Bounds on what a client may make the course server hold: a request's body, and the time its
headers and body may take to arrive.

`BodyLimit` is ASGI middleware: it answers 413 at once for a declared Content-Length past the
route's bound, and counts the body's bytes as they stream in (chunked bodies too), answering 413
and closing the connection as soon as the bound is passed: nothing past it is read, so Starlette
and python-multipart never hold or spool more than the bound. `GuardedH11Protocol` is uvicorn's
h11 protocol with two timers uvicorn lacks (its keep-alive timeout runs only between requests):
a request's headers must be whole HEADER_TIMEOUT_S after its first byte, and a body must not
stall for BODY_IDLE_S; otherwise the connection is closed, so half-sent requests cannot pile up.
`guarded_protocol` makes the class with other timeouts (`arena course serve --header-timeout`,
`--body-idle-timeout`).
A body still coming after the answer (uvicorn reads it to throw it away) is closed past
DRAIN_MAX_BYTES.
"""
from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import h11
from starlette.requests import ClientDisconnect
from uvicorn.protocols.http.h11_impl import H11Protocol

HEADER_TIMEOUT_S = 5.0
"""How long a request's line and headers may take to arrive, from its first byte (or the
connection's opening) (seconds)."""
BODY_IDLE_S = 20.0
"""How long a request's body may send nothing before the connection is closed (seconds)."""
DRAIN_MAX_BYTES = 16 * 1024 * 1024
"""How much of a body the app did not read (it answered first: a redirect to sign in, a refusal)
is received and thrown away, so the client then reads the answer, before the connection is closed."""


class TooLarge(Exception):
    """The body passed its route's bound."""


class BodyLimit:
    """ASGI middleware bounding each HTTP request's body: `bound(path)` is the most bytes a
    request to `path` may send."""

    def __init__(self, app: Any, bound: Callable[[str], int]) -> None:
        self.app = app
        self.bound = bound

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.bound(scope["path"])
        declared = dict(scope["headers"]).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > limit:
            if int(declared) <= limit + DRAIN_MAX_BYTES:  # an honest upload a little too big: read it
                await _discard_body(receive)  # first, so the client, still sending, sees the 413
            await too_large(send, scope["path"], limit, f"{int(declared):,} bytes")
            return
        seen = 0
        started = False

        async def counted() -> Any:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise TooLarge
            return message

        async def watched(message: Any) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted, watched)
        except TooLarge:
            if not started:
                await too_large(send, scope["path"], limit, f"more than {limit:,} bytes")
        except ClientDisconnect:  # the client went away (or was timed out) mid-body: nothing to answer
            pass


async def _discard_body(receive: Any) -> None:
    """Read the request's body to its end and throw it away (the caller bounds how much that is):
    closing with a body still arriving makes the client's system reset the connection, and the
    client may then never read the answer."""
    while True:
        message = await receive()
        if message["type"] != "http.request" or not message.get("more_body", False):
            return


async def too_large(send: Any, path: str, limit: int, sent: str) -> None:
    """Answer 413 and close the connection (the rest of the body is never read)."""
    text = f"too big: {sent}; {path} takes at most {limit:,} bytes"
    if path.startswith("/api/"):
        body, kind = json.dumps({"error": text}).encode(), b"application/json"
    else:
        body, kind = text.encode() + b"\n", b"text/plain; charset=utf-8"
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", kind), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close"), (b"cache-control", b"no-store")]})
    await send({"type": "http.response.body", "body": body})


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a header timeout and a body idle timeout (the module's doc)."""

    header_timeout_s = HEADER_TIMEOUT_S
    body_idle_s = BODY_IDLE_S

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._request_timer: asyncio.TimerHandle | None = None
        self._drained = 0
        super().connection_made(transport)
        self._arm(self.header_timeout_s)

    def data_received(self, data: bytes) -> None:
        if self.cycle is not None and self.cycle.response_complete and self.conn.their_state is h11.SEND_BODY:
            self._drained += len(data)
            if self._drained > DRAIN_MAX_BYTES:
                self.transport.close()
                return
        else:
            self._drained = 0
        super().data_received(data)
        self._rearm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._disarm()  # between requests, uvicorn's keep-alive timeout holds

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _rearm(self) -> None:
        """After data: a header deadline once (kept, not renewed, while headers trickle in); a
        fresh idle deadline for each piece of a body; none while the app answers."""
        state = self.conn.their_state
        if state is h11.IDLE:
            if self._request_timer is None and not self.transport.is_closing():
                self._arm(self.header_timeout_s)
        elif state is h11.SEND_BODY:
            self._disarm()
            self._arm(self.body_idle_s)
        else:
            self._disarm()

    def _arm(self, seconds: float) -> None:
        self._request_timer = self.loop.call_later(seconds, self._too_slow)

    def _disarm(self) -> None:
        if self._request_timer is not None:
            self._request_timer.cancel()
            self._request_timer = None

    def _too_slow(self) -> None:
        self._request_timer = None
        if not self.transport.is_closing():
            self.transport.close()


def guarded_protocol(header_timeout_s: float | None = None,
                     body_idle_s: float | None = None) -> type[GuardedH11Protocol]:
    """GuardedH11Protocol with these timeouts (seconds, each > 0; None: HEADER_TIMEOUT_S,
    BODY_IDLE_S), for uvicorn's `http=`."""
    header_timeout_s = HEADER_TIMEOUT_S if header_timeout_s is None else header_timeout_s
    body_idle_s = BODY_IDLE_S if body_idle_s is None else body_idle_s
    if not (header_timeout_s > 0 and body_idle_s > 0):
        raise ValueError(f"timeouts must be positive, got {header_timeout_s} and {body_idle_s}")
    return type("GuardedH11Protocol", (GuardedH11Protocol,),
                {"header_timeout_s": header_timeout_s, "body_idle_s": body_idle_s})
