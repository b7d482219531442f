"""The search bots: greedy, minimax, alphabeta (simple or medium evaluations) and champion (timed, strong).

Options come from `python -m bots NAME KEY=VALUE`, e.g. `python -m bots alphabeta depth=2`.
Every move carries an `info` dict: depth, score, nodes, pv and the root `candidates`
(a list of {move, score} maps, best first).
"""
from __future__ import annotations

import gc
import time
from typing import Any

import rules
from bots import evaluation
from bots.sdk import Bot
from bots.search import Evaluate, Searcher, SearchResult, SearchTimeout, alphabeta, is_decided, minimax

SAFETY_S = 0.05
"""Seconds kept back from the clock for decoding the state and sending the answer."""
TIME_SHARE = 0.85
"""The share of the time left a bot plans to use for one move (per-move clocks)."""
MOVES_TO_GO = 20
"""With a base+increment clock, the bank is spread over this many more moves."""
MAX_CANDIDATES = 64
"""At most this many root candidates go into `info` (best first), to keep the record small."""

Answer = tuple[str, dict[str, Any]]


def _depth(value: int | str) -> int:
    """A search depth from an option value (an int, or the text of one); ValueError if not >= 1."""
    depth = int(value)
    if depth < 1:
        raise ValueError(f"depth must be at least 1, got {value!r}")
    return depth


def _info(result: SearchResult) -> dict[str, Any]:
    """`result.info()` with at most MAX_CANDIDATES candidates, the best first."""
    info = result.info()
    info["candidates"] = info["candidates"][:MAX_CANDIDATES]
    return info


class SearchBot(Bot):
    """Shared plumbing: the game's evaluation, the move deadline, the answer with its info."""

    strength = "simple"
    """The evaluation: "simple" (greedy, alphabeta), "medium" (minimax) or "strong" (champion)."""
    game_evaluation: dict[str, Evaluate] = {}
    """Games where the bot uses another evaluation than `strength` (measured on the ladder: docs/bots.md)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.evaluate: Evaluate | None = None

    def new_game(self, game: rules.Game, seat: int, opponent: str, seed: int) -> None:
        pick = {"simple": evaluation.simple, "medium": evaluation.medium, "strong": evaluation.strong}
        own = self.game_evaluation.get(game.name)
        self.evaluate = own or pick[self.strength](game.name)

    def evaluation_for(self, state: rules.State) -> Evaluate:
        """The evaluation for `state`'s game: set by new_game, or picked now when called without one."""
        if self.evaluate is None:
            self.new_game(state.game, state.seat, "", 0)
        return self.evaluate  # type: ignore[return-value]

    def deadline(self, time_left: float) -> float:
        """The time.monotonic() by which the search must stop to answer within `time_left` seconds."""
        bank = self.time_control.get("control") == "increment"  # base + increment: a bank to share
        share = time_left / MOVES_TO_GO if bank else time_left * TIME_SHARE
        return time.monotonic() + max(0.01, share - SAFETY_S)


class FixedDepthBot(SearchBot):
    """A fixed-depth search; if the clock would run out it answers with its depth-1 result instead."""

    default_depth = 2
    game_depth: dict[str, int] = {}
    """Without a `depth=` option, these games search to their own depth rather than `default_depth`
    (where the clock allows it at worst: docs/bots.md)."""

    def __init__(self, depth: int | str | None = None, **options: Any) -> None:
        super().__init__(**options)
        self.depth = _depth(self.default_depth if depth is None else depth)
        self.depth_given = depth is not None

    def depth_for(self, game: rules.Game) -> int:
        """The depth searched in `game`: the `depth=` option, else the game's or the default."""
        return self.depth if self.depth_given else self.game_depth.get(game.name, self.depth)

    algorithm = staticmethod(minimax)
    """The fixed-depth search: search.minimax or search.alphabeta (same arguments, same value)."""

    def choose(self, state: rules.State, time_left: float) -> Answer:
        evaluate = self.evaluation_for(state)
        deadline = self.deadline(time_left)
        fallback = self.algorithm(state, 1, evaluate, None, self.rng)
        result = fallback
        depth = self.depth_for(state.game)
        if depth > 1:
            try:
                result = self.algorithm(state, depth, evaluate, deadline, self.rng)
            except SearchTimeout:
                info = _info(fallback)
                info["comment"] = f"depth {depth} ran out of time: depth-1 answer"
                return fallback.move, info
        return result.move, _info(result)


class Greedy(FixedDepthBot):
    """The best move by the simple evaluation one ply ahead (a win if there is one)."""

    name = "greedy"

    def __init__(self, **options: Any) -> None:
        super().__init__(depth=1, **options)


class Minimax(FixedDepthBot):
    """Full-width minimax to `depth` plies (default 2, 3 in Freedom), medium evaluation, no pruning.

    The medium evaluation is the simple one except in Domineering (mobility plus safe moves) and
    Santorini (the last move's f plus worker heights): with the simple one, depth 2 scored 50-60%
    against greedy there."""

    name = "minimax"
    strength = "medium"
    game_depth = {"freedom": 3}


class AlphaBeta(FixedDepthBot):
    """Minimax's value at `depth` plies (default 3) with alpha-beta pruning and the simple evaluation.

    Searches depth 1, 2, ... up to `depth`, each a full alpha-beta search with the root's moves
    ordered best first by the one before (more cut-offs, the same value), and answers the deepest
    finished in time: where depth 3 would overrun the clock (Santorini, Domineering's opening) it
    plays the depth-2 move rather than falling back to depth 1. It starts no iteration once half
    its time is spent (that one would not finish). Freedom's default depth is 6 (game_depth).
    game_evaluation: in Domineering the champion's evaluation (with minimax's, the extra depth won
    nothing measurable: 65-70% against minimax), in Santorini minimax's medium one.
    """

    name = "alphabeta"
    default_depth = 3
    algorithm = staticmethod(alphabeta)
    game_depth = {"freedom": 6}
    game_evaluation = {"domineering": evaluation.domineering_strong, "santorini": evaluation.santorini_medium,
                       "fanorona": evaluation.fanorona_capture}

    def choose(self, state: rules.State, time_left: float) -> Answer:
        evaluate = self.evaluation_for(state)
        started = time.monotonic()
        deadline = self.deadline(time_left)
        result = alphabeta(state, 1, evaluate, None, self.rng)
        nodes, comment = result.nodes, None
        for depth in range(2, self.depth_for(state.game) + 1):
            if is_decided(result.score) or len(result.candidates) == 1:
                break
            if time.monotonic() - started > (deadline - started) / 2:  # the next would not finish
                comment = f"no time for depth {depth}: depth-{result.depth} answer"
                break
            order = sorted(result.candidates, key=lambda m: -result.candidates[m])
            try:
                deeper = alphabeta(state, depth, evaluate, deadline, None, order)
            except SearchTimeout:
                comment = f"depth {depth} ran out of time: depth-{result.depth} answer"
                break
            nodes += deeper.nodes
            result = deeper
        info = _info(result)
        info["nodes"] = nodes
        if comment is not None:
            info["comment"] = comment
        return result.move, info


class Champion(SearchBot):
    """Iterative-deepening alpha-beta with a transposition table, move ordering and the stronger evaluation.

    Answers with the best move of the deepest iteration finished in time; `max_depth` caps the depth.
    In Fanorona a draw costs it a stone (game_contempt): most of its games with the bots below ended
    level at the 50-ply limit, and playing on for the lead of three that wins there converts some.
    """

    name = "champion"
    strength = "strong"
    game_contempt = {"fanorona": 100.0}
    """Per game, what a draw costs the champion in its search (Searcher's `contempt`; 100 is a stone)."""

    def __init__(self, max_depth: int | str = 64, **options: Any) -> None:
        super().__init__(**options)
        self.max_depth = _depth(max_depth)
        self.searcher: Searcher | None = None

    def new_game(self, game: rules.Game, seat: int, opponent: str, seed: int) -> None:
        super().new_game(game, seat, opponent, seed)
        self.searcher = Searcher(self.evaluate, noisy=evaluation.NOISY.get(game.name),  # type: ignore[arg-type]
                                 noisy_order=evaluation.NOISY_ORDER.get(game.name),
                                 contempt=self.game_contempt.get(game.name, 0))

    def choose(self, state: rules.State, time_left: float) -> Answer:
        deadline = self.deadline(time_left)
        if self.searcher is None or self.searcher.evaluate is not self.evaluation_for(state):
            self.new_game(state.game, state.seat, "", 0)
        gc.disable()  # a full collection over a big table can stall a move by tens of milliseconds
        try:
            result = self.searcher.search(state, deadline, self.max_depth, self.rng)
        finally:
            gc.freeze()  # the table's states are long-lived: keep them out of later collections
            gc.enable()
        info = _info(result)
        info["nps"] = round(result.nodes / result.seconds) if result.seconds > 0 else 0
        return result.move, info
