"""Simplified Fanorona: positions with known answers (docs/rules.md "Simplified Fanorona")."""
from __future__ import annotations

import json

import pytest

import rules
from rules import IllegalMoveError, InvalidMoveError


def position(picture: list[str], seat: int = 0, ply: int | None = None, **params) -> rules.State:
    """A state from a picture drawn top row first ("W", "B", "."), as a player sees the board."""
    game = rules.load("fanorona", rows=len(picture), cols=len(picture[0]), **params)
    ply = seat if ply is None else ply
    wire = {"game": "fanorona", "params": game.params, "seat": seat, "ply": ply,
            "board": list(reversed(picture)), "history": []}
    return game.state_from_wire(wire)


def picture(state: rules.State) -> list[str]:
    return list(reversed(state.to_wire()["board"]))


# --- the start ---

@pytest.mark.parametrize("rows, cols, middle", [
    (5, 7, "BWB.WBW"),        # docs/rules.md, the assignment's board
    (5, 9, "BWBW.BWBW"),      # docs/rules.md, standard Fanorona
    (3, 3, "B.W"),
    (3, 5, "BW.BW"),
    (7, 7, "BWB.WBW"),
])
def test_start_position(rows, cols, middle):
    state = rules.load("fanorona", rows=rows, cols=cols).start()
    board = state.to_wire()["board"]          # row 1 first
    half = rows // 2
    assert board[:half] == ["W" * cols] * half
    assert board[half] == middle
    assert board[half + 1:] == ["B" * cols] * half
    assert state.seat == 0 and state.ply == 0 and state.outcome is None


# White's only two opening moves on 5x7, and the Black stones each one takes.
@pytest.mark.parametrize("move, captured", [
    ("D2-D3", {"D4", "D5"}),   # approach from below: the whole D column of Black
    ("E3-D3", {"C3"}),         # approach from the right: C3 only, B3 is White
])
def test_opening_moves_and_their_captures(move, captured):
    start = rules.load("fanorona").start()
    assert sorted(start.legal_moves()) == ["D2-D3", "E3-D3"]
    after = start.play(move)
    before_rows, after_rows = picture(start), picture(after)
    gone = {f"{'ABCDEFG'[c]}{5 - r}" for r in range(5) for c in range(7)
            if before_rows[r][c] == "B" and after_rows[r][c] == "."}
    assert gone == captured
    assert after.seat == 1 and after.ply == 1


@pytest.mark.parametrize("withdrawal, moves", [
    (False, ["D2-E3", "D3-E3", "E2-E3", "F2-E3"]),
    # Standard Fanorona's five opening moves: D3-E3 takes F3 by approach or C3 by withdrawal.
    (True, ["D2-E3", "D3-E3A", "D3-E3W", "E2-E3", "F2-E3"]),
])
def test_opening_5x9(withdrawal, moves):
    state = rules.load("fanorona", cols=9, withdrawal=withdrawal).start()
    assert sorted(state.legal_moves()) == moves


# --- captures ---

COMPULSORY = [
    ".......",
    ".......",
    "...B...",
    ".......",
    "W..W...",
]


def test_capture_is_compulsory():
    state = position(COMPULSORY)
    assert state.legal_moves() == ["D1-D2"]
    with pytest.raises(IllegalMoveError, match="A1-A2.*a capture is available, plain moves are illegal"):
        state.play("A1-A2")
    assert picture(state.play("D1-D2"))[2] == "......."


MULTI = [
    ".......",
    "...B...",
    "..B....",
    "B...B..",
    "..W....",
]


@pytest.mark.parametrize("move, black_left", [
    ("C1-C2", {"D4", "A2", "E2"}),
    ("C1-C2-B2", {"D4", "E2"}),
    ("C1-C2-D2", {"D4", "A2"}),
    ("C1-C2-D2-D3", {"A2"}),
    ("C1-C2-B2-C3", {"E2"}),  # B2 is an even point: its diagonal reaches C3, aiming at D4
])
def test_multi_capture_paths_and_prefixes(move, black_left):
    state = position(MULTI)
    assert sorted(state.legal_moves()) == ["C1-C2", "C1-C2-B2", "C1-C2-B2-C3", "C1-C2-D2", "C1-C2-D2-D3"]
    after = state.play(move)
    rows = picture(after)
    left = {f"{'ABCDEFG'[c]}{5 - r}" for r in range(5) for c in range(7) if rows[r][c] == "B"}
    assert left == black_left
    end = move.split("-")[-1]
    assert rows[5 - int(end[1])]["ABCDEFG".index(end[0])] == "W"
    assert after.seat == 1


LOOP = [
    "..B....",
    "..B....",
    "....B..",
    ".BW....",
    "...B...",
]


def test_no_revisiting():
    state = position(LOOP)
    assert sorted(state.legal_moves()) == ["C2-C3", "C2-C3-D3", "C2-C3-D3-D2"]
    # D2-C2 would take B2 by approach, but C2 is where the stone started.
    with pytest.raises(IllegalMoveError, match="C2-C3-D3-D2-C2.*returns to C2, already visited"):
        state.play("C2-C3-D3-D2-C2")


# --- variants ---

BOTH = [
    ".....W.",
    ".......",
    "BBW.B..",
    ".......",
    ".......",
]


@pytest.mark.parametrize("move, row3", [
    ("C3-D3A", "BB.W..."),
    ("C3-D3W", "...WB.."),
    ("c3 d3a", "BB.W..."),
])
def test_withdrawal_suffix_when_both_captures_exist(move, row3):
    state = position(BOTH, withdrawal=True)
    assert "C3-D3A" in state.legal_moves() and "C3-D3W" in state.legal_moves()
    assert "C3-D3" not in state.legal_moves()
    assert picture(state.play(move))[2] == row3
    with pytest.raises(IllegalMoveError, match="C3-D3.*write D3A or D3W"):
        state.play("C3-D3")


def test_without_withdrawal_there_is_no_suffix():
    state = position(BOTH)
    assert state.legal_moves() == ["C3-D3"]
    assert picture(state.play("C3-D3"))[2] == "BB.W..."
    with pytest.raises(InvalidMoveError, match="withdrawal"):
        state.play("C3-D3W")


WITHDRAW_ONLY = [
    "...B...",
    "...B...",
    "...W...",
    ".......",
    "W......",
]


@pytest.mark.parametrize("withdrawal, legal, after_d3_d2", [
    (False, None, "...B..."),
    (True, ["D3-D2"], "......."),
])
def test_withdrawal_only_capture(withdrawal, legal, after_d3_d2):
    state = position(WITHDRAW_ONLY, withdrawal=withdrawal)
    if legal is not None:
        assert state.legal_moves() == legal
    else:
        assert "A1-A2" in state.legal_moves()
    assert picture(state.play("D3-D2"))[0] == after_d3_d2
    if withdrawal:  # a suffix only where both captures exist, so each move has one spelling
        with pytest.raises(IllegalMoveError, match="D3-D2W.*without A/W"):
            state.play("D3-D2W")


SAME_LINE = [
    ".......",
    ".......",
    "BW..B..",
    ".......",
    "......B",
]


@pytest.mark.parametrize("same_direction, legal", [
    (False, ["B3-C3", "B3-C3-D3"]),
    (True, ["B3-C3"]),
])
def test_same_direction_rule(same_direction, legal):
    # B3-C3 takes A3 by withdrawal, then C3-D3 (same direction) would take E3 by approach.
    state = position(SAME_LINE, withdrawal=True, same_direction=same_direction)
    assert sorted(state.legal_moves()) == legal
    if same_direction:
        with pytest.raises(IllegalMoveError, match="B3-C3-D3.*same direction"):
            state.play("B3-C3-D3")


# --- the end ---

@pytest.mark.parametrize("rows, winner", [
    (["...B...", ".......", ".......", ".......", "W.W.W.W"], 0),    # lead 3: White wins
    (["...B...", ".......", ".......", ".......", "W.W.W.."], None),  # lead 2: draw
    (["...B...", ".......", ".......", ".......", "W......"], None),  # lead 0: draw
    (["B.B.B.B", ".......", ".......", ".......", "...W..."], 1),     # Black leads 3
])
def test_move_limit(rows, winner):
    if rows[0] == "B.B.B.B":
        state = position(rows, seat=0, ply=48)
        state = state.play("D1-D2").play("A5-A4")
    else:
        state = position(rows, seat=1, ply=49)
        assert state.outcome is None
        state = state.play("D5-C5")
    assert state.ply == 50
    assert state.outcome == rules.Outcome(winner, "move limit")
    assert state.legal_moves() == []
    with pytest.raises(IllegalMoveError, match="game is over"):
        state.play("A1-A2")


def test_move_limit_off_and_other_limit():
    rows = ["...B...", ".......", ".......", ".......", "W.W.W.W"]
    assert position(rows, seat=1, ply=49, move_limit=0).play("D5-C5").outcome is None
    assert position(rows, seat=1, ply=9, move_limit=10).play("D5-C5").outcome.winner == 0


SHUFFLE = ["......B", ".......", ".......", ".......", "W......"]
SHUFFLE_MOVES = ["A1-A2", "G5-G4", "A2-A1", "G4-G5"] * 2


@pytest.mark.parametrize("repetition, over_at", [(3, 8), (2, 4), (0, None)])
def test_repetition(repetition, over_at):
    state = position(SHUFFLE, repetition=repetition)
    for i, move in enumerate(SHUFFLE_MOVES, 1):
        state = state.play(move)
        if i == over_at:
            assert state.outcome == rules.Outcome(None, "repetition")
            assert len(state.to_wire()["history"]) == i
            return
        assert state.outcome is None
    assert over_at is None and state.to_wire()["history"] == []


def test_capture_clears_repetition_history():
    state = rules.load("fanorona").start().play("D2-D3")
    assert state.to_wire()["history"] == []
    state = state.play(state.legal_moves()[0])
    assert state.ply == 2


@pytest.mark.parametrize("rows, seat, reason, winner", [
    ([".......", ".......", ".......", "BB.....", "WB....."], 0, "no legal move", 1),
    (["....WWB", "....WWW", ".......", ".......", "......."], 1, "no legal move", 0),
])
def test_no_legal_move_loses(rows, seat, reason, winner):
    state = position(rows, seat=seat)
    assert state.outcome == rules.Outcome(winner, reason)
    assert state.legal_moves() == []


def test_no_stones_loses():
    state = position([".......", ".......", ".......", ".......", "WB....."])
    assert sorted(state.legal_moves()) == ["A1-A2", "A1-B2"]  # withdrawal is off: no capture
    state = position([".......", ".......", ".......", ".......", "W.B...."])
    after = state.play("A1-B1")
    assert after.outcome == rules.Outcome(0, "no stones")
    assert "no stones" in after.render() and "to move" not in after.render()


# --- notation and errors ---

@pytest.mark.parametrize("text, canonical", [
    ("D2-D3", "D2-D3"),
    ("d2-d3", "D2-D3"),
    ("d2 d3", "D2-D3"),
    (" E3 , d3 ", "E3-D3"),
    ("C1-C2-D2-D3", "C1-C2-D2-D3"),
    ("A1-B2", "A1-B2"),   # diagonal through an even point
])
def test_parse_move(text, canonical):
    assert rules.load("fanorona").parse_move(text) == canonical


@pytest.mark.parametrize("text", [
    "", "D3", "D2-D4", "D3-C4", "H1-G1", "D2-D3X", "D2-D3A", "D2A-D3", "2D-3D", "D0-D1", "-",
])
def test_parse_move_refuses_non_moves(text):
    with pytest.raises(InvalidMoveError):
        rules.load("fanorona").parse_move(text)


@pytest.mark.parametrize("move, why", [
    ("D3-D4", "D3 is empty"),
    ("C3-D3", "C3 holds a Black stone"),
    ("D1-D2", "D2 is occupied"),
    ("E3-D3-C3", "captures nothing; a turn continues only with captures"),
    ("D2-D3-D2", "returns to D2"),
])
def test_illegal_move_messages_name_the_move(move, why):
    state = rules.load("fanorona").start()
    with pytest.raises(IllegalMoveError) as info:
        state.play(move)
    assert move in str(info.value) and why in str(info.value)


@pytest.mark.parametrize("params, name", [
    ({"rows": 4}, "rows"), ({"cols": 6}, "cols"), ({"rows": 1}, "rows"), ({"cols": 27}, "cols"),
    ({"repetition": 1}, "repetition"), ({"move_limit": -1}, "move_limit"),
])
def test_bad_params_are_named(params, name):
    with pytest.raises(ValueError, match=name):
        rules.load("fanorona", **params)


# --- render and wire ---

def test_render_lines_labels_and_highlight():
    state = rules.load("fanorona").start()
    text = state.render()
    lines = text.splitlines()
    assert lines[0].startswith("5") and "B---B" in lines[0]
    assert "| \\ | / |" in lines[1] and "| / | \\ |" in lines[3]
    assert lines[-2].split() == list("ABCDEFG")
    assert "White (seat 0) to move" in text
    after = state.play("E3-D3")
    shown = after.render(highlight="E3-D3")
    assert "[W]" in shown and "[.]" in shown and "Black (seat 1) to move" in shown


def test_wire_round_trip_and_shape():
    state = rules.load("fanorona").start().play("E3-D3")
    state = state.play(state.legal_moves()[0])
    wire = json.loads(json.dumps(state.to_wire()))
    assert wire["seat"] == 0 and wire["ply"] == 2 and wire["history"] == []
    assert set(wire) == {"game", "params", "seat", "ply", "board", "history"}
    assert state.game.state_from_wire(wire) == state


@pytest.mark.parametrize("change, message", [
    ({"board": ["WWWWWWW"] * 4}, "board"),
    ({"board": ["WWWWWWW", "WWWWWWW", "BWB?WBW", "BBBBBBB", "BBBBBBB"]}, "row 3"),
    ({"board": ["WWWWWWW", "WWWWWWW", "WWW.WWW", "BBBBBBB", "BBBBBBB"]}, "more than"),
    ({"seat": 1}, "seat"),
    ({"ply": -1}, "ply"),
    ({"ply": 52, "seat": 0}, "move limit"),
    ({"history": "x"}, "history"),
    ({"history": [["WWWWWWW"] * 5]}, "history"),
])
def test_bad_wire_says_what_is_wrong(change, message):
    game = rules.load("fanorona")
    wire = {**game.start().to_wire(), **change}
    with pytest.raises(ValueError, match=message):
        game.state_from_wire(wire)


@pytest.mark.parametrize("params", [{}, {"rows": 5, "cols": 9, "withdrawal": True, "same_direction": True}])
def test_most_captured_is_the_most_stones_a_legal_turn_takes(params):
    """most_captured() against playing every legal turn and counting the opponent's stones lost."""
    import random

    game = rules.load("fanorona", **params)
    rng, checked = random.Random(7), 0
    for _ in range(30):
        state = game.start()
        while not state.is_over():
            opp = "black" if state.seat == 0 else "white"
            before = getattr(state, opp).bit_count()
            taken = [before - getattr(state.play(m), opp).bit_count() for m in state.legal_moves()]
            assert state.most_captured() == max(taken), (state.to_wire(), taken)
            assert (state.most_captured() > 0) == state.must_capture
            checked += state.must_capture
            state = state.play(rng.choice(state.legal_moves()))
    assert checked > 100  # positions with a capture were among them
