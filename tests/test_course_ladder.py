"""The course's ladder (arena/course/season/ladder.py) and copying check (arena/course/season/similarity.py).

The scheduler is driven by a fake clock with games decided by known strengths (no processes):
placement first, every active bot served at least its share of games an hour, nothing handed out
twice, openskill's order after decided games. Then real ladder games, sandboxed, played by the
server's LadderRunner; unrated games asked for and their rate limit;
and the similarity check over students' uploads: a renamed, reformatted copy at the top while two
bots built on the same starter kit are not flagged."""
from __future__ import annotations

import shlex
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import require
from course_helpers import Server, arena

from arena.cell import sandbox
from arena.course.config.course_toml import CourseError
from arena.course.course import Course
from arena.course.season.archives import Refused
from arena.course.season.ladder import Ladder
from arena.course.season.similarity import similar_pairs
from arena.match.records import GameRecord
from arena.match.spec import MatchSpec

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
KIT = Path(__file__).resolve().parents[1] / "examples" / "kits" / "python-stdio" / "bot.py"


def make_course(directory: Path, students: int, ladder: str = "", time_s: float = 0.2) -> Path:
    """A Domineering 4x4 course of `students` students s1..sN and a `[ladder]` of `ladder`'s lines."""
    directory.mkdir()
    (directory / "course.toml").write_text(
        f'game = "domineering"\ntime = {time_s}\nupload_interval_s = 0\n[params]\nrows = 4\ncols = 4\n'
        f"[ladder]\n{ladder}\n")
    lines = "".join(f"s{n},Student {n},s{n}@example.org,\n" for n in range(1, students + 1))
    (directory / "roster.csv").write_text("id,name,email,group\n" + lines)
    return directory


def activate(course: Course, student_id: str, command: list[str], source: bytes = b"print('bot')\n",
             filename: str = "bot.py", now: datetime = T0) -> int:
    """An upload made qualified by hand (no build, no games): its run command is `command`."""
    sub = course.submit(student_id, filename, source, now=now)
    course.store.set_command(sub.id, shlex.join(command))
    course.store.finish(sub.id, "qualified")
    return sub.id


def decided(spec: MatchSpec, strength: dict[str, float]) -> list[GameRecord]:
    """Both games of a ladder pair, each won by the stronger bot (seat 0 on a tie)."""
    out = []
    for number in spec.game_numbers:
        seats = [b.name for b in spec.seats(number)]
        winner = 0 if strength[seats[0]] >= strength[seats[1]] else 1
        out.append(GameRecord(game_id=spec.game_id(number), game=spec.game, params=spec.params, players=seats,
                              time_control="0.2", winner=winner, scores=[int(winner == 0), int(winner == 1)],
                              reason="no moves"))
    return out


def spearman(ranks: list[int]) -> float:
    """Spearman's rho between the order 0..n-1 and `ranks` (no ties)."""
    n = len(ranks)
    return 1 - 6 * sum((r - i) ** 2 for i, r in enumerate(ranks)) / (n * (n * n - 1))


def test_placement_fair_share_and_order_with_a_fake_clock(tmp_path):
    course = Course(make_course(tmp_path / "c", 6, "games_per_hour = 12\nplacement_games = 4\n"),
                    sandbox="off")
    for n in range(1, 7):
        activate(course, f"s{n}", [sys.executable, "-m", "bots", "random"])
    ladder = Ladder(course)
    # known strengths: the students s1 (weakest) .. s6, random below them all, alphabeta above
    strength = {"random": 0, "greedy": 3.5, "alphabeta": 10, **{f"s{n}-v1": n for n in range(1, 7)}}
    cut = ladder.due(T0)
    assert ladder.due(T0) == []  # handed out once
    assert ladder.abandon_scheduled() == len(cut) == 12  # a server stopped before playing them...
    first = ladder.due(T0)  # ...owes them again on its next start
    assert [[b.name for b in s.bots] for s in first] == [[b.name for b in s.bots] for s in cut]
    assert ladder.due(T0) == []
    # placement: each new version plays the reference bots in the order listed, weakest first
    by_bot: dict[str, list[str]] = {}
    for spec in first:
        assert spec.game_numbers == (0, 1) and len(spec.openings) == 1  # both seats, one paired opening
        by_bot.setdefault(spec.bots[0].name, []).append(spec.bots[1].name)
    assert by_bot == {f"s{n}-v1": ["random", "greedy"] for n in range(1, 7)}
    played: list[tuple[datetime, str, str]] = []

    def play(specs: list[MatchSpec], now: datetime) -> None:
        for spec in specs:
            ladder.record(decided(spec, strength), now)
            played.append((now, spec.bots[0].name, spec.bots[1].name))

    play(first, T0)
    now = T0
    replaced = False
    while now < T0 + timedelta(hours=2):
        now += timedelta(minutes=1)
        if now == T0 + timedelta(minutes=30) and not replaced:  # s6 uploads a stronger version
            activate(course, "s6", [sys.executable, "-m", "bots", "greedy"], b"print('v2')\n", now=now)
            strength["s6-v2"] = 7
            replaced = True
            new = ladder.due(now)
            assert [(s.bots[0].name, s.bots[1].name) for s in new][:2] == [("s6-v2", "random"),
                                                                              ("s6-v2", "greedy")]
            play(new, now)
            continue
        play(ladder.due(now), now)
    assert not any("s6-v1" in (a, b) for when, a, b in played if when > T0 + timedelta(minutes=30))
    # the last hour: every active version got at least its share (12 games), and none ran far ahead
    last_hour = [(a, b) for when, a, b in played if when > now - timedelta(hours=1)]
    games = {f"s{n}-v1": 0 for n in range(1, 6)} | {"s6-v2": 0}
    for a, b in last_hour:
        for name in (a, b):
            if name in games:
                games[name] += 2
    assert min(games.values()) >= 12, games
    assert max(games.values()) <= 24, games
    # openskill after decided games: the students in the order of their strengths, the bots too
    table = ladder.table(now)
    students = [row.bot for row in table if row.student_id]
    assert students == ["s6-v2", "s5-v1", "s4-v1", "s3-v1", "s2-v1", "s1-v1"], table
    true_rank = {bot: n for n, bot in enumerate(sorted((r.bot for r in table), key=lambda b: -strength[b]))}
    assert spearman([true_rank[r.bot] for r in table]) >= 0.9, table  # the reference bots too
    assert all(row.placed and row.games >= 4 for row in table)
    assert all(abs(row.ordinal - (row.mu - 3 * row.sigma)) < 1e-9 for row in table)
    history = ladder.history("s6")  # both versions, oldest first
    assert len(history) == sum(1 for _, a, b in played if "s6-" in a or "s6-" in b) * 2
    assert history[-1][1] > 25 and history[-1][2] < 25 / 3  # above the prior, surer than it


def test_requests_unrated_first_and_rate_limited(tmp_path):
    course = Course(make_course(tmp_path / "c", 3, "unrated_per_hour = 2\nplacement_games = 2\n"),
                    sandbox="off")
    ladder = Ladder(course)
    with pytest.raises(Refused, match="no active bot"):
        ladder.request("s1", "greedy", now=T0)
    activate(course, "s1", [sys.executable, "-m", "bots", "random"])
    activate(course, "s2", [sys.executable, "-m", "bots", "greedy"])
    with pytest.raises(Refused, match="no opponent 's3'"):
        ladder.request("s1", "s3", now=T0)  # s3 has no active bot
    with pytest.raises(Refused, match="itself"):
        ladder.request("s1", "s1", now=T0)
    first = ladder.request("s1", "alphabeta", now=T0)
    second = ladder.request("s1", "s2", now=T0 + timedelta(minutes=10))
    with pytest.raises(Refused, match=r"at most 2 unrated games an hour: try again in 30 min"):
        ladder.request("s1", "greedy", now=T0 + timedelta(minutes=30))
    due = ladder.due(T0 + timedelta(minutes=30))
    assert [s.match_id for s in due[:2]] == [f"ladder-{first}", f"ladder-{second}"]  # asked for: first
    assert [b.name for b in due[1].bots] == ["s1-v1", "s2-v1"]
    before = {r.bot: (r.mu, r.sigma, r.games) for r in ladder.table(T0)}
    ladder.record(decided(due[1], {"s1-v1": 0, "s2-v1": 1}), T0 + timedelta(minutes=31))
    after = {r.bot: (r.mu, r.sigma, r.games) for r in ladder.table(T0)}
    assert after == before  # unrated
    game = next(g for g in ladder.games("s2") if g.id == second)
    assert (game.rated, game.requested_by, game.state, game.score) == (False, "s1", "done", 0.0)
    assert ladder.record_of(game.game_ids[0]).players[0] == "s1-v1"
    assert ladder.request("s1", "greedy", now=T0 + timedelta(minutes=61)) > second  # an hour later


def test_bad_ladder_keys_are_one_line_errors(tmp_path):
    for n, (text, key) in enumerate([("games_per_hour = 0", "ladder.games_per_hour"),
                                     ('reference = ["random", "nobody"]', "ladder.reference"),
                                     ('model = "elo"', "ladder.model"), ("colour = 1", "ladder.colour"),
                                     ('openings = "random:x"', "ladder.openings")]):
        with pytest.raises(CourseError) as caught:  # the course refuses it at load (the openings: the ladder)
            Ladder(Course(make_course(tmp_path / f"c{n}", 1, text), sandbox="off"))
        message = str(caught.value)
        assert f"course.toml: {key}: " in message and "\n" not in message, message


def done_games(directory: Path) -> list:
    reader = Ladder(Course(directory))
    return [g for g in reader.games() if g.state == "done"]


def wait_for(condition, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def test_real_ladder_games_in_the_server(tmp_path):
    """The server's LadderRunner plays sandboxed ladder pairs (placement first) and an unrated game
    asked for."""
    require(sandbox.unavailable_reason() is None, f"bots cannot be sandboxed: {sandbox.unavailable_reason()}")
    directory = make_course(tmp_path / "c", 2, 'reference = ["random"]\nplacement_games = 2\n'
                                               "games_per_hour = 3600\npoll_s = 0.2\n", time_s=0.2)
    course = Course(directory)
    activate(course, "s1", [sys.executable, "-m", "bots", "greedy"])
    activate(course, "s2", [sys.executable, "-m", "bots", "random"])
    server = Server(directory)
    try:
        wait_for(lambda: len(done_games(directory)) >= 2)  # the placement pairs
        asked = Ladder(Course(directory)).request("s2", "s1")
        wait_for(lambda: any(g.id == asked for g in done_games(directory)))
    finally:
        assert server.stop() == 0
    reader = Ladder(Course(directory))
    done = [g for g in reader.games() if g.state == "done"]
    placement = sorted(done, key=lambda g: g.id)[:2]
    assert {(g.a, g.b) for g in placement} == {("s1-v1", "random"), ("s2-v1", "random")}
    for game in done:
        records = [reader.record_of(i) for i in game.game_ids]
        assert [r.players for r in records] == [[game.a, game.b], [game.b, game.a]]  # both seats
        assert records[0].start_moves == records[1].start_moves and records[0].start_moves  # one opening
        assert all(r.isolation == "sandbox" and r.forfeit is None for r in records)
    unrated = next(g for g in done if g.id == asked)
    assert (unrated.rated, unrated.requested_by, unrated.a, unrated.b) == (False, "s2", "s2-v1", "s1-v1")
    rated_games = {n: 2 * sum(1 for g in done if g.rated and n in (g.a, g.b)) for n in ("s1-v1", "s2-v1")}
    rows = {r.bot: r for r in reader.table()}
    assert {n: rows[n].games for n in rated_games} == rated_games  # the unrated pair counted for nobody
    assert len(reader.history("s1")) == rows["s1-v1"].games
    code, out, err = arena("course", "ladder", str(directory))
    assert code == 0, err
    assert out.splitlines()[0].split()[:4] == ["rank", "bot", "name", "ordinal"]
    assert {line.split()[1] for line in out.splitlines()[1:]} == {"s1-v1", "s2-v1", "random"}


ORIGINAL = '''"""Domineering: a two-ply search over the mobility difference."""
from bots.sdk import Bot
import random


def evaluate(state, seat):
    mine = len(state.legal_moves()) if state.to_move == seat else 0
    count = 0
    for move in state.legal_moves():
        after = state.play(move)
        if after.outcome is not None:
            count += 100
        else:
            count -= len(after.legal_moves())
    return count + mine


def search(state, depth, alpha, beta, seat):
    if depth == 0 or state.outcome is not None:
        return evaluate(state, seat), None
    best_move = None
    for move in state.legal_moves():
        value, _ = search(state.play(move), depth - 1, -beta, -alpha, seat)
        value = -value
        if value > alpha:
            alpha, best_move = value, move
        if alpha >= beta:
            break
    return alpha, best_move


class Mine(Bot):
    name = "mine"

    def choose(self, state, time_left):
        score, move = search(state, 2, -10**9, 10**9, state.to_move)
        if move is None:
            move = random.choice(self.legal)
        return move


if __name__ == "__main__":
    Mine().run()
'''
COPY = '''"""My own bot, written from scratch"""
import random
from bots.sdk import Bot
def score_position( position,me ):
    # how many moves do I keep?
    own=len( position.legal_moves() ) if position.to_move==me else 0
    total=0
    for m in position.legal_moves():
        nxt=position.play( m )
        if nxt.outcome is not None: total+=100
        else: total-=len( nxt.legal_moves() )
    return total+own
def negamax( position,d,lo,hi,me ):
    if d==0 or position.outcome is not None: return score_position( position,me ),None
    chosen=None
    for m in position.legal_moves():
        v,_=negamax( position.play( m ),d-1,-hi,-lo,me )
        v=-v
        if v>lo: lo,chosen=v,m
        if lo>=hi: break
    return lo,chosen
class Player( Bot ):
    name="player"
    def choose( self,state,time_left ):
        s,m=negamax( state,2,-10**9,10**9,state.to_move )
        if m is None: m=random.choice( self.legal )
        return m
if __name__=="__main__": Player().run()
'''


def test_similarity_finds_a_renamed_reformatted_copy_not_the_kit(tmp_path):
    course = Course(make_course(tmp_path / "c", 5), sandbox="off")
    kit = KIT.read_text()
    kit_a = kit.replace("    return legal[0]\n", "    return legal[-1]\n")
    kit_b = kit.replace("    return legal[0]\n", "    import random\n    options = sorted(legal)\n"
                        "    return random.Random(len(moves)).choice(options[: max(1, len(options) // 2)])\n")
    for sid, source in [("s1", ORIGINAL), ("s2", COPY), ("s3", kit_a), ("s4", kit_b)]:
        activate(course, sid, [sys.executable, "-m", "bots", "random"], source.encode())
    activate(course, "s5", [sys.executable, "-m", "bots", "random"], COPY.encode())
    activate(course, "s5", [sys.executable, "-m", "bots", "random"], kit_a.replace("[-1]", "[1]").encode(),
             now=T0 + timedelta(minutes=1))  # only the active (latest) version is compared
    pairs = similar_pairs(course, threshold=0.0)
    assert (pairs[0].a, pairs[0].b) == ("s1", "s2") and pairs[0].score >= 0.8, pairs[0]
    assert all(p.score < 0.3 for p in pairs[1:]), [(p.a, p.b, p.score) for p in pairs[1:]]
    passage = max(pairs[0].passages, key=lambda p: p.a_lines[1] - p.a_lines[0])
    assert passage.a_file == "bot.py" and passage.a_lines[1] - passage.a_lines[0] >= 20
    assert "def search(state, depth, alpha, beta, seat):" in passage.a_text
    assert "def negamax( position,d,lo,hi,me ):" in passage.b_text
    assert [(p.a, p.b) for p in similar_pairs(course)] == [("s1", "s2")]  # the default threshold
    code, out, err = arena("course", "similarity", str(tmp_path / "c"), "--threshold", "0.5")
    assert code == 0, err
    lines = out.splitlines()
    assert "  s1 (Student 1) ~ s2 (Student 2)  " in lines[0] and "s3" not in out, out
    assert lines[1].strip().startswith("bot.py:") and "~  bot.py:" in lines[1], out
    with pytest.raises(ValueError, match="threshold must be between 0 and 1, got 2"):
        similar_pairs(course, threshold=2)


def test_a_double_forfeit_on_the_ladder_is_worth_nothing_to_either_bot(tmp_path):
    """What a ladder game scored comes from GameRecord.points: a double forfeit is 0 for both (it was
    counted 0.5 each), as an aborted game is."""
    course = Course(make_course(tmp_path / "c", 2, "placement_games = 2\n"), sandbox="off")
    activate(course, "s1", [sys.executable, "-m", "bots", "random"])
    activate(course, "s2", [sys.executable, "-m", "bots", "greedy"])
    ladder = Ladder(course)
    asked = ladder.request("s1", "s2", now=T0)
    [spec] = [s for s in ladder.due(T0) if s.match_id == f"ladder-{asked}"]
    both_failed = {"reason": "double_forfeit", "detail": "both bots failed"}
    records = [GameRecord(game_id=spec.game_id(n), game=spec.game, params=spec.params,
                          players=[b.name for b in spec.seats(n)], time_control="0.2", winner=None,
                          scores=[0, 0], reason="double_forfeit", forfeit=both_failed)
               for n in spec.game_numbers]
    assert all(r.is_double_forfeit() for r in records)
    ladder.record(records, T0 + timedelta(minutes=1))
    game = next(g for g in ladder.games("s1") if g.id == asked)
    assert (game.state, game.score) == ("done", 0.0)
    course.close()
