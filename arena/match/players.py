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
import time
from collections import deque
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.cell import sandbox, scratch
from arena.cell.endpoint import PrivateSocket
from arena.cell.launcher import BotProcess, PlayerProcess
from arena.cell.limits import Limits, Watchdog
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

if TYPE_CHECKING:
    from arena.match.reuse import BotHub

log = logging.getLogger("arena.match.referee")

BYE_GRACE_S = 0.5
"""After `bye`, how long the bots may take to exit before their process groups are killed (seconds)."""
CRASH_CHECK_S = 0.05
"""While waiting for a message, how often the referee checks that the bots' processes still run (seconds)."""
DROP_EXIT_WAIT_S = 1.0
"""When a bot's connection drops, how long the referee waits to see whether its process exited
(a crash) before it calls it a dropped connection (seconds): a process that dies closes its socket
first, and on a busy machine its exit (a sandbox's, after freeing 256 MB) came 0.2 s later."""
NOTE_MAX_CHARS = 200
"""What the referee keeps of a message it could not use from a peer without hello (characters)."""
PRINTED_LINES = 8
PRINTED_MAX_CHARS = 500
"""A bot that fails before its hello: the forfeit detail quotes the last PRINTED_LINES lines it
printed (its traceback, typically), at most PRINTED_MAX_CHARS characters of them."""

OnExternal = Callable[[str, str, str], "Callable[[], str | None] | None"]
"""on_external(name, endpoint, token) for an external seat; may return a status function: None while
the player is there, else why it left (the referee then treats it as crashed)."""


class _External:
    """The stand-in process of an external player: nothing to start, suspend or kill, no log."""

    pid = None
    freezes = False

    def __init__(self, on_external: OnExternal, name: str) -> None:
        self.on_external, self.name = on_external, name
        self.status: Callable[[], str | None] | None = None

    def start(self, endpoint: str, token: str) -> None:
        self.status = self.on_external(self.name, endpoint, token)

    def exit_status(self) -> str | None:
        return self.status() if self.status is not None else None

    def suspend(self, wait: bool = False) -> None:
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

    def usage(self) -> None:
        return None


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
        self.start_offset: int | None = None
        """Where its log stood when its process was last started, until a game takes it (what a
        bot prints before its hello belongs to its next game's record)."""

    @property
    def name(self) -> str:
        return self.spec.name

    def start(self, process: PlayerProcess, endpoint: str) -> None:
        """Start `process` as this player's (it must be stopped); a process that cannot start fails it."""
        self.process = process
        self.start_offset = process.log_size()
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

    def game_log_offset(self) -> int:
        """Where a new game's part of its log starts: where its process started when it was
        (re)started for this game (so what it printed before its hello is kept), else here."""
        if self.process is None:
            return 0
        offset, self.start_offset = self.start_offset, None
        return offset if offset is not None else self.process.log_size()

    def printed(self) -> str:
        """The last lines it printed since its process started ("" if none): why it failed to
        start, typically."""
        if self.process is None or self.start_offset is None:
            return ""
        text = self.process.read_log(self.start_offset, 4 * PRINTED_MAX_CHARS).strip()
        text = "\n".join(text.splitlines()[-PRINTED_LINES:])
        return text if len(text) <= PRINTED_MAX_CHARS else "..." + text[-PRINTED_MAX_CHARS:]

    def fail_before_hello(self, reason: Forfeit, detail: str) -> None:
        """It could not say hello: fail it, quoting the last lines it printed."""
        printed = self.printed()
        self.fail(reason, detail + (f"; it printed:\n{printed}" if printed else ""))


class Players:
    """The match's two players and the socket they connect to.

    `players[i]` plays `specs[i]`, in a working directory under `workdir`. Every bot process is
    registered with one `Watchdog`, so none outlives the referee. `receive` hands over what a ready
    player sent; a hello binds a player, other messages from an unknown peer are noted.

    When the bots are sandboxed (`isolation`, decided from `limits.sandbox`), each bot process gets
    its own `ipc://` socket (`PrivateSocket`) in a directory only the referee can enter (the
    match's, or the hub's), bind-mounted into that bot's sandbox: a hello counts only on the socket
    of the token's process, so a stolen token is useless. The socket lives as long as the process,
    which a hub may keep for later matches in any seat.
    SandboxUnavailable (a ValueError) for `sandbox = "on"` where bots cannot be isolated.
    """

    def __init__(self, specs: tuple[BotSpec, ...], workdir: Path, limits: Limits,
                 startup_timeout_s: float, on_external: OnExternal | None, hub: BotHub | None = None) -> None:
        self.limits = limits
        self.startup_timeout_s = startup_timeout_s
        self.on_external = on_external
        self.hub = hub
        """Where the bots come from and go back to between matches (arena.match.reuse), or None."""
        self.isolation = (sandbox.decide(limits.sandbox) if not all(spec.external for spec in specs)
                          else sandbox.Isolation(False, "none: no bots"))
        self.endpoint = hub.endpoint if hub is not None else RefereeEndpoint()
        self.players = [Player(spec, workdir / f"bot{i}-{safe_name(spec.name)}")
                        for i, spec in enumerate(specs)]
        self.ipc_dir: str | None = None
        """The 0700 directory of this match's private sockets (with a hub: the hub's, see `_private_dir`)."""
        self.by_identity: dict[bytes, Player] = {}
        self.peers: dict[tuple[str, int], tuple[Player, PlayerProcess]] = {}
        """Each connection to the referee's socket -> the player and its process that opened it."""
        self.watchdog = hub.watchdog if hub is not None else Watchdog()
        """Kills the bots' processes if this referee dies (even by kill -9)."""
        self.started = 0
        """Bot processes started for this match."""
        if hub is not None:
            for i, spec in enumerate(specs):
                kept = None if spec.external else hub.take(spec, limits)
                if kept is not None:
                    self.players[i] = kept
                    kept.notes.clear()
                    if kept.identity is not None:
                        self.by_identity[kept.identity] = kept
                    if kept.peer is not None and kept.process is not None:
                        self.peers[kept.peer] = (kept, kept.process)

    def __iter__(self) -> Any:
        return iter(self.players)

    # --- start-up ---
    def _process_for(self, player: Player) -> PlayerProcess:
        """The process that plays `player`: its bot's, or the stand-in of an external player."""
        if player.spec.external:
            return _External(self.on_external, player.name)  # type: ignore[arg-type]
        private = self._bind_private() if self.isolation.sandboxed else None
        return BotProcess(player.spec.command, player.workdir, limits=self.limits,
                          cpu_slot=self.players.index(player), watchdog=self.watchdog, private=private)

    def _bind_private(self) -> PrivateSocket:
        """A new private socket for one bot process, in a directory only the referee can enter."""
        if self.hub is not None:
            directory = self.hub.private_dir()
        else:
            if self.ipc_dir is None:
                self.ipc_dir = str(scratch.make("ipc"))  # mode 0700
            directory = self.ipc_dir
        path = f"{directory}/{secrets.token_hex(6)}.sock"
        return PrivateSocket(self.endpoint, path)

    @staticmethod
    def _channel(player: Player) -> int:
        """The channel `player`'s hello must come on: its process's private socket's, else TCP's (0)."""
        private = getattr(player.process, "private", None)
        return private.channel if private is not None else 0

    def start(self, players: list[Player]) -> None:
        """(Re)start `players` and wait for their hellos; one that cannot play gets a failure."""
        for player in players:
            if player.identity is not None:
                self.by_identity.pop(player.identity, None)
                self.endpoint.unbind(player.identity)
            player.stop()
            player.start(self._process_for(player), self.endpoint.endpoint)
            self.started += 0 if player.spec.external else 1
        if self.hub is not None:
            self.hub.started += sum(0 if p.spec.external else 1 for p in players)
        self._await_hellos(players)

    def _await_hellos(self, players: list[Player]) -> None:
        deadline = time.monotonic() + self.startup_timeout_s
        pending = [p for p in players if p.pending_hello()]
        while pending:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                for player in pending:
                    seen = "; received: " + " | ".join(player.notes) if player.notes else ""
                    player.fail_before_hello(Forfeit.NO_HELLO,
                                             f"no hello within {self.startup_timeout_s:g} s{seen}")
                return
            got = self.endpoint.receive(min(remaining, CRASH_CHECK_S))
            self.check_connections()
            if got is None:
                for player in pending:
                    status = player.process.exit_status() if player.process else "never started"
                    if status is not None:
                        player.fail_before_hello(Forfeit.CRASHED, f"{status} before saying hello")
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
        except Exception as exc:  # whatever a peer sends, it never raises out of the referee
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
                self.endpoint.bind(identity)
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
        """Say bye, give the bots a moment to exit, then kill every process group. With a hub, the
        bots it may keep go back to it instead, and its socket and watchdog stay open."""
        if self.hub is not None:
            for player in self.players:
                if not self.hub.give_back(player, self.limits):
                    if player.process is not None:
                        player.process.resume()
                    if player.identity is not None and player.process is not None \
                            and player.process.exit_status() is None:
                        self.endpoint.send(player.identity, {"type": BYE})
                    player.stop()
            return
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
