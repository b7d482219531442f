"""Standings from hand-made games, checked against figures worked out by hand; publish's files."""
from __future__ import annotations

import csv
import json

import pytest

from arena.match.records import GameRecord, MoveRecord
from arena.tournament.standings import (
    compute,
    crosstable_text,
    games_table,
    publish,
    report,
    standings_text,
)
from arena.tournament.store import DB_NAME, Store, StoredGame


def game(gid, seat0, seat1, winner, reason="no legal move", forfeit=None, scores=None, moves=3):
    return GameRecord(
        game_id=gid, game="domineering", params={"rows": 4, "cols": 4}, players=[seat0, seat1],
        time_control="0.2", winner=winner, reason=reason, forfeit=forfeit, scores=scores,
        moves=[MoveRecord(ply=k, seat=k % 2, move=f"m{k}", time_s=0.01 * (k + 1)) for k in range(moves)],
    )


def stored(games):
    """Hand-made records as the store gives them back (pairing: the two bots; number: the order)."""
    return [StoredGame("-vs-".join(sorted(g.players)), n, g) for n, g in enumerate(games)]


def computed(games, bots=(), **fingerprint):
    """The Standings of `games` in a tournament of `bots` (a round-robin unless `fingerprint` says)."""
    return compute({"bots": [{"name": b, "command": b} for b in bots], **fingerprint}, stored(games))


def table(games, bots=()):
    """The (only) standings table of a round-robin of `games`."""
    return computed(games, bots).tables[0].frame


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
    df = table(GAMES, ["ann", "bob", "cat"])
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
    df = computed(GAMES, ["ann", "bob", "cat"]).crosstable.frame()
    assert list(df.index) == list(df.columns) == ["ann", "cat", "bob"]  # the standings' order
    assert df.loc["ann", "bob"] == 1.5 and df.loc["bob", "ann"] == 0.5
    assert df.loc["ann", "cat"] == 1.0 and df.loc["cat", "ann"] == 1.0
    assert df.loc["bob", "cat"] == 1.0 and df.loc["cat", "bob"] == 1.0
    assert df.isna().values.diagonal().all()
    text = crosstable_text(df)
    assert "1.5" in text and "·" in text


def test_equal_points_and_sb_share_a_rank_and_unplayed_bots_are_listed():
    games = [game("x-vs-y-g0", "x", "y", 0), game("x-vs-y-g1", "y", "x", 0)]
    # x 1, y 1; SB x = 1 x 1 = 1 = SB y: shared rank 1; zed has no games: rank 3, no Elo
    df = table(games, ["x", "y", "zed"])
    assert df.set_index("bot")["rank"].to_dict() == {"x": 1, "y": 1, "zed": 3}
    zed = df.set_index("bot").loc["zed"]
    assert zed["games"] == 0 and zed["elo"] != zed["elo"]  # NaN


def test_head_to_head_breaks_a_tie_on_points_before_sb():
    # one game each: a beats b, b beats c, c beats a, a beats d, d beats b, c beats d
    games = [
        game("1", "a", "b", 0), game("2", "b", "c", 0), game("3", "c", "a", 0),
        game("4", "a", "d", 0), game("5", "d", "b", 0), game("6", "c", "d", 0),
    ]
    # a: W(b) L(c) W(d) = 2; b: L(a) W(c) L(d) = 1; c: L(b) W(a) W(d) = 2; d: L(a) W(b) L(c) = 1
    # head to head: c beat a, d beat b -> c ahead of a, d ahead of b,
    # although SB says b (1*P_c = 2) is ahead of d (1*P_b = 1)
    df = table(games)
    assert list(df["bot"]) == ["c", "a", "d", "b"]
    assert df.set_index("bot")["SB"].to_dict() == {"c": 3.0, "a": 2.0, "b": 2.0, "d": 1.0}
    assert list(df["rank"]) == [1, 2, 3, 4]


def test_sb_breaks_a_tie_on_points_and_head_to_head():
    # two games a pairing, each bot once in each seat:
    #   a-b 1-1, a-c 2-0, a-d 1-1, b-c 1-1, b-d 2-0, c-d 2-0   (all wins, no draws)
    games = [
        game("ab0", "a", "b", 0), game("ab1", "b", "a", 0),
        game("ac0", "a", "c", 0), game("ac1", "c", "a", 1),
        game("ad0", "a", "d", 0), game("ad1", "d", "a", 0),
        game("bc0", "b", "c", 0), game("bc1", "c", "b", 0),
        game("bd0", "b", "d", 0), game("bd1", "d", "b", 1),
        game("cd0", "c", "d", 0), game("cd1", "d", "c", 1),
    ]
    # points a 4, b 4, c 3, d 1; a-b head to head 1-1; wins a 4, b 4
    # SB a = 1*4 (b) + 2*3 (c) + 1*1 (d) = 11;  SB b = 1*4 (a) + 1*3 (c) + 2*1 (d) = 9  -> a first
    df = table(games).set_index("bot")
    assert list(df.index) == ["a", "b", "c", "d"]
    assert df["points"].to_dict() == {"a": 4.0, "b": 4.0, "c": 3.0, "d": 1.0}
    assert df.loc["a", "wins"] == df.loc["b", "wins"] == 4
    assert (df.loc["a", "SB"], df.loc["b", "SB"]) == (11.0, 9.0)
    assert list(df["rank"]) == [1, 2, 3, 4]


def test_wins_break_a_tie_and_bots_level_on_all_share_a_rank_shown_with_equals():
    # x-y two draws, x-z one win each, y-z two draws: every bot has 2 points, 2 against the
    # other two (head to head), SB 1*2 + 1*2 = 4; wins x 1, z 1, y 0
    games = [
        game("xy0", "x", "y", None, reason="draw"), game("xy1", "y", "x", None, reason="draw"),
        game("xz0", "x", "z", 0), game("xz1", "z", "x", 0),
        game("yz0", "y", "z", None, reason="draw"), game("yz1", "z", "y", None, reason="draw"),
    ]
    df = table(games)
    assert list(df["bot"]) == ["x", "z", "y"]
    assert set(df["points"]) == {2.0} and set(df["SB"]) == {4.0}
    assert list(df["rank"]) == [1, 1, 3]
    lines = standings_text(df).splitlines()
    assert lines[2].split()[:2] == ["1=", "x"]
    assert lines[3].split()[:2] == ["1=", "z"]
    assert lines[4].split()[:2] == ["3", "y"]


# Two bots that could not play (the referee's double forfeit) and one that did, with errors:
DOUBLE = {"seat": None, "reason": "double_forfeit",
          "detail": "seat 0 no_hello: exited with code 1; seat 1 crashed: exit 2",
          "both": [{"seat": 0, "reason": "no_hello", "detail": "exited with code 1"},
                   {"seat": 1, "reason": "crashed", "detail": "exit 2"}]}


def double_forfeit(gid, seat0, seat1):
    return game(gid, seat0, seat1, None, reason="double_forfeit", forfeit=DOUBLE, moves=0)


def test_a_double_forfeit_scores_nothing_for_either_bot_and_no_elo():
    games = [
        double_forfeit("d-vs-e-g0", "dead", "edgy"), double_forfeit("d-vs-e-g1", "edgy", "dead"),
        game("d-vs-r-g0", "dead", "rnd", 1, reason="forfeit",
             forfeit={"seat": 0, "reason": "no_hello", "detail": "exited with code 1"}),
        game("e-vs-r-g0", "rnd", "edgy", None, reason="draw"),
    ]
    for g in games[:2]:
        assert g.winner_seat() is None and g.result() == "0-0"
        assert g.points(0) == g.points(1) == 0.0
    df = table(games, ["dead", "edgy", "rnd"]).set_index("bot")
    assert df["points"].to_dict() == {"rnd": 1.5, "edgy": 0.5, "dead": 0.0}
    assert df.loc["dead", ["games", "wins", "draws", "losses"]].tolist() == [3, 0, 0, 3]
    assert df.loc["edgy", ["games", "wins", "draws", "losses"]].tolist() == [3, 0, 1, 2]
    assert df["forfeits"].to_dict() == {"rnd": 0, "edgy": 2, "dead": 3}
    assert df.loc["dead", "forfeit reasons"] == "double_forfeit 2, no_hello 1"
    assert df.loc["edgy", "forfeit reasons"] == "double_forfeit 2"
    # Elo sees only the two games that were played: the same as without the double forfeits
    alone = table(games[2:], ["dead", "edgy", "rnd"]).set_index("bot")
    assert df["elo"].to_dict() == alone["elo"].to_dict()
    cross = computed(games, ["dead", "edgy", "rnd"]).crosstable.frame()
    assert cross.loc["dead", "edgy"] == 0.0 and cross.loc["edgy", "dead"] == 0.0
    row = games_table([StoredGame("d-vs-e", 0, games[0])]).iloc[0]
    assert (row["result"], row["winner"], row["reason"]) == ("0-0", "", "double_forfeit")
    assert row["forfeit"] == "dead: no_hello; edgy: crashed"


def test_errors_count_the_games_in_which_a_bot_had_an_error():
    with_errors = [game("p-vs-q-g0", "p", "q", 0), game("p-vs-q-g1", "q", "p", 0),
                   game("p-vs-q-g2", "p", "q", 1)]
    with_errors[0].errors = [3, 0]  # p erred on three moves: one game
    with_errors[1].errors = [0, 1]  # p (seat 1) again: a second game
    # the third game has no errors; records written before the field existed read as [0, 0]
    old = GameRecord.from_dict({k: v for k, v in with_errors[2].to_dict().items() if k != "errors"})
    assert old.errors == [0, 0]
    df = table([*with_errors[:2], old]).set_index("bot")
    assert df["errors"].to_dict() == {"p": 2, "q": 0}
    assert "errors" in standings_text(table(with_errors)).splitlines()[0]


def test_score_difference_where_the_game_scores():
    games = [game("f-g0", "p", "q", 0, scores=[7, 3]), game("f-g1", "q", "p", None, scores=[5, 5])]
    # p: +4 then 0 = +4; q: -4 then 0 = -4
    df = table(games).set_index("bot")
    assert df["score diff"].to_dict() == {"p": 4, "q": -4}


def test_games_table_rows():
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
