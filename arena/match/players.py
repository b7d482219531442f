"""The two players of a match and the referee's socket: start-up, hellos and connection ownership.

`Players` starts each player's process (`_process_for`: a `BotProcess`, or the stand-in of an
external player), waits for its hello, binds the connection the hello came on to it, and notices a
bot whose connection was dropped. A `Player`'s life is its `BotState`, changed only by `start()`,
`bind()`, `fail()` and `stop()`. At the end `close()` says bye, gives the bots a moment to exit and
kills what is left.
"""
from __future__ import annotations

import hmac
import logging
import secrets
import shutil
import tempfile
import time
from collections import deque
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Any

from arena.match import sandbox
from arena.match.launcher import BotProcess, PlayerProcess
from arena.match.limits import Limits, Watchdog
from arena.match.protocol import (
    BYE,
    HELLO,
    MAX_MESSAGE_BYTES,
    PROTOCOL_VERSION,
    ProtocolError,
    RefereeEndpoint,
    decode_bot_message,
)
from arena.match.records import Forfeit
from arena.match.spec import BotSpec, safe_name

log = logging.getLogger("arena.match.referee")

BYE_GRACE_S = 0.5
"""After `bye`, how long the bots may take to exit before their process groups are killed (seconds)."""
CRASH_CHECK_S = 0.05
"""While waiting for a message, how often the referee checks that the bots' processes still run (seconds)."""
DROP_EXIT_WAIT_S = 0.2
"""When a bot's connection drops, how long the referee waits to see whether its process exited
(a crash) before it calls it a dropped connection (seconds)."""
NOTE_MAX_CHARS = 200
"""What the referee keeps of a message it could not use from a peer without hello (characters)."""

OnExternal = Callable[[str, str, str], "Callable[[], str | None] | None"]
"""on_external(name, endpoint, token) for an external seat; may return a status function: None while
the player is there, else why it left (the referee then treats it as crashed)."""


class _External:
    """The stand-in process of an external player: nothing to start, suspend or kill, no log."""

    pid = None

    def __init__(self, on_external: OnExternal, name: str) -> None:
        self.on_external, self.name = on_external, name
        self.status: Callable[[], str | None] | None = None

    def start(self, endpoint: str, token: str) -> None:
        self.status = self.on_external(self.name, endpoint, token)

    def exit_status(self) -> str | None:
        return self.status() if self.status is not None else None

    def suspend(self) -> None:
        pass

    def resume(self) -> None:
        pass

    def stop(self, grace_s: float = 0.0) -> None:
        pass

    def owns_connection(self, peer: tuple[str, int], server_port: int) -> bool:
        return False

    def log_size(self) -> int:
        return 0

    def read_log(self, offset: int, max_chars: int) -> str:
        return ""

    def cap_log(self) -> bool:
        return False


class BotState(Enum):
    """Where a player is in its life: changed only by `Player.start/bind/fail/stop`."""

    STOPPED = "stopped"
    """No process (not started yet, or stopped)."""
    STARTING = "starting"
    """Its process runs; no hello yet."""
    READY = "ready"
    """It said hello: its connection is known and it can play."""
    FAILED = "failed"
    """It cannot play until it is started again; `failure` says why."""


class Player:
    """One player of the match (a bot or an external player) across its games and restarts."""

    def __init__(self, spec: BotSpec, workdir: Path) -> None:
        self.spec = spec
        self.workdir = workdir
        self.state = BotState.STOPPED
        self.process: PlayerProcess | None = None
        self.token = ""
        self.identity: bytes | None = None
        """The ZeroMQ identity of the connection its hello came on."""
        self.failure: tuple[Forfeit, str] | None = None
        """Why it cannot play until it is restarted (no hello, crashed...)."""
        self.peer: tuple[str, int] | None = None
        """The (host, port) of the connection its hello came on, when the referee could tell."""
        self.notes: deque[str] = deque(maxlen=3)
        """What the referee received that it could not use while this player had not said hello."""
        self.stray = 0
        """Unexpected messages it sent in the current game."""
        self.log_offset = 0
        """Where the current game's part of its log starts."""

    @property
    def name(self) -> str:
        return self.spec.name

    def start(self, process: PlayerProcess, endpoint: str) -> None:
        """Start `process` as this player's (it must be stopped); a process that cannot start fails it."""
        self.process = process
        self.identity = self.peer = self.failure = None
        self.notes.clear()
        self.token = secrets.token_hex(16)
        self.state = BotState.STARTING
        try:
            process.start(endpoint, self.token)
        except (OSError, ValueError) as exc:
            self.fail(Forfeit.CRASHED, f"could not start {' '.join(self.spec.command)!r}: {exc}")

    def bind(self, identity: bytes, peer: tuple[str, int] | None) -> None:
        """Its hello came on connection `identity` (from `peer` when known): it is ready."""
        self.identity, self.peer = identity, peer
        self.state = BotState.READY

    def fail(self, reason: Forfeit, detail: str) -> None:
        """It cannot play until restarted; the first reason given is kept."""
        if self.failure is None:
            self.failure = (reason, detail)
        self.state = BotState.FAILED

    def stop(self) -> None:
        """Kill all of its processes. A failed player stays FAILED (with why) until started again."""
        if self.process is not None:
            self.process.stop()
        if self.state is not BotState.FAILED:
            self.state = BotState.STOPPED

    def needs_restart(self) -> bool:
        """True unless it is ready and its process still runs."""
        return (self.state is not BotState.READY or self.process is None
                or self.process.exit_status() is not None)

    def pending_hello(self) -> bool:
        return self.state is BotState.STARTING


class Players:
    """The match's two players and the socket they connect to.

    `players[i]` plays `specs[i]`, in a working directory under `workdir`. Every bot process is
    registered with one `Watchdog`, so none outlives the referee. `receive` hands over what a ready
    player sent; a hello binds a player, other messages from an unknown peer are noted.

    When the bots are sandboxed (`isolation`, decided from `limits.sandbox`), each bot seat gets
    its own `ipc://` socket in a directory only the referee can enter, bind-mounted into that bot's
    sandbox: a hello counts only on the socket of the token's seat, so a stolen token is useless.
    SandboxUnavailable (a ValueError) for `sandbox = "on"` where bots cannot be isolated.
    """

    def __init__(self, specs: tuple[BotSpec, ...], workdir: Path, limits: Limits,
                 startup_timeout_s: float, on_external: OnExternal | None) -> None:
        self.limits = limits
        self.startup_timeout_s = startup_timeout_s
        self.on_external = on_external
        self.isolation = (sandbox.decide(limits.sandbox) if not all(spec.external for spec in specs)
                          else sandbox.Isolation(False, "none: no bots"))
        self.endpoint = RefereeEndpoint()
        self.players = [Player(spec, workdir / f"bot{i}-{safe_name(spec.name)}")
                        for i, spec in enumerate(specs)]
        self.channels: dict[int, tuple[str, int]] = {}
        """Seat index -> (private socket path, channel) of each sandboxed bot."""
        self.ipc_dir: str | None = None
        if self.isolation.sandboxed:
            self.ipc_dir = tempfile.mkdtemp(prefix="arena-ipc-")  # mode 0700
            for i, spec in enumerate(specs):
                if not spec.external:
                    path = f"{self.ipc_dir}/seat{i}.sock"
                    self.channels[i] = (path, self.endpoint.bind_private(path))
        self.by_identity: dict[bytes, Player] = {}
        self.peers: dict[tuple[str, int], tuple[Player, PlayerProcess]] = {}
        """Each connection to the referee's socket -> the player and its process that opened it."""
        self.watchdog = Watchdog()
        """Kills the bots' processes if this referee dies (even by kill -9)."""

    def __iter__(self) -> Any:
        return iter(self.players)

    # --- start-up ---
    def _process_for(self, player: Player) -> PlayerProcess:
        """The process that plays `player`: its bot's, or the stand-in of an external player."""
        if player.spec.external:
            return _External(self.on_external, player.name)  # type: ignore[arg-type]
        index = self.players.index(player)
        path, channel = self.channels.get(index, (None, 0))
        return BotProcess(player.spec.command, player.workdir, limits=self.limits,
                          cpu_slot=index, watchdog=self.watchdog, socket_path=path,
                          channel=self.endpoint.channel_name(channel) if path else None)

    def _channel(self, player: Player) -> int:
        """The channel `player`'s hello must come on: its private socket's, else the TCP socket's."""
        return self.channels.get(self.players.index(player), (None, 0))[1]

    def start(self, players: list[Player]) -> None:
        """(Re)start `players` and wait for their hellos; one that cannot play gets a failure."""
        for player in players:
            player.stop()
            if player.identity is not None:
                self.by_identity.pop(player.identity, None)
            player.start(self._process_for(player), self.endpoint.endpoint)
        self._await_hellos(players)

    def _await_hellos(self, players: list[Player]) -> None:
        deadline = time.monotonic() + self.startup_timeout_s
        pending = [p for p in players if p.pending_hello()]
        while pending:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                for player in pending:
                    seen = "; received: " + " | ".join(player.notes) if player.notes else ""
                    player.fail(Forfeit.NO_HELLO, f"no hello within {self.startup_timeout_s:g} s{seen}")
                return
            got = self.endpoint.receive(min(remaining, CRASH_CHECK_S))
            self.check_connections()
            if got is None:
                for player in pending:
                    status = player.process.exit_status() if player.process else "never started"
                    if status is not None:
                        player.fail(Forfeit.CRASHED, f"{status} before saying hello")
            else:
                sender = self.by_identity.get(got[0])
                if sender is None:
                    self._on_unbound(*got)
                else:
                    log.info("%s: message between games ignored", sender.name)
            pending = [p for p in pending if p.pending_hello()]

    def _on_unbound(self, identity: bytes, frame: bytes | None) -> None:
        """A message from a peer that has not said hello: a hello binds it, anything else is noted."""
        waiting = [p for p in self.players if p.pending_hello()]
        try:
            if frame is None:
                raise ProtocolError("a message must be exactly one frame")
            message = decode_bot_message(frame)
            if message["type"] != HELLO:
                raise ProtocolError(f"a {message['type']!r} message before hello")
        except ProtocolError as exc:
            for player in waiting:
                player.notes.append(str(exc)[:NOTE_MAX_CHARS])
            log.info("message from an unknown peer dropped: %s", exc)
            return
        token = message["token"].encode("utf-8", "replace")
        for player in waiting:
            if hmac.compare_digest(token, player.token.encode()):
                if self.endpoint.channel_of(identity) != self._channel(player):
                    player.notes.append("a hello with its token from another socket than its own")
                    log.info("%s: hello with its token on a foreign socket dropped", player.name)
                    return
                if message["protocol"] != PROTOCOL_VERSION:
                    player.fail(Forfeit.MALFORMED_MESSAGE, f"hello for protocol {message['protocol']}; "
                                f"this referee speaks protocol {PROTOCOL_VERSION}")
                    return
                self.by_identity[identity] = player
                self.check_connections()
                peers = [peer for peer, (p, process) in self.peers.items()
                         if p is player and process is player.process]
                player.bind(identity, peers[0] if len(peers) == 1 else None)
                return
        for player in waiting:
            player.notes.append("a hello with a wrong token")
        log.info("hello with an unknown token dropped")

    # --- connections ---
    def check_connections(self) -> None:
        """Learn which player opened each new connection; a bot whose connection was dropped while
        its process runs (ZeroMQ drops a peer that sends a frame over the size limit) fails."""
        accepted, dropped = self.endpoint.take_events()
        for peer in accepted:
            for player in self.players:
                if player.process is not None and player.process.owns_connection(peer, self.endpoint.port):
                    self.peers[peer] = (player, player.process)
                    break
        for peer in dropped:
            player, process = self.peers.pop(peer, (None, None))
            if player is None or player.state is not BotState.READY or player.process is not process:
                continue  # not a bot's, already failed, a process since stopped, or before its hello
            if peer != player.peer and (player.peer is not None
                                        or any(p is player for p, _ in self.peers.values())):
                continue  # another of its connections (e.g. one with a wrong token)
            deadline = time.monotonic() + DROP_EXIT_WAIT_S  # a process that exits closes its socket
            while player.process.exit_status() is None and time.monotonic() < deadline:
                time.sleep(0.005)
            if player.process.exit_status() is None:
                player.fail(Forfeit.MALFORMED_MESSAGE, "its connection was dropped: a message over "
                            f"the {MAX_MESSAGE_BYTES >> 20} MiB limit, or its socket closed")
                player.stop()

    # --- messages ---
    def send(self, player: Player, message: dict[str, Any]) -> None:
        self.endpoint.send(player.identity, message)  # type: ignore[arg-type]

    def receive(self, timeout_s: float) -> tuple[Player | None, bytes | None] | None:
        """The next message within `timeout_s` as (sender, frame), None if none came. A message from
        a peer without hello is handled here (a hello binds it) and comes back as (None, None)."""
        got = self.endpoint.receive(timeout_s)
        if got is None:
            return None
        identity, frame = got
        sender = self.by_identity.get(identity)
        if sender is None:
            self._on_unbound(identity, frame)
            return None, None
        return sender, frame

    # --- the end ---
    def close(self) -> None:
        """Say bye, give the bots a moment to exit, then kill every process group."""
        try:
            for player in self.players:
                if player.process is not None:
                    player.process.resume()
                if player.identity is not None:
                    self.endpoint.send(player.identity, {"type": BYE})
            deadline = time.monotonic() + BYE_GRACE_S
            while time.monotonic() < deadline and any(
                p.process is not None and p.process.exit_status() is None for p in self.players
            ):
                time.sleep(0.005)
        finally:
            for player in self.players:
                player.stop()
            self.watchdog.close()
            self.endpoint.close()
            if self.ipc_dir is not None:
                shutil.rmtree(self.ipc_dir, ignore_errors=True)
