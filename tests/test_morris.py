"""Nine Men's Morris: positions with known answers, notation, draws, wire format, and a naive cross-check."""
from __future__ import annotations

import random

import pytest

import rules
from rules import IllegalMoveError, InvalidMoveError
from rules.morris import MorrisState

POINTS = "a1 d1 g1 b2 d2 f2 c3 d3 e3 a4 b4 c4 e4 f4 g4 c5 d5 e5 b6 d6 f6 a7 d7 g7".split()
LINES = [line.split() for line in (
    "a1 d1 g1", "b2 d2 f2", "c3 d3 e3", "a4 b4 c4", "e4 f4 g4", "c5 d5 e5", "b6 d6 f6", "a7 d7 g7",
    "a1 a4 a7", "b2 b4 b6", "c3 c4 c5", "d1 d2 d3", "d5 d6 d7", "e3 e4 e5", "f2 f4 f6", "g1 g4 g7",
)]


def position(white: str, black: str, seat: int = 0, ply: int | None = None, **params) -> rules.State:
    """A state built through the documented wire format (movement phase unless `ply` < 18)."""
    game = rules.load("morris", **params)
    if ply is None:
        ply = 40 + seat
    w, b = set(white.split()), set(black.split())
    board = "".join("W" if p in w else "B" if p in b else "." for p in POINTS)
    wmask = sum(1 << i for i, p in enumerate(POINTS) if p in w)
    bmask = sum(1 << i for i, p in enumerate(POINTS) if p in b)
    hand = [max(0, 9 - (ply + 1) // 2), max(0, 9 - ply // 2)]
    key = wmask | bmask << 24 | seat << 48
    wire = {"game": "morris", "params": game.params, "seat": seat, "ply": ply, "board": board,
            "in_hand": hand, "quiet": 0, "history": [key] if game.repetition else []}
    direct = MorrisState(game, wmask, bmask, seat, hand[0], hand[1], ply, 0, tuple(wire["history"]))
    wire["outcome"] = direct.to_wire()["outcome"]
    state = game.state_from_wire(wire)
    assert state == direct
    return state


def play_all(state: rules.State, moves: str) -> rules.State:
    for move in moves.split():
        state = state.play(move)
    return state


# --- mills and removals -------------------------------------------------------------------------

@pytest.mark.parametrize("white, black, seat, ply, closing, expected", [
    # placement closes a1-d1-g1; black's two stones are both removable
    ("a1 d1", "b2 f2", 0, 4, "g1", {"g1xb2", "g1xf2"}),
    # movement g4-g1 closes a1-d1-g1 (the vertical mill g1-g4-g7 does not count: g4 is left)
    ("a1 d1 g4", "b2 f2 d6 b6", 0, 40, "g4-g1", {"g4-g1xb2", "g4-g1xf2", "g4-g1xd6", "g4-g1xb6"}),
    # black's mill a7-d7-g7 is protected while b6 stands outside a mill
    ("a1 d1", "a7 d7 g7 b6", 0, 12, "g1", {"g1xb6"}),
    # double mill by one placement: a1-d1-g1 and d1-d2-d3; one removal per move
    ("a1 g1 d2 d3", "a7 d7 b6 f6", 0, 8, "d1", {"d1xa7", "d1xd7", "d1xb6", "d1xf6"}),
    # black closes a mill too (seat 1 in placement)
    ("a1 d1 c4", "b2 d2", 1, 5, "f2", {"f2xa1", "f2xd1", "f2xc4"}),
])
def test_closing_moves_name_their_removal(white, black, seat, ply, closing, expected):
    state = position(white, black, seat, ply)
    legal = state.legal_moves()
    with_removal = {m for m in legal if m.startswith(closing + "x")}
    if expected is not None:
        assert with_removal == expected
    assert closing not in legal
    with pytest.raises(IllegalMoveError, match=f"'{closing}'.*closes a mill"):
        state.play(closing)


def test_all_in_mills_any_may_be_removed():
    state = position("a1 d1 g4", "a7 d7 g7", 0)
    assert {m for m in state.legal_moves() if "x" in m} == {"g4-g1xa7", "g4-g1xd7", "g4-g1xg7"}
    assert state.play("g4-g1xd7").stones(1) == ["a7", "g7"]


def test_double_mill_removes_one_stone():
    state = position("a1 g1 d2 d3", "a7 d7 b6 f6", 0, 8)
    after = state.play("d1xb6")
    assert sorted(after.stones(1)) == ["a7", "d7", "f6"]
    assert after.in_hand(1) == 5 and after.in_hand(0) == 4


def test_protected_stone_refused_with_reason():
    state = position("a1 d1", "a7 d7 g7 b6", 0, 12)
    with pytest.raises(IllegalMoveError, match="'g1xd7'.*mill"):
        state.play("g1xd7")
    with pytest.raises(IllegalMoveError, match="'g1xc3'.*c3 holds no Black stone"):
        state.play("g1xc3")


def test_removal_on_a_non_closing_move_is_illegal():
    state = position("a1 d1", "b2 f2", 0, 4)
    assert "c3" in state.legal_moves()
    with pytest.raises(IllegalMoveError, match="'c3xb2'.*closes no mill"):
        state.play("c3xb2")


def test_reclosing_a_mill_counts_again():
    state = position("a1 d1 g1", "b2 f2 d6 b6", 0)
    state = play_all(state, "g1-g4 d6-d5")
    assert "g4-g1" not in state.legal_moves()
    assert "g4-g1xb2" in state.legal_moves()
    state = state.play("g4-g1xb2")
    assert state.stones(1) == ["f2", "d5", "b6"]
    assert state.to_wire()["quiet"] == 0


# --- wins and losses ----------------------------------------------------------------------------

BLOCKED = ("a1 g1 a7", "d1 a4 g4 d7")  # every white stone is boxed in by black ones


def test_blocked_player_loses():
    state = position(*BLOCKED, seat=0)
    assert state.is_over() and state.legal_moves() == []
    assert state.outcome.winner == 1 and state.outcome.reason == "no legal move"
    assert "no legal move" in state.render() and "to move" not in state.render()
    with pytest.raises(IllegalMoveError, match="game is over"):
        state.play("a1-d1")


def test_blocked_by_moving_into_place():
    state = position("a1 g1 a7", "d1 a4 g4 d6", seat=1)
    assert not state.is_over()
    after = state.play("d6-d7")
    assert after.outcome == rules.Outcome(1, "no legal move")


def test_two_stones_lose():
    state = position("a1 d1 g4", "b2 f2 d6", 0)
    after = state.play("g4-g1xd6")
    assert after.is_over()
    assert after.outcome.winner == 0 and after.outcome.reason == "two stones"
    assert "two stones" in after.render()


# --- flying -------------------------------------------------------------------------------------

def test_flying_on_three_stones_fly_anywhere():
    state = position(*BLOCKED, seat=0, flying=True)
    moves = state.legal_moves()
    empties = [p for p in POINTS if p not in "a1 g1 a7 d1 a4 g4 d7".split()]
    assert len(moves) == 3 * len(empties)
    assert "a1-e5" in moves and "a7-g7" in moves
    assert not state.is_over()


def test_flying_closes_mills_but_not_with_the_leaving_stone():
    state = position("a1 d1 c4", "b2 f2 d6 b6", 0, flying=True)
    moves = state.legal_moves()
    assert "c4-g1xb2" in moves and "c4-g1" not in moves
    assert "a1-g1" in moves  # a1 leaves the line it would complete


def test_flying_off_three_stones_move_adjacent():
    state = position("a1 d1 c4", "b2 f2 d6 b6", 0)
    assert sorted(state.legal_moves()) == ["a1-a4", "c4-b4", "c4-c3", "c4-c5", "d1-d2", "d1-g1"]
    with pytest.raises(IllegalMoveError, match="'c4-g7'.*not adjacent"):
        state.play("c4-g7")


def test_flying_only_for_the_player_with_three():
    state = position("a1 d1 c4", "b2 f2 d6 b6", 1, flying=True)
    assert sorted(state.legal_moves()) == sorted(
        ["b2-b4", "b2-d2", "f2-d2", "f2-f4", "d6-f6", "d6-d5", "d6-d7", "b6-b4"])


# --- draws --------------------------------------------------------------------------------------

SHUFFLE = "a1-a4 b2-b4 a4-a1 b4-b2"


def test_repetition_draw_on_third_occurrence():
    state = position("a1 d1 c4", "b2 f2 d6 b6", 0)
    state = play_all(state, SHUFFLE)  # second occurrence
    assert not state.is_over()
    state = play_all(state, "a1-a4 b2-b4 a4-a1")
    assert not state.is_over()
    state = state.play("b4-b2")  # third occurrence
    assert state.outcome == rules.Outcome(None, "repetition")
    assert "repetition" in state.render()


@pytest.mark.parametrize("repetition, plies_to_draw", [(2, 4), (3, 8), (4, 12), (0, None)])
def test_repetition_parameter(repetition, plies_to_draw):
    state = position("a1 d1 c4", "b2 f2 d6 b6", 0, repetition=repetition)
    for ply in range(1, 17):
        state = state.play(SHUFFLE.split()[(ply - 1) % 4])
        if state.is_over():
            break
    if plies_to_draw is None:
        assert not state.is_over()
    else:
        assert ply == plies_to_draw and state.outcome.reason == "repetition"


def test_placement_resets_repetition_history():
    state = rules.load("morris").start()
    assert len(state.to_wire()["history"]) == 1
    state = play_all(state, "a1 g7")
    assert len(state.to_wire()["history"]) == 1


def test_quiet_plies_draw():
    state = position("a1 d1 c4", "b2 f2 d6 b6", 0, quiet_plies=6)
    state = play_all(state, "a1-a4 b2-b4 a4-a7 b4-b2 c4-c5")
    assert not state.is_over() and state.to_wire()["quiet"] == 5
    state = state.play("d6-d7")
    assert state.outcome == rules.Outcome(None, "quiet plies")


def test_removal_resets_quiet_count():
    state = position("a1 d1 g4", "b2 f2 d6 b6", 0, quiet_plies=3)
    state = play_all(state, "g4-g1xb2 f2-f4")
    assert state.to_wire()["quiet"] == 1 and not state.is_over()


def test_quiet_plies_count_placements_too():
    state = play_all(rules.load("morris", quiet_plies=3).start(), "a1 a7 g1")
    assert state.outcome.reason == "quiet plies"


def test_max_turns():
    game = rules.load("morris", max_turns=5)
    state = play_all(game.start(), "a1 a7 g1 g7")
    assert not state.is_over()
    state = state.play("c4")
    assert state.outcome == rules.Outcome(None, "move limit")
    assert state.ply == 5


def test_win_beats_move_limit():
    state = position("a1 d1 g4", "b2 f2 d6", 0, max_turns=41)
    assert state.play("g4-g1xb2").outcome.reason == "two stones"


# --- notation -----------------------------------------------------------------------------------

@pytest.mark.parametrize("text, canonical", [
    ("d6", "d6"), ("D6", "d6"), ("d6-d5", "d6-d5"), ("D6-D5", "d6-d5"), (" d6 - d5 ", "d6-d5"),
    ("d6-d5xg7", "d6-d5xg7"), ("D6-D5XG7", "d6-d5xg7"), ("a1xg7", "a1xg7"), ("A1 x G7", "a1xg7"),
    ("a1-g7", "a1-g7"),  # well formed (a flight), legal only when flying
])
def test_parse_move(text, canonical):
    assert rules.load("morris").parse_move(text) == canonical


@pytest.mark.parametrize("junk", ["", "zz99", "hello world", "A", "-", "999", "h1", "a8", "b1",
                                  "d6-", "d6-d6", "a1xa1", "d6-d5xd5", "d6-d5-d4", "d6xg7xa1", "x"])
def test_parse_rejects_junk(junk):
    game = rules.load("morris")
    with pytest.raises(InvalidMoveError):
        game.parse_move(junk)
    with pytest.raises(InvalidMoveError):
        game.start().play(junk)


@pytest.mark.parametrize("white, black, seat, ply, move, why", [
    ("a1 d1", "b2 f2", 0, 4, "b2", "'b2'.*b2 is occupied"),
    ("a1 d1", "b2 f2", 0, 4, "a1-a4", "'a1-a4'.*in hand"),
    ("a1 d1 c4", "b2 f2 d6 b6", 0, 40, "d5", "'d5'.*no stones left in hand"),
    ("a1 d1 c4", "b2 f2 d6 b6", 0, 40, "b2-b4", "'b2-b4'.*b2 holds no White stone"),
    ("a1 d1 c4", "b2 f2 d6 b6", 0, 40, "d1-d2xb6", "'d1-d2xb6'.*closes no mill"),
    ("a1 d1 c4", "b2 f2 d6 b6", 0, 40, "a1-d1", "'a1-d1'.*d1 is occupied"),
    ("a1 d1 g4", "b2 f2 d6 b6", 0, 40, "G4-G1", "'g4-g1'.*closes a mill.*g4-g1xb2"),
])
def test_illegal_messages_name_the_move(white, black, seat, ply, move, why):
    state = position(white, black, seat, ply)
    with pytest.raises(IllegalMoveError, match=why):
        state.play(move)


def test_uppercase_plays():
    state = rules.load("morris").start()
    assert state.play("D6") == state.play("d6")


# --- parameters, wire, render -------------------------------------------------------------------

@pytest.mark.parametrize("params, word", [
    ({"repetition": 1}, "repetition"), ({"repetition": -1}, "repetition"),
    ({"quiet_plies": -5}, "quiet_plies"), ({"max_turns": -1}, "max_turns"), ({"flying": "maybe"}, "flying"),
])
def test_bad_params(params, word):
    with pytest.raises(ValueError, match=word):
        rules.load("morris", **params)


def test_params_defaults():
    defaults = {"flying": False, "repetition": 3, "quiet_plies": 100, "max_turns": 0}
    assert rules.load("morris").params == defaults


@pytest.mark.parametrize("change, word", [
    ({"board": "W" * 24}, "board"),
    ({"board": "x" * 24}, "board"),
    ({"in_hand": [9, 8]}, "in_hand"),
    ({"seat": 1}, "seat"),
    ({"ply": -1}, "ply"),
    ({"quiet": 99}, "quiet"),
    ({"history": []}, "history"),
    ({"history": ["a"]}, "history"),
    ({"ply": "3"}, "ply"),
    ({"outcome": {"winner": 0, "reason": "two stones", "scores": None}}, "outcome"),
])
def test_bad_wire(change, word):
    game = rules.load("morris")
    wire = play_all(game.start(), "a1 a7").to_wire()
    with pytest.raises(ValueError, match=word):
        game.state_from_wire({**wire, **change})


def test_wire_example():
    wire = play_all(rules.load("morris").start(), "d6 a1").to_wire()
    assert wire == {
        "game": "morris", "params": {"flying": False, "repetition": 3, "quiet_plies": 100, "max_turns": 0},
        "seat": 0, "ply": 2, "board": "B" + "." * 18 + "W" + "." * 4,
        "in_hand": [8, 8], "quiet": 2, "history": [(1 << 19) | (1 << 24)], "outcome": None,
    }


def test_render_marks_highlight_and_counts():
    state = position("a1 d1 g4", "b2 f2 d6 b6", 0).play("g4-g1xd6")
    text = state.render(highlight="g4-g1xd6")
    assert "[W]" in text and "[.]" in text
    assert "Black (B): 3 on board, 0 in hand" in text
    assert "Black (seat 1) to move" in text
    assert text.splitlines()[-4].startswith("    a   b   c")


# --- a naive reference, from the rules as written ------------------------------------------------

def naive_moves(state) -> set[str]:
    if state.is_over():
        return set()
    seat = state.seat
    own, opp = set(state.stones(seat)), set(state.stones(1 - seat))
    empty = [p for p in POINTS if p not in own | opp]

    def in_mill(p, stones):
        return any(p in line and all(q in stones for q in line) for line in LINES)

    removable = [p for p in opp if not in_mill(p, opp)] or sorted(opp)
    if state.in_hand(seat):
        steps = [(None, q) for q in empty]
    elif state.game.flying and len(own) == 3:
        steps = [(p, q) for p in own for q in empty]
    else:
        steps = [(p, q) for p in own for q in empty if any(
            p in line and q in line and abs(line.index(p) - line.index(q)) == 1 for line in LINES)]
    moves = set()
    for p, q in steps:
        after = (own - {p}) | {q}
        text = q if p is None else f"{p}-{q}"
        if in_mill(q, after) and removable:
            moves |= {f"{text}x{r}" for r in removable}
        else:
            moves.add(text)
    return moves


@pytest.mark.parametrize("flying", [False, True])
def test_matches_naive_reference(flying):
    game = rules.load("morris", flying=flying)
    rng = random.Random(7)
    for _ in range(40):
        state = game.start()
        while not state.is_over():
            moves = state.legal_moves()
            assert set(moves) == naive_moves(state)
            state = state.play(rng.choice(moves))


def test_mill_with_nothing_to_remove_is_played_plain():
    state = position("a1 d1", "", 0, 4)  # black's stones are all in hand
    assert "g1" in state.legal_moves() and not any("x" in m for m in state.legal_moves())
    assert state.play("g1").in_hand(1) == 7


def test_finished_game_wire_carries_outcome():
    game = rules.load("morris")
    state = position("a1 d1 g4", "b2 f2 d6", 0).play("g4-g1xd6")
    wire = state.to_wire()
    assert wire["outcome"] == {"winner": 0, "reason": "two stones", "scores": None}
    assert game.state_from_wire(wire) == state


@pytest.mark.parametrize("params", [{}, {"flying": True, "repetition": 2, "quiet_plies": 30}])
def test_games_and_states_pickle_as_their_parameters_and_fields(params):
    """A game sent to a worker carries its parameters, not the move tables (hundreds of kB)."""
    import pickle

    game = rules.load("morris", **params)
    state, rng = game.start(), random.Random(5)
    for _ in range(40):
        state = state.play(rng.choice(state.legal_moves()))
    assert len(pickle.dumps(game)) < 1000 and len(pickle.dumps(state)) < 2000
    copy = pickle.loads(pickle.dumps(state))
    assert copy == state and hash(copy) == hash(state) and copy.game == game
    assert copy.to_wire() == state.to_wire() and copy.legal_moves() == state.legal_moves()
