"""The bot SDK: subclass `Bot`, implement `choose`, call `run()`.

    import random
    from bots.sdk import Bot

    class MyBot(Bot):
        name = "mybot"

        def choose(self, state, time_left):
            return random.choice(state.legal_moves())

    if __name__ == "__main__":
        MyBot().run()

`run()` speaks protocol v1 (docs/PROTOCOL.md) with the referee named by the environment variables
ARENA_ENDPOINT and ARENA_TOKEN. While `choose` runs these attributes are set: `game` (the
rules.Game), `game_id`, `seat`, `opponent`, `time_control` (the new_game message's `time` map),
`ply`, `moves` (every move so far) and `legal` (the referee's list of legal moves, in canonical
notation). An exception in `choose` does not lose the
game by a crash: the SDK answers the first legal move, prints the traceback, and sends it (its last
ERROR_MAX_CHARS characters) as `info["error"]`; the referee counts those moves in the game record's
`errors`, and `arena submit` refuses a bot that had any.

The SDK also answers the optional `legal` request (docs/PROTOCOL.md, "Move generation"): the
moves of `legal_moves(state)`, by default the rules' own; a course that checks students' move
generators has them override it with their own generator.
"""
from __future__ import annotations

import os
import random
import sys
from typing import Any

import rules
from arena.match.protocol import (
    BYE,
    ENDPOINT_ENV,
    GAME_OVER,
    HELLO,
    LEGAL,
    LEGAL_MOVES,
    MOVE,
    NEW_GAME,
    PROTOCOL_VERSION,
    TOKEN_ENV,
    TURN,
    BotClient,
    ProtocolError,
)

ERROR_MAX_CHARS = 2000
"""How much of choose()'s traceback goes into `info["error"]` (its last characters)."""
PARENT_CHECK_S = 1.0
"""How often a waiting bot checks that the referee that started it still runs (seconds)."""


class Bot:
    """Base class of bots. Subclasses implement `choose`; the other hooks are optional."""

    name = "bot"
    """The name sent in `hello` (the referee's match configuration names the bot for results)."""

    def __init__(self, **options: Any) -> None:
        self.options = options
        self.rng = random.Random()
        self.game: rules.Game | None = None
        self.game_id = ""
        self.seat = 0
        self.opponent = ""
        self.ply = 0
        self.moves: list[str] = []
        self.legal: list[str] = []
        self.time_control: dict[str, Any] = {}
        """The `time` map of the current game's new_game message (docs/PROTOCOL.md): its clock."""
        self._games: dict[tuple, rules.Game] = {}
        self._state: rules.State | None = None
        self._state_moves: list[str] = []

    # --- to implement ---
    def choose(self, state: rules.State, time_left: float) -> str | tuple[str, dict[str, Any]]:
        """The move to play in `state` (canonical notation), optionally with an `info` dict
        (depth, score, nodes, pv, comment...). `time_left` is in seconds: the per-move limit, or
        the bank of a base+increment clock."""
        raise NotImplementedError

    def new_game(self, game: rules.Game, seat: int, opponent: str, seed: int) -> None:
        """Called when a game starts; `seed` is the referee's per-game seed for reproducible play
        (`self.rng` is already seeded from it)."""

    def legal_moves(self, state: rules.State) -> list[str]:
        """The legal moves of `state`, for the referee's `legal` request (docs/PROTOCOL.md, "Move
        generation"). The rules' by default; override it with your own move generator."""
        return state.legal_moves()

    def game_over(self, winner: int | None, scores: list[int] | None, reason: str) -> None:
        """Called when a game ends; `winner` is a seat or None for a draw."""

    # --- the protocol loop ---
    def run(self, endpoint: str | None = None, token: str | None = None) -> int:
        """Connect, say hello, play until the referee says bye (or goes away). Returns 0."""
        endpoint = endpoint or os.environ.get(ENDPOINT_ENV)
        token = token if token is not None else os.environ.get(TOKEN_ENV)
        if not endpoint or token is None:
            raise SystemExit(f"{self.name}: {ENDPOINT_ENV} and {TOKEN_ENV} are not set: "
                             "a bot is started by the arena referee (see docs/PROTOCOL.md)")
        with BotClient(endpoint) as client:
            client.send({"type": HELLO, "token": token, "name": str(self.name),
                         "protocol": PROTOCOL_VERSION})
            while True:
                try:
                    message = client.receive_while_parent_lives(PARENT_CHECK_S)
                except ProtocolError as exc:  # e.g. a message type newer than this SDK
                    print(f"{self.name}: ignored a message: {exc}", file=sys.stderr)
                    continue
                if message is None:  # the referee died without saying bye
                    return 0
                kind = message["type"]
                if kind == TURN:
                    reply = self._answer(message)
                    try:
                        client.send(reply)
                    except ProtocolError as exc:  # info held something msgpack cannot carry
                        reply["info"] = {"comment": f"info dropped: {exc}"[:500]}
                        client.send(reply)
                elif kind == NEW_GAME:
                    self._start_game(message)
                elif kind == LEGAL:
                    client.send(self._answer_legal(message))
                elif kind == GAME_OVER:
                    self._call_hook(self.game_over, message["winner"], message["scores"],
                                    message["reason"])
                elif kind == BYE:
                    return 0

    def _start_game(self, message: dict[str, Any]) -> None:
        self.game_id = message["game_id"]
        self.seat = message["seat"]
        self.opponent = message["opponent"]
        self.time_control = dict(message.get("time") or {})
        params = message["params"]
        key = (message["game"], tuple(sorted((k, repr(v)) for k, v in params.items())))
        try:
            game = self._games.get(key)
            if game is None:
                game = self._games[key] = rules.load(message["game"], **params)
        except ValueError as exc:
            print(f"{self.name}: cannot play {message['game']!r}: {exc}", file=sys.stderr)
            self.game = None
            return
        self.game = game
        self._state, self._state_moves = game.start(), []
        self.rng.seed(message["seed"] * 2 + self.seat)  # reproducible per game, different per seat
        self._call_hook(self.new_game, game, self.seat, self.opponent, message["seed"])

    def _answer(self, message: dict[str, Any]) -> dict[str, Any]:
        self.ply = message["ply"]
        self.moves = message["moves"]
        self.legal = message["legal"]
        reply: dict[str, Any] = {"type": MOVE, "game_id": message["game_id"], "ply": self.ply}
        try:
            if self.game is None:
                raise ValueError("no game: the new_game message could not be used")
            state = self._follow(message)
            answer = self.choose(state, float(message["time_left_s"]))
            if isinstance(answer, str):
                reply["move"] = answer
            else:
                move, info = answer
                if not isinstance(move, str) or not isinstance(info, dict):
                    raise TypeError(f"choose() must return a str or (str, dict), got {answer!r:.100}")
                reply["move"] = move
                reply["info"] = info
        except Exception as exc:
            import traceback  # on error only: a bot starts without it

            trace = traceback.format_exc()
            print(trace, file=sys.stderr, end="")
            reply["move"] = self.legal[0] if self.legal else ""
            reply["info"] = {"comment": f"choose() raised {type(exc).__name__}: {exc}"[:500],
                             "error": trace if len(trace) <= ERROR_MAX_CHARS
                             else "..." + trace[-ERROR_MAX_CHARS:]}
        return reply

    def _answer_legal(self, message: dict[str, Any]) -> dict[str, Any]:
        """The `legal_moves` answer to a `legal` request: `legal_moves` of its position, or the
        error that kept it from answering (its last line)."""
        reply: dict[str, Any] = {"type": LEGAL_MOVES, "request": message["request"]}
        try:
            position = message["position"]
            game = self.game
            if game is None or position.get("game") != game.name:
                game = rules.load(position["game"], **position.get("params", {}))
            moves = self.legal_moves(game.state_from_wire(position))
            if not isinstance(moves, list) or not all(isinstance(m, str) for m in moves):
                raise TypeError(f"legal_moves() must return a list of str, got {moves!r:.100}")
            reply["moves"] = moves
        except Exception as exc:
            import traceback

            traceback.print_exc()
            reply["error"] = f"{type(exc).__name__}: {exc}"[:500]
        return reply

    def _follow(self, message: dict[str, Any]) -> rules.State:
        """The state of this turn: the previous one with the new moves played on it (cheap), or,
        when the history does not extend what this bot has seen, the referee's wire state."""
        moves, known, state = self.moves, self._state_moves, self._state
        if state is not None and isinstance(moves, list) and moves[: len(known)] == known:
            try:
                for move in moves[len(known):]:
                    state = state.play(move)
            except (ValueError, TypeError):
                state = None
        else:
            state = None
        if state is None or state.ply != message["ply"]:
            state = self.game.state_from_wire(message["state"])  # type: ignore[union-attr]
        self._state, self._state_moves = state, list(moves)
        return state

    def _call_hook(self, hook: Any, *args: Any) -> None:
        try:
            hook(*args)
        except Exception:
            import traceback

            traceback.print_exc()
