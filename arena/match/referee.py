"""The referee: plays a match between two bot processes, owning the rules and the clocks.

`run_match(spec)` starts both bots once, plays `spec.game_numbers` in order (seats from
`spec.seats(n)`), keeps the bots across games and restarts one that crashed or never said hello.
The work is split by job: `players` starts the bots, takes their hellos and owns their connections;
`turns` plays one game's moves on the referee's clock; `forfeits` decides what a forfeit does. A bot
that breaks the arena's rules forfeits the game (`Forfeit`: timeout, illegal move, malformed
message, crashed, no hello) and the opponent wins. Nothing a bot sends or does makes `run_match`
raise; a bad MatchSpec (unknown game, bad parameters, illegal start moves) raises ValueError before
any bot starts.
"""
from __future__ import annotations

import logging
import shutil
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import rules
from arena.cell import scratch
from arena.cell.limits import Limits
from arena.match.clock import TimeControl
from arena.match.forfeits import DETAIL_MAX_CHARS, Forfeited, check_ready, settle
from arena.match.players import BYE_GRACE_S, CRASH_CHECK_S, DROP_EXIT_WAIT_S, OnExternal, Player, Players
from arena.match.protocol import GAME_OVER, NEW_GAME, PROTOCOL_VERSION
from arena.match.records import GameRecord
from arena.match.reuse import BotHub
from arena.match.spec import MatchSpec, safe_name
from arena.match.turns import INFO_MAX_CHARS, MAX_STRAY_MESSAGES, OnMove, Turns, clean_info

__all__ = [
    "BYE_GRACE_S", "CRASH_CHECK_S", "DETAIL_MAX_CHARS", "DROP_EXIT_WAIT_S", "INFO_MAX_CHARS",
    "LOG_TAIL_CHARS", "MAX_STRAY_MESSAGES", "STARTUP_TIMEOUT_S", "OnExternal", "OnGame", "OnMove",
    "clean_info", "replay", "run_match",
]

log = logging.getLogger("arena.match.referee")

STARTUP_TIMEOUT_S = 10.0
"""How long a (re)started bot has to connect and say hello (seconds)."""
LOG_TAIL_CHARS = 2000
"""How much of what a bot printed during a game goes into the game record (characters)."""

OnGame = Callable[[GameRecord], None]


def run_match(
    spec: MatchSpec,
    on_game: OnGame | None = None,
    on_move: OnMove | None = None,
    *,
    startup_timeout_s: float = STARTUP_TIMEOUT_S,
    workdir: str | Path | None = None,
    on_external: OnExternal | None = None,
    limits: Limits | None = None,
    hub: BotHub | None = None,
) -> list[GameRecord]:
    """Play the games `spec.game_numbers` of `spec` and return their records in order.

    `on_game(record)` is called after each game, `on_move(record, move, state)` after each move.
    Bots run in per-bot working directories under `workdir` (default: a temporary directory,
    removed at the end). A bot with `external=True` is not started: `on_external(name, endpoint,
    token)` is called and the player connects itself. `limits`: what each bot process may use and
    the fairness options (default: `spec.limits`, else `Limits()`). `hub`: take the bots from it
    when it has them running, and give them back at the end instead of stopping them
    (arena.match.reuse; the bots then run under the hub's directory). ValueError for a spec that
    cannot be played (before any bot starts).
    """
    if on_external is None and any(b.external for b in spec.bots):
        raise ValueError("an external player needs run_match(..., on_external=...)")
    game = rules.load(spec.game, **spec.params)
    starts = {moves: replay(game, moves) for moves in dict.fromkeys(map(spec.start_for, spec.game_numbers))}
    for start in starts.values():
        if start.outcome is not None:
            raise ValueError(f"the start moves already end the game ({start.outcome.reason})")
    referee = _Referee(spec, game, starts, startup_timeout_s, workdir if hub is None else hub.workdir,
                       on_external, limits if limits is not None else spec.limits, hub)
    try:
        return referee.play(on_game, on_move)
    finally:
        referee.close()


def replay(game: rules.Game, moves: tuple[str, ...] | list[str]) -> rules.State:
    """The state after the start moves `moves`; ValueError names the first bad move and its ply."""
    try:
        return game.replay(moves)
    except ValueError as exc:
        raise ValueError(f"start {exc}") from None


class _Referee:
    """One match: its players (started once, restarted when they fail), then one game after another.

    Owns the per-bot working directories (a temporary directory unless `workdir` is given)."""

    def __init__(self, spec: MatchSpec, game: rules.Game, starts: dict[tuple[str, ...], rules.State],
                 startup_timeout_s: float, workdir: str | Path | None,
                 on_external: OnExternal | None = None, limits: Limits | None = None,
                 hub: BotHub | None = None) -> None:
        self.spec = spec
        self.limits = limits if limits is not None else Limits()
        self.game = game
        self.starts = starts
        """The position after each game's start moves (MatchSpec.start_for), by those moves."""
        self.own_tmp = workdir is None
        self.tmp = (scratch.make("work", f"{safe_name(spec.match_id)}-")
                    if workdir is None else Path(workdir))
        try:
            self.players = Players(spec.bots, self.tmp, self.limits, startup_timeout_s, on_external, hub)
        except BaseException:  # e.g. SandboxUnavailable: nothing started, nothing left behind
            if self.own_tmp:
                shutil.rmtree(self.tmp, ignore_errors=True)
            raise

    def clock(self, player: Player) -> TimeControl:
        """The player's own clock if it has one, else the match's."""
        return player.spec.time_control or self.spec.time_control

    def time_message(self, player: Player) -> dict[str, Any]:
        tc = self.clock(player)
        return {
            "control": "per_move" if tc.per_move is not None else "increment",
            "per_move_s": float(tc.per_move or 0.0),
            "base_s": float(tc.base or 0.0),
            "increment_s": float(tc.increment),
            "margin_s": float(tc.margin),
        }

    # --- the match ---
    def play(self, on_game: OnGame | None, on_move: OnMove | None) -> list[GameRecord]:
        self.players.start([p for p in self.players.players if p.needs_restart()])
        records = []
        for i, number in enumerate(self.spec.game_numbers):
            record = self._play_game(number, on_move, just_started=i == 0)
            records.append(record)
            if on_game is not None:
                on_game(record)
        return records

    def close(self) -> None:
        """Say bye, give the bots a moment to exit, kill what is left, remove the temporary files."""
        try:
            self.players.close()
        finally:
            if self.own_tmp:
                shutil.rmtree(self.tmp, ignore_errors=True)

    # --- one game ---
    def _seat(self, number: int) -> list[Player]:
        """The players in seat order for game `number`."""
        a, b = self.spec.bots
        swapped = self.spec.seats(number)[0] is not a if a is not b else number % 2 == 1
        both = self.players.players
        return both[::-1] if swapped else list(both)

    def _new_record(self, number: int, seated: list[Player]) -> GameRecord:
        return GameRecord(
            game_id=self.spec.game_id(number),
            game=self.spec.game,
            params=self.game.params,
            players=[p.name for p in seated],
            time_control=" / ".join(dict.fromkeys(str(self.clock(p)) for p in seated)),
            start_moves=list(self.spec.start_for(number)),
            started_at=datetime.now(UTC).isoformat(timespec="seconds"),
            isolation=self.players.isolation.label,
            clock=" / ".join(dict.fromkeys(self.clock(p).kind for p in seated)),
        )

    def _play_game(self, number: int, on_move: OnMove | None, just_started: bool = False) -> GameRecord:
        """One game; `just_started`: the players were (re)started for it already, and one that failed
        its start (no hello within the start-up limit) forfeits it rather than being started again."""
        seated = self._seat(number)
        record = self._new_record(number, seated)
        restart = [] if just_started else [p for p in seated if p.needs_restart()]
        if restart:
            self.players.start(restart)
        for player in seated:
            player.stray = 0
            player.log_offset = player.game_log_offset()
        began = time.monotonic()
        try:
            check_ready(seated)
            self._send_new_game(number, seated, record)
            turns = Turns(self.players, self.game, self.limits, seated, [self.clock(p) for p in seated])
            start_moves = self.spec.start_for(number)
            outcome = turns.play(self.starts[start_moves], list(start_moves), record, on_move)
            record.winner = outcome.winner
            record.scores = list(outcome.scores) if outcome.scores is not None else None
            record.reason = outcome.reason
        except Forfeited as forfeit:
            settle(forfeit, seated, record, self.limits)
        record.duration_s = round(time.monotonic() - began, 6)
        self._close_game(seated, record)
        return record

    def _send_new_game(self, number: int, seated: list[Player], record: GameRecord) -> None:
        for seat, player in enumerate(seated):
            self.players.send(player, {
                "type": NEW_GAME, "game_id": record.game_id, "game": self.spec.game, "params": record.params,
                "seat": seat, "opponent": seated[1 - seat].name, "time": self.time_message(player),
                "seed": self.spec.game_seed(number), "protocol": PROTOCOL_VERSION,
            })

    def _close_game(self, seated: list[Player], record: GameRecord) -> None:
        """Let suspended bots run, send game_over to those still playing, and keep what each bot
        printed during the game in the record."""
        for player in seated:
            if player.process is not None:
                player.process.resume()
        message = {"type": GAME_OVER, "game_id": record.game_id, "winner": record.winner,
                   "scores": record.scores, "reason": record.reason}
        for seat, player in enumerate(seated):
            if player.identity is not None and player.failure is None:
                self.players.send(player, message)
            if player.process is not None:
                if player.process.log_size() > player.log_offset:
                    text = player.process.read_log(player.log_offset, LOG_TAIL_CHARS)
                    if text.strip():
                        record.logs[str(seat)] = text
                player.process.cap_log()
