"""Every shipped bot plays every game legally to its end, in both seats, from 20 random openings.

The bots are driven in-process through the SDK's `choose()` on a short clock (the fixed-depth bots
fall back to depth 1 when it runs out, the champion answers its deepest finished iteration), so the
whole set stays within seconds; the games run in a pool of two processes.
"""
from __future__ import annotations

import multiprocessing
from typing import Any

import pytest

import rules
from arena.match.openings import random_openings
from bots import NAMES, load
from bots.sdk import Bot

OPENINGS = 20
"""Random openings per game; opening i is played by two shipped bots, one in each seat."""
OPENING_PLIES = 4
TIME_LEFT_S = 0.02
"""The `time_left` handed to choose(): the search bots' deadlines come out at their 10 ms floor."""
MAX_PLIES = 2000
"""A game still running after this many plies is a failure (every game has an end well before)."""
BOTS = sorted(NAMES)


def opening(game: rules.Game, index: int) -> tuple[rules.State, list[str]]:
    """Opening `index` of `game`: the tournaments' random opening of pair `index` (OPENING_PLIES
    plies that leave the game running, the same every run)."""
    moves = random_openings(game, OPENING_PLIES, 0, OPENINGS)[index]
    state = game.start()
    for move in moves:
        state = state.play(move)
    return state, list(moves)


def seated(index: int) -> tuple[str, str]:
    """The bots of opening `index` in seat order: the 20 openings play the 5 x 4 ordered pairs of
    different shipped bots, each once, so every bot meets every other in each seat."""
    n = len(BOTS)
    return BOTS[index % n], BOTS[(index + 1 + index // n) % n]


def play(game_name: str, index: int, bots: tuple[Bot, Bot], names: tuple[str, str]) -> str | None:
    """Play opening `index` of `game_name` to its end with `bots` in seats 0 and 1: None when every
    move was legal and the game ended, else what went wrong, naming the bot, game, opening and ply."""
    game = rules.load(game_name)
    state, moves = opening(game, index)
    for seat, bot in enumerate(bots):
        bot.game, bot.seat, bot.opponent, bot.game_id = game, seat, names[1 - seat], f"{game_name}-{index}"
        bot.rng.seed(index * 2 + seat)
        bot.new_game(game, seat, names[1 - seat], index)
    while not state.is_over():
        seat = state.seat
        where = (f"{names[seat]} (seat {seat}) in {game_name}, opening {index} {moves[:OPENING_PLIES]}, "
                 f"ply {state.ply}")
        if state.ply >= MAX_PLIES:
            return f"{game_name}, opening {index}: still running after {MAX_PLIES} plies"
        bot = bots[seat]
        legal = state.legal_moves()
        bot.ply, bot.moves, bot.legal = state.ply, list(moves), list(legal)
        try:
            answer: Any = bot.choose(state, TIME_LEFT_S)
        except Exception as exc:
            return f"{where}: choose() raised {type(exc).__name__}: {exc}"
        move = answer if isinstance(answer, str) else answer[0]
        if move not in legal:
            return f"{where}: illegal move {move!r}"
        moves.append(move)
        state = state.play(move)
    return None


def play_shipped(game_name: str, index: int) -> str | None:
    names = seated(index)
    return play(game_name, index, (load(names[0])(), load(names[1])()), names)


def test_seating_puts_every_bot_in_both_seats_against_another() -> None:
    pairs = {seated(i) for i in range(OPENINGS)}
    assert pairs == {(a, b) for a in BOTS for b in BOTS if a != b}


def test_every_shipped_bot_plays_every_game_legally_to_the_end() -> None:
    work = [(game, i) for game in rules.names() for i in range(OPENINGS)]
    with multiprocessing.get_context("fork").Pool(2) as pool:
        failures = [f for f in pool.starmap(play_shipped, work) if f is not None]
    assert not failures, "\n".join(failures)


class Cheater(Bot):
    """Plays legally, then a move off the board: the check must catch it."""

    name = "cheater"

    def choose(self, state: rules.State, time_left: float) -> str:
        return "Z99" if state.ply >= 6 else state.legal_moves()[0]


class Crasher(Bot):
    name = "crasher"

    def choose(self, state: rules.State, time_left: float) -> str:
        raise RuntimeError("boom")


@pytest.mark.parametrize("bad", [Cheater, Crasher])
def test_an_illegal_move_or_an_exception_is_reported_with_bot_game_opening_and_ply(bad: type[Bot]) -> None:
    failure = play("domineering", 3, (load("random")(), bad()), ("random", bad.name))
    assert failure is not None
    assert f"{bad.name} (seat 1) in domineering, opening 3" in failure
    assert ("illegal move 'Z99'" in failure and "ply 7" in failure) if bad is Cheater else "boom" in failure
