"""Standings from hand-made games, checked against figures worked out by hand; publish's files."""
from __future__ import annotations

import csv
import json

import pytest

from arena.match.records import GameRecord, MoveRecord
from arena.tournament.standings import crosstable, crosstable_text, games_table, publish, report, standings
from arena.tournament.store import DB_NAME, Store


def game(gid, seat0, seat1, winner, reason="no legal move", forfeit=None, scores=None, moves=3):
    return GameRecord(
        game_id=gid, game="domineering", params={"rows": 4, "cols": 4}, players=[seat0, seat1],
        time_control="0.2", winner=winner, reason=reason, forfeit=forfeit, scores=scores,
        moves=[MoveRecord(ply=k, seat=k % 2, move=f"m{k}", time_s=0.01 * (k + 1)) for k in range(moves)],
    )


# Three bots, 2 games a pairing, seats swapped:
#   ann-vs-bob g0: ann (seat 0) wins            g1: bob (seat 0) - ann draw   -> ann 1.5, bob 0.5
#   ann-vs-cat g0: cat (seat 1) wins            g1: cat (seat 0) crashes, ann wins -> ann 1, cat 1
#   bob-vs-cat g0: bob (seat 0) wins            g1: bob (seat 1) times out, cat wins -> bob 1, cat 1
GAMES = [
    game("ann-vs-bob-g0", "ann", "bob", 0),
    game("ann-vs-bob-g1", "bob", "ann", None, reason="draw"),
    game("ann-vs-cat-g0", "ann", "cat", 1),
    game("ann-vs-cat-g1", "cat", "ann", 1, reason="forfeit",
         forfeit={"seat": 0, "reason": "crashed", "detail": "exit 1"}),
    game("bob-vs-cat-g0", "bob", "cat", 0),
    game("bob-vs-cat-g1", "cat", "bob", 0, reason="forfeit",
         forfeit={"seat": 1, "reason": "timeout", "detail": "0.25 s"}),
]
# By hand:
#   points: ann 1 + 0.5 + 0 + 1 = 2.5; bob 0 + 0.5 + 1 + 0 = 1.5; cat 1 + 0 + 0 + 1 = 2.0   (sum 6 = games)
#   W/D/L:  ann 2/1/1, bob 1/1/2, cat 2/0/2
#   SB = sum over opponents of (points against them) x (their total):
#     ann = 1.5 x bob 1.5 + 1 x cat 2.0 = 2.25 + 2 = 4.25
#     bob = 0.5 x ann 2.5 + 1 x cat 2.0 = 1.25 + 2 = 3.25
#     cat = 1 x ann 2.5 + 1 x bob 1.5   = 2.5 + 1.5 = 4.0
#   order: ann (2.5), cat (2.0), bob (1.5)


def test_standings_by_hand():
    df = standings(GAMES, ["ann", "bob", "cat"])
    assert list(df["bot"]) == ["ann", "cat", "bob"]
    assert list(df["rank"]) == [1, 2, 3]
    rows = df.set_index("bot")
    assert rows.loc["ann", ["games", "wins", "draws", "losses"]].tolist() == [4, 2, 1, 1]
    assert rows.loc["bob", ["games", "wins", "draws", "losses"]].tolist() == [4, 1, 1, 2]
    assert rows.loc["cat", ["games", "wins", "draws", "losses"]].tolist() == [4, 2, 0, 2]
    assert rows["points"].to_dict() == {"ann": 2.5, "cat": 2.0, "bob": 1.5}
    assert rows["SB"].to_dict() == {"ann": 4.25, "cat": 4.0, "bob": 3.25}
    assert rows["score %"].to_dict() == {"ann": 62.5, "cat": 50.0, "bob": 37.5}
    assert rows["forfeits"].to_dict() == {"ann": 0, "cat": 1, "bob": 1}
    assert rows["forfeit reasons"].to_dict() == {"ann": "", "cat": "crashed 1", "bob": "timeout 1"}
    assert "score diff" not in df.columns  # domineering does not score
    # Elo: the order follows the points, the field averages 1500
    assert rows.loc["ann", "elo"] > rows.loc["cat", "elo"] > rows.loc["bob", "elo"]
    assert df["elo"].mean() == pytest.approx(1500, abs=0.1)
    assert (df["elo ±"] > 0).all()


def test_crosstable_by_hand():
    # row bot's points against the column bot: ann-bob 1.5 / 0.5, ann-cat 1 / 1, bob-cat 1 / 1
    df = crosstable(GAMES, ["ann", "cat", "bob"])
    assert df.loc["ann", "bob"] == 1.5 and df.loc["bob", "ann"] == 0.5
    assert df.loc["ann", "cat"] == 1.0 and df.loc["cat", "ann"] == 1.0
    assert df.loc["bob", "cat"] == 1.0 and df.loc["cat", "bob"] == 1.0
    assert df.isna().values.diagonal().all()
    text = crosstable_text(df)
    assert "1.5" in text and "·" in text


def test_equal_points_and_sb_share_a_rank_and_unplayed_bots_are_listed():
    games = [game("x-vs-y-g0", "x", "y", 0), game("x-vs-y-g1", "y", "x", 0)]
    # x 1, y 1; SB x = 1 x 1 = 1 = SB y: shared rank 1; zed has no games: rank 3, no Elo
    df = standings(games, ["x", "y", "zed"])
    assert df.set_index("bot")["rank"].to_dict() == {"x": 1, "y": 1, "zed": 3}
    zed = df.set_index("bot").loc["zed"]
    assert zed["games"] == 0 and zed["elo"] != zed["elo"]  # NaN


def test_sb_breaks_a_tie_on_points():
    # one game each: a beats b, b beats c, c beats a, a beats d, d beats b, c beats d
    games = [
        game("1", "a", "b", 0), game("2", "b", "c", 0), game("3", "c", "a", 0),
        game("4", "a", "d", 0), game("5", "d", "b", 0), game("6", "c", "d", 0),
    ]
    # a: W(b) L(c) W(d) = 2; b: L(a) W(c) L(d) = 1; c: L(b) W(a) W(d) = 2; d: L(a) W(b) L(c) = 1
    # SB a = 1*P_b + 1*P_d = 1 + 1 = 2;  SB c = 1*P_a + 1*P_d = 2 + 1 = 3  -> c ahead of a
    # SB b = 1*P_c = 2;                  SB d = 1*P_b = 1                  -> b ahead of d
    df = standings(games)
    assert list(df["bot"]) == ["c", "a", "b", "d"]
    assert df.set_index("bot")["SB"].to_dict() == {"c": 3.0, "a": 2.0, "b": 2.0, "d": 1.0}
    assert list(df["rank"]) == [1, 2, 3, 4]


def test_score_difference_where_the_game_scores():
    games = [game("f-g0", "p", "q", 0, scores=[7, 3]), game("f-g1", "q", "p", None, scores=[5, 5])]
    # p: +4 then 0 = +4; q: -4 then 0 = -4
    df = standings(games).set_index("bot")
    assert df["score diff"].to_dict() == {"p": 4, "q": -4}


def test_games_table_rows():
    from arena.tournament.store import StoredGame
    rows = games_table([StoredGame("bob-vs-cat", 1, GAMES[5])]).iloc[0]
    assert rows["seat0"] == "cat" and rows["seat1"] == "bob"
    assert rows["result"] == "1-0" and rows["winner"] == "cat"
    assert rows["forfeit"] == "bob: timeout"
    assert rows["plies"] == 3
    assert rows["time0 s"] == pytest.approx(0.01 + 0.03) and rows["time1 s"] == pytest.approx(0.02)


def test_publish_writes_every_file(tmp_path):
    with Store(tmp_path / DB_NAME) as store:
        store.accept_fingerprint({"name": "hand", "game": "domineering", "params": {"rows": 4, "cols": 4},
                                  "time_control": "0.2", "seed": 1, "games_per_pairing": 2,
                                  "bots": [{"name": n, "command": [n]} for n in ("ann", "bob", "cat")]})
        for g in GAMES:
            pairing, number = g.game_id.rsplit("-g", 1)
            assert store.add_game(pairing, int(number), g)
    written = {p.name for p in publish(tmp_path)}
    assert {"standings.md", "standings.csv", "crosstable.md", "games.csv"} <= written
    assert "index.html" not in written  # the website is arena.site's, in site/ (tests/test_site.py)
    with open(tmp_path / "standings.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["bot"] for r in rows] == ["ann", "cat", "bob"]
    assert [float(r["SB"]) for r in rows] == [4.25, 4.0, 3.25]
    with open(tmp_path / "games.csv", newline="") as f:
        assert len(list(csv.DictReader(f))) == 6
    records = sorted((tmp_path / "records").glob("*.json"))
    assert len(records) == 6
    assert json.loads(records[0].read_text())["game_id"] == "ann-vs-bob-g0"
    from arena.site import publish_site

    site = {p.relative_to(tmp_path / "site").as_posix() for p in publish_site(tmp_path)}
    assert {"index.html", "games.html", "bots/ann.html", "games/ann-vs-cat-g1.html"} <= site
    page = (tmp_path / "site" / "index.html").read_text()
    assert "ann" in page and "4.25" in page and "crashed 1" in page
    assert "exit 1" in (tmp_path / "site" / "bots" / "cat.html").read_text()  # a forfeit's detail
    assert "| ann" in (tmp_path / "standings.md").read_text()
    text = report(tmp_path)
    assert "6/6 games played" in text and "ann" in text
