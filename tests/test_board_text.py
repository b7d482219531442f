"""rules.core.BoardText: the rows of text every to_wire sends, remembered between turns."""
from __future__ import annotations

import pickle
import random

import pytest

import rules
from rules import core
from rules.core import BoardText, board_text


def cell_by_cell(rows: int, cols: int, first: int, second: int) -> list[str]:
    return ["".join("X" if first >> (r * cols + c) & 1 else "O" if second >> (r * cols + c) & 1 else "."
                    for c in range(cols)) for r in range(rows)]


@pytest.mark.parametrize("rows, cols", [(1, 1), (3, 5), (8, 8), (5, 26), (26, 3)])
def test_rows_match_a_cell_by_cell_rendering(rows, cols):
    text = BoardText(rows, cols, "X", "O", ".")
    rng = random.Random(rows * 100 + cols)
    for _ in range(200):
        first = rng.getrandbits(rows * cols)
        second = rng.getrandbits(rows * cols) & ~first
        expected = cell_by_cell(rows, cols, first, second)
        assert text.board(first, second) == expected
        assert text.board(first, second) == expected  # remembered: the same answer


def test_each_call_gives_a_fresh_list():
    text = BoardText(2, 2, "X", "O", ".")
    got = text.board(1, 2)
    got[0] = "changed"
    assert text.board(1, 2) == ["XO", ".."]


def test_memory_is_bounded(monkeypatch):
    monkeypatch.setattr(core, "BOARD_TEXT_MEMO_MAX", 4)
    text = BoardText(2, 3, "X", "O", ".")
    for first in range(64):
        assert text.board(first, 0) == cell_by_cell(2, 3, first, 0)
        assert len(text._boards) <= 4 and len(text._rows) <= 4


def test_shared_by_size_and_pickled_without_its_memory():
    text = board_text(4, 4, "W", "B", ".")
    assert board_text(4, 4, "W", "B", ".") is text
    text.board(5, 10)
    copy = pickle.loads(pickle.dumps(text))
    assert copy.board(5, 10) == text.board(5, 10)
    game = rules.load("fanorona")
    assert pickle.loads(pickle.dumps(game)).start().to_wire() == game.start().to_wire()


@pytest.mark.parametrize("name", ["domineering", "freedom", "fanorona"])
def test_to_wire_reads_back_as_the_same_state_over_whole_games(name):
    """The boards remembered from earlier turns (and Fanorona's history) stand for each position."""
    game = rules.load(name)
    rng = random.Random(3)
    for _ in range(5):
        state = game.start()
        while state.outcome is None and state.ply < 200:
            assert game.state_from_wire(state.to_wire()) == state
            state = state.play(rng.choice(state.legal_moves()))
        assert game.state_from_wire(state.to_wire()) == state


def test_rows_of_gives_the_same_rows_without_remembering_the_board():
    text = BoardText(3, 4, "X", "O", ".")
    first, second = 0b100000000001, 0b000000010010
    assert text.rows_of(first, second) == cell_by_cell(3, 4, first, second)
    assert not text._boards
