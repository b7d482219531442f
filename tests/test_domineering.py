"""Domineering: the assignment's example positions, moves and display, small boards, the wire form."""
from __future__ import annotations

import pytest

import rules
from rules import IllegalMoveError, InvalidMoveError

# The assignment's "prikaz stanja" position (seed 001, "Zadatak I - Interfejs (prikaz stanja)"),
# rows top first as drawn there: X at 6B-7B, 4E-5E, 2G-3G; O at 7E-7F, 2B-2C.
EXAMPLE_TOP_FIRST = [
    "........",  # 8
    ".X..OO..",  # 7
    ".X......",  # 6
    "....X...",  # 5
    "....X...",  # 4
    "......X.",  # 3
    ".OO...X.",  # 2
    "........",  # 1
]


def position(top_first: list[str], seat: int = 0, ply: int = 0, **params) -> rules.State:
    game = rules.load("domineering", **params)
    return game.state_from_wire(
        {"game": "domineering", "seat": seat, "ply": ply, "board": list(reversed(top_first)),
         "outcome": None}
    )


def example(**changes: str) -> rules.State:
    """The example position with X to move; `changes` maps a cell like 'G2' to its new symbol."""
    grid = [list(row) for row in EXAMPLE_TOP_FIRST]
    for cell, sym in changes.items():
        col, row = "ABCDEFGH".index(cell[0]), int(cell[1:])
        grid[8 - row][col] = sym
    return position(["".join(row) for row in grid], seat=0, ply=5)


def cell_of(state: rules.State, cell: str) -> str:
    """'X', 'O' or '.' at a cell like 'E5', read from the wire board."""
    col, row = ord(cell[0]) - ord("A"), int(cell[1:])
    return state.to_wire()["board"][row - 1][col]


# --- the example position: X to move ---

@pytest.mark.parametrize("move, covers", [
    ("1A", ("A1", "A2")),
    ("2E", ("E2", "E3")),
    ("5H", ("H5", "H6")),
    ("7D", ("D7", "D8")),
])
def test_example_good_moves_for_x(move, covers):
    state = example()
    assert state.seat == 0 and not state.is_over()
    assert move in state.legal_moves()
    after = state.play(f"[{move[0]} {move[1]}]")
    assert after.seat == 1 and after.ply == 6
    for cell in covers:
        assert cell_of(state, cell) == "." and cell_of(after, cell) == "X"


@pytest.mark.parametrize("move, reason", [
    ("9F", "the domino would leave the board, 9F is not on it"),
    ("3K", "the domino would leave the board, 3K is not on it"),
    ("8B", "the domino would leave the board, 9B is not on it"),
    ("8G", "the domino would leave the board, 9G is not on it"),
    ("5E", "5E is already covered by X"),
    ("6F", "7F is already covered by O"),
])
def test_example_bad_moves_for_x(move, reason):
    state = example()
    assert move not in state.legal_moves()
    assert state.game.parse_move(f"[{move[0]} {move[1]}]") == move  # well-formed, so not Invalid
    with pytest.raises(IllegalMoveError, match=f"'{move}' is illegal for X \\(vertical\\): {reason}"):
        state.play(move)
    with pytest.raises(IllegalMoveError, match=reason):
        state.play(f"[{move[0]} {move[1]}]")


def test_example_move_count():
    # Vertical pairs of free cells per column A..H: 7 + 2 + 5 + 7 + 2 + 5 + 4 + 7.
    state = example()
    free = {(r, c) for r in range(1, 9) for c in "ABCDEFGH" if cell_of(state, f"{c}{r}") == "."}
    expected = sorted((r, c) for r, c in free if (r + 1, c) in free)
    assert sorted((int(m[:-1]), m[-1]) for m in state.legal_moves()) == expected
    assert len(state.legal_moves()) == 39


# --- the move examples of "Zadatak II - Promena stanja" ---

EXAMPLE_AFTER_4A = """\
     A   B   C   D   E   F   G   H
     =   =   =   =   =   =   =   =
 8                                  8
     -   -   -   -   -   -   -   -
 7       X           O   O          7
     -   -   -   -   -   -   -   -
 6       X                          6
     -   -   -   -   -   -   -   -
 5                   X              5
     -   -   -   -   -   -   -   -
 4  [O] [O]          X              4
     -   -   -   -   -   -   -   -
 3                           X      3
     -   -   -   -   -   -   -   -
 2       O   O               X      2
     -   -   -   -   -   -   -   -
 1                                  1
     =   =   =   =   =   =   =   =
     A   B   C   D   E   F   G   H

X (seat 0, vertical) to move"""


def test_x_plays_2g_then_o_plays_4a():
    before = example(G2=".", G3=".")
    after_x = before.play("[2 G]")
    assert after_x == position(EXAMPLE_TOP_FIRST, seat=1, ply=6)
    assert cell_of(after_x, "G2") == cell_of(after_x, "G3") == "X"
    text = after_x.render(highlight="[2 G]")
    assert " 3                          [X]     3" in text
    assert " 2       O   O              [X]     2" in text
    assert "O (seat 1, horizontal) to move" in text

    after_o = after_x.play("[4 A]")
    assert cell_of(after_o, "A4") == cell_of(after_o, "B4") == "O"
    assert cell_of(after_o, "A5") == "."
    assert after_o.render(highlight="4A") == EXAMPLE_AFTER_4A
    assert "[" not in after_o.render()


# --- notation ---

@pytest.mark.parametrize("text, canon", [
    ("4C", "4C"), ("4c", "4C"), ("4 C", "4C"), ("4,C", "4C"), ("4, c", "4C"), ("[4 C]", "4C"),
    ("[4,C]", "4C"), ("[ 4 , c ]", "4C"), ("  4C\n", "4C"), ("12z", "12Z"), ("26A", "26A"),
    ("9F", "9F"), ("3K", "3K"),
])
def test_parse_forms(text, canon):
    assert rules.load("domineering").parse_move(text) == canon


@pytest.mark.parametrize("text", [
    "", "zz99", "hello world", "A", "-", "999", "C4", "4", "[4 C", "4 C]", "4,,C", "4CC", "0A",
    "27A", "X [4 C]", "4-C", "4.C", None, 4,
])
def test_parse_junk_is_invalid(text):
    game = rules.load("domineering")
    with pytest.raises(InvalidMoveError):
        game.parse_move(text)
    with pytest.raises(InvalidMoveError):
        game.start().play(text)


def test_horizontal_player_covers_the_cell_to_the_right():
    s = rules.load("domineering").start().play("1A")
    assert s.seat == 1
    with pytest.raises(IllegalMoveError, match="'1H' is illegal for O .*leave the board, 1I is not on it"):
        s.play("1H")
    with pytest.raises(IllegalMoveError, match=r"'1a' \(1A\) is illegal for O .*1A is already covered by X"):
        s.play("1a")
    s = s.play("4 C")
    assert [cell_of(s, c) for c in ("C4", "D4", "C5")] == ["O", "O", "."]
    assert "7H" in s.legal_moves() and "8H" not in s.legal_moves() and "4C" not in s.legal_moves()


def test_over_state_names_the_move():
    s = rules.load("domineering", rows=2, cols=2).start().play("1A")
    with pytest.raises(IllegalMoveError, match="'1B' is illegal: the game is over \\(no legal move\\)"):
        s.play("1b")


# --- outcomes ---

def test_no_move_loses():
    s = rules.load("domineering", rows=2, cols=2).start()
    assert s.legal_moves() == ["1A", "1B"]
    s = s.play("1A")
    assert s.is_over() and s.legal_moves() == []
    assert s.outcome == rules.Outcome(0, "no legal move")
    text = s.render()
    assert "no legal move" in text and "to move" not in text
    assert "X (seat 0, vertical) wins" in text


@pytest.mark.parametrize("rows, cols, first, moves, winner", [
    (1, 2, "vertical", [], 1),          # X has no vertical room at all: loses at once
    (1, 2, "horizontal", ["1A"], 0),    # O fills the board, X cannot move
    (3, 1, "vertical", ["1A"], 0),
    (3, 1, "horizontal", [], 1),        # seat 0 is O, with no horizontal room
    (2, 2, "horizontal", ["2A"], 0),
    (2, 3, "vertical", ["1B"], 0),      # X splits both rows: O finds no two adjacent free cells
    (2, 3, "vertical", ["1A", "1B"], 1),  # X's 1A lets O's 1B block both remaining columns
])
def test_small_boards_scripted(rows, cols, first, moves, winner):
    s = rules.load("domineering", rows=rows, cols=cols, first=first).start()
    for move in moves:
        s = s.play(move)
    assert s.is_over()
    assert s.outcome.winner == winner and s.outcome.reason == "no legal move"
    assert s.seat == 1 - winner


def first_player_wins(state, memo) -> bool:
    if state not in memo:
        memo[state] = any(not first_player_wins(state.play(m), memo) for m in state.legal_moves())
    return memo[state]


@pytest.mark.parametrize("rows, cols, first, seat0_wins", [
    # Known values (e.g. Wikipedia "Domineering"): n x n is a first-player win except 1x1 and 5x5.
    (2, 2, "vertical", True), (2, 2, "horizontal", True),
    (3, 3, "vertical", True), (3, 3, "horizontal", True),
    (4, 4, "vertical", True), (4, 4, "horizontal", True),
    (5, 5, "vertical", False),
    (1, 2, "vertical", False), (1, 2, "horizontal", True),
    (3, 1, "vertical", True), (3, 1, "horizontal", False),
    (1, 4, "horizontal", True),  # O places one domino, then X (seat 1) has no move
    (2, 3, "vertical", True), (3, 2, "horizontal", True),
])
def test_small_boards_solved(rows, cols, first, seat0_wins):
    game = rules.load("domineering", rows=rows, cols=cols, first=first)
    assert first_player_wins(game.start(), {}) == seat0_wins


# --- parameters ---

@pytest.mark.parametrize("params, named", [
    ({"rows": 0, "cols": 3}, "rows"), ({"rows": 27}, "rows"), ({"cols": 0}, "cols"),
    ({"cols": 30}, "cols"), ({"rows": 1, "cols": 1}, "rows"), ({"first": "diagonal"}, "first"),
    ({"rows": "eight"}, "rows"), ({"first": 1}, "first"),
])
def test_bad_params_are_named(params, named):
    with pytest.raises(ValueError, match=named):
        rules.load("domineering", **params)


def test_params_defaults_and_first_horizontal():
    assert rules.load("domineering").params == {"rows": 8, "cols": 8, "first": "vertical"}
    game = rules.load("domineering", rows="5", cols=7, first="Horizontal")
    assert game.params == {"rows": 5, "cols": 7, "first": "horizontal"}
    s = game.start()
    assert "O (seat 0, horizontal) to move" in s.render()
    assert len(s.legal_moves()) == 5 * 6
    s = s.play("1A")
    assert cell_of(s, "B1") == "O"
    assert "X (seat 1, vertical) to move" in s.render()
    assert len(s.legal_moves()) == 4 * 7 - 2


# --- render ---

START_8X8 = """\
     A   B   C   D   E   F   G   H
     =   =   =   =   =   =   =   =
 8                                  8
     -   -   -   -   -   -   -   -
 7                                  7
     -   -   -   -   -   -   -   -
 6                                  6
     -   -   -   -   -   -   -   -
 5                                  5
     -   -   -   -   -   -   -   -
 4                                  4
     -   -   -   -   -   -   -   -
 3                                  3
     -   -   -   -   -   -   -   -
 2                                  2
     -   -   -   -   -   -   -   -
 1                                  1
     =   =   =   =   =   =   =   =
     A   B   C   D   E   F   G   H

X (seat 0, vertical) to move"""


def test_render_start_8x8():
    assert rules.load("domineering").start().render() == START_8X8


def test_render_wide_board_aligns():
    s = rules.load("domineering", rows=12, cols=3).start().play("11C")
    lines = s.render(highlight="11C").splitlines()
    assert lines[0] == "     A   B   C"
    assert lines[2] == "12          [X] 12"
    assert lines[4] == "11          [X] 11"
    assert lines[-3] == "     A   B   C"
    assert "\t" not in s.render()


def test_render_highlight_of_a_move_not_yet_played_uses_the_side_to_move():
    s = rules.load("domineering").start()
    text = s.render(highlight="4C")
    assert text.count("[ ]") == 2
    assert " 5          [ ]" in text and " 4          [ ]" in text


# --- wire ---

def test_wire_fields():
    s = rules.load("domineering", rows=3, cols=4).start().play("1A").play("3B")
    assert s.to_wire() == {
        "game": "domineering",
        "params": {"rows": 3, "cols": 4, "first": "vertical"},
        "seat": 0,
        "ply": 2,
        "board": ["X...", "X...", ".OO."],
        "outcome": None,
    }
    over = rules.load("domineering", rows=2, cols=2).start().play("1B")
    assert over.to_wire()["outcome"] == {"winner": 0, "reason": "no legal move", "scores": None}
    assert over.to_wire()["board"] == [".X", ".X"]


@pytest.mark.parametrize("change, message", [
    ({"seat": 2}, "seat"), ({"seat": True}, "seat"), ({"ply": -1}, "ply"), ({"ply": "3"}, "ply"),
    ({"board": "X..."}, "board"), ({"board": ["...."] * 2}, "board"),
    ({"board": ["....", "....", "..."]}, "row 3"), ({"board": ["....", "....", "..x."]}, "'x'"),
    ({"board": ["X...", "....", "...."]}, "run of 1 X"), ({"board": ["XXX.", "XXX.", "X..."]}, "run of 3 X"),
    ({"board": ["OOO.", "....", "...."]}, "run of 3 O"), ({"board": [".O..", "....", "...."]}, "run of 1 O"),
    ({"params": {"rows": 3, "cols": 5, "first": "vertical"}}, "params"),
    ({"outcome": {"winner": 1, "reason": "no legal move", "scores": None}}, "outcome"),
])
def test_bad_wire_says_what_is_wrong(change, message):
    game = rules.load("domineering", rows=3, cols=4)
    wire = {**game.start().to_wire(), **change}
    with pytest.raises(ValueError, match=message):
        game.state_from_wire(wire)


def test_wire_accepts_set_up_positions():
    # The assignment's example: 3 X and 2 O dominoes with X to move, not reachable by alternation.
    s = example()
    assert s.to_wire()["board"] == list(reversed(EXAMPLE_TOP_FIRST))
    assert s.ply == 5 and s.seat == 0
    assert rules.load("domineering").state_from_wire(s.to_wire()) == s


@pytest.mark.parametrize("params", [{}, {"rows": 9, "cols": 11, "first": "horizontal"}])
def test_games_and_states_pickle_as_their_parameters_and_fields(params):
    """A game sent to a worker carries its parameters, not its per-seat tables."""
    import pickle

    game = rules.load("domineering", **params)
    state = game.start()
    for _ in range(6):
        state = state.play(state.legal_moves()[len(state.legal_moves()) // 2])
    assert len(pickle.dumps(game)) < 1000 and len(pickle.dumps(state)) < 1000
    copy = pickle.loads(pickle.dumps(state))
    assert copy == state and hash(copy) == hash(state) and copy.game == game
    assert copy.to_wire() == state.to_wire() and copy.legal_moves() == state.legal_moves()
