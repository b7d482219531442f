"""Bot protocol v1: message names, msgpack framing with validation, and the two ZeroMQ sockets.

This is the only module of arena that imports zmq and msgpack. The referee binds a ROUTER
(`RefereeEndpoint`); each bot connects a DEALER (`BotClient`). Every message is one frame holding
one msgpack map with a string `type`; docs/PROTOCOL.md describes every field.

Wire traffic is logged at debug level on the "arena.match.protocol" logger as `>>` (sent) and `<<`
(received).
"""
from __future__ import annotations

import math
import os
import resource
import struct
import time
from typing import TYPE_CHECKING, Any

import msgpack
import zmq

from arena.cell.endpoint import ENDPOINT_ENV, TOKEN_ENV  # noqa: F401 (the protocol's names, for bots)

if TYPE_CHECKING:
    import logging


def log() -> logging.Logger:
    """The referee side's logger. logging is imported on first use: a bot, which only connects,
    starts without it (6% of a Python bot's start)."""
    import logging

    return logging.getLogger("arena.match.protocol")

PROTOCOL_VERSION = 1
STDIO_BAD_LINE = "bad line from a stdio bot: "
"""How the type of the message the stdio adapter (arena/match/stdio.py) sends for a line of its bot
that is no move starts; the rest says what the bot printed. No bot message has such a type: the
referee refuses it (`malformed_message`) with that rest as the whole detail."""


MAX_MESSAGE_BYTES = 1 << 20
"""Largest frame the referee accepts (bytes); a peer sending more is disconnected by ZeroMQ."""

MAX_NESTING_DEPTH = 32
"""Deepest nesting of maps and lists the referee accepts in a bot's message (the message itself is
depth 1): a deeper one is malformed, checked before anything (JSON, repr, the record) recurses."""
HELLO_MAX_BYTES = 4096
"""Largest first frame of a connection (bytes): it must be a hello. A connection whose first frame
is bigger, or not a valid hello with a known token, has every later frame dropped unread."""

RECEIVE_HWM = 64
"""Messages ZeroMQ queues per incoming connection before it stops reading from it (back-pressure):
with frames of at most MAX_MESSAGE_BYTES, what one connection can make the referee hold."""
MAX_UNBOUND_PEERS = 4096
"""Connections without a hello the endpoint remembers (to drop their later frames unread); the
oldest is forgotten beyond this."""
MAX_PRIVATE_CONNECTIONS = 8
"""Connections a bot's private socket keeps open at once before the bot's hello; one more is dropped
as soon as the referee hears of it. After the hello the socket file is made unconnectable (mode 0):
the kernel refuses every further connection (EACCES), so a bot cannot make the referee hold more
descriptors than this."""
MAX_PRIVATE_CHANNELS = 255
"""Private `ipc://` sockets one endpoint holds open at once (a channel is one byte of an identity;
the numbers of closed ones are reused)."""

LINGER_MS = 0
"""Pending messages are dropped at close: a finished match never waits for a dead peer."""

# bot -> referee
HELLO = "hello"
MOVE = "move"
RESIGN = "resign"
LEGAL_MOVES = "legal_moves"
"""The answer to a `legal` request (the optional move-generation extension, docs/PROTOCOL.md)."""
# referee -> bot
NEW_GAME = "new_game"
TURN = "turn"
GAME_OVER = "game_over"
BYE = "bye"
LEGAL = "legal"
"""The optional move-generation extension: the legal moves of `position`, please (docs/PROTOCOL.md)."""


class ProtocolError(ValueError):
    """A frame that is not a valid protocol message; the message says what is wrong."""


_INT = (int,)
_NUMBER = (int, float)

# type -> ((field, accepted python types, required), ...). Extra fields are allowed (forward
# compatibility); bool is never accepted where an int is expected.
_BOT_FIELDS: dict[str, tuple[tuple[str, tuple[type, ...], bool], ...]] = {
    HELLO: (("token", (str,), True), ("name", (str,), True), ("protocol", _INT, True)),
    MOVE: (("game_id", (str,), True), ("ply", _INT, True), ("move", (str,), True),
           ("info", (dict,), False)),
    RESIGN: (("game_id", (str,), True), ("ply", _INT, True)),
    LEGAL_MOVES: (("request", _INT, True), ("moves", (list,), False), ("error", (str,), False)),
}
_REFEREE_FIELDS: dict[str, tuple[tuple[str, tuple[type, ...], bool], ...]] = {
    NEW_GAME: (("game_id", (str,), True), ("game", (str,), True), ("params", (dict,), True),
               ("seat", _INT, True), ("opponent", (str,), True), ("time", (dict,), True),
               ("seed", _INT, True), ("protocol", _INT, True)),
    TURN: (("game_id", (str,), True), ("ply", _INT, True), ("state", (dict,), True),
           ("moves", (list,), True), ("legal", (list,), True), ("time_left_s", _NUMBER, True)),
    GAME_OVER: (("game_id", (str,), True), ("winner", (int, type(None)), True),
                ("scores", (list, type(None)), True), ("reason", (str,), True)),
    BYE: (),
    LEGAL: (("request", _INT, True), ("position", (dict,), True)),
}

_packer = msgpack.Packer(use_bin_type=True)


def encode(message: dict[str, Any]) -> bytes:
    """One msgpack frame for `message` (a dict with a string `type`)."""
    try:
        return _packer.pack(message)
    except (TypeError, ValueError, OverflowError) as exc:
        _packer.reset()
        raise ProtocolError(f"cannot encode {message.get('type')!r} message: {exc}") from None


def _unpack(frame: bytes) -> dict[str, Any]:
    if not isinstance(frame, (bytes, bytearray, memoryview)):
        raise ProtocolError(f"a frame must be bytes, got {type(frame).__name__}")
    try:
        message = msgpack.unpackb(frame, raw=False, strict_map_key=True)
    except Exception as exc:  # msgpack raises many kinds: ExtraData, StackError, ValueError...
        raise ProtocolError(f"not a msgpack message ({type(exc).__name__}: {exc}); "
                            f"first bytes {bytes(frame[:16])!r}") from None
    if not isinstance(message, dict):
        raise ProtocolError(f"a message must be a msgpack map, got {type(message).__name__}")
    kind = message.get("type")
    if not isinstance(kind, str):
        raise ProtocolError(f"a message needs a string 'type', got {kind!r}")
    return message


def _check(message: dict[str, Any], schema: dict) -> dict[str, Any]:
    kind = message["type"]
    fields = schema.get(kind)
    if fields is None:
        if kind.startswith(STDIO_BAD_LINE):  # what the stdio bot printed, as the adapter says it
            raise ProtocolError(kind[len(STDIO_BAD_LINE):])
        raise ProtocolError(f"unknown message type {kind!r} (expected one of {', '.join(schema)})")
    for name, kinds, required in fields:
        if name not in message:
            if required:
                raise ProtocolError(f"{kind!r} message without {name!r}")
            continue
        value = message[name]
        if not isinstance(value, kinds) or (value is True or value is False) and bool not in kinds:
            names = " or ".join("nil" if k is type(None) else k.__name__ for k in kinds)
            raise ProtocolError(f"{kind!r} message: {name!r} must be {names}, got {value!r:.80}")
    return message


def nesting_depth_over(value: Any, limit: int) -> bool:
    """True if `value` nests maps and lists deeper than `limit` levels (a scalar is depth 0, `{}`
    depth 1). Iterative, so no depth of nesting can raise RecursionError here."""
    stack = [(value, 1)] if isinstance(value, (dict, list)) else []
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def decode_bot_message(frame: bytes) -> dict[str, Any]:
    """A validated bot -> referee message (hello, move or resign); ProtocolError says what is wrong,
    including a message nested deeper than MAX_NESTING_DEPTH."""
    message = _unpack(frame)
    if nesting_depth_over(message, MAX_NESTING_DEPTH):
        raise ProtocolError(f"{message['type']!r} message nested deeper than {MAX_NESTING_DEPTH} "
                            "levels of maps and lists")
    return _check(message, _BOT_FIELDS)


def decode_referee_message(frame: bytes) -> dict[str, Any]:
    """A validated referee -> bot message; ProtocolError for a malformed or unknown one."""
    return _check(_unpack(frame), _REFEREE_FIELDS)


def raise_open_files_limit() -> int:
    """Raise this process's soft limit of open files to its hard limit (the kernel's `nr_open` when
    the hard limit is unlimited) and return it: a referee holds a descriptor for every connection,
    and ZeroMQ aborts the whole process when one cannot be had."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard
    if hard == resource.RLIM_INFINITY:
        try:
            with open("/proc/sys/fs/nr_open") as f:
                target = int(f.read())
        except (OSError, ValueError):
            return soft
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (OSError, ValueError):
            return soft
        return target
    return soft


def _timeout_ms(seconds: float | None) -> int | None:
    if seconds is None:
        return None
    return max(0, math.ceil(seconds * 1000))


class RefereeEndpoint:
    """The referee's ROUTER socket on a random loopback port, plus one private `ipc://` ROUTER per
    sandboxed bot (`bind_private`, closed again with `unbind_private`). Use as a context manager.

    Identities handed out by `receive` start with the channel byte (0: the TCP socket, k: a
    private socket), so a peer can never pose as a connection of another channel, and
    `channel_of(identity)` says where a message came in.

    With `monitor` (the default) the sockets' connections are watched: `accepted` and `dropped`
    collect each peer connection opened and closed (ZeroMQ closes one that sends a frame over
    `max_message_bytes`), as (host, port) for TCP and (channel name, descriptor) for a private
    socket; the owner takes them with `take_events()`. A private socket accepts one peer: once a
    connection on it is bound (its bot's hello) the socket file is made unconnectable, and before
    that a connection over MAX_PRIVATE_CONNECTIONS open at once is dropped (`surplus_dropped`
    counts them), so that a bot connecting thousands of times to its own socket costs the referee
    a handful of descriptors. The process's open files limit is raised to its hard limit.

    A connection is unbound until the owner calls `bind(identity)` (after a valid hello): its first
    frame is delivered only if it is at most HELLO_MAX_BYTES, and every later frame of an unbound
    connection is dropped unread (counted in `unbound_dropped`), so connections that never say
    hello cost the referee neither decoding nor memory.
    """

    def __init__(self, host: str = "127.0.0.1", max_message_bytes: int = MAX_MESSAGE_BYTES,
                 monitor: bool = True) -> None:
        raise_open_files_limit()
        self._context = zmq.Context()
        self._max_message_bytes = max_message_bytes
        self._socket = self._router()
        self.port = self._socket.bind_to_random_port(f"tcp://{host}")
        self.endpoint = f"tcp://{host}:{self.port}"
        import logging  # the referee's side only (see log())

        self._debug = log().isEnabledFor(logging.DEBUG)
        self._sockets: dict[int, zmq.Socket] = {0: self._socket}
        """Each open channel -> its socket (0: TCP; a closed private channel's number is reused)."""
        self._monitors: dict[zmq.Socket, int] = {}
        """Each monitor socket -> the channel it watches."""
        self._poller = zmq.Poller()
        self._poller.register(self._socket, zmq.POLLIN)
        self._monitoring = monitor
        self._peers: dict[tuple[int, int], tuple[str, int]] = {}
        self.accepted: list[tuple[str, int]] = []
        self.dropped: list[tuple[str, int]] = []
        self._bound: set[bytes] = set()
        self._unbound: dict[bytes, None] = {}  # connections whose first frame came: insertion order
        self.unbound_dropped = 0
        """Frames of unbound connections dropped unread (over the hello size, or not the first)."""
        self._paths: dict[int, str] = {}
        """Each open private channel -> its socket file."""
        self._open: dict[int, int] = {}
        """Each private channel -> its connections open (as far as the monitor has said)."""
        self._sealed: set[int] = set()
        """Private channels whose bot said hello: their socket file takes no more connections."""
        self.surplus_dropped = 0
        """Connections to private sockets dropped at once (over MAX_PRIVATE_CONNECTIONS, or after
        the hello)."""
        if monitor:
            self._watch(self._socket, 0)

    def _router(self) -> zmq.Socket:
        sock = self._context.socket(zmq.ROUTER)
        sock.setsockopt(zmq.LINGER, LINGER_MS)
        sock.setsockopt(zmq.MAXMSGSIZE, self._max_message_bytes)
        sock.setsockopt(zmq.RCVHWM, RECEIVE_HWM)
        return sock

    def _watch(self, sock: zmq.Socket, channel: int) -> None:
        monitor = sock.get_monitor_socket(zmq.EVENT_ACCEPTED | zmq.EVENT_DISCONNECTED)
        self._monitors[monitor] = channel
        self._poller.register(monitor, zmq.POLLIN)

    def bind_private(self, path: str) -> int:
        """Bind one more ROUTER on `ipc://path` (in a directory only the referee can enter, made
        connectable by the bot's user once bind-mounted into its sandbox) and return its channel."""
        channel = next((k for k in range(1, MAX_PRIVATE_CHANNELS + 1) if k not in self._sockets), None)
        if channel is None:
            raise ValueError(f"more than {MAX_PRIVATE_CHANNELS} private sockets open at once")
        sock = self._router()
        try:
            sock.bind(f"ipc://{path}")
            os.chmod(path, 0o666)  # the bot may run as another user; the directory guards it
        except (zmq.ZMQError, OSError):
            sock.close(linger=LINGER_MS)
            raise
        self._sockets[channel] = sock
        self._paths[channel] = path
        self._open[channel] = 0
        self._sealed.discard(channel)
        self._poller.register(sock, zmq.POLLIN)
        if self._monitoring:
            self._watch(sock, channel)
        return channel

    def unbind_private(self, channel: int) -> None:
        """Close the private socket of `channel` (its bot was stopped for good), forget its peers
        and free the channel's number; an unknown or closed channel is ignored."""
        sock = self._sockets.get(channel) if channel > 0 else None
        if sock is None:
            return
        del self._sockets[channel]
        self._paths.pop(channel, None)
        self._open.pop(channel, None)
        self._sealed.discard(channel)
        self._poller.unregister(sock)
        for monitor in [m for m, c in self._monitors.items() if c == channel]:
            try:
                sock.disable_monitor()
            except zmq.ZMQError:
                pass
            self._poller.unregister(monitor)
            monitor.close(linger=LINGER_MS)
            del self._monitors[monitor]
        sock.close(linger=LINGER_MS)
        self._bound = {i for i in self._bound if self.channel_of(i) != channel}
        for identity in [i for i in self._unbound if self.channel_of(i) == channel]:
            del self._unbound[identity]
        for key in [k for k in self._peers if k[0] == channel]:
            self.dropped.append(self._peers.pop(key))

    @property
    def private_channels(self) -> int:
        """How many private sockets are open."""
        return len(self._sockets) - 1

    @staticmethod
    def channel_of(identity: bytes) -> int:
        """The channel (0: TCP, k: a private socket) a peer's identity belongs to."""
        return identity[0] if identity else -1

    @staticmethod
    def channel_name(channel: int) -> str:
        """How a private channel's connections are named in `accepted`/`dropped`."""
        return f"ipc-channel-{channel}"

    def bind(self, identity: bytes) -> None:
        """`identity` said a valid hello: deliver all its frames from now on. On a private socket,
        no further connection is taken: its file is made unconnectable (the bot inside its
        sandbox is not its owner, or sees it on a read-only mount)."""
        self._bound.add(identity)
        self._unbound.pop(identity, None)
        channel = self.channel_of(identity)
        if channel in self._paths and channel not in self._sealed:
            self._sealed.add(channel)
            try:
                os.chmod(self._paths[channel], 0)
            except OSError:  # removed already: nobody can connect to it either
                pass

    def unbind(self, identity: bytes) -> None:
        """Drop every later frame of `identity` unread (a bot that was stopped, say)."""
        self._bound.discard(identity)
        self._remember_unbound(identity)

    def _remember_unbound(self, identity: bytes) -> None:
        self._unbound[identity] = None
        if len(self._unbound) > MAX_UNBOUND_PEERS:
            del self._unbound[next(iter(self._unbound))]

    def _admit(self, identity: bytes, size: int) -> bool:
        """Whether a frame of `size` bytes from `identity` is delivered (see the class docstring)."""
        if identity in self._bound:
            return True
        if identity in self._unbound:
            self.unbound_dropped += 1
            return False
        self._remember_unbound(identity)
        if size > HELLO_MAX_BYTES:
            self.unbound_dropped += 1
            log().info("first frame of %r dropped: %d bytes, over the %d-byte hello limit",
                     identity, size, HELLO_MAX_BYTES)
            return False
        return True

    def take_events(self) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
        """The peers connected and disconnected since the last call."""
        accepted, dropped = self.accepted, self.dropped
        self.accepted, self.dropped = [], []
        return accepted, dropped

    def _on_monitor_events(self, monitor: zmq.Socket) -> None:
        channel = self._monitors[monitor]
        while True:
            try:
                frames = monitor.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                return
            event, fd = struct.unpack("=HI", frames[0][:6])
            if event == zmq.EVENT_ACCEPTED:
                if channel and (channel in self._sealed
                                or self._open.get(channel, 0) >= MAX_PRIVATE_CONNECTIONS):
                    self._drop_connection(channel, fd)
                    continue
                if channel:
                    self._open[channel] = self._open.get(channel, 0) + 1
                    peer = (self.channel_name(channel), fd)
                else:
                    import socket  # the referee's side only: a bot starts without it (5 ms)

                    try:
                        with socket.socket(fileno=os.dup(fd)) as sock:
                            peer = sock.getpeername()[:2]
                    except OSError:
                        continue
                self._peers[(channel, fd)] = peer
                self.accepted.append(peer)
            elif event == zmq.EVENT_DISCONNECTED and (channel, fd) in self._peers:
                self.dropped.append(self._peers.pop((channel, fd)))
                if channel in self._open:
                    self._open[channel] -= 1

    def _drop_connection(self, channel: int, fd: int) -> None:
        """Close the connection ZeroMQ accepted as descriptor `fd` on private `channel` (shut down
        under it: ZeroMQ then closes it as a peer that left), if that descriptor is still one of
        that socket's connections."""
        import socket  # the referee's side only: a bot starts without it (5 ms)

        self.surplus_dropped += 1
        try:
            with socket.socket(fileno=os.dup(fd)) as sock:
                if sock.family == socket.AF_UNIX and sock.getsockname() == self._paths.get(channel):
                    sock.shutdown(socket.SHUT_RDWR)
        except OSError:  # closed already
            pass
        if self.surplus_dropped in (1, 100, 10000):
            log().info("%s: %d connections over its limit dropped", self.channel_name(channel),
                     self.surplus_dropped)

    def send(self, identity: bytes, message: dict[str, Any]) -> None:
        """Queue `message` for the peer `identity`; a gone or stalled peer loses it silently."""
        frame = encode(message)
        if self._debug:
            log().debug(">> %r %r", identity, message)
        sock = self._sockets.get(self.channel_of(identity))
        if sock is None:
            return
        try:
            sock.send_multipart((identity[1:], frame), zmq.NOBLOCK)
        except zmq.Again:
            log().info("peer %r is not reading: %s message dropped", identity, message.get("type"))

    def receive(self, timeout_s: float) -> tuple[bytes, bytes | None] | None:
        """Wait at most `timeout_s` for one message: (identity, frame), None on timeout.

        The frame is None when the peer sent a multi-frame message (invalid in v1). Connections
        opened and closed are noted on the way (see take_events); frames of unbound connections
        are dropped as the class docstring says.
        """
        deadline = time.monotonic() + timeout_s
        while True:
            got = self._receive_one(deadline)
            if got is not False:
                return got  # type: ignore[return-value]
            if time.monotonic() >= deadline:  # a stream of dropped frames never delays a timeout
                return None

    def _receive_one(self, deadline: float) -> tuple[bytes, bytes | None] | None | bool:
        """One message by `deadline`, None on timeout, False for a frame dropped unread."""
        while True:
            ready = dict(self._poller.poll(_timeout_ms(deadline - time.monotonic())))
            for monitor in [m for m in self._monitors if m in ready]:
                self._on_monitor_events(monitor)
            for channel, sock in list(self._sockets.items()):
                if sock not in ready:
                    continue
                try:
                    parts = sock.recv_multipart(zmq.NOBLOCK, copy=False)
                except zmq.Again:
                    continue
                identity = bytes([channel]) + parts[0].bytes
                if not self._admit(identity, sum(len(p) for p in parts[1:])):
                    return False
                frame = parts[1].bytes if len(parts) == 2 else None
                if self._debug:
                    log().debug("<< %r %r", identity,
                              frame if frame is None or len(frame) < 200 else frame[:200])
                return identity, frame
            if time.monotonic() >= deadline:
                return None

    def close(self) -> None:
        for sock in self._sockets.values():
            if self._monitoring:
                try:
                    sock.disable_monitor()
                except zmq.ZMQError:
                    pass
            sock.close(linger=LINGER_MS)
        for monitor in self._monitors:
            monitor.close(linger=LINGER_MS)
        self._context.term()

    def __enter__(self) -> RefereeEndpoint:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class BotClient:
    """A bot's DEALER socket connected to the referee. Use as a context manager."""

    def __init__(self, endpoint: str) -> None:
        self._context = zmq.Context()
        self._socket = self._context.socket(zmq.DEALER)
        self._socket.setsockopt(zmq.LINGER, LINGER_MS)
        self._socket.connect(endpoint)
        self._poller: zmq.Poller | None = None
        self._parent = os.getppid()

    def send(self, message: dict[str, Any]) -> None:
        self._socket.send(encode(message))

    def receive_ready(self) -> dict[str, Any] | None:
        """The next referee message if one is already there (validated), else None at once."""
        try:
            return decode_referee_message(self._socket.recv(zmq.NOBLOCK))
        except zmq.Again:
            return None

    def wait(self, timeout_s: float | None, fd: int) -> tuple[bool, bool]:
        """Wait at most `timeout_s` (None: for ever) until a referee message is ready or the file
        descriptor `fd` is readable: (message ready, fd readable). The stdio adapter waits on its
        bot's stdout this way."""
        if self._poller is None:
            self._poller = zmq.Poller()
            self._poller.register(self._socket, zmq.POLLIN)
            self._poller.register(fd, zmq.POLLIN)
        ready = dict(self._poller.poll(_timeout_ms(timeout_s)))
        return self._socket in ready, fd in ready

    def send_raw(self, frame: bytes) -> None:
        """Send bytes as they are (for tests of the referee's validation)."""
        self._socket.send(frame)

    def receive(self, timeout_s: float | None = None) -> dict[str, Any] | None:
        """The next referee message, validated; None after `timeout_s` (None: wait for ever)."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:  # polls at least once, so receive(0) takes a message that is already there
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            if self._socket.poll(_timeout_ms(remaining), zmq.POLLIN):
                return decode_referee_message(self._socket.recv())
            if remaining is not None and remaining <= 0:
                return None

    def receive_while_parent_lives(self, check_s: float) -> dict[str, Any] | None:
        """The next referee message, however long it takes; None once this process's parent (the
        referee, or the sandbox it started) is gone, looked at every `check_s` of silence. A bot
        leaves on bye or this None, never on silence: a busy machine starts an opponent slowly."""
        while (message := self.receive(check_s)) is None:
            if os.getppid() != self._parent:
                return None
        return message

    def close(self) -> None:
        self._socket.close(linger=LINGER_MS)
        self._context.term()

    def __enter__(self) -> BotClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
