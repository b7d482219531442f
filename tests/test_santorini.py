"""Santorini: positions with known answers (docs/rules.md "Santorini", the assignment's examples)."""
from __future__ import annotations

import json
import random
import re

import pytest

import rules
from rules import IllegalMoveError, InvalidMoveError, Outcome
from rules.santorini import Santorini, read_game_file, write_game_file

GAME = Santorini()
LIMITED = Santorini(limited_supply=True)


def position(rows: list[str], game: Santorini = GAME, outcome: dict | None = None) -> rules.State:
    """A running position from 5 rows of 5 cells: a level digit 0-3 or D (dome), then X (seat 0's
    worker) or O (seat 1's). Each turn builds one piece, so the piece count fixes ply and seat."""
    levels, workers = [], [[], []]
    for r, row in enumerate(rows):
        cells = row.split()
        assert len(cells) == 5
        levels.append([])
        for c, cell in enumerate(cells):
            levels[-1].append(4 if cell[0] == "D" else int(cell[0]))
            if cell[1:]:
                workers["XO".index(cell[1:])].append(f"{'ABCDE'[r]}{c + 1}")
    ply = 2 + sum(map(sum, levels))
    wire = {"game": "santorini", "params": game.params, "seat": ply % 2, "ply": ply,
            "levels": levels, "workers": workers, "outcome": outcome}
    return game.state_from_wire(wire)


# Seat 0 (X) on C3 (level 0) and B2 (level 1); seat 1 (O) on E1 and E5. 8 pieces: seat 0 to move.
CLIMB = position([
    "0  3  2  D  0",
    "0  1X 1  0  0",
    "0  1  0X 0  0",
    "0  0  0  0  0",
    "0O 0  0  0  0O",
])


@pytest.mark.parametrize("move, legal", [
    ("C3 C2 C1", True),    # 0 -> 1: up one
    ("C3 B3 A3", True),    # 0 -> 1, building up the 2 to a 3
    ("B2 A3 A4", False),   # 1 -> 2 fine, but A4 has a dome: no build there
    ("B2 A3 B3", True),    # 1 -> 2: up one
    ("B2 A2 A1", False),   # 1 -> 3: up two
    ("C3 B4 A4", False),   # building on a dome
    ("B2 A1 B1", True),    # 1 -> 0: down
    ("C3 D4 C3", True),    # building on the square just left
    ("C3 B2 A1", False),   # onto a worker (own)
    ("C3 C3 C4", False),   # staying put
    ("C3 C5 C4", False),   # not adjacent
    ("C3 D3 C3", True),
    ("C3 D3 B3", False),   # build not next to the worker
    ("C3 D3 D3", False),   # build under the worker
    ("C3 C2 B2", False),   # build on a worker
    ("E1 D1 C1", False),   # the opponent's worker
    ("A5 B5 C5", False),   # no worker there
])
def test_moves_in_climb_position(move, legal):
    assert (move in CLIMB.legal_moves()) is legal
    if legal:
        assert CLIMB.play(move).ply == CLIMB.ply + 1
    else:
        with pytest.raises(IllegalMoveError, match=re.escape(repr(move))):
            CLIMB.play(move)


@pytest.mark.parametrize("move, reason", [
    ("B2 A2 A1", "climbs at most one level"),
    ("C3 B4 A4", "A4 has a dome"),
    ("B2 A3 A4", "A4 has a dome"),
    ("C3 B2 A1", "B2 is occupied"),
    ("C3 C5 C4", "C5 is not next to C3"),
    ("C3 D3 B3", "B3 is not next to D3"),
    ("C3 C2 B2", "B2 is occupied"),
    ("C3 D3 D3", "the worker stands on D3"),
    ("C3 C3 C4", "C3 is not next to C3"),
    ("E1 D1 C1", "not seat 0's"),
    ("A5 B5 C5", "no worker on A5"),
    ("C3 C2", "names a build square too"),
    ("B2 C3 C4", "C3 is occupied"),
])
def test_illegal_moves_say_why_and_name_the_move(move, reason):
    with pytest.raises(IllegalMoveError) as err:
        CLIMB.play(move)
    assert repr(move) in str(err.value) and reason in str(err.value)


def test_build_effects():
    after = CLIMB.play("C3 B3 A3")
    assert after.level("A3") == 3 and after.workers(0) == ("B2", "B3") and after.seat == 1
    assert after.play("E5 D5 E5").level("E5") == 1          # on the vacated square
    domed = CLIMB.play("B2 A3 A2").play("E1 D1 E1")         # level 3 -> dome
    assert domed.level("A2") == 4 and domed.workers(0) == ("A3", "C3") and domed.seat == 0
    assert not [m for m in domed.legal_moves() if "A2" in m.split()[1:]]
    assert "A3 B3 A4" not in domed.legal_moves() and "A3 B3 A2" not in domed.legal_moves()


# X on C3 at level 2 next to B3 (level 3) and C2 (level 3 with a dome): 10 pieces, seat 0 to move.
WIN = position([
    "0  0  0  0  0",
    "0  0  3  0  0",
    "0  D  2X 0  0",
    "0  0  0  1X 0",
    "0O 0  0  0  0O",
])


def test_moving_onto_level_3_wins_without_a_build():
    moves = WIN.legal_moves()
    assert "C3 B3" in moves
    assert not [m for m in moves if m.startswith("C3 B3 ")]
    assert not [m for m in moves if m.startswith("C3 C2")]
    for text in ("C3 B3", "c3 b3", "  C3   B3 "):
        end = WIN.play(text)
        assert end.outcome == Outcome(0, "reached level 3")
        assert end.is_over() and end.legal_moves() == [] and end.ply == WIN.ply + 1
        assert end.workers(0) == ("B3", "D4") and end.level("B3") == 3
    with pytest.raises(IllegalMoveError, match=re.escape("write 'C3 B3'")):
        WIN.play("C3 B3 A3")
    end = WIN.play("C3 B3")
    with pytest.raises(IllegalMoveError, match="game is over"):
        end.play("D4 D5 E4")
    assert GAME.state_from_wire(json.loads(json.dumps(end.to_wire()))).outcome == end.outcome
    assert "reached level 3" in end.render() and "to move" not in end.render()


@pytest.mark.parametrize("rows, loser", [
    # seat 0's workers in the corner, every way out two levels up (8 pieces: seat 0 to move)
    (["0X 0X 2  0  0",
      "2  2  2  0  0",
      "0  0  0  0  0",
      "0  0  0  0  0",
      "0O 0  0  0  0O"], 0),
    # seat 1's workers walled in by domes and a worker (9 pieces: seat 1 to move)
    (["1  0  0  0  0",
      "0  0  0  0  0",
      "0  0  0  0  0",
      "D  D  0X 0  0",
      "0O 0O 0X 0  0"], 1),
])
def test_a_player_who_cannot_move_loses(rows, loser):
    with pytest.raises(ValueError, match="outcome"):
        position(rows)  # the wire must say the game is over
    state = position(rows, outcome={"winner": 1 - loser, "reason": "no legal move", "scores": None})
    assert state.seat == loser
    assert state.outcome == Outcome(1 - loser, "no legal move")
    assert state.legal_moves() == []
    assert "no legal move" in state.render()


# Limited supply: all 22 level-1 blocks are on the board (only C3, C4, C5 are bare): seat 0 to move.
NO_LEVEL1 = [
    "1  1  1  1  1",
    "1  1X 1  1  1",
    "1  1  0X 0  0",
    "1  1  1  1  1",
    "1  1O 1  1O 1",
]
# Limited supply: all 14 level-3 blocks are used (rows A, B and C1-C4): seat 0 to move.
NO_LEVEL3 = [
    "3  3  3  3  3",
    "3  3  3  3  3",
    "3  3  3  D  0",
    "0X 2  0X 0  0",
    "0O 0  0  1  0O",
]


@pytest.mark.parametrize("rows, move, legal, reason", [
    (NO_LEVEL1, "C3 C4 C5", False, "no level-1 block is left (all 22 are on the board)"),
    (NO_LEVEL1, "C3 B3 C3", False, "no level-1 block is left"),
    (NO_LEVEL1, "C3 C4 D5", True, ""),
    (NO_LEVEL3, "D3 E3 D2", False, "no level-3 block is left (all 14 are on the board)"),
    (NO_LEVEL3, "D3 E3 E2", True, ""),
    (NO_LEVEL3, "D1 E2 D2", False, "no level-3 block is left"),
    (NO_LEVEL3, "D3 D4 C3", True, ""),    # a dome on a level 3: domes are not short
])
def test_limited_supply_runs_out(rows, move, legal, reason):
    state = position(rows, LIMITED)
    assert (move in state.legal_moves()) is legal
    unlimited = position(rows)
    assert move in unlimited.legal_moves()  # only the supply forbids it
    if legal:
        state.play(move)
    else:
        with pytest.raises(IllegalMoveError, match=re.escape(repr(move))) as err:
            state.play(move)
        assert reason in str(err.value)


def test_limited_supply_counts_and_wire_limits():
    state = position(NO_LEVEL1, LIMITED)
    assert state.supply_left() == (0, 18, 14, 18)
    assert position(NO_LEVEL1).supply_left() is None
    assert state.legal_moves() and all(state.level(m.split()[2]) > 0 for m in state.legal_moves())
    wire = position(NO_LEVEL1).to_wire()
    wire["levels"][2][4] = 1
    wire["ply"], wire["seat"] = wire["ply"] + 1, 1
    GAME.state_from_wire(wire)  # 23 level-1 blocks: fine without a limit
    with pytest.raises(ValueError, match="level-1 block"):
        LIMITED.state_from_wire({**wire, "params": LIMITED.params})


@pytest.mark.parametrize("moves, bad, reason", [
    ([], "B2 B2", "two different squares"),
    ([], "B2 C3 D4", "name two squares"),
    (["B2 C3"], "B2 D2", "B2 is occupied"),
    (["B2 C3"], "A1 C3", "C3 is occupied"),
    (["B2 C3"], "D2 D2", "two different squares"),
])
def test_setup_errors(moves, bad, reason):
    state = GAME.start()
    for move in moves:
        state = state.play(move)
    with pytest.raises(IllegalMoveError, match=re.escape(repr(bad))) as err:
        state.play(bad)
    assert reason in str(err.value)


def test_setup():
    start = GAME.start()
    assert start.seat == 0 and start.ply == 0 and start.workers(0) == () and len(start.legal_moves()) == 300
    one = start.play("b2 c3")
    assert one.workers(0) == ("B2", "C3") and one.seat == 1 and len(one.legal_moves()) == 253
    assert "B2 C3" not in one.legal_moves() and "A1 E5" in one.legal_moves()
    two = one.play("A1 E5")
    assert two.workers(1) == ("A1", "E5") and two.seat == 0 and two.ply == 2
    assert all(m.split()[0] in ("B2", "C3") for m in two.legal_moves())
    assert "B2 A2 B2" in two.legal_moves() and "B2 A2 A1" not in two.legal_moves()


@pytest.mark.parametrize("text, canonical", [
    ("C3 B3 A3", "C3 B3 A3"),
    ("c3 b3 a3", "C3 B3 A3"),
    ("  c3   B3\ta3 ", "C3 B3 A3"),
    ("C3-B3-A3", "C3 B3 A3"),
    ("C3,B3,A3", "C3 B3 A3"),
    ("c3b3a3", "C3 B3 A3"),
    ("C3 B2", "C3 B2"),          # the order is kept: a winning move names from, then to
    ("СЗ В2", "C3 B2"),          # the assignment's sample, typed with Cyrillic look-alikes
])
def test_parse_move(text, canonical):
    assert GAME.parse_move(text) == canonical


@pytest.mark.parametrize("junk", ["", "zz99", "hello world", "A", "-", "999", "C3", "F1 A1", "A0 A1",
                                  "A6 A1", "C3 B3 A3 A4", "C3 B3 //", None, 33])
def test_parse_move_refuses_junk(junk):
    with pytest.raises(InvalidMoveError):
        GAME.parse_move(junk)


def _random_moves(seed: int) -> list[str]:
    rng, state, moves = random.Random(seed), GAME.start(), []
    while not state.is_over():
        moves.append(rng.choice(state.legal_moves()))
        state = state.play(moves[-1])
    return moves


@pytest.mark.parametrize("seed", range(5))
def test_game_file_round_trip(seed):
    moves = _random_moves(seed)
    text = write_game_file(moves)
    assert text.splitlines() == moves
    state = read_game_file(text)
    replay = GAME.start()
    for move in moves:
        replay = replay.play(move)
    assert state == replay and state.is_over()
    assert write_game_file(["c3  b2", "e5 a1", "c3 b3 a3"]) == "B2 C3\nA1 E5\nC3 B3 A3\n"


@pytest.mark.parametrize("written", ["C3 B2", "B2 C3", "c3b2", "C3-B2", "c3, b2"])
def test_placements_are_accepted_in_either_order_and_come_out_sorted(written):
    first = GAME.start().play(written)
    assert first == GAME.start().play("B2 C3")
    assert first.workers(0) == ("B2", "C3")
    # seat 1 too, and the squares that would spell a move later still mean a placement here
    second = first.play("D3 D2")
    assert second == first.play("D2 D3") and second.workers(1) == ("D2", "D3")
    assert "B2 C3" in GAME.start().legal_moves() and "C3 B2" not in GAME.start().legal_moves()
    with pytest.raises(IllegalMoveError, match="'B2 C3' is illegal: B2 is occupied"):
        first.play("C3 B2")  # the message names the canonical (sorted) move


def test_game_file_comments_blank_lines_and_placement_order():
    text = (
        "// a game file\n"
        "C3 B2 //the first player's workers\n"
        "\n"
        "   e5 a1   // written in any order, any case\n"
        "C3 B3 A3 //move C3 to B3, build on A3\n"
        "    \n"
        "E5 D4 E5\n"
    )
    state = read_game_file(text)
    assert state.ply == 4 and state.seat == 0
    assert state.workers(0) == ("B2", "B3") and state.workers(1) == ("A1", "D4")
    assert state.level("A3") == 1 and state.level("E5") == 1 and state.level(0) == 0
    assert read_game_file("") == GAME.start()
    assert read_game_file("B2 C3\nA1 E5\n", LIMITED).game == LIMITED


def test_the_assignments_sample_file_is_refused_at_line_3():
    # The seed's example, as written: seat 1 is placed on B2, which seat 0 already holds.
    sample = (
        "СЗ В2 //постављају се фигуре првог играча на означена поља\n\n"
        "В2 D2 //постављају се фигуре другог играча на означена поља\n\n"
        "СЗ ВЗ АЗ //помера се фигура са поља СЗ на поље ВЗ, уз изградњу плочице на пољу АЗ\n"
    )
    with pytest.raises(IllegalMoveError, match=re.escape("line 3: 'B2 D2' is illegal: B2 is occupied")):
        read_game_file(sample)


@pytest.mark.parametrize("text, error, message", [
    ("B2 C3\nA1 E5\nC3 B3 A3\nzz99\n", InvalidMoveError, "line 4: 'zz99'"),
    ("B2 C3\nA1 E5\nC3 A3 A4\n", IllegalMoveError, "line 3: 'C3 A3 A4' is illegal: A3 is not next to C3"),
    ("B2 C3 // x\n\nA1 B2\n", IllegalMoveError, "line 3: 'A1 B2' is illegal: B2 is occupied"),
])
def test_game_file_errors_name_line_and_move(text, error, message):
    with pytest.raises(error, match=re.escape(message)):
        read_game_file(text)


def test_render_layout_and_highlight():
    text = CLIMB.render(highlight="C3 B3 A3")
    lines = text.splitlines()
    assert lines[0].split() == ["1", "2", "3", "4", "5"]
    assert lines[1].split()[0] == "A" and lines[5].split()[0] == "E"
    assert "[0X]" in lines[3] and "[2 ]" in lines[1] and "[1 ]" in lines[2]
    assert "D" in lines[1] and "1X" in lines[2] and "0O" in lines[5]
    assert "Seat 0 (X) to move" in text
    assert "place both workers" in GAME.start().render()
    assert CLIMB.render(highlight="not a move") == CLIMB.render()


@pytest.mark.parametrize("change, message", [
    ({"ply": 9, "seat": 1}, "pieces"),
    ({"seat": 1}, "seat"),
    ({"ply": -2}, "ply"),
    ({"levels": [[0] * 5] * 4}, "levels"),
    ({"levels": [[0, 0, 0, 0, 5]] + [[0] * 5] * 4}, "levels"),
    ({"workers": [["B2", "C3"]]}, "workers"),
    ({"workers": [["B2", "C3"], ["B2", "E5"]]}, "two workers on one square"),
    ({"workers": [["B2", "C3"], ["A1", "Z9"]]}, "not a square"),
    ({"workers": [["B2", "C3"], ["A1"]]}, "workers"),
    ({"workers": [["B2", "C3"], ["A1", "A4"]]}, "dome"),
    ({"seat": True}, "seat"),
    ({"outcome": {"winner": 1, "reason": "no legal move", "scores": None}}, "outcome"),
])
def test_bad_wire_says_what_is_wrong(change, message):
    wire = CLIMB.to_wire()
    assert wire["workers"] == [["B2", "C3"], ["E1", "E5"]] and wire["ply"] == 14
    with pytest.raises(ValueError, match=message):
        GAME.state_from_wire({**wire, **change})


def test_wire_refuses_a_game_that_should_have_ended():
    wire = WIN.play("C3 B3").to_wire()
    with pytest.raises(ValueError, match="level 3"):
        GAME.state_from_wire({**wire, "ply": wire["ply"] + 1, "seat": 0})


def test_registered_and_params():
    assert rules.load("santorini").params == {"limited_supply": False}
    assert rules.load("santorini", limited_supply="true") == LIMITED
    with pytest.raises(ValueError, match="limited_supply"):
        rules.load("santorini", limited_supply="maybe")
    with pytest.raises(ValueError):
        CLIMB.level("F6")


def test_a_bot_placing_in_the_other_order_is_answered_by_the_referee_with_the_sorted_move(tmp_path):
    """The rule book writes placements in either order: a bot sending `C3 B2` is not forfeited, and
    the record holds the canonical `B2 C3`."""
    import sys

    from arena.cell.launcher import resolve_command
    from arena.match.clock import TimeControl
    from arena.match.referee import run_match
    from arena.match.spec import BotSpec, MatchSpec

    script = tmp_path / "reversed.py"
    script.write_text(
        "import random\nfrom bots.sdk import Bot\n\n"
        "class Reversed(Bot):\n"
        "    def choose(self, state, time_left):\n"
        "        move = random.choice(state.legal_moves())\n"
        "        return ' '.join(reversed(move.split())) if state.ply < 2 else move\n\n"
        "Reversed().run()\n")
    spec = MatchSpec("rev", "santorini", (BotSpec("rev", (sys.executable, str(script))),
                                          BotSpec("random", resolve_command("random"))),
                     TimeControl(per_move=2.0), game_numbers=(0, 1))
    records = run_match(spec)
    assert [r.forfeit for r in records] == [None, None]
    for record in records:
        seat = record.players.index("rev")
        placement = record.moves[seat].move
        assert placement.split() == sorted(placement.split())
