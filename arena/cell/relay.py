"""A loopback TCP endpoint for a sandboxed bot whose ZeroMQ has no `ipc://` (JeroMQ, issue 12).

Inside its sandbox a bot reaches the referee only through its private `ipc://` socket
(arena/cell/sandbox.py). JeroMQ, the Java kit's ZeroMQ, emulates `ipc://` over TCP, so it cannot
connect to it. For such a bot the sandbox runs `python -m arena.cell.relay COMMAND...`: it listens
on a port of the sandbox's own loopback (a network namespace nobody else shares), forks a child
that copies bytes between each connection to that port and the private socket (ZeroMQ's wire
protocol is the same over TCP and ipc), and execs COMMAND in its own place with ARENA_ENDPOINT set
to `tcp://127.0.0.1:PORT`. The bot stays the sandbox's main process (its exit status, signals and
log are as before); the relay child ends when the bot does. Standard library only.
"""
from __future__ import annotations

import os
import selectors
import socket
import sys

from arena.cell.endpoint import ENDPOINT_ENV

CHUNK_BYTES = 1 << 16
"""How much the relay copies at a time (bytes)."""
PARENT_CHECK_S = 0.5
"""How often the relay checks that its bot still runs (seconds)."""


def main(argv: list[str]) -> int:
    """Relay `ipc://PATH` (from ARENA_ENDPOINT) to a loopback port and exec the bot `argv`."""
    if not argv:
        print("usage: python -m arena.cell.relay COMMAND [ARGS...]", file=sys.stderr)
        return 2
    endpoint = os.environ.get(ENDPOINT_ENV, "")
    if not endpoint.startswith("ipc://"):
        print(f"arena relay: {ENDPOINT_ENV} must be an ipc:// endpoint, got {endpoint!r}", file=sys.stderr)
        return 2
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    port = listener.getsockname()[1]
    bot = os.getpid()
    if os.fork() == 0:  # the relay
        try:
            _relay(listener, endpoint[len("ipc://"):], bot)
        finally:
            os._exit(0)
    listener.close()
    os.environ[ENDPOINT_ENV] = f"tcp://127.0.0.1:{port}"
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        print(f"arena relay: cannot run {argv[0]!r}: {exc}", file=sys.stderr)
        return 127


def _relay(listener: socket.socket, path: str, bot: int) -> None:
    """Copy bytes between each accepted connection and a new connection to `path`, until the
    process `bot` (our parent, which became the bot) is gone."""
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, None)
    while os.getppid() == bot:
        for key, _ in selector.select(PARENT_CHECK_S):
            if key.data is None:
                client, _ = listener.accept()
                upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    upstream.connect(path)
                except OSError as exc:
                    print(f"arena relay: cannot reach the referee at {path}: {exc}", file=sys.stderr)
                    client.close()
                    upstream.close()
                    continue
                selector.register(client, selectors.EVENT_READ, upstream)
                selector.register(upstream, selectors.EVENT_READ, client)
                continue
            source, target = key.fileobj, key.data
            try:
                data = source.recv(CHUNK_BYTES)  # type: ignore[union-attr]
                if data:
                    target.sendall(data)
                    continue
            except OSError:
                pass
            for end in (source, target):  # one side closed: close the pair
                selector.unregister(end)
                end.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
