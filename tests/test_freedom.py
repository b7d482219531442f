"""Freedom: life in runs of exactly four, adjacency, freedom, the last-move pass, wire and notation."""
from __future__ import annotations

import random
import re

import pytest

import rules
from rules import IllegalMoveError, InvalidMoveError
from rules.freedom import alive_stones

GAME = rules.load("freedom")


def position(picture: str, last: str | None, passed: bool = False, outcome=None, **params):
    """A state from a board picture drawn as render() shows it: top row first, W, B and '.'."""
    game = rules.load("freedom", **params)
    rows = picture.split()
    placed = sum(row.count("W") + row.count("B") for row in rows)
    return game.state_from_wire({
        "game": "freedom",
        "params": game.params,
        "seat": (placed + passed) % 2,
        "ply": placed + passed,
        "board": rows[::-1],
        "last": last,
        "passed": passed,
        "outcome": outcome,
    })


def naive_alive(state) -> tuple[int, int]:
    """Reference count: walk every maximal run from its first stone, cell by cell."""
    rows = state.to_wire()["board"]
    n = len(rows)
    alive = set()
    for r in range(n):
        for c in range(n):
            colour = rows[r][c]
            if colour == ".":
                continue
            for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                pr, pc = r - dr, c - dc
                if 0 <= pr < n and 0 <= pc < n and rows[pr][pc] == colour:
                    continue  # not the first stone of its run
                run = []
                rr, cc = r, c
                while 0 <= rr < n and 0 <= cc < n and rows[rr][cc] == colour:
                    run.append((rr, cc))
                    rr, cc = rr + dr, cc + dc
                if len(run) == 4:
                    alive.update(run)
    white = sum(1 for r, c in alive if rows[r][c] == "W")
    return white, len(alive) - white


# --- life: (picture on 8x8, previous stone, (white alive, black alive)) ---
LIFE = [
    pytest.param("........ ........ ........ ........ ........ ........ ........ BBB.WWWW",
                 "H1", (4, 0), id="row of 4 lives, row of 3 does not"),
    pytest.param("........ ........ ........ ........ ........ ........ BBBB.... WWWWW...",
                 "E1", (0, 4), id="row of 5 does not live"),
    pytest.param("WW.WW... ........ ........ ........ ........ ........ ........ BBB.....",
                 "E8", (0, 0), id="a gap splits 4 into 2+2"),
    pytest.param("WWWWWWWW ........ ........ ........ ........ ........ ........ BBBBBBB.",
                 "H8", (0, 0), id="full-width runs give no life"),
    pytest.param("........ ........ ........ .....B.. W....B.. W....B.. W....... W.......",
                 "A4", (4, 0), id="column of 4 lives, column of 3 does not"),
    pytest.param("B....... .B...... ..B..... ...B.... ...W.... ..W..... .W...... W.......",
                 "D5", (4, 4), id="both diagonals of 4 live"),
    pytest.param("B....... .B...... ..B..... ...BW... ...W.... ..W..... .W...... W.......",
                 "E5", (0, 4), id="diagonal of 5 does not live"),
    pytest.param("BBBBBBB. ........ ........ ..W..... .WWWW... ..W..... ..W..... ........",
                 "G8", (7, 0), id="crossing runs of 4 share a stone counted once"),
    pytest.param("BBBBBBBB ........ ........ ........ W....... W....... W....... WWWWW...",
                 "H8", (4, 0), id="a stone dead in a row of 5 lives in its column of 4"),
    pytest.param("........ ........ ........ ........ BBBB.... WWWW.... BBBB.... WWWW....",
                 "A2", (8, 8), id="stacked rows of 4, opposite colours between"),
    pytest.param("........ ........ ........ ........ ........ WWWW.... WWWW.... BBBBBBB.",
                 "D2", (8, 0), id="adjacent parallel runs of 4 both live"),
]


@pytest.mark.parametrize("picture, last, expected", LIFE)
def test_alive_stones(picture, last, expected):
    state = position(picture, last, size=8)
    assert alive_stones(state) == expected
    assert state.alive_stones() == expected
    assert naive_alive(state) == expected


def test_alive_stones_matches_a_naive_count_over_random_games():
    for size in (4, 8, 10):
        game = rules.load("freedom", size=size)
        rng = random.Random(size)
        for _ in range(5):
            state = game.start()
            while not state.is_over():
                state = state.play(rng.choice(state.legal_moves()))
                assert alive_stones(state) == naive_alive(state)
            assert state.outcome.scores == naive_alive(state)


# --- adjacency: (moves played from the start of a 10x10 game, the legal moves after them) ---
ADJACENCY = [
    pytest.param([], [f"{c}{r}" for r in range(1, 11) for c in "ABCDEFGHIJ"], id="first stone anywhere"),
    pytest.param(["E5"], ["D4", "E4", "F4", "D5", "F5", "D6", "E6", "F6"], id="eight neighbours"),
    pytest.param(["A1"], ["B1", "A2", "B2"], id="corner has three"),
    pytest.param(["J5"], ["I4", "J4", "I5", "I6", "J6"], id="edge has five"),
    pytest.param(["A1", "B2"], ["B1", "C1", "A2", "C2", "A3", "B3", "C3"], id="occupied neighbour excluded"),
    pytest.param(["E5", "F6", "G7"], ["F7", "H7", "F8", "G8", "H8", "G6", "H6"],
                 id="bound to the last stone only"),
]


@pytest.mark.parametrize("moves, legal", ADJACENCY)
def test_only_neighbours_of_the_previous_stone_are_legal(moves, legal):
    state = GAME.start()
    for move in moves:
        state = state.play(move)
    assert sorted(state.legal_moves()) == sorted(legal)
    assert "pass" not in state.legal_moves()


# --- freedom: every neighbour of the previous stone is full, so any empty cell is legal ---
FREEDOM = [
    pytest.param(".... .... WB.. BW..", "A1", 12, id="corner A1 boxed in"),
    pytest.param("WWW. WBW. BBB. BWB.", "B3", 4, id="B3 surrounded on all eight sides"),
    pytest.param("...W .... ..WW .BBB", "D1", 10, id="edge D1, its three neighbours full"),
]


@pytest.mark.parametrize("picture, last, empty", FREEDOM)
def test_freedom_when_all_neighbours_are_full(picture, last, empty):
    state = position(picture, last, size=4)
    wire = state.to_wire()
    empties = [f"{'ABCD'[c]}{r + 1}"
               for r, row in enumerate(wire["board"]) for c, ch in enumerate(row) if ch == "."]
    assert len(empties) == empty
    assert sorted(state.legal_moves()) == sorted(empties)
    assert "freedom" in state.render()
    # The freedom stone binds the next player as usual.
    far = "D4" if "D4" in empties else empties[-1]
    after = state.play(far)
    neighbours = {m for m in empties if m != far and abs(ord(m[0]) - ord(far[0])) <= 1
                  and abs(int(m[1:]) - int(far[1:])) <= 1}
    assert set(after.legal_moves()) == (neighbours or set(empties) - {far})


def test_freedom_then_bound_again():
    state = position(".... .... WB.. BW..", "A1", size=4).play("D4")
    assert sorted(state.legal_moves()) == ["C3", "C4", "D3"]
    with pytest.raises(IllegalMoveError, match="A4"):
        state.play("A4")


# --- the last-move pass ---
# 4x4, one empty cell (D4), Black to move; (move, reason)
LAST_CELL_4 = "WBW. BWBW WBWB BWBW"
LAST_MOVE = [
    pytest.param("pass", "last move passed", id="pass scores the board as is"),
    pytest.param("D4", "board full", id="playing the last cell fills the board"),
]


@pytest.mark.parametrize("move, reason", LAST_MOVE)
def test_last_move_pass_is_legal_and_ends_the_game(move, reason):
    state = position(LAST_CELL_4, "D3", size=4)
    assert state.seat == 1
    assert state.legal_moves() == ["D4", "pass"]
    end = state.play(move)
    assert end.is_over() and end.outcome.reason == reason
    assert end.outcome.scores == naive_alive(end)
    assert end.legal_moves() == []
    assert end.ply == 16
    with pytest.raises(IllegalMoveError, match="game is over"):
        end.play("pass")


# 5x5, White to move, E1 empty: passing keeps White's row of four alive; playing makes it five.
PASS_BEATS_PLAY = "BBBBB BWWWB WBWWB WBBBW WWWW."
PASS_VS_PLAY = [
    pytest.param("pass", (4, 0), 0, "last move passed", id="pass keeps the row of four"),
    pytest.param("E1", (0, 0), None, "board full", id="playing E1 makes a dead row of five"),
]


@pytest.mark.parametrize("move, scores, winner, reason", PASS_VS_PLAY)
def test_passing_can_score_more_than_playing(move, scores, winner, reason):
    state = position(PASS_BEATS_PLAY, "D2", size=5)
    assert state.seat == 0 and state.legal_moves() == ["E1", "pass"]
    assert alive_stones(state) == (4, 0)
    end = state.play(move)
    assert end.outcome.reason == reason
    assert end.outcome.scores == scores
    assert end.outcome.winner == winner
    assert end.outcome.reason in end.render() and "to move" not in end.render().lower()


@pytest.mark.parametrize("moves", [[], ["E5"], ["E5", "E6", "E7"]])
def test_pass_is_illegal_before_the_last_cell(moves):
    state = GAME.start()
    for move in moves:
        state = state.play(move)
    with pytest.raises(IllegalMoveError, match=r"'pass' is illegal.*exactly one empty cell.*\d+ are empty"):
        state.play("pass")


def test_pass_with_two_empty_cells_is_illegal():
    state = position("WB.. BWBW WBWB BWBW", "B4", size=4)
    assert "pass" not in state.legal_moves()
    with pytest.raises(IllegalMoveError, match="pass"):
        state.play("PASS")


def test_random_full_games_offer_pass_only_at_the_end():
    rng = random.Random(7)
    for _ in range(20):
        state = GAME.start()
        while not state.is_over():
            moves = state.legal_moves()
            assert ("pass" in moves) == (state.ply == 99)
            state = state.play(rng.choice(moves))
        assert state.outcome.reason in ("board full", "last move passed")
        white, black = state.outcome.scores
        assert state.outcome.winner == (0 if white > black else 1 if black > white else None)


# --- illegal and invalid moves ---
ILLEGAL = [
    pytest.param(["E5"], "E5", "E5 is occupied", id="occupied"),
    pytest.param(["E5"], "A1", "A1 is not next to E5", id="not adjacent"),
    pytest.param(["E5", "F6"], "e 5", "E5 is occupied", id="human form quoted canonically"),
    pytest.param(["E5", "F6"], "J10", "J10 is not next to F6, the previous stone", id="far cell"),
]


@pytest.mark.parametrize("moves, move, why", ILLEGAL)
def test_illegal_moves_name_the_move(moves, move, why):
    state = GAME.start()
    for m in moves:
        state = state.play(m)
    with pytest.raises(IllegalMoveError, match=re.escape(why)):
        state.play(move)


PARSE = [
    ("E5", "E5"), ("e5", "E5"), ("e 5", "E5"), (" E5 ", "E5"), ("j10", "J10"), ("A01", "A1"),
    ("pass", "pass"), ("PASS", "pass"), (" Pass ", "pass"),
]


@pytest.mark.parametrize("text, canonical", PARSE)
def test_parse_move_accepts_human_forms(text, canonical):
    assert GAME.parse_move(text) == canonical
    if canonical != "pass":
        assert GAME.start().play(text).to_wire()["last"] == canonical


@pytest.mark.parametrize("text", ["", "zz99", "hello world", "A", "-", "999", "K5", "A0", "A11", "5E",
                                  "E5x", "passs", "E-5", None, 55])
def test_junk_is_invalid(text):
    with pytest.raises(InvalidMoveError):
        GAME.parse_move(text)


def test_size_limits_cells():
    big = rules.load("freedom", size=12)
    assert big.parse_move("l12") == "L12"
    assert len(big.start().legal_moves()) == 144
    assert len(rules.load("freedom", size=8).start().legal_moves()) == 64
    with pytest.raises(InvalidMoveError, match="off the 8x8 board"):
        rules.load("freedom", size=8).parse_move("I1")


@pytest.mark.parametrize("size", [0, 3, 27, -1, "x"])
def test_bad_size_is_refused(size):
    with pytest.raises(ValueError, match="size"):
        rules.load("freedom", size=size)


# --- wire ---
def test_wire_fields():
    state = GAME.start().play("E5").play("F6")
    wire = state.to_wire()
    assert wire == {
        "game": "freedom", "params": {"size": 10}, "seat": 0, "ply": 2,
        "board": ["." * 10] * 4 + ["....W.....", ".....B...."] + ["." * 10] * 4,
        "last": "F6", "passed": False, "outcome": None,
    }
    assert GAME.state_from_wire(wire) == state


BAD_WIRE = [
    pytest.param({"board": ["W" * 10] * 10}, "board", id="too many white stones"),
    pytest.param({"board": ["." * 10] * 9}, "board", id="nine rows"),
    pytest.param({"board": ["." * 9] * 10}, "row 1", id="short row"),
    pytest.param({"board": ["X" + "." * 9] + ["." * 10] * 9}, "'X'", id="bad cell"),
    pytest.param({"board": "W"}, "board", id="board not a list"),
    pytest.param({"last": "E6"}, "last", id="last on an empty cell"),
    pytest.param({"last": "E5"}, "last", id="last on the wrong colour"),
    pytest.param({"last": None}, "last", id="no last stone"),
    pytest.param({"last": "Z99"}, "last", id="last off the board"),
    pytest.param({"ply": 3}, "ply", id="ply disagrees"),
    pytest.param({"ply": "2"}, "ply", id="ply not an int"),
    pytest.param({"seat": 1}, "seat", id="seat disagrees"),
    pytest.param({"passed": True}, "passed", id="pass with many empty cells"),
    pytest.param({"passed": 0}, "passed", id="passed not a bool"),
    pytest.param({"outcome": {"winner": None, "reason": "board full", "scores": [0, 0]}}, "outcome",
                 id="outcome on a running game"),
    pytest.param({"params": {"size": 8}}, "params", id="other size"),
]


@pytest.mark.parametrize("change, message", BAD_WIRE)
def test_bad_wire_says_what_is_wrong(change, message):
    wire = {**GAME.start().play("E5").play("F6").to_wire(), **change}
    with pytest.raises(ValueError, match=re.escape(message)):
        GAME.state_from_wire(wire)


def test_finished_wire_needs_the_right_outcome():
    end = position(LAST_CELL_4, "D3", size=4).play("pass")
    wire = end.to_wire()
    assert wire["passed"] is True and wire["outcome"]["reason"] == "last move passed"
    game = rules.load("freedom", size=4)
    assert game.state_from_wire(wire) == end
    with pytest.raises(ValueError, match="outcome"):
        game.state_from_wire({**wire, "outcome": None})


# --- render ---
def test_render_layout_and_highlight():
    state = GAME.start().play("E5").play("F6")
    text = state.render(highlight="F6")
    lines = text.splitlines()
    assert lines[0].split() == list("ABCDEFGHIJ") == lines[11].split()
    assert lines[1].split()[0] == "10" and lines[1].split()[-1] == "10"
    assert lines[10].split()[0] == "1" and lines[10].split()[-1] == "1"
    assert lines[5] == " 6  . . . . .[B]. . . . 6 "
    assert lines[6] == " 5  . . . . W . . . . . 5 "
    assert "White (W, seat 0) to move, next to F6" in lines[12]
    assert "[" not in state.render()
    assert state.render(highlight="pass") == state.render() == state.render(highlight="junk")
