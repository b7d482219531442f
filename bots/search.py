"""Game-independent tree search over the rules API: minimax, alpha-beta, and a timed iterative deepener.

Scores are negamax-style: a number is always from the point of view of the side to move in the state
it describes. An evaluation is a function `evaluate(state, move)` giving that number for a
non-terminal state; `move` is the move that led to `state` (None at the root), for evaluations that
score the last move rather than the position (Santorini's f = m + l). Finished games score
`terminal_score`: +/- WIN minus the ply count, so a faster win (and a slower loss) is preferred.

The search never assumes turns alternate: a child's score is negated only when its side to move
differs from the parent's.
"""
from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rules import State

Evaluate = Callable[[State, "str | None"], float]

INF = float("inf")
WIN = 1_000_000_000
"""A won game scores WIN - ply for the winner; evaluations must stay far below it."""
DECIDED = WIN - 1_000_000
"""Scores at or beyond +/- DECIDED are proven wins or losses."""

EXACT, LOWER, UPPER = 0, 1, 2
"""Transposition-table bounds: the stored score is exact, a lower bound, or an upper bound."""

CLOCK_EVERY = 16
"""Nodes between two looks at the clock (a node costs tens of microseconds, so ~1 ms granularity)."""


def terminal_score(state: State) -> float:
    """A finished game's score for `state.seat`: WIN - ply for a win, -(WIN - ply) for a loss, 0 drawn."""
    winner = state.outcome.winner  # type: ignore[union-attr]
    if winner is None:
        return 0
    value = WIN - state.ply
    return value if winner == state.seat else -value


def is_decided(score: float) -> bool:
    """True when `score` is a proven win or loss rather than an evaluation."""
    return abs(score) >= DECIDED


@dataclass
class SearchResult:
    """The answer of a search: the move, its score for the side to move, and how it was found."""

    move: str
    score: float
    depth: int
    nodes: int
    pv: list[str]
    candidates: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0
    ply: int = 0
    """The searched position's ply: a proven score's `mate` counts the plies from it."""

    def info(self) -> dict[str, Any]:
        """The `info` dict sent with the move: depth, score, nodes, pv, and the root candidates as
        docs/PROTOCOL.md has them: a list of {"move", "score"} maps, best first; a proven win or loss
        also as `mate` (plies to the end, negative when lost), so screens need not know WIN."""
        info: dict[str, Any] = {"depth": self.depth, "score": _plain(self.score)}
        if is_decided(self.score):
            info["mate"] = self._mate(self.score)
        info["nodes"] = self.nodes
        info["pv"] = list(self.pv)
        info["candidates"] = [self._candidate(m, s)
                              for m, s in sorted(self.candidates.items(), key=lambda item: -item[1])]
        return info

    def _candidate(self, move: str, score: float) -> dict[str, Any]:
        found: dict[str, Any] = {"move": move, "score": _plain(score)}
        if is_decided(score):
            found["mate"] = self._mate(score)
        return found

    def _mate(self, score: float) -> int:
        """Plies from the searched position to the proven end: positive for a win, negative for a loss."""
        plies = int(WIN - abs(score)) - self.ply
        return plies if score > 0 else -plies


def _plain(score: float) -> float | int:
    """An int when the score is integral (JSON- and msgpack-friendly), else the float."""
    return int(score) if float(score).is_integer() else score


class SearchTimeout(Exception):
    """Raised inside a search when its deadline has passed; the iteration in progress is discarded."""


def _check_root(state: State, depth: int, rng: random.Random | None = None) -> list[str]:
    """The root's legal moves (shuffled by `rng`, so equal moves are chosen among at random);
    ValueError when there is nothing to search."""
    if state.is_over():
        raise ValueError(f"cannot search a finished game ({state.outcome.reason})")  # type: ignore[union-attr]
    if depth < 1:
        raise ValueError(f"search depth must be at least 1, got {depth}")
    moves = state.legal_moves()
    if rng is not None:
        rng.shuffle(moves)
    return moves


def minimax(state: State, depth: int, evaluate: Evaluate, deadline: float | None = None,
            rng: random.Random | None = None) -> SearchResult:
    """Full-width negamax to `depth` plies, no pruning: the reference value alpha-beta must match.

    Raises SearchTimeout once time.monotonic() passes `deadline` (None: no limit).
    """
    nodes = 0

    def node(s: State, move: str | None, d: int) -> tuple[float, list[str]]:
        nonlocal nodes
        nodes += 1
        if deadline is not None and nodes % CLOCK_EVERY == 0 and time.monotonic() >= deadline:
            raise SearchTimeout
        if s.outcome is not None:
            return terminal_score(s), []
        if d == 0:
            return evaluate(s, move), []
        best, best_pv, seat = -INF, [], s.seat
        for m in s.legal_moves():
            child = s.play(m)
            value, pv = node(child, m, d - 1)
            if child.seat != seat:
                value = -value
            if value > best:
                best, best_pv = value, [m, *pv]
        return best, best_pv

    started = time.perf_counter()
    moves = _check_root(state, depth, rng)
    nodes = 1
    candidates: dict[str, float] = {}
    best, best_pv, seat = -INF, [], state.seat
    for m in moves:
        child = state.play(m)
        value, pv = node(child, m, depth - 1)
        if child.seat != seat:
            value = -value
        candidates[m] = value
        if value > best:
            best, best_pv = value, [m, *pv]
    return SearchResult(best_pv[0], best, depth, nodes, best_pv, candidates, time.perf_counter() - started,
                        state.ply)


def alphabeta(state: State, depth: int, evaluate: Evaluate, deadline: float | None = None,
              rng: random.Random | None = None, root: list[str] | None = None) -> SearchResult:
    """Negamax with alpha-beta pruning in the rules' move order: minimax's value and move, fewer nodes.

    Candidate scores other than the best one are upper bounds (a refuted move is not searched
    exactly). `root`: the root's legal moves in the order to try them (e.g. best first from a
    shallower search: more cut-offs, the same value); default the rules' order, shuffled by `rng`.
    Raises SearchTimeout once time.monotonic() passes `deadline` (None: no limit).
    """
    nodes = 0

    def node(s: State, move: str | None, d: int, alpha: float, beta: float) -> tuple[float, list[str]]:
        nonlocal nodes
        nodes += 1
        if deadline is not None and nodes % CLOCK_EVERY == 0 and time.monotonic() >= deadline:
            raise SearchTimeout
        if s.outcome is not None:
            return terminal_score(s), []
        if d == 0:
            return evaluate(s, move), []
        best, best_pv, seat = -INF, [], s.seat
        for m in s.legal_moves():
            child = s.play(m)
            if child.seat != seat:
                value, pv = node(child, m, d - 1, -beta, -alpha)
                value = -value
            else:
                value, pv = node(child, m, d - 1, alpha, beta)
            if value > best:
                best, best_pv = value, [m, *pv]
                if value > alpha:
                    alpha = value
                    if alpha >= beta:
                        break
        return best, best_pv

    started = time.perf_counter()
    moves = _check_root(state, depth, rng) if root is None else list(root)
    nodes = 1
    candidates: dict[str, float] = {}
    best, best_pv, seat = -INF, [], state.seat
    for m in moves:
        child = state.play(m)
        if child.seat != seat:
            value, pv = node(child, m, depth - 1, -INF, -best)
            value = -value
        else:
            value, pv = node(child, m, depth - 1, best, INF)
        candidates[m] = value
        if value > best:
            best, best_pv = value, [m, *pv]
    return SearchResult(best_pv[0], best, depth, nodes, best_pv, candidates, time.perf_counter() - started,
                        state.ply)


class Searcher:
    """Iterative-deepening alpha-beta with a transposition table, history ordering and a deadline.

    Answers with the best move of the deepest iteration that finished before the deadline (the
    Freedom assignment's rule). The table (a dict keyed by state: depth, score, bound, best move) and
    the history scores survive between moves of a game; call `reset()` for a new game. With `noisy`
    (state -> bool, e.g. "a capture is compulsory"), a noisy position at the horizon is searched on,
    every move, for at most `extension` more plies, so the evaluation sees quiet positions; there
    the moves go in `noisy_order` (largest key first) when given: the biggest captures first cut the
    most. Below the root, moves are tried in this order: the table's, the ply's two killer moves
    (the last to cause a cut-off at that ply), then by history score. With `contempt`, a drawn end
    scores that much below zero for the side searched for (the root's side to move), so the search
    plays on for a win rather than settle for a draw it could avoid.
    """

    def __init__(self, evaluate: Evaluate, max_entries: int = 200_000,
                 clock: Callable[[], float] = time.monotonic,
                 noisy: Callable[[State], bool] | None = None, extension: int = 4,
                 noisy_order: Callable[[str], Any] | None = None, contempt: float = 0) -> None:
        self.evaluate = evaluate
        self.contempt = contempt
        self._seat: int | None = None
        """The side searched for (contempt's draws are scored for it); a new one clears the table."""
        self.clock = clock
        self.noisy = noisy
        self.noisy_order = noisy_order
        """A key putting the likeliest best moves of a noisy position first, largest first (in
        Fanorona the length of the move: a longer path is a longer chain of captures)."""
        self.extension = extension
        self.max_entries = max_entries
        self.table: dict[State, tuple[int, float, int, str | None]] = {}
        self.history: dict[str, int] = {}
        self.killers: dict[int, list[str]] = {}
        """Per game ply, the last two moves that caused a cut-off there (tried after the table's move)."""
        self.nodes = 0
        self._deadline: float | None = None

    def reset(self) -> None:
        """Forget the table and the history (a new game)."""
        self.table.clear()
        self.history.clear()

    def search(self, state: State, deadline: float | None = None, max_depth: int = 64,
               rng: random.Random | None = None) -> SearchResult:
        """The best move of the deepest iteration finished before `deadline` (a `self.clock()` value).

        Stops early when the result is a proven win or loss, when there is one legal move, or when
        more than half the time is spent (the next iteration would not finish).
        """
        moves = _check_root(state, max_depth, rng)
        started = self.clock()
        if self.contempt and state.seat != self._seat:  # the table's draw scores were the other side's
            self._seat = state.seat
            self.table.clear()
        self.nodes = 0
        self._deadline = deadline
        if len(self.table) > self.max_entries:
            self.table.clear()
        for key in self.history:  # age the history so old cut-offs fade
            self.history[key] >>= 1
        self.killers.clear()
        entry = self.table.get(state)
        if entry is not None and entry[3] in moves:
            moves.remove(entry[3])
            moves.insert(0, entry[3])
        result = SearchResult(moves[0], 0, 0, 0, [moves[0]], ply=state.ply)
        for depth in range(1, max_depth + 1):
            try:
                score, candidates = self._root(state, moves, depth)
            except SearchTimeout:
                break
            moves = sorted(moves, key=lambda m: -candidates[m])  # best first for the next iteration
            result = SearchResult(moves[0], score, depth, self.nodes, self._pv(state, moves[0], depth),
                                  candidates, ply=state.ply)
            if is_decided(score) or len(moves) == 1:
                break
            if deadline is not None and self.clock() - started > (deadline - started) / 2:
                break
        result.nodes = self.nodes
        result.seconds = self.clock() - started
        return result

    def _root(self, state: State, moves: list[str], depth: int) -> tuple[float, dict[str, float]]:
        """One full-window iteration at the root; candidate scores other than the best are upper bounds."""
        self.nodes += 1
        best, best_move, seat = -INF, moves[0], state.seat
        candidates: dict[str, float] = {}
        for m in moves:
            child = state.play(m)
            if child.seat != seat:
                value = -self._node(child, m, depth - 1, -INF, -best)
            else:
                value = self._node(child, m, depth - 1, best, INF)
            candidates[m] = value
            if value > best:
                best, best_move = value, m
        self.table[state] = (depth, best, EXACT, best_move)
        return best, candidates

    def _node(self, s: State, move: str | None, depth: int, alpha: float, beta: float) -> float:
        """Fail-soft alpha-beta below the root, reading and writing the transposition table."""
        self.nodes += 1
        deadline = self._deadline
        if deadline is not None and self.nodes % CLOCK_EVERY == 0 and self.clock() >= deadline:
            raise SearchTimeout
        if s.outcome is not None:
            return self._terminal(s)
        if depth == 0:
            if self.noisy is not None and self.noisy(s):
                return self._extend(s, move, alpha, beta, self.extension)
            return self.evaluate(s, move)
        table = self.table
        entry = table.get(s)
        tt_move = None
        if entry is not None:
            stored_depth, stored, bound, tt_move = entry
            if stored_depth >= depth and (
                bound == EXACT or (bound == LOWER and stored >= beta) or (bound == UPPER and stored <= alpha)
            ):
                return stored
        alpha0 = alpha
        history = self.history
        moves = s.legal_moves()
        order = self.noisy_order
        if order is not None:
            moves.sort(key=lambda m: (history.get(m, 0), order(m)), reverse=True)
        else:
            moves.sort(key=lambda m: history.get(m, 0), reverse=True)
        killers = self.killers.get(s.ply)
        if killers:
            for killer in reversed(killers):
                if killer in moves:
                    moves.remove(killer)
                    moves.insert(0, killer)
        if tt_move is not None and tt_move in moves:
            moves.remove(tt_move)
            moves.insert(0, tt_move)
        best, best_move, seat = -INF, None, s.seat
        for m in moves:
            child = s.play(m)
            if child.seat != seat:
                value = -self._node(child, m, depth - 1, -beta, -alpha)
            else:
                value = self._node(child, m, depth - 1, alpha, beta)
            if value > best:
                best, best_move = value, m
                if value > alpha:
                    alpha = value
                    if alpha >= beta:
                        history[m] = history.get(m, 0) + depth * depth
                        slot = self.killers.setdefault(s.ply, [])
                        if m not in slot:
                            slot.insert(0, m)
                            del slot[2:]
                        break
        bound = UPPER if best <= alpha0 else LOWER if best >= beta else EXACT
        table[s] = (depth, best, bound, best_move)
        return best

    def _terminal(self, s: State) -> float:
        """`terminal_score(s)`, a draw costing `contempt` to the side searched for."""
        if self.contempt and s.outcome.winner is None:  # type: ignore[union-attr]
            return -self.contempt if s.seat == self._seat else self.contempt
        return terminal_score(s)

    def _extend(self, s: State, move: str | None, alpha: float, beta: float, plies: int) -> float:
        """Past the horizon, keep searching every move while the position is noisy, at most `plies` more."""
        if s.outcome is not None:
            return self._terminal(s)
        if plies == 0 or not self.noisy(s):  # type: ignore[misc]
            return self.evaluate(s, move)
        best, seat = -INF, s.seat
        moves = s.legal_moves()
        if self.noisy_order is not None:
            moves = sorted(moves, key=self.noisy_order, reverse=True)
        for m in moves:
            self.nodes += 1
            deadline = self._deadline
            if deadline is not None and self.nodes % CLOCK_EVERY == 0 and self.clock() >= deadline:
                raise SearchTimeout
            child = s.play(m)
            if child.seat != seat:
                value = -self._extend(child, m, -beta, -alpha, plies - 1)
            else:
                value = self._extend(child, m, alpha, beta, plies - 1)
            if value > best:
                best = value
                if value > alpha:
                    alpha = value
                    if alpha >= beta:
                        break
        return best

    def _pv(self, state: State, first: str, depth: int) -> list[str]:
        """The principal variation: `first`, then the table's best moves, at most `depth` plies."""
        pv = [first]
        s = state.play(first)
        seen = {state}
        while len(pv) < depth and s not in seen and s.outcome is None:
            seen.add(s)
            entry = self.table.get(s)
            if entry is None or entry[3] is None:
                break
            pv.append(entry[3])
            s = s.play(entry[3])
        return pv
