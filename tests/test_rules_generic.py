"""One suite every game passes: random playouts, legality, outcomes, wire round trips, determinism."""
from __future__ import annotations

import json
import random
import re

import pytest

import rules
from rules import IllegalMoveError, InvalidMoveError

GAMES = rules.names()
SEEDS = range(12)
MAX_PLIES = 5000


def playout(game: rules.Game, seed: int) -> list[rules.State]:
    rng = random.Random(seed)
    state = game.start()
    states = [state]
    while not state.is_over():
        assert len(states) < MAX_PLIES, f"{game.name}: seed {seed} did not end in {MAX_PLIES} plies"
        state = state.play(rng.choice(state.legal_moves()))
        states.append(state)
    return states


def test_names_are_the_five_games():
    assert rules.names() == ["domineering", "fanorona", "freedom", "morris", "santorini"]


def test_unknown_game_and_parameter_are_named():
    with pytest.raises(ValueError, match="chess"):
        rules.load("chess")
    with pytest.raises(ValueError, match="bogus"):
        rules.load("domineering", bogus=1)


@pytest.mark.parametrize("name", GAMES)
def test_random_playouts_end_with_consistent_outcome(name):
    game = rules.load(name)
    for seed in SEEDS:
        states = playout(game, seed)
        for ply, state in enumerate(states):
            assert state.ply == ply
            over = state.is_over()
            assert (state.outcome is not None) == over
            assert over == (ply == len(states) - 1)
            if not over:
                assert state.legal_moves(), f"{name}: a running game must offer moves"
                assert state.seat in (0, 1)
            else:
                assert state.legal_moves() == []
                assert state.outcome.winner in (0, 1, None)
                assert isinstance(state.outcome.reason, str) and state.outcome.reason


@pytest.mark.parametrize("name", GAMES)
def test_every_listed_move_plays_and_parses_to_itself(name):
    game = rules.load(name)
    for state in playout(game, 101)[:-1:3]:
        moves = state.legal_moves()
        assert len(moves) == len(set(moves)), f"{name}: duplicate legal moves"
        for move in moves:
            assert game.parse_move(move) == move
            nxt = state.play(move)
            assert nxt.ply == state.ply + 1


@pytest.mark.parametrize("name", GAMES)
def test_unlisted_moves_do_not_play(name):
    game = rules.load(name)
    states = playout(game, 202)
    # Moves legal somewhere in the game but not listed here must be refused as illegal.
    seen = sorted({m for s in states[:-1] for m in s.legal_moves()})
    for state in states[::4]:
        legal = set(state.legal_moves())
        for move in seen:
            if move not in legal:
                with pytest.raises(IllegalMoveError, match=re.escape(move)):
                    state.play(move)
    for junk in ["", "zz99", "hello world", "A", "-", "999"]:
        with pytest.raises(InvalidMoveError):
            game.parse_move(junk)
        with pytest.raises(ValueError):
            states[0].play(junk)


@pytest.mark.parametrize("name", GAMES)
def test_over_state_refuses_moves(name):
    game = rules.load(name)
    states = playout(game, 303)
    last = states[-1]
    for move in states[-2].legal_moves()[:5]:
        with pytest.raises(IllegalMoveError):
            last.play(move)


def _plain(value) -> bool:
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    return value is None or isinstance(value, (str, int, bool))


@pytest.mark.parametrize("name", GAMES)
def test_wire_round_trip(name):
    game = rules.load(name)
    for seed in (1, 2, 3):
        for state in playout(game, seed):
            wire = state.to_wire()
            assert _plain(wire), f"{name}: to_wire holds a non-plain value: {wire!r}"
            assert wire["game"] == name
            again = game.state_from_wire(json.loads(json.dumps(wire)))
            assert again == state and hash(again) == hash(state)
            assert again.legal_moves() == state.legal_moves()
            assert again.outcome == state.outcome


@pytest.mark.parametrize("name", GAMES)
def test_bad_wire_is_refused_with_a_reason(name):
    game = rules.load(name)
    wire = game.start().to_wire()
    with pytest.raises(ValueError):
        game.state_from_wire({**wire, "game": "chess"})
    with pytest.raises(ValueError):
        game.state_from_wire("not a dict")
    for key in wire:
        if key == "params":
            continue
        broken = {k: v for k, v in wire.items() if k != key}
        with pytest.raises(ValueError, match=key):
            game.state_from_wire(broken)


@pytest.mark.parametrize("name", GAMES)
def test_same_moves_same_state(name):
    game = rules.load(name)
    first = playout(game, 404)
    state = game.start()
    for i in range(1, len(first)):
        move = next(m for m in first[i - 1].legal_moves() if first[i - 1].play(m) == first[i])
        state = state.play(move)
        assert state == first[i]
        assert state.render() == first[i].render()


@pytest.mark.parametrize("name", GAMES)
def test_render_shows_turn(name):
    game = rules.load(name)
    states = playout(game, 505)
    for state in (states[0], states[len(states) // 2]):
        text = state.render()
        assert isinstance(text, str) and "\n" in text
        assert "to move" in text.lower()
    assert states[-1].outcome.reason in states[-1].render()


@pytest.mark.parametrize("name", GAMES)
def test_replay_reaches_the_played_state_and_names_a_bad_ply(name):
    game = rules.load(name)
    rng = random.Random(7)
    state, moves = game.start(), []
    for _ in range(6):
        if state.outcome is not None:
            break
        move = rng.choice(state.legal_moves())
        state = state.play(move)
        moves.append(move)
    assert game.replay(moves) == state
    assert game.replay([]) == game.start()
    positions = game.positions(moves)
    assert len(positions) == len(moves) + 1 and positions[-1] == state
    repeated = moves[:1] * 2  # the first move again: in every game its cell or piece is taken
    with pytest.raises(IllegalMoveError, match=re.escape(f"move 2 {repeated[1]!r}")) as err:
        game.replay(repeated)
    assert err.value.ply == 2 and err.value.move == repeated[1] and err.value.reason
    with pytest.raises(InvalidMoveError, match=r"move 1 'no such move'"):
        game.replay(["no such move"])
