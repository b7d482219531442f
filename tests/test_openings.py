"""Balanced openings: random ones and a file's, each played in both seats of a game pair (real
tournaments and matches of two deterministic bots, read back from the results); bad openings
refused naming the file and line; a resumed run refused when the openings change; the pentanomial
interval against figures worked out by hand, and against the trinomial one for correlated pairs."""
from __future__ import annotations

import json
import math
import sqlite3
import sys
from pathlib import Path

import pytest
from conftest import call_arena

import rules
from arena.match.openings import OpeningsError, parse_openings, random_opening, random_openings
from arena.match.records import GameRecord
from arena.tournament import config
from arena.tournament.pairs import pentanomial, pentanomial_interval, trinomial_interval
from arena.tournament.standings import paired_error_factors
from arena.tournament.store import DB_NAME, StoredGame, fingerprint_change

ROOT = Path(__file__).resolve().parents[1]
FIRST = f"{sys.executable} {ROOT / 'tests' / 'bots' / 'first.py'}"
"""A deterministic bot: it always plays the first legal move."""
SMALL = "[params]\nrows = 5\ncols = 5\n"


def tournament_file(path: Path, openings: str, games: int = 20, bots: int = 2) -> Path:
    lines = ['game = "domineering"', 'time = "0.5"', f"games_per_pairing = {games}", "seed = 11",
             f"openings = {json.dumps(openings)}", SMALL]
    lines += [f'[[bots]]\nname = "first{k}"\ncommand = {json.dumps(FIRST)}' for k in range(1, bots + 1)]
    path.write_text("\n".join(lines) + "\n")
    return path


def stored(db: Path) -> list[tuple[str, int, GameRecord]]:
    con = sqlite3.connect(db)
    try:
        rows = con.execute("SELECT pairing, number, record FROM games ORDER BY pairing, number").fetchall()
    finally:
        con.close()
    return [(p, n, GameRecord.from_json(r)) for p, n, r in rows]


def elo_margins(standings_text: str) -> dict[str, str]:
    """bot -> the "± N" of its elo in `arena standings`' table."""
    return {line.split()[1]: line.split("±")[1].split()[0] for line in standings_text.splitlines()
            if "±" in line}


# --- random openings in a real tournament ---

def test_random_openings_give_every_pair_its_own_opening_in_both_seats(tmp_path):
    tournament_file(tmp_path / "op.toml", "random:4")
    done = call_arena("tournament", "run", "op.toml", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "20 games a pairing, openings random:4" in done.stderr  # the plan's first line
    games = stored(tmp_path / "results" / "op" / DB_NAME)
    assert [n for _, n, _ in games] == list(range(20))
    game = rules.load("domineering", rows=5, cols=5)
    openings = []
    for (_, n0, a), (_, n1, b) in zip(games[0::2], games[1::2], strict=True):
        assert (n0 % 2, n1, n1 // 2) == (0, n0 + 1, n0 // 2)
        assert a.start_moves == b.start_moves and len(a.start_moves) == 4  # one opening, both seats
        assert a.players == b.players[::-1] == ["first1", "first2"]
        assert game.replay(a.start_moves).outcome is None
        assert game.replay(a.move_list()).outcome is not None  # the bots played on from it to the end
        openings.append(tuple(a.start_moves))
    assert len(set(openings)) == 10  # 10 pairs, 10 distinct openings
    # two identical deterministic bots: each pair's two games are one game with the names swapped,
    # so every pair scores 1-1 and the pairs say the difference is exactly 0
    pairs = zip(games[0::2], games[1::2], strict=True)
    assert {a.points(0) + b.points(1) for (_, _, a), (_, _, b) in pairs} == {1.0}
    shown = call_arena("standings", "op.toml", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert elo_margins(shown.stdout) == {"first1": "0", "first2": "0"}
    assert "20 games a pairing, openings random:4: 20/20 games played" in shown.stdout  # what ± is over
    published = call_arena("publish", "op.toml", cwd=tmp_path)
    assert published.returncode == 0, published.stderr
    index = (tmp_path / "results" / "op" / "site" / "index.html").read_text()
    assert '<dd id="openings">random:4 (each game pair starts from one opening, seats swapped)</dd>' in index
    # the same seed draws the same openings again; raising the games keeps the first pairs' ones
    t = config.load(tmp_path / "op.toml")
    assert t.opening_moves(20) == tuple(openings)
    assert t.opening_moves(40)[:10] == tuple(openings)
    # a resumed run with other openings would mix them: refused, nothing stored is touched
    tournament_file(tmp_path / "op.toml", "random:3", games=22)
    refused = call_arena("tournament", "run", "op.toml", cwd=tmp_path)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "'openings' changed from 'random:4' to 'random:3'" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert len(stored(tmp_path / "results" / "op" / DB_NAME)) == 20


def test_without_openings_the_same_two_games_repeat(tmp_path):
    """What openings are for: two deterministic bots without them play 2 distinct games in 10."""
    path = tournament_file(tmp_path / "plain.toml", "random:1", games=10)
    path.write_text(path.read_text().replace('openings = "random:1"\n', ""))
    done = call_arena("tournament", "run", "plain.toml", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    games = stored(tmp_path / "results" / "plain" / DB_NAME)
    assert len(games) == 10 and len({(*r.players, *r.move_list()) for _, _, r in games}) == 2
    shown = call_arena("standings", "plain.toml", cwd=tmp_path)
    assert all(float(m) > 0 for m in elo_margins(shown.stdout).values())  # games counted as independent


def test_a_random_opening_that_ends_the_game_is_drawn_again():
    game = rules.load("domineering", rows=3, cols=3)
    assert any(random_opening(game, 3, 5, 0, attempt) is None for attempt in range(10))  # some end it
    openings = random_openings(game, 3, 5, 4)
    assert len(set(openings)) == 4
    assert all(len(o) == 3 and game.replay(o).outcome is None for o in openings)
    with pytest.raises(OpeningsError, match="random:4: 100 draws of 4 random plies all ended the game"):
        random_openings(game, 4, 5, 1)


# --- a file of openings ---

def test_a_file_of_openings_is_played_in_order_one_pair_each(tmp_path):
    (tmp_path / "book.txt").write_text("// three openings\n3E 5C\n\n2D, 5C   # commas work too\n1A 1C 4E\n")
    done = call_arena("match", "domineering", FIRST, FIRST, "-p", "rows=5", "-p", "cols=5", "--games", "8",
                     "--openings", "book.txt", "--out", "out", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (match,) = (tmp_path / "out" / "matches").iterdir()
    records = [GameRecord.from_json(line) for line in (match / "games.jsonl").read_text().splitlines()]
    book = [["3E", "5C"], ["2D", "5C"], ["1A", "1C", "4E"], ["3E", "5C"]]  # past the last: the first again
    assert [r.start_moves for r in records] == [opening for opening in book for _ in (0, 1)]
    assert [r.players[0] for r in records] == ["first-1", "first-2"] * 4
    assert json.loads((match / "match.json").read_text())["openings"] == "book.txt"
    # the move file of a game holds its opening, then the moves played
    assert (match / "g5.txt").read_text().splitlines()[2:5] == ["1A", "1C", "4E"]


def test_a_folder_of_move_files_is_read_by_number(tmp_path):
    folder = tmp_path / "book"
    folder.mkdir()
    for name, moves in (("g10.txt", "1A\n"), ("g2.txt", "2B\n3C\n"), ("g0.txt", "// a comment\n4E\n")):
        (folder / name).write_text(moves)
    (folder / "match.json").write_text("{}")  # not a move file: left out
    game = rules.load("domineering", rows=5, cols=5)
    assert parse_openings("book", game, tmp_path).book == (("4E",), ("2B", "3C"), ("1A",))


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("3E 5C\n2D 5C\n3E 3E\n", "book.txt, line 3: '3E': '3E' is illegal"),
        ("3E 5C\n\n# nothing\n9Z\n", "book.txt, line 4: '9Z'"),
        ("3E\n2A 4A 4C 2B 1E 4D 2D 5D\n", "book.txt, line 2: the opening ends the game after 8 moves"),
        ("# only comments\n", "book.txt': no openings in it"),
    ],
)
def test_a_bad_opening_is_refused_naming_file_and_line(tmp_path, text, named):
    (tmp_path / "book.txt").write_text(text)
    tournament_file(tmp_path / "bad.toml", "book.txt")
    refused = call_arena("tournament", "run", "bad.toml", cwd=tmp_path)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    line = refused.stderr.strip()
    assert len(line.splitlines()) == 1 and "bad.toml: openings: " in line and named in line, line
    assert not (tmp_path / "results" / "bad").exists()


def test_a_move_file_that_ends_the_game_is_refused(tmp_path):
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "g0.txt").write_text("1A\n")
    game = rules.load("domineering", rows=2, cols=2)
    with pytest.raises(OpeningsError, match=r"g0.txt: the opening ends the game after 1 moves \(no legal"):
        parse_openings("book", game, tmp_path)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--openings", "random:0"], "--openings: 'random:0': use random:N with N >= 1"),
        (["--openings", "random:99"], "--openings: random:99: 100 draws of 99 random plies all ended"),
        (["--openings", "nothere.txt"], "--openings: 'nothere.txt': no such file or folder"),
        (["--openings", "random:2", "--from", "x.txt"], "--openings and --from"),
    ],
)
def test_bad_match_openings_are_one_line(tmp_path, args, says):
    refused = call_arena("match", "domineering", "random", "random", *args, cwd=tmp_path)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert says in refused.stderr and len(refused.stderr.strip().splitlines()) == 1, refused.stderr


# --- the fingerprint ---

@pytest.mark.parametrize(
    ("old", "new", "allowed"),
    [
        ({}, {}, True),
        ({"openings": "random:4"}, {"openings": "random:4"}, True),
        ({}, {"openings": "random:4"}, False),
        ({"openings": "random:4"}, {}, False),
        ({"openings": "random:4"}, {"openings": "random:5"}, False),
        ({"openings": "a.txt", "openings_sha256": "1"}, {"openings": "b.txt", "openings_sha256": "1"}, True),
        ({"openings": "a.txt", "openings_sha256": "1"}, {"openings": "a.txt", "openings_sha256": "2"}, False),
    ],
)
def test_openings_in_the_fingerprint(old, new, allowed):
    base = {"game": "domineering", "params": {}, "time_control": "0.2", "seed": 1, "games_per_pairing": 2,
            "bots": [{"name": "a", "command": "random"}, {"name": "b", "command": "random"}]}
    reason = fingerprint_change({**base, **old}, {**base, **new})
    assert (reason is None) == allowed, reason


def test_the_fingerprint_holds_a_files_openings(tmp_path):
    (tmp_path / "book.txt").write_text("3E 5C\n")
    one = config.load(tournament_file(tmp_path / "t.toml", "book.txt"), check_commands=False).fingerprint()
    (tmp_path / "book.txt").write_text("3E 5D\n")
    two = config.load(tmp_path / "t.toml", check_commands=False).fingerprint()
    assert one["openings"] == two["openings"] == "book.txt"
    assert fingerprint_change(one, two) is not None and "other openings" in fingerprint_change(one, two)


# --- the pentanomial ---

def test_pentanomial_interval_by_hand():
    # 4 pairs scoring 1, 1.5, 1.5 and 2 points for A: counts [0, 0, 1, 2, 1]. Scaled to [0, 1]: 0.5,
    # 0.75, 0.75, 1; mean m = 0.75; variance (0.25^2 + 0 + 0 + 0.25^2) / 4 = 0.03125; standard error
    # sqrt(0.03125 / 4) = 0.0883883; 1.96 of it = 0.173238, so the score lies in [0.576762, 0.923238].
    # Elo(s) = 400 log10(s / (1 - s)): Elo(0.75) = 400 log10(3) = 190.85,
    # Elo(0.576762) = 400 log10(1.362737) = 53.76, Elo(0.923238) = 400 log10(12.02733) = 432.07.
    assert pentanomial([1, 1.5, 1.5, 2]) == [0, 0, 1, 2, 1]
    interval = pentanomial_interval([0, 0, 1, 2, 1])
    assert interval.elo == pytest.approx(190.85, abs=0.01)
    assert interval.low == pytest.approx(53.76, abs=0.01)
    assert interval.high == pytest.approx(432.07, abs=0.01)
    # The same 8 games as independent games, say W L, W D, W D, W W: 5 wins, 2 draws, 1 loss.
    # Mean 0.75; variance (5 * 0.25^2 + 2 * 0.25^2 + 0.75^2) / 8 = 0.125; standard error
    # sqrt(0.125 / 8) = 0.125; 1.96 of it = 0.244995: [0.505005, 0.994995]:
    # Elo 400 log10(1.020222) = 3.48 to 400 log10(198.80) = 919.38. The pairs' games went opposite
    # ways more than chance would have them (W L), so the pentanomial interval is narrower.
    trinomial = trinomial_interval(1, 2, 5)
    assert trinomial.elo == pytest.approx(190.85, abs=0.01)
    assert (trinomial.low, trinomial.high) == (pytest.approx(3.48, abs=0.01), pytest.approx(919.38, abs=0.01))
    assert interval.margin < trinomial.margin


def test_correlated_pairs_narrow_or_widen_the_interval():
    # 8 games, 4 wins and 4 losses for A: as independent games, mean 0.5, variance 0.25, standard
    # error sqrt(0.25 / 8) = 0.176777, 1.96 of it 0.346476: [0.153524, 0.846476], Elo +-296.58.
    trinomial = trinomial_interval(4, 0, 4)
    assert trinomial.low == pytest.approx(-296.58, abs=0.01)
    assert trinomial.high == pytest.approx(296.58, abs=0.01)
    # every pair split (an opening that favours a seat; rho = -1): no variance left, a point
    assert pentanomial_interval([0, 0, 4, 0, 0]).margin == 0.0
    # every pair 2-0 or 0-2 (rho = +1): 4 trials, not 8: variance 0.25, se sqrt(0.25 / 4) = 0.25,
    # 1.96 of it 0.489991: [0.010009, 0.989991], Elo +-798.10
    together = pentanomial_interval([2, 0, 0, 0, 2])
    assert together.low == pytest.approx(-798.10, abs=0.01)
    assert together.high == pytest.approx(798.10, abs=0.01)
    # independent pairs (rho = 0: one 0-0, two 1-1 split, one 2-0): the same as the trinomial
    assert pentanomial_interval([1, 0, 2, 0, 1]).margin == pytest.approx(trinomial.margin)


def test_paired_error_factors_scale_with_the_pairs():
    def pair(k: int, first: int, second: int) -> list[StoredGame]:
        """Pair k of a-vs-b: the winner's seat in each of its two games."""
        return [StoredGame("a-vs-b", 2 * k + i, GameRecord(f"a-vs-b-g{2 * k + i}", "domineering", {},
                                                            players, "0.2", winner=w))
                for i, (players, w) in enumerate(((["a", "b"], first), (["b", "a"], second)))]

    split = [g for k in range(4) for g in pair(k, 0, 0)]  # seat 0 wins every game: each bot wins once a pair
    assert paired_error_factors(split) == {"a": 0.0, "b": 0.0}
    same = [g for k in range(4) for g in pair(k, *((0, 1) if k % 2 else (1, 0)))]  # a wins or loses both
    factors = paired_error_factors(same)
    assert factors["a"] == factors["b"] == pytest.approx(math.sqrt(2))  # sqrt(1 + rho), rho = 1
    half_out = paired_error_factors(same[:-1])  # the last pair has one game: left out
    assert half_out == pytest.approx({"a": math.sqrt(2), "b": math.sqrt(2)})


def test_sprt_counts_the_opening_pairs(tmp_path):
    """`arena match --sprt --openings`: the test's pairs are the openings' pairs. Two identical
    deterministic bots score 1-1 in every pair, whatever its opening: the pentanomial's middle."""
    done = call_arena("match", "domineering", FIRST, FIRST, "-p", "rows=5", "-p", "cols=5", "--games", "6",
                     "--openings", "random:3", "--out", "out", "--sprt", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "SPRT elo0=0 elo1=10: 3 pairs [0 0 3 0 0]" in done.stdout
    (match,) = (tmp_path / "out" / "matches").iterdir()
    summary = json.loads((match / "match.json").read_text())
    assert summary["sprt"]["pentanomial"] == [0, 0, 3, 0, 0] and summary["openings"] == "random:3"
    records = [GameRecord.from_json(line) for line in (match / "games.jsonl").read_text().splitlines()]
    starts = [tuple(r.start_moves) for r in records]
    assert starts[0::2] == starts[1::2] and len(set(starts)) == 3


def test_santorini_openings_separate_their_moves_by_commas(tmp_path):
    (tmp_path / "book.txt").write_text("A3 E5, B4 E2, A3 A2 B3\nE5 A3, E2 B4   // placements in any order\n")
    book = parse_openings("book.txt", rules.load("santorini"), tmp_path).book
    assert book == (("A3 E5", "B4 E2", "A3 A2 B3"), ("A3 E5", "B4 E2"))
