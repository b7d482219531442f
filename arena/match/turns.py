"""One game's moves: send each turn, wait for the move on the referee's clock, check it, play it.

Each turn is timed on the referee's monotonic clock from sending `turn` to receiving the move,
waiting with `poll(time left)`, never a blocking receive. While it waits the referee checks, every
`CRASH_CHECK_S`, that both bots still run and keeps their logs under the cap. The CPU time the
bot's processes used for the move and their wait for a CPU are read before the turn and with the
move (arena/cell/usage.py); on a "cpu" clock the CPU time is what the move is charged, checked on
every wake-up and with the move, under a wall-time ceiling. Whatever breaks the arena's rules
raises `Forfeited`.
"""
from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Any

import rules
from arena.cell.limits import Limits
from arena.cell.usage import Usage, cpu_steal, lagged, referee_wait, running, stolen, waited
from arena.match.clock import TimeControl
from arena.match.forfeits import Forfeited, raise_failures
from arena.match.players import CRASH_CHECK_S, Player, Players
from arena.match.protocol import MOVE, RESIGN, TURN, ProtocolError, decode_bot_message
from arena.match.records import Forfeit, GameRecord, MoveRecord

log = logging.getLogger("arena.match.referee")

INFO_MAX_CHARS = 8192
"""A move's `info` larger than this (as JSON) is replaced by a comment saying so."""
MAX_STRAY_MESSAGES = 1000
"""Unexpected messages (late moves, repeated hellos) a bot may send in one game before it forfeits."""
SHOWN_MOVE_CHARS = 60
"""How much of an illegal move a forfeit detail quotes (characters)."""

LATE_READS = 100
"""Messages read past a move's deadline before the timeout is declared: a move that came while the
referee was kept from a CPU is found (a late move, `Forfeited.move_came`), a flood cannot delay it."""

BUSY_SHARE = 0.5
"""A bot that ran or waited for a CPU at least this share of the time the machine left it of a move
it lost on time was at work: the time the host stole meanwhile, and the referee's own wait for a
CPU, count as its wait (`_note_load`)."""

OnMove = Callable[[GameRecord, MoveRecord, "rules.State"], None]


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


def _spent(before: Usage | None, after: Usage | None) -> tuple[float | None, float | None]:
    """(CPU seconds, seconds waiting for a CPU) between two readings of a bot's usage; None where
    either reading lacks it."""
    if before is None or after is None:
        return None, None
    return max(0.0, after.cpu_s - before.cpu_s), waited(before, after)


def _lost(cpu: float, wait: float, wall: float, steal: float) -> float:
    """What the virtual machine's host took from the bot during a move (`steal`: the most any one
    CPU lost meanwhile), at most the wall time the bot neither ran nor waited for a CPU."""
    return min(steal, max(0.0, wall - cpu - wait))


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def _is_reply(sender: Player, message: dict[str, Any], bot: Player, kind: str, game_id: str,
              ply: int) -> bool:
    """True if `message` is a `kind` message (move or resign) from `bot`, the player to move, for this
    game and ply. Does not check the time nor the move itself."""
    return (sender is bot and message["type"] == kind and message["ply"] == ply
            and message["game_id"] == game_id)


class Turns:
    """Plays the moves of one game between `seated` (players in seat order) from `start`."""

    def __init__(self, players: Players, game: rules.Game, limits: Limits, seated: list[Player],
                 clocks: list[TimeControl]) -> None:
        self.players = players
        self.game = game
        self.limits = limits
        self.seated = seated
        self.clocks = clocks

    def play(self, start: rules.State, start_moves: list[str], record: GameRecord,
             on_move: OnMove | None) -> rules.Outcome:
        """Play to the end and return the outcome; each move goes into `record`. Forfeited when a
        bot breaks the arena's rules."""
        seated, clocks = self.seated, self.clocks
        banks = [clocks[0].initial_bank(), clocks[1].initial_bank()]
        state = start
        moves = list(start_moves)
        game_id = record.game_id
        send, keep = self.players.send, record.moves.append
        # Each ply computes its legal list (sent, then the move is looked up in it: the rules check
        # only a move not listed as such), its wire state (the rules remember board rows) and one
        # MoveRecord, once (benchmarks/referee_overhead.py: the referee adds about 30 us a move).
        while (outcome := state.outcome) is None:
            seat = state.seat
            bot = seated[seat]
            ply = state.ply
            legal = state.legal_moves()
            left = banks[seat] if banks[seat] > 0 else 0.0
            if self.limits.suspend is not False:  # no pondering on the opponent's time
                for player in seated:
                    if player is bot:
                        player.process.resume()  # type: ignore[union-attr]
                    elif self._held(player):  # frozen for sure before the turn is sent
                        player.process.suspend(wait=True)  # type: ignore[union-attr]
            clock = clocks[seat]
            before = bot.process.usage()  # type: ignore[union-attr]
            steal = cpu_steal() if before is not None else ()  # of use only beside the bot's usage
            lag_from = referee_wait() if before is not None else None
            send(bot, {"type": TURN, "game_id": game_id, "ply": ply, "state": state.to_wire(),
                       "moves": moves, "legal": legal, "time_left_s": left})
            sent = time.monotonic()
            # a "cpu" clock allows more wall time only where the bot's CPU time can be read
            deadline = sent + (clock.wall_allowed(left) if before is not None else left) + clock.margin
            try:
                move, info, wall, erred = self._await_move(seat, game_id, ply, sent, deadline, left, before)
                if self._held(bot):  # the freeze begins at once: it is complete by the next turn
                    bot.process.suspend()  # type: ignore[union-attr]
            except Forfeited as forfeit:
                self._note_load(forfeit, record, seat, before, steal, lag_from, time.monotonic() - sent)
                raise
            cpu, wait = _spent(before, bot.process.usage())  # type: ignore[union-attr]
            if cpu is not None and wait is not None:  # the host's steal and the referee's own wait for
                # a CPU (it read the move late) count as a wait for a CPU (arena/cell/usage.py)
                wait += _lost(cpu, wait, wall, stolen(steal, cpu_steal()) + lagged(lag_from, referee_wait()))
            charged = wall
            if clock.kind == "cpu" and cpu is not None:
                if cpu > left + clock.margin:
                    raise Forfeited(seat, Forfeit.TIMEOUT, f"used {cpu:.3f} s of CPU for ply {ply}, over "
                                    f"its {left:.3f} s + {clock.margin:g} s margin")
                charged = cpu
            if erred:  # the bot's own exception, answered for it by the SDK's fallback
                record.errors[seat] += 1
            if move not in legal:
                move = self._check_move(state, move, legal, seat)
            state = state.play(move)
            moves.append(move)
            banks[seat] = clock.bank_after(banks[seat], charged)
            done = MoveRecord(ply, seat, move, round(wall, 6), info, _round(cpu), _round(wait))
            if done.under_load():
                record.loaded_moves += 1
            keep(done)
            if on_move is not None:
                on_move(record, done, state)
        return outcome

    def _held(self, player: Player) -> bool:
        """True if `player` is suspended while its opponent thinks: `suspend` true, or by default
        where its process has a freezer."""
        return self.limits.suspend is not False and (
            bool(self.limits.suspend) or player.process.freezes)  # type: ignore[union-attr]

    def _note_load(self, forfeit: Forfeited, record: GameRecord, seat: int, before: Usage | None,
                   steal: tuple[float, ...], lag_from: float | None, wall: float) -> None:
        """A bot that ran out of time while the machine kept it from a CPU (its threads waiting for
        one, the virtual machine's host running others on the CPU it was on: `steal`, or the referee
        waiting for one and reading its move late: `lag_from`, both read when the turn was sent): the
        forfeit and the record say so (the game was played under load). Otherwise the detail says
        what the bot used and waited, where known: a timeout of its own making, or a short wait to
        be looked into."""
        if forfeit.reason is not Forfeit.TIMEOUT or forfeit.seat != seat:
            return
        after = self.seated[seat].process.usage()  # type: ignore[union-attr]
        cpu, wait = _spent(before, after)
        host = referee = 0.0
        if cpu is not None and wait is not None and after is not None:
            taken, late = stolen(steal, cpu_steal()), lagged(lag_from, referee_wait())
            # they count only for a bot at work: one whose move came, running (or ready to) now, or
            # for at least half of what the host left of the move (the referee's wait took nothing
            # from the bot); a bot asleep lost nothing
            if (taken or late) and (forfeit.move_came or running(after)
                                    or cpu + wait >= BUSY_SHARE * (wall - taken)):
                lost = _lost(cpu, wait, wall, taken + late)
                host = min(lost, taken)  # the steal first: the rest is the referee's
                referee = lost - host
                wait += lost
        if MoveRecord(0, seat, "", wall, {}, cpu, wait).under_load():
            forfeit.under_load = True
            why = "".join(f", {s:.3f} s of them while {who}" for s, who in (
                (host, "the host ran others on its virtual CPU"), (referee, "the referee waited for one"))
                if s >= 1e-3)
            forfeit.detail += f" (under load: it waited {wait:.3f} s of it for a CPU{why})"
            record.loaded_moves += 1
        elif cpu is not None and wait is not None:
            forfeit.detail += f" (it used {cpu:.3f} s of CPU and waited {wait:.3f} s for one)"

    def _check_health(self, seat: int, ply: int, timed_out: bool) -> None:
        """Forfeited if a bot has failed (a dropped connection...) or, after a quiet poll
        (`timed_out`), the bot to move has exited; keeps both logs under the cap. Does not read
        messages."""
        self.players.check_connections()
        raise_failures(self.seated)
        for player in self.seated:  # a bot printing without end must not fill the disk
            player.process.cap_log()  # type: ignore[union-attr]
        if timed_out:
            bot = self.seated[seat]
            status = bot.process.exit_status()  # type: ignore[union-attr]
            if status is not None:
                bot.fail(Forfeit.CRASHED, status)
                raise Forfeited(seat, Forfeit.CRASHED, f"{status} while thinking about ply {ply}")

    def _await_move(self, seat: int, game_id: str, ply: int, sent: float, deadline: float,
                    left: float, before: Usage | None) -> tuple[str, dict[str, Any], float, bool]:
        """The move for `ply` as (move, info for the record, wall seconds used, whether its info
        reported an error of the bot's own); Forfeited on a timeout (on a "cpu" clock, also as soon
        as a check finds the bot's CPU time since `before` past `left`), a crash or a bad message."""
        seated = self.seated
        bot = seated[seat]
        clock = self.clocks[seat]
        on_cpu = clock.kind == "cpu" and before is not None
        receive = self.players.receive
        next_check = sent + CRASH_CHECK_S
        late_reads = 0
        while True:
            remaining = deadline - time.monotonic()
            if remaining > 0:
                got = receive(remaining if remaining < CRASH_CHECK_S else CRASH_CHECK_S)
            elif late_reads < LATE_READS and (got := receive(0)) is not None:
                late_reads += 1  # past the deadline, what came meanwhile is read (the move may be there)
            else:
                dropped = f" ({bot.stray} messages for another game or ply dropped)" if bot.stray else ""
                within = f"{left:.3f} s" if not on_cpu else f"{clock.wall_allowed(left):.3f} s of wall time"
                raise Forfeited(seat, Forfeit.TIMEOUT, f"no move for ply {ply} within {within} "
                                f"+ {clock.margin:g} s margin{dropped}")
            received = time.monotonic()
            if got is None or received >= next_check:  # on time, even while a bot floods the socket
                next_check = received + CRASH_CHECK_S
                self._check_health(seat, ply, timed_out=got is None)
                if on_cpu:
                    cpu = _spent(before, bot.process.usage())[0]  # type: ignore[union-attr]
                    if cpu is not None and cpu > left + clock.margin:
                        raise Forfeited(seat, Forfeit.TIMEOUT, f"used {cpu:.3f} s of CPU for ply {ply} "
                                        f"without a move, over its {left:.3f} s + {clock.margin:g} s margin")
            if got is None:
                continue
            sender, frame = got
            if sender is None:  # a peer without hello: dealt with by `receive`
                continue
            sender_seat = 0 if sender is seated[0] else 1
            try:
                reply = self._on_message(sender, sender_seat, frame, seat, game_id, ply, sent, received,
                                         deadline)
            except Forfeited:
                raise
            except Exception as exc:  # nothing a bot sends may raise out of the referee
                log.exception("%s: message for ply %d of %s could not be handled", sender.name, ply, game_id)
                raise Forfeited(sender_seat, Forfeit.MALFORMED_MESSAGE, "the referee could not handle its "
                                f"message ({type(exc).__name__}: {exc})") from None
            if reply is not None:
                return reply

    def _on_message(self, sender: Player, sender_seat: int, frame: bytes | None, seat: int, game_id: str,
                    ply: int, sent: float, received: float,
                    deadline: float) -> tuple[str, dict[str, Any], float, bool] | None:
        """One message from a player: the awaited move (see _await_move), None for a stray message
        (counted), Forfeited for a malformed one, a resignation or a move too late."""
        bot = self.seated[seat]
        try:
            if frame is None:
                raise ProtocolError("a message must be exactly one frame")
            message = decode_bot_message(frame)
        except ProtocolError as exc:
            raise Forfeited(sender_seat, Forfeit.MALFORMED_MESSAGE, str(exc)) from None
        if _is_reply(sender, message, bot, MOVE, game_id, ply):
            if received > deadline:
                late = Forfeited(seat, Forfeit.TIMEOUT, f"the move for ply {ply} came "
                                 f"{received - sent:.3f} s after the turn, over the limit")
                late.move_came = True
                raise late
            info = message.get("info")
            if not info:  # most moves: nothing to clean
                return message["move"], {}, received - sent, False
            erred = isinstance(info, dict) and bool(info.get("error"))
            return message["move"], clean_info(info), received - sent, erred
        if _is_reply(sender, message, bot, RESIGN, game_id, ply):
            raise Forfeited(seat, Forfeit.RESIGNED, f"resigned at ply {ply}")
        sender.stray += 1
        log.info("%s: dropped %s message (game %r, ply %r) while waiting for ply %d of %s",
                 sender.name, message["type"], message.get("game_id"), message.get("ply"), ply, game_id)
        if sender.stray > MAX_STRAY_MESSAGES:
            raise Forfeited(sender_seat, Forfeit.MALFORMED_MESSAGE,
                            f"more than {MAX_STRAY_MESSAGES} unexpected messages in one game")
        return None

    def _check_move(self, state: rules.State, move: str, legal: list[str], seat: int) -> str:
        """The canonical form of a move given in another accepted notation; else the forfeit."""
        shown = repr(move[:SHOWN_MOVE_CHARS]) + ("..." if len(move) > SHOWN_MOVE_CHARS else "")
        try:
            canonical = self.game.parse_move(move)
            if canonical in legal:
                return canonical
            after = state.play(canonical)  # another spelling the rules play (a Santorini placement
            for listed in legal:           # in the other order) stands for the listed move
                if state.play(listed) == after:
                    return listed
            detail = f"{shown} is not a legal move here"
        except ValueError as exc:
            detail = f"{shown}: {exc}"
        except Exception as exc:  # a rules bug must not take the referee down
            detail = f"{shown} could not be checked ({type(exc).__name__}: {exc})"
        raise Forfeited(seat, Forfeit.ILLEGAL_MOVE, detail)
