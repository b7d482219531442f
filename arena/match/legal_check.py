"""The move-generation check: does a bot's own move generator agree with the rules?

The referee starts the bot (as a match does: sandboxed per `limits`, with its hello), sends it a
`new_game` naming the game (no `turn` follows), then one `legal` request per position (positions
from random playouts with a seed, `sample_positions`) and compares each `legal_moves` answer with
the rules' legal moves: the optional protocol extension of docs/PROTOCOL.md, section
"Move generation". Used by a course's `legal` phase requirement (arena/course/season/phases.py): the
Domineering course's phase 2 asks for exactly this. Nothing the bot sends makes it raise.
"""
from __future__ import annotations

import random
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import rules
from arena.cell import scratch
from arena.cell.limits import Limits
from arena.match.players import CRASH_CHECK_S, BotState, Players
from arena.match.protocol import (
    LEGAL,
    LEGAL_MOVES,
    NEW_GAME,
    PROTOCOL_VERSION,
    ProtocolError,
    decode_bot_message,
)
from arena.match.spec import BotSpec

LEGAL_TIMEOUT_S = 2.0
"""How long the bot has to answer one `legal` request (seconds)."""
STARTUP_TIMEOUT_S = 10.0
"""How long the bot has to say hello (seconds), as in a match."""
MAX_SHOWN = 10
"""Disagreeing positions kept in a LegalCheck (the count of all is `total - agreed`)."""
MAX_STRAY = 1000
"""Other messages a bot may send during the check before it fails."""
NO_ANSWER = "does not answer the `legal` request: see docs/PROTOCOL.md"
CHECK_GAME_ID = "legal-check"


@dataclass(frozen=True)
class LegalCheck:
    """The check's result: on how many of `total` positions the bot's moves were the rules' moves;
    `disagreements` (at most MAX_SHOWN) as (the position's wire form, moves it left out, moves it
    gave that are not legal); `error`: why the check could not be done (no answer, a crash...)."""

    agreed: int
    total: int
    disagreements: list[tuple[dict[str, Any], list[str], list[str]]] = field(default_factory=list)
    error: str | None = None

    @property
    def passed(self) -> bool:
        return self.error is None and self.agreed == self.total

    def summary(self) -> str:
        """One line for people: the verdict and the first disagreement."""
        if self.error is not None:
            return f"move generation not checked: the bot {self.error}"
        text = f"move generation agreed with the rules on {self.agreed} of {self.total} positions"
        if self.disagreements:
            _, missing, extra = self.disagreements[0]
            parts = ([f"left out {', '.join(missing)}"] if missing else []) + \
                    ([f"gave {', '.join(extra)} (not legal)"] if extra else [])
            text += f"; first disagreement: {'; '.join(parts)}"
        return text


class _Failed(Exception):
    """The bot cannot be checked further: the message says why (after "the bot ")."""


def sample_positions(game: rules.Game, count: int, seed: int = 0) -> list[rules.State]:
    """`count` different positions still in play, from random playouts of `game` seeded with
    `seed` (the same seed, the same positions); fewer on a board with fewer positions."""
    rng = random.Random(seed)
    found: dict[str, rules.State] = {}
    playouts = 0
    while len(found) < count and playouts < 50 * count + 100:
        playouts += 1
        state = game.start()
        while state.outcome is None and len(found) < count:
            if rng.random() < 0.5:
                found.setdefault(repr(state.to_wire()), state)
            state = state.play(rng.choice(state.legal_moves()))
    return list(found.values())


def check_move_generation(bot: BotSpec, game: str, params: dict[str, Any],
                          positions: int | Sequence[rules.State], limits: Limits | None = None, *,
                          seed: int = 0, timeout_s: float = LEGAL_TIMEOUT_S,
                          startup_timeout_s: float = STARTUP_TIMEOUT_S) -> LegalCheck:
    """Ask `bot` for the legal moves of `positions` (a count: that many from `sample_positions`
    with `seed`; or the states themselves) of `game` with `params`, and compare with the rules.
    ValueError for a bad game or parameters (before the bot starts); whatever the bot does comes
    back in the LegalCheck."""
    rules_game = rules.load(game, **params)
    states = sample_positions(rules_game, positions, seed) if isinstance(positions, int) else list(positions)
    workdir = scratch.make("work", "legal-")
    players = None
    try:
        players = Players((bot,), workdir, limits if limits is not None else Limits(), startup_timeout_s,
                          None)
        return _Check(players, rules_game, timeout_s).run(states, seed)
    finally:
        if players is not None:
            players.close()
        shutil.rmtree(workdir, ignore_errors=True)


class _Check:
    def __init__(self, players: Players, game: rules.Game, timeout_s: float) -> None:
        self.players = players
        self.player = players.players[0]
        self.game = game
        self.timeout_s = timeout_s
        self.stray = 0

    def run(self, states: list[rules.State], seed: int) -> LegalCheck:
        player = self.player
        agreed = 0
        disagreements: list[tuple[dict[str, Any], list[str], list[str]]] = []
        self.players.start([player])
        if player.state is not BotState.READY:
            reason, detail = player.failure or ("no hello", "")
            why = getattr(reason, "value", reason).replace("_", " ")
            return LegalCheck(0, len(states), [], f"could not start ({why}: {detail})")
        self.players.send(player, {
            "type": NEW_GAME, "game_id": CHECK_GAME_ID, "game": self.game.name, "params": self.game.params,
            "seat": 0, "opponent": "referee", "seed": seed, "protocol": PROTOCOL_VERSION,
            "time": {"control": "per_move", "per_move_s": float(self.timeout_s), "base_s": 0.0,
                     "increment_s": 0.0, "margin_s": 0.0}})
        for number, state in enumerate(states):
            wire = state.to_wire()
            self.players.send(player, {"type": LEGAL, "request": number, "position": wire})
            try:
                answer = self._await(number)
            except _Failed as failed:
                return LegalCheck(agreed, len(states), disagreements, str(failed))
            missing, extra = self._compare(state, answer)
            if not missing and not extra:
                agreed += 1
            elif len(disagreements) < MAX_SHOWN:
                disagreements.append((wire, missing, extra))
        return LegalCheck(agreed, len(states), disagreements)

    def _compare(self, state: rules.State, answer: list[str]) -> tuple[list[str], list[str]]:
        legal = state.legal_moves()
        given: list[str] = []
        extra: list[str] = []
        for move in answer:
            try:
                canonical = self.game.parse_move(move)
            except ValueError:
                canonical = None
            if canonical is None or canonical not in legal:
                if move not in extra:
                    extra.append(move)
            elif canonical not in given:
                given.append(canonical)
        return [m for m in legal if m not in given], extra

    def _await(self, number: int) -> list[str]:
        """The moves of the bot's answer to request `number`; _Failed when none comes in time,
        the bot exits, or it sends what cannot be read."""
        deadline = time.monotonic() + self.timeout_s
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Failed(f"{NO_ANSWER} (no answer within {self.timeout_s:g} s)")
            got = self.players.receive(min(remaining, CRASH_CHECK_S))
            self.players.check_connections()
            status = self.player.process.exit_status() if self.player.process is not None else "gone"
            if got is None:
                if status is not None:
                    raise _Failed(f"crashed ({status}) while answering the `legal` request")
                continue
            sender, frame = got
            if sender is None:
                continue
            try:
                if frame is None:
                    raise ProtocolError("a message must be exactly one frame")
                message = decode_bot_message(frame)
            except ProtocolError as exc:
                raise _Failed(f"sent a message the referee cannot read: {exc}") from None
            if message["type"] != LEGAL_MOVES or message["request"] != number:
                self.stray += 1
                if self.stray > MAX_STRAY:
                    raise _Failed(f"sent more than {MAX_STRAY} unexpected messages")
                continue
            if message.get("error"):
                raise _Failed(f"{NO_ANSWER} (it answered with an error: {str(message['error'])[:300]})")
            moves = message.get("moves")
            if not isinstance(moves, list) or not all(isinstance(m, str) for m in moves):
                raise _Failed("answered a `legal` request without `moves` as a list of strings")
            return moves
