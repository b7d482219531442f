"""docs/rules.md, the repository's own rule book: every link stays inside the repository, and its
worked examples are what the engines say."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import rules
from rules.freedom import alive_mask
from rules.santorini import read_game_file

ROOT = Path(__file__).resolve().parents[1]
RULE_BOOK = ROOT / "docs" / "rules.md"
LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.parametrize("page", [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))],
                         ids=lambda p: p.name)
def test_every_link_of_the_documentation_stays_in_the_repository(page):
    text = page.read_text(encoding="utf-8")
    assert "shared/" not in text and "RULES.md" not in text, f"{page.name} points at the course folder"
    for target in LINK.findall(text):
        if target.startswith(("http://", "https://", "mailto:", "#")):
            continue
        path = (page.parent / target.split("#")[0]).resolve()
        assert path.is_relative_to(ROOT), f"{page.name}: {target} leaves the repository"
        assert path.exists(), f"{page.name}: {target} does not exist"


def test_the_readme_links_the_rule_book_which_links_nothing_outside():
    assert "](docs/rules.md)" in (ROOT / "README.md").read_text(encoding="utf-8")
    text = RULE_BOOK.read_text(encoding="utf-8")
    assert "http" not in text and "../" not in text
    for game in ("Freedom", "Domineering", "Nine Men's Morris", "Santorini", "Simplified Fanorona"):
        assert f"\n## {game}\n" in text


def play(game: rules.Game, moves: list[str]) -> rules.State:
    state = game.start()
    for move in moves:
        state = state.play(move)
    return state


def test_freedom_examples():
    state = play(rules.load("freedom", size=8), ["A2", "B1", "B2", "A1"])
    assert len(state.legal_moves()) == 60  # freedom: every empty cell
    assert state.play("H8").legal_moves() == ["G7", "H7", "G8"]

    def bit(cell: str) -> int:
        return 1 << ((int(cell[1:]) - 1) * 8 + "ABCDEFGH".index(cell[0]))

    cells = "A1 B1 C1 D1 A3 B3 C3 D3 E3 D4 D5 D6".split()
    mask = alive_mask(sum(bit(c) for c in cells), 8)
    assert [c for c in cells if mask & bit(c)] == "A1 B1 C1 D1 D3 D4 D5 D6".split()


def test_morris_example():
    state = play(rules.load("morris"), ["a1", "b2", "d1", "b4"])
    assert [m for m in state.legal_moves() if m.startswith("g1")] == ["g1xb2", "g1xb4"]
    with pytest.raises(rules.IllegalMoveError, match="must name the Black stone to remove"):
        state.play("g1")


def test_santorini_examples():
    with pytest.raises(rules.IllegalMoveError, match="B2 is occupied by a worker"):
        read_game_file("СЗ В2\nВ2 D2\n")
    state = read_game_file("C3 B2\nA1 E5\nC3 B3 A3\nE5 D4 E5\n")
    assert state.workers(0) == ("B2", "B3") and state.workers(1) == ("A1", "D4")
    from bots.evaluation import santorini_f

    placed = play(rules.load("santorini"), ["B2 C3", "A1 E5"])
    assert santorini_f(placed.play("C3 C4 D4"), "C3 C4 D4") == 1


def test_fanorona_examples_and_the_corrected_one():
    game = rules.load("fanorona")
    start = game.start()
    assert start.legal_moves() == ["D2-D3", "E3-D3"]
    after = play(game, ["D2-D3", "C3-D2"])
    for turn in ("C2-C3", "C2-C3-D4", "C2-C3-D4-C4"):
        assert turn in after.legal_moves()
    board = after.play("C2-C3-D4").to_wire()["board"]
    assert board[3][2] == board[4][2] == board[4][4] == "."  # C4, C5 and E5 taken
    with pytest.raises(rules.InvalidMoveError, match="D3 and C4 are not neighbours on a line"):
        start.play("E3-D3-C4")
    with pytest.raises(rules.IllegalMoveError, match="C3 is occupied"):
        start.play("C2-C3-D4")
