"""How a bot in its cell reaches the referee: the environment variables that carry its endpoint and
token, and a sandboxed bot's own socket. The socket's transport is the match's (ZeroMQ, in
`arena/match/protocol.py`); the cell only holds its path and channel, so it imports nothing of it.
"""
from __future__ import annotations

import os
from typing import Protocol

ENDPOINT_ENV = "ARENA_ENDPOINT"
"""Environment variable holding the ZeroMQ endpoint a bot connects its DEALER to."""
TOKEN_ENV = "ARENA_TOKEN"
"""Environment variable holding the bot's secret, sent back in `hello`."""


class PrivateEndpoint(Protocol):
    """What a private socket needs of the referee's endpoint (RefereeEndpoint implements it)."""

    def bind_private(self, path: str) -> int: ...

    def unbind_private(self, channel: int) -> None: ...

    @staticmethod
    def channel_name(channel: int) -> str: ...


class PrivateSocket:
    """One sandboxed bot process's own `ipc://` socket on a `RefereeEndpoint`: its path and channel.
    It belongs to the process (a bot kept between matches keeps it, whatever its seat) and is
    closed when the process is stopped for good, so a long tournament does not pile up sockets."""

    def __init__(self, endpoint: PrivateEndpoint, path: str) -> None:
        self.endpoint = endpoint
        self.path = path
        self.channel = endpoint.bind_private(path)
        self.closed = False

    def close(self) -> None:
        """Close the socket and remove its file (again: nothing)."""
        if not self.closed:
            self.closed = True
            self.endpoint.unbind_private(self.channel)
            try:
                os.unlink(self.path)
            except OSError:
                pass
