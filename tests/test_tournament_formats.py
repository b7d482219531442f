"""Tournament formats end to end: the file's format keys, Swiss standings by hand, a real gauntlet
(2 challengers x 4 reference bots = 8 pairings) and a real Swiss resumed after kill -9 mid-round."""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from conftest import ENV, arena_cmd, call_arena

from arena.match.records import GameRecord, MoveRecord
from arena.tournament import runner as tmod
from arena.tournament.formats import swiss_rounds
from arena.tournament.standings import compute, report_text
from arena.tournament.store import DB_NAME, Store, StoredGame, fingerprint_change
from tests.test_tournament import _alive, _children, rows, write

# --- the file ---


@pytest.mark.parametrize(("extra", "named", "why"), [
    ('format = "knockout"', "format", "must be one of"),
    ('format = "gauntlet"', "challengers", "needs a list of bot names"),
    ('format = "gauntlet"\nchallengers = ["zed"]', "challengers", "'zed' is not the name of a bot"),
    ('format = "gauntlet"\nchallengers = ["r1", "r2", "r3"]', "challengers", "every bot is a challenger"),
    ('challengers = ["r1"]', "challengers", 'only for format = "gauntlet"'),
    ('format = "swiss"', "rounds", "from 1 to 3"),
    ('format = "swiss"\nrounds = 4', "rounds", "more would need a rematch"),
    ('rounds = 2', "rounds", 'only for format = "swiss"'),
])
def test_bad_format_keys_are_named(tmp_path, extra, named, why):
    path = write(tmp_path / "f.toml", extra=extra)
    with pytest.raises(tmod.TournamentError) as caught:
        tmod.load(path)
    message = str(caught.value)
    assert f"f.toml: {named}:" in message and why in message and "\n" not in message


def test_format_keys_read_and_count_games(tmp_path):
    rr = tmod.load(write(tmp_path / "rr.toml", bots=("a", "b", "c", "d", "e")))
    assert rr.format == "round_robin" and rr.total_games() == 20
    assert "format" not in rr.fingerprint()  # results stored before formats existed still match
    g = tmod.load(write(tmp_path / "g.toml", bots=("a", "b", "c", "d", "e"),
                        extra='format = "gauntlet"\nchallengers = ["b", "e"]'))
    assert g.total_games() == 2 * 3 * 2 and len(g.pairings()) == 6
    s = tmod.load(write(tmp_path / "s.toml", bots=("a", "b", "c", "d", "e"),
                        extra='format = "swiss"\nrounds = 3'))
    assert s.total_games() == 3 * 2 * 2
    assert [p.pairing_id for p in s.pairings({})] == ["r1-a-vs-b", "r1-c-vs-d"]


@pytest.mark.parametrize(("change", "allowed"), [
    ({"rounds": 4}, True),
    ({"rounds": 2}, False),
    ({"format": "round_robin"}, False),
    ({"games_per_pairing": 4}, False),
    ({"bots": [{"name": n, "command": "random"} for n in "abcdef"]}, False),
])
def test_which_swiss_changes_keep_exactly_once(change, allowed):
    old = {"game": "domineering", "params": {}, "time_control": "0.2", "seed": 0, "games_per_pairing": 2,
           "format": "swiss", "rounds": 3, "bots": [{"name": n, "command": "random"} for n in "abcde"]}
    assert (fingerprint_change(old, {**old, **change}) is None) == allowed


# --- Swiss standings, worked by hand ---

def _game(pairing: str, number: int, a: str, b: str, winner: int | None) -> StoredGame:
    players = [a, b] if number % 2 == 0 else [b, a]
    record = GameRecord(game_id=f"{pairing}-g{number}", game="domineering", params={}, players=players,
                        time_control="0.2", winner=winner, reason="no legal move",
                        moves=[MoveRecord(0, 0, "m", 0.01)])
    return StoredGame(pairing, number, record)


def test_swiss_standings_by_hand():
    # Round 1: A-B (A wins both), C-D (each wins as seat 0: 1-1), E has the bye.
    # Round 2: A-C (C wins both), E-D (1-1), B has the bye.
    games = [
        _game("r1-A-vs-B", 0, "A", "B", 0), _game("r1-A-vs-B", 1, "A", "B", 1),
        _game("r1-C-vs-D", 0, "C", "D", 0), _game("r1-C-vs-D", 1, "C", "D", 0),
        _game("r2-A-vs-C", 0, "A", "C", 1), _game("r2-A-vs-C", 1, "A", "C", 0),
        _game("r2-E-vs-D", 0, "E", "D", 0), _game("r2-E-vs-D", 1, "E", "D", 0),
    ]
    fingerprint = {"format": "swiss", "rounds": 2, "games_per_pairing": 2,
                   "bots": [{"name": n, "command": "random"} for n in "ABCDE"]}
    result = compute(fingerprint, games)
    # the rounds, paired again from the stored games as the run paired them; a bye is a won
    # pairing: 2 points for 2 games a pairing
    assert [(r.number, r.bye, r.bye_points) for r in result.rounds] == [(1, "E", 2.0), (2, "B", 2.0)]
    assert [[(p.a, p.b, p.points_a, p.points_b, p.played) for p in r.pairings] for r in result.rounds] == [
        [("A", "B", 2.0, 0.0, 2), ("C", "D", 1.0, 1.0, 2)],
        [("A", "C", 0.0, 2.0, 2), ("E", "D", 1.0, 1.0, 2)]]
    assert [t.name for t in result.tables] == ["standings"]
    df = result.tables[0].frame
    # points: A 2+0 = 2, B 0+2 = 2, C 1+2 = 3, D 1+1 = 2, E 2+1 = 3
    # Buchholz (opponents' points): A = B 2 + C 3 = 5, B = A 2, C = D 2 + A 2 = 4, D = C 3 + E 3 = 6, E = D 2
    # order: C (3, B 4), E (3, B 2), D (2, B 6), A (2, B 5), B (2, B 2)
    assert list(df["bot"]) == ["C", "E", "D", "A", "B"]
    table = df.set_index("bot")
    assert table["points"].to_dict() == {"C": 3, "E": 3, "D": 2, "A": 2, "B": 2}
    assert table["Buchholz"].to_dict() == {"C": 4, "E": 2, "D": 6, "A": 5, "B": 2}
    assert table["byes"].to_dict() == {"C": 0, "E": 1, "D": 0, "A": 0, "B": 1}  # byes, not their points
    assert list(df["rank"]) == [1, 2, 3, 4, 5]
    assert table.loc["B", "games"] == 2  # a bye is not a game...
    # ...but in score % it counts as the 2 games it stands for: E 3 of 4, B 2 of 4, C 3 of 4
    assert table["score %"].to_dict() == {"C": 75.0, "E": 75.0, "D": 50.0, "A": 50.0, "B": 50.0}
    assert result.played == 8 and result.planned == 2 * 2 * 2
    text = report_text(result)
    assert "8/8 games played" in text and "Swiss of 2 rounds" in text
    assert "Rounds" in text and "bye: 2" in text


def test_a_bye_never_takes_score_past_100():
    # three bots, two games a pairing: round 1 A-B (A wins both), C has the bye; round 2 C-A
    # (A wins both), B has the bye. A 4 points of 4 games; B and C each a bye (2 points, standing
    # for 2 games) and 2 lost games: 2 of 4, not 2 of 2
    games = [_game("r1-A-vs-B", 0, "A", "B", 0), _game("r1-A-vs-B", 1, "A", "B", 1),
             _game("r2-C-vs-A", 0, "C", "A", 1), _game("r2-C-vs-A", 1, "C", "A", 0)]
    fingerprint = {"format": "swiss", "rounds": 2, "games_per_pairing": 2,
                   "bots": [{"name": n, "command": "random"} for n in "ABC"]}
    result = compute(fingerprint, games)
    assert [r.bye for r in result.rounds] == ["C", "B"]
    table = result.tables[0].frame.set_index("bot")
    assert table["score %"].to_dict() == {"A": 100.0, "B": 50.0, "C": 50.0}
    assert table["byes"].to_dict() == {"A": 0, "B": 1, "C": 1}
    assert (result.tables[0].frame["score %"] <= 100).all()


def test_a_gauntlet_ranks_challengers_and_field_apart_by_score():
    # challengers x and y against the field f1, f2, f3, two games a pairing; x met only f1 so far.
    # Each game is won by seat 0, except y's second game against f2 (y in seat 1 wins):
    #   x-f1 1-1; y-f1 1-1, y-f2 2-0, y-f3 1-1
    #   x 1 of 2 (50 %), y 4 of 6 (66.7 %); f1 2 of 4 (50 %), f2 0 of 2, f3 1 of 2 (50 %)
    games = [_game("x-vs-f1", 0, "x", "f1", 0), _game("x-vs-f1", 1, "x", "f1", 0),
             _game("y-vs-f1", 0, "y", "f1", 0), _game("y-vs-f1", 1, "y", "f1", 0),
             _game("y-vs-f2", 0, "y", "f2", 0), _game("y-vs-f2", 1, "y", "f2", 1),
             _game("y-vs-f3", 0, "y", "f3", 0), _game("y-vs-f3", 1, "y", "f3", 0)]
    fingerprint = {"format": "gauntlet", "challengers": ["x", "y"], "games_per_pairing": 2,
                   "bots": [{"name": n, "command": "random"} for n in ("x", "y", "f1", "f2", "f3")]}
    result = compute(fingerprint, games)
    assert [t.name for t in result.tables] == ["challengers", "field"]
    challengers, fields = (t.frame.set_index("bot") for t in result.tables)
    assert list(challengers.index) == ["y", "x"] and list(fields.index) == ["f1", "f3", "f2"]
    assert challengers["score %"].to_dict() == {"y": 66.7, "x": 50.0}
    assert challengers["points"].to_dict() == {"y": 4.0, "x": 1.0}
    assert fields["score %"].to_dict() == {"f1": 50.0, "f3": 50.0, "f2": 0.0}
    # f1 and f3 level on score %: SB breaks it (f1: 1 x x's 1 + 1 x y's 4 = 5; f3: 1 x 4 = 4)
    assert fields["SB"].to_dict() == {"f1": 5.0, "f3": 4.0, "f2": 0.0}
    assert list(fields["rank"]) == [1, 2, 3]
    # the crosstable: challengers by the field
    cross = result.crosstable.frame()
    assert list(cross.index) == ["y", "x"] and list(cross.columns) == ["f1", "f3", "f2"]
    assert cross.loc["x", "f1"] == 1.0 and cross.loc["y", "f2"] == 2.0 and cross.isna().loc["x", "f2"]
    assert result.planned == 2 * 3 * 2 and result.played == 8
    text = report_text(result)
    assert text.index("Challengers (ranked by score %") < text.index("Field (ranked by score %")


# --- real runs ---

def test_gauntlet_of_two_challengers_against_four_reference_bots(tmp_path):
    # who plays whom is the point, not how well: every bot the cheapest shipped one (random), the
    # challengers listed among the field
    bots = ("c1", "r1", "r2", "c2", "r3", "r4")
    write(tmp_path / "g.toml", bots=bots, time_s="0.05",
          extra='format = "gauntlet"\nchallengers = ["c1", "c2"]')
    done = call_arena("tournament", "run", "g.toml", "--concurrency", "2", cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "gauntlet of c1, c2" in done.stderr and "16/16 games" in done.stderr
    games = rows(tmp_path / "results" / "g" / DB_NAME)
    pairings = sorted({p for p, _, _, _ in games})
    refs = ("r1", "r2", "r3", "r4")
    assert len(pairings) == 2 * 4
    assert {frozenset(p.split("-vs-")) for p in pairings} == {frozenset((c, r)) for c in ("c1", "c2")
                                                              for r in refs}
    assert sorted((p, n) for p, n, _, _ in games) == [(p, n) for p in pairings for n in (0, 1)]
    shown = call_arena("standings", "g.toml", cwd=tmp_path)
    assert shown.returncode == 0 and "gauntlet of c1, c2" in shown.stdout and "16/16 games" in shown.stdout


def _count(db: Path) -> int:
    if not db.is_file():
        return 0
    try:
        return len(rows(db))
    except sqlite3.Error:
        return 0


def test_swiss_resumes_after_kill_9_mid_round(tmp_path):
    """7 random bots, 4 rounds of 3 pairings (one bye each round), one game a task: kill -9 during
    round 2, run again: every game exactly once, the pairings planned before the kill kept, no
    pairing repeated, and the rounds are the ones replanned from the stored results."""
    names = [f"b{i}" for i in range(7)]
    write(tmp_path / "s.toml", bots=names, per_task=1, extra='format = "swiss"\nrounds = 4')
    db = tmp_path / "results" / "s" / DB_NAME
    proc = subprocess.Popen(arena_cmd("tournament", "run", "s.toml"), cwd=tmp_path, env=ENV,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and _count(db) < 8:  # round 1 has 6 games
        time.sleep(0.02)
    workers = _children(proc.pid)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    before = rows(db)
    assert 8 <= len(before) < 24, "the run should be killed in round 2 or 3"
    deadline = time.monotonic() + 10  # the orphaned worker notices its parent is gone, stops its match
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in workers if _alive(pid)], "the orphaned worker outlived its run"
    done = call_arena("tournament", "run", "s.toml", cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    after = rows(db)
    assert len(after) == 4 * 3 * 2 == len({g for _, _, g, _ in after})
    assert set(before) <= set(after)
    with Store(db, create=False) as store:
        results = store.pairing_results()
    planned = swiss_rounds(names, 2, 4, results)
    assert len(planned) == 4
    assert sorted({p for p, _, _, _ in after}) == sorted(p.pairing_id for r in planned for p in r.pairings)
    met = [frozenset((p.a, p.b)) for r in planned for p in r.pairings]
    assert len(met) == len(set(met))
    byes = [r.bye for r in planned]
    assert None not in byes and len(set(byes)) == 4
    for pairing, number, _, record in after:  # seats as planned: the pairing's first bot starts game 0
        first = next(p.a for r in planned for p in r.pairings if p.pairing_id == pairing)
        assert json.loads(record)["players"][number % 2] == first
    shown = call_arena("standings", "s.toml", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "Swiss of 4 rounds" in shown.stdout and "24/24 games" in shown.stdout
    assert "Buchholz" in shown.stdout
