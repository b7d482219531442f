"""The referee: plays a match between two bot processes, owning the rules and the clocks.

`run_match(spec)` starts both bots once, plays `spec.game_numbers` in order (seats from
`spec.seats(n)`), keeps the bots across games and restarts one that crashed or never said hello.
Each turn is timed on the referee's monotonic clock from sending `turn` to receiving the move,
waiting with `poll(time left)`, never a blocking receive. A bot that breaks the arena's rules
forfeits the game (`Forfeit`: timeout, illegal move, malformed message, crashed, no hello) and the
opponent wins. Nothing a bot sends or does makes `run_match` raise; a bad MatchSpec (unknown game,
bad parameters, illegal start moves) raises ValueError before any bot starts.
"""
from __future__ import annotations

import hmac
import json
import logging
import re
import secrets
import shutil
import tempfile
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import rules
from arena.match.clock import TimeControl
from arena.match.launcher import BotProcess
from arena.match.limits import Limits, Watchdog, connection_owner, cpu_for
from arena.match.protocol import (
    BYE,
    GAME_OVER,
    HELLO,
    MAX_MESSAGE_BYTES,
    MOVE,
    NEW_GAME,
    PROTOCOL_VERSION,
    RESIGN,
    TURN,
    ProtocolError,
    RefereeEndpoint,
    decode_bot_message,
)
from arena.match.records import Forfeit, GameRecord, MoveRecord
from arena.match.spec import BotSpec, MatchSpec

log = logging.getLogger("arena.match.referee")

STARTUP_TIMEOUT_S = 10.0
"""How long a (re)started bot has to connect and say hello (seconds)."""
BYE_GRACE_S = 0.5
"""After `bye`, how long the bots may take to exit before their process groups are killed (seconds)."""
CRASH_CHECK_S = 0.05
"""While waiting for a move, how often the referee checks that the bot's process still runs (seconds)."""
LOG_TAIL_CHARS = 2000
"""How much of what a bot printed during a game goes into the game record (characters)."""
INFO_MAX_CHARS = 8192
"""A move's `info` larger than this (as JSON) is replaced by a comment saying so."""
DETAIL_MAX_CHARS = 300
"""Forfeit details are cut to this length (they quote what the bot sent)."""
MAX_STRAY_MESSAGES = 1000
DROP_EXIT_WAIT_S = 0.2
"""When a bot's connection drops, how long the referee waits to see whether its process exited
(a crash) before it calls it a dropped connection (seconds)."""
"""Unexpected messages (late moves, repeated hellos) a bot may send in one game before it forfeits."""

OnGame = Callable[[GameRecord], None]
OnMove = Callable[[GameRecord, MoveRecord, "rules.State"], None]
OnExternal = Callable[[str, str, str], "Callable[[], str | None] | None"]
"""on_external(name, endpoint, token) for an external seat; may return a status function: None while
the player is there, else why it left (the referee then treats it as crashed)."""


def run_match(
    spec: MatchSpec,
    on_game: OnGame | None = None,
    on_move: OnMove | None = None,
    *,
    startup_timeout_s: float = STARTUP_TIMEOUT_S,
    workdir: str | Path | None = None,
    on_external: OnExternal | None = None,
    limits: Limits | None = None,
) -> list[GameRecord]:
    """Play the games `spec.game_numbers` of `spec` and return their records in order.

    `on_game(record)` is called after each game, `on_move(record, move, state)` after each move.
    Bots run in per-bot working directories under `workdir` (default: a temporary directory,
    removed at the end). A bot with `external=True` is not started: `on_external(name, endpoint,
    token)` is called and the player connects itself. `limits`: what each bot process may use and
    the fairness options (default: `spec.limits`, else `Limits()`). ValueError for a spec that
    cannot be played (before any bot starts).
    """
    if on_external is None and any(b.external for b in spec.bots):
        raise ValueError("an external player needs run_match(..., on_external=...)")
    game = rules.load(spec.game, **spec.params)
    start = replay(game, spec.start_moves)
    if start.outcome is not None:
        raise ValueError(f"the start moves already end the game ({start.outcome.reason})")
    referee = _Referee(spec, game, start, startup_timeout_s, workdir, on_external,
                       limits if limits is not None else spec.limits)
    try:
        return referee.play(on_game, on_move)
    finally:
        referee.close()


def replay(game: rules.Game, moves: tuple[str, ...] | list[str]) -> rules.State:
    """The state after `moves` from the start; ValueError names the first bad move and its ply."""
    state = game.start()
    for ply, move in enumerate(moves):
        try:
            state = state.play(move)
        except ValueError as exc:
            raise ValueError(f"start move {ply + 1} {move!r}: {exc}") from None
    return state


def clean_info(info: Any) -> dict[str, Any]:
    """A bot's `info` as a JSON-safe dict for the record (bytes shown with repr, size capped)."""
    if not info:
        return {}
    try:
        text = json.dumps(info, skipkeys=True, allow_nan=False, default=lambda o: repr(o)[:200])
    except (ValueError, TypeError, RecursionError) as exc:
        return {"comment": f"arena: info dropped, not JSON-safe ({type(exc).__name__})"}
    if len(text) > INFO_MAX_CHARS:
        return {"comment": f"arena: info dropped, {len(text)} characters over the {INFO_MAX_CHARS} limit"}
    return json.loads(text)


class _Forfeited(Exception):
    def __init__(self, seat: int, reason: Forfeit, detail: str, both: bool = False) -> None:
        super().__init__(detail)
        self.seat = seat
        self.both = both
        self.reason = reason
        self.detail = detail if len(detail) <= DETAIL_MAX_CHARS else detail[: DETAIL_MAX_CHARS - 3] + "..."


@dataclass(eq=False)
class _External:
    """The stand-in process of an external player: nothing to start or kill, no log."""

    def __init__(self, on_external: OnExternal, name: str) -> None:
        self.on_external, self.name, self.status = on_external, name, None

    def start(self, endpoint: str, token: str) -> None:
        self.status = self.on_external(self.name, endpoint, token)

    def exit_status(self) -> str | None:
        return self.status() if self.status is not None else None

    def stop(self, grace_s: float = 0.0) -> None:
        pass

    def log_size(self) -> int:
        return 0

    def read_log(self, offset: int, max_chars: int) -> str:
        return ""

    def cap_log(self) -> bool:
        return False


@dataclass(eq=False)
class _Bot:
    spec: BotSpec
    workdir: Path
    process: BotProcess | _External | None = None
    token: str = ""
    identity: bytes | None = None
    failure: tuple[Forfeit, str] | None = None
    """Why this bot cannot play until it is restarted (no hello, crashed...)."""
    stray: int = 0
    log_offset: int = 0
    peer: tuple[str, int] | None = None
    """The (host, port) of the connection its hello came on, when the referee could tell."""
    notes: deque = field(default_factory=lambda: deque(maxlen=3))
    """What the referee received that it could not use while this bot had not said hello."""

    def needs_restart(self) -> bool:
        return (
            self.process is None
            or self.failure is not None
            or self.identity is None
            or self.process.exit_status() is not None
        )


class _Referee:
    def __init__(self, spec: MatchSpec, game: rules.Game, start: rules.State,
                 startup_timeout_s: float, workdir: str | Path | None,
                 on_external: OnExternal | None = None, limits: Limits | None = None) -> None:
        self.spec = spec
        self.limits = limits if limits is not None else Limits()
        self.game = game
        self.start = start
        self.startup_timeout_s = startup_timeout_s
        self.on_external = on_external
        self.own_tmp = workdir is None
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", spec.match_id)[:40]
        self.tmp = Path(tempfile.mkdtemp(prefix=f"arena-{safe}-")) if workdir is None else Path(workdir)
        self.endpoint = RefereeEndpoint()
        self.bots = [
            _Bot(bot, self.tmp / f"bot{i}-{re.sub(r'[^A-Za-z0-9_.-]+', '_', bot.name)[:40]}")
            for i, bot in enumerate(spec.bots)
        ]
        self.by_identity: dict[bytes, _Bot] = {}
        self.peers: dict[tuple[str, int], tuple[_Bot, BotProcess]] = {}
        """Each connection to the referee's socket -> the bot and its process that opened it."""
        self.watchdog = Watchdog()
        """Kills the bots' processes if this referee dies (even by kill -9)."""

    def clock(self, bot: _Bot) -> TimeControl:
        """The bot's own clock if it has one, else the match's."""
        return bot.spec.time_control or self.spec.time_control

    def time_message(self, bot: _Bot) -> dict[str, Any]:
        tc = self.clock(bot)
        return {
            "control": "per_move" if tc.per_move is not None else "increment",
            "per_move_s": float(tc.per_move or 0.0),
            "base_s": float(tc.base or 0.0),
            "increment_s": float(tc.increment),
            "margin_s": float(tc.margin),
        }

    # --- the match ---
    def play(self, on_game: OnGame | None, on_move: OnMove | None) -> list[GameRecord]:
        self._start_bots(self.bots)
        records = []
        for number in self.spec.game_numbers:
            record = self._play_game(number, on_move)
            records.append(record)
            if on_game is not None:
                on_game(record)
        return records

    def close(self) -> None:
        """Say bye, give the bots a moment to exit, then kill every process group."""
        try:
            for bot in self.bots:
                if isinstance(bot.process, BotProcess):
                    bot.process.resume()
                if bot.identity is not None:
                    self.endpoint.send(bot.identity, {"type": BYE})
            deadline = time.monotonic() + BYE_GRACE_S
            while time.monotonic() < deadline and any(
                b.process is not None and b.process.exit_status() is None for b in self.bots
            ):
                time.sleep(0.005)
        finally:
            for bot in self.bots:
                self._stop(bot)
            self.watchdog.close()
            self.endpoint.close()
            if self.own_tmp:
                shutil.rmtree(self.tmp, ignore_errors=True)

    # --- starting and stopping bots ---
    def _stop(self, bot: _Bot) -> None:
        """Kill all of the bot's processes (its group, and those that left it)."""
        if bot.process is None:
            return
        bot.process.stop()
        if isinstance(bot.process, BotProcess):
            self.watchdog.forget(bot.process.pid)

    def _start_bots(self, bots: list[_Bot]) -> None:
        for bot in bots:
            self._stop(bot)
            if bot.identity is not None:
                self.by_identity.pop(bot.identity, None)
            bot.identity = None
            bot.peer = None
            bot.failure = None
            bot.notes.clear()
            bot.token = secrets.token_hex(16)
            if bot.spec.external:
                bot.process = _External(self.on_external, bot.spec.name)  # type: ignore[arg-type]
            else:
                cpu = cpu_for(self.bots.index(bot)) if self.limits.pin_cpus else None
                bot.process = BotProcess(bot.spec.command, bot.workdir, limits=self.limits, cpu=cpu)
            try:
                bot.process.start(self.endpoint.endpoint, bot.token)
            except (OSError, ValueError) as exc:
                bot.failure = (Forfeit.CRASHED, f"could not start {' '.join(bot.spec.command)!r}: {exc}")
            if isinstance(bot.process, BotProcess) and bot.process.pid is not None:
                self.watchdog.register(bot.process.pid, bot.process.marker)
        self._await_hellos(bots)

    def _await_hellos(self, bots: list[_Bot]) -> None:
        deadline = time.monotonic() + self.startup_timeout_s
        pending = [b for b in bots if b.failure is None]
        while pending:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                for bot in pending:
                    seen = "; received: " + " | ".join(bot.notes) if bot.notes else ""
                    bot.failure = (Forfeit.NO_HELLO, f"no hello within {self.startup_timeout_s:g} s{seen}")
                return
            got = self.endpoint.receive(min(remaining, CRASH_CHECK_S))
            self._check_connections()
            if got is None:
                for bot in pending:
                    status = bot.process.exit_status() if bot.process else "never started"
                    if status is not None:
                        bot.failure = (Forfeit.CRASHED, f"{status} before saying hello")
            else:
                sender = self.by_identity.get(got[0])
                if sender is None:
                    self._on_unbound(*got)
                else:
                    log.info("%s: message between games ignored", sender.spec.name)
            pending = [b for b in pending if b.failure is None and b.identity is None]

    def _on_unbound(self, identity: bytes, frame: bytes | None) -> None:
        """A message from a peer that has not said hello: a hello binds it, anything else is noted."""
        waiting = [b for b in self.bots if b.identity is None and b.failure is None]
        try:
            if frame is None:
                raise ProtocolError("a message must be exactly one frame")
            message = decode_bot_message(frame)
            if message["type"] != HELLO:
                raise ProtocolError(f"a {message['type']!r} message before hello")
        except ProtocolError as exc:
            for bot in waiting:
                bot.notes.append(str(exc)[:200])
            log.info("message from an unknown peer dropped: %s", exc)
            return
        token = message["token"].encode("utf-8", "replace")
        for bot in waiting:
            if hmac.compare_digest(token, bot.token.encode()):
                if message["protocol"] != PROTOCOL_VERSION:
                    bot.failure = (Forfeit.MALFORMED_MESSAGE, f"hello for protocol {message['protocol']}; "
                                   f"this referee speaks protocol {PROTOCOL_VERSION}")
                    return
                bot.identity = identity
                self.by_identity[identity] = bot
                self.endpoint.bind(identity)
                self._check_connections()
                peers = [p for p, (b, process) in self.peers.items() if b is bot and process is bot.process]
                bot.peer = peers[0] if len(peers) == 1 else None
                return
        for bot in waiting:
            bot.notes.append("a hello with a wrong token")
        log.info("hello with an unknown token dropped")

    def _check_connections(self) -> None:
        """Learn which bot opened each new connection; a bot whose connection was dropped while its
        process runs (ZeroMQ drops a peer that sends a frame over the size limit) gets a failure."""
        accepted, dropped = self.endpoint.take_events()
        if accepted:
            markers = {b.process.marker: (b, b.process) for b in self.bots
                       if isinstance(b.process, BotProcess)}
            for peer in accepted:
                owner = connection_owner(peer, self.endpoint.port, markers)
                if owner is not None:
                    self.peers[peer] = owner
        for peer in dropped:
            bot, process = self.peers.pop(peer, (None, None))
            if bot is None or bot.failure is not None or bot.process is not process or bot.identity is None:
                continue  # not a bot's, already failed, a process since stopped, or before its hello
            if peer != bot.peer and (bot.peer is not None or any(b is bot for b, _ in self.peers.values())):
                continue  # another of its connections (e.g. one with a wrong token)
            deadline = time.monotonic() + DROP_EXIT_WAIT_S  # a process that exits closes its socket
            while bot.process.exit_status() is None and time.monotonic() < deadline:
                time.sleep(0.005)
            if bot.process.exit_status() is None:
                bot.failure = (Forfeit.MALFORMED_MESSAGE, "its connection was dropped: a message over "
                               f"the {MAX_MESSAGE_BYTES >> 20} MiB limit, or its socket closed")
                self._stop(bot)

    def _raise_failures(self, players: list[_Bot]) -> None:
        for seat, bot in enumerate(players):
            if bot.failure is not None:
                reason, detail = bot.failure
                raise _Forfeited(seat, reason, detail)

    # --- one game ---
    def _play_game(self, number: int, on_move: OnMove | None) -> GameRecord:
        spec = self.spec
        a, b = spec.bots
        swapped = spec.seats(number)[0] is not a if a is not b else number % 2 == 1
        players = self.bots[::-1] if swapped else self.bots
        game_id = spec.game_id(number)
        record = GameRecord(
            game_id=game_id,
            game=spec.game,
            params=self.game.params,
            players=[b.spec.name for b in players],
            time_control=" / ".join(dict.fromkeys(str(self.clock(b)) for b in players)),
            start_moves=list(spec.start_moves),
            started_at=datetime.now(UTC).isoformat(timespec="seconds"),
        )
        restart = [b for b in players if b.needs_restart()]
        if restart:
            self._start_bots(restart)
        for bot in players:
            bot.stray = 0
            bot.log_offset = bot.process.log_size() if bot.process else 0
        began = time.monotonic()
        try:
            failed = [seat for seat, bot in enumerate(players) if bot.failure is not None]
            if failed:
                seat = failed[0]
                reason, detail = players[seat].failure  # type: ignore[misc]
                if len(failed) == 2:
                    other = players[1].failure
                    detail = (f"both bots failed: seat 0 {reason.value}: {detail}; "
                              f"seat 1 {other[0].value}: {other[1]}")
                raise _Forfeited(seat, reason, detail, both=len(failed) == 2)
            for seat, bot in enumerate(players):
                self.endpoint.send(bot.identity, {  # type: ignore[arg-type]
                    "type": NEW_GAME, "game_id": game_id, "game": spec.game, "params": record.params,
                    "seat": seat, "opponent": players[1 - seat].spec.name, "time": self.time_message(bot),
                    "seed": spec.game_seed(number), "protocol": PROTOCOL_VERSION,
                })
            outcome = self._play_moves(players, record, on_move)
            record.winner = outcome.winner
            record.scores = list(outcome.scores) if outcome.scores is not None else None
            record.reason = outcome.reason
        except _Forfeited as forfeit:
            record.winner = None if forfeit.both else 1 - forfeit.seat
            record.reason = forfeit.reason.value
            record.forfeit = {"seat": forfeit.seat, "reason": forfeit.reason.value, "detail": forfeit.detail}
            loser = players[forfeit.seat]
            if (self.limits.restart_on_forfeit and isinstance(loser.process, BotProcess)
                    and forfeit.reason is not Forfeit.RESIGNED):
                if loser.failure is None:  # it may still be computing: kill it, start it afresh
                    loser.failure = (forfeit.reason, forfeit.detail)
                self._stop(loser)
        for bot in players:
            if isinstance(bot.process, BotProcess):
                bot.process.resume()
        record.duration_s = round(time.monotonic() - began, 6)
        message = {"type": GAME_OVER, "game_id": game_id, "winner": record.winner,
                   "scores": record.scores, "reason": record.reason}
        for seat, bot in enumerate(players):
            if bot.identity is not None and bot.failure is None:
                self.endpoint.send(bot.identity, message)
            if bot.process is not None:
                if bot.process.log_size() > bot.log_offset:
                    text = bot.process.read_log(bot.log_offset, LOG_TAIL_CHARS)
                    if text.strip():
                        record.logs[str(seat)] = text
                bot.process.cap_log()
        return record

    def _play_moves(self, players: list[_Bot], record: GameRecord, on_move: OnMove | None) -> rules.Outcome:
        clocks = [self.clock(players[0]), self.clock(players[1])]
        banks = [clocks[0].initial_bank(), clocks[1].initial_bank()]
        state = self.start
        moves = list(self.spec.start_moves)
        game_id = record.game_id
        send = self.endpoint.send
        while (outcome := state.outcome) is None:
            seat = state.seat
            bot = players[seat]
            ply = state.ply
            legal = state.legal_moves()
            left = banks[seat] if banks[seat] > 0 else 0.0
            if self.limits.suspend:  # no pondering on the opponent's time
                for player in players:
                    if isinstance(player.process, BotProcess):
                        player.process.resume() if player is bot else player.process.suspend()
            send(bot.identity, {"type": TURN, "game_id": game_id, "ply": ply, "state": state.to_wire(),  # type: ignore[arg-type]
                                "moves": moves, "legal": legal, "time_left_s": left})
            sent = time.monotonic()
            move, info, used = self._await_move(players, seat, game_id, ply, sent,
                                                sent + left + clocks[seat].margin, left)
            if move not in legal:
                move = self._check_move(state, move, legal, seat)
            state = state.play(move)
            moves.append(move)
            banks[seat] = clocks[seat].bank_after(banks[seat], used)
            done = MoveRecord(ply, seat, move, round(used, 6), info)
            record.moves.append(done)
            if on_move is not None:
                on_move(record, done, state)
        return outcome

    def _await_move(self, players: list[_Bot], seat: int, game_id: str, ply: int, sent: float,
                    deadline: float, left: float) -> tuple[str, dict[str, Any], float]:
        bot = players[seat]
        receive = self.endpoint.receive
        next_check = sent + CRASH_CHECK_S
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                dropped = f" ({bot.stray} messages for another game or ply dropped)" if bot.stray else ""
                raise _Forfeited(seat, Forfeit.TIMEOUT, f"no move for ply {ply} within {left:.3f} s "
                                 f"+ {self.clock(bot).margin:g} s margin{dropped}")
            got = receive(remaining if remaining < CRASH_CHECK_S else CRASH_CHECK_S)
            received = time.monotonic()
            if got is None or received >= next_check:  # on time, even while a bot floods the socket
                next_check = received + CRASH_CHECK_S
                self._check_connections()
                self._raise_failures(players)
                for player in players:  # a bot printing without end must not fill the disk
                    player.process.cap_log()  # type: ignore[union-attr]
                if got is None:
                    status = bot.process.exit_status()  # type: ignore[union-attr]
                    if status is not None:
                        bot.failure = (Forfeit.CRASHED, status)
                        raise _Forfeited(seat, Forfeit.CRASHED, f"{status} while thinking about ply {ply}")
            if got is None:
                continue
            identity, frame = got
            sender = self.by_identity.get(identity)
            if sender is None:
                self._on_unbound(identity, frame)
                continue
            sender_seat = 0 if sender is players[0] else 1
            try:
                if frame is None:
                    raise ProtocolError("a message must be exactly one frame")
                message = decode_bot_message(frame)
            except ProtocolError as exc:
                raise _Forfeited(sender_seat, Forfeit.MALFORMED_MESSAGE, str(exc)) from None
            if (sender is bot and message["type"] == MOVE and message["ply"] == ply
                    and message["game_id"] == game_id):
                if received > deadline:
                    raise _Forfeited(seat, Forfeit.TIMEOUT, f"the move for ply {ply} came "
                                     f"{received - sent:.3f} s after the turn, over the limit")
                return message["move"], clean_info(message.get("info")), received - sent
            if (sender is bot and message["type"] == RESIGN and message["ply"] == ply
                    and message["game_id"] == game_id):
                raise _Forfeited(seat, Forfeit.RESIGNED, f"resigned at ply {ply}")
            sender.stray += 1
            log.info("%s: dropped %s message (game %r, ply %r) while waiting for ply %d of %s",
                     sender.spec.name, message["type"], message.get("game_id"), message.get("ply"),
                     ply, game_id)
            if sender.stray > MAX_STRAY_MESSAGES:
                raise _Forfeited(sender_seat, Forfeit.MALFORMED_MESSAGE,
                                 f"more than {MAX_STRAY_MESSAGES} unexpected messages in one game")

    def _check_move(self, state: rules.State, move: str, legal: list[str], seat: int) -> str:
        """The canonical form of a move given in another accepted notation; else the forfeit."""
        shown = repr(move[:60]) + ("..." if len(move) > 60 else "")
        try:
            canonical = self.game.parse_move(move)
            if canonical in legal:
                return canonical
            state.play(canonical)
            detail = f"{shown} is not a legal move here"
        except ValueError as exc:
            detail = f"{shown}: {exc}"
        except Exception as exc:  # a rules bug must not take the referee down
            detail = f"{shown} could not be checked ({type(exc).__name__}: {exc})"
        raise _Forfeited(seat, Forfeit.ILLEGAL_MOVE, detail)
