"""The course's ladder (arena/course/season/ladder.py) and copying check (arena/course/season/similarity.py).

The scheduler is driven by a fake clock with games decided by known strengths (no processes):
placement first, every active bot served at least its share of games an hour (the reference bots
too), nothing handed out twice, openskill's order after decided games. The same code uploaded again
keeps its rating; the ladder pauses while the final is played and ends at `[ladder] until`; a game
lost on time under load is played again, not rated. Then real ladder games, sandboxed, played by
the server's LadderRunner; unrated games asked for and their rate limit;
and the similarity check over students' uploads: a renamed, reformatted copy at the top while two
bots built on the same starter kit are not flagged."""
from __future__ import annotations

import io
import shlex
import sys
import time
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import require
from course_helpers import Server, arena, invite_links, signed_in

from arena.cell import sandbox
from arena.course.background.ladder import LadderRunner
from arena.course.config.course_toml import CourseError
from arena.course.course import Course
from arena.course.db.states import LadderStatus
from arena.course.season import final, jobs
from arena.course.season.archives import Refused
from arena.course.season.ladder import Ladder
from arena.course.season.similarity import similar_pairs
from arena.match.records import Forfeit, GameRecord
from arena.match.spec import MatchSpec

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
KIT = Path(__file__).resolve().parents[1] / "examples" / "kits" / "python-stdio" / "bot.py"


def make_course(directory: Path, students: int, ladder: str = "", time_s: float = 0.2,
                head: str = "") -> Path:
    """A Domineering 4x4 course of `students` students s1..sN and a `[ladder]` of `ladder`'s lines
    (`head`: more top-level keys)."""
    directory.mkdir()
    (directory / "course.toml").write_text(
        f'game = "domineering"\ntime = {time_s}\nupload_interval_s = 0\n{head}\n'
        "[params]\nrows = 4\ncols = 4\n"
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
    assert ladder.abandon_scheduled() == len(cut) == 12  # a server stopped before playing them...
    first = ladder.due(T0)  # ...owes them again on its next start
    assert [[b.name for b in s.bots] for s in first] == [[b.name for b in s.bots] for s in cut]
    # placement: each new version plays the reference bots in the order listed, weakest first
    by_bot: dict[str, list[str]] = {}
    for spec in first:
        assert spec.game_numbers == (0, 1) and len(spec.openings) == 1  # both seats, one paired opening
        by_bot.setdefault(spec.bots[0].name, []).append(spec.bots[1].name)
    assert by_bot == {f"s{n}-v1": ["random", "greedy"] for n in range(1, 7)}
    # the students placed (their games handed out), the reference bot none of them met plays its
    # own placement games (2 pairs) against its nearest in rating
    champion = ladder.due(T0)
    assert [s.bots[0].name for s in champion] == ["alphabeta", "alphabeta"], champion
    assert ladder.due(T0) == []  # handed out once
    first += champion
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
    # the reference bots are owed their share too, the champion above every student included (it
    # was met only as a rating neighbour: 4 games by the trial season's last deadline)
    references = {name: sum(2 for a, b in last_hour if name in (a, b))
                  for name in ("random", "greedy", "alphabeta")}
    assert min(references.values()) >= 12, references
    # openskill after decided games: the students in the order of their strengths, the bots too
    table = ladder.table(now)
    students = [row.bot for row in table if row.student_id]
    truth = ["s6-v2", "s5-v1", "s4-v1", "s3-v1", "s2-v1", "s1-v1"]
    # in the order of their strengths, but for at most one swap of neighbours after 2 hours: the
    # reference bots' own games go to their nearest (random's mostly to s1: easy wins)
    assert students[0] == truth[0] and spearman([truth.index(b) for b in students]) >= 0.94, table
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
                                     ('openings = "random:x"', "ladder.openings"),
                                     ('until = "after the exams"', "ladder.until"),
                                     ("until = 2027-01-10T12:00:00", "ladder.until")]):
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


def zipped(files: list[tuple[str, str]], year: int) -> bytes:
    """An archive of `files` (name, text), in that order, every member dated in `year`."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, text in files:
            info = zipfile.ZipInfo(name, date_time=(year, 1, 2, 3, 4, 5))
            info.external_attr = (0o755 if name == "build.sh" else 0o644) << 16
            z.writestr(info, text)
    return out.getvalue()


def rating(ladder: Ladder, now: datetime) -> dict[str, tuple[float, float, int, bool]]:
    """Bot -> (mu, sigma, games, placed) on the table at `now`."""
    return {r.bot: (r.mu, r.sigma, r.games, r.placed) for r in ladder.table(now)}


def test_the_same_code_uploaded_again_keeps_its_entrant_and_rating(tmp_path):
    """Uploading the same code again (to add a report, or zipped anew) made a new entrant at the
    prior rating, to climb again from its placement; it takes its previous entrant's rating and
    games over (its history goes on), while new code starts afresh."""
    course = Course(make_course(tmp_path / "c", 2, "placement_games = 2\ngames_per_hour = 12\n"),
                    sandbox="off")
    ladder = Ladder(course)
    kit = [("build.sh", "#!/bin/sh\necho python3 bot.py\n"), ("bot.py", "print('mine')\n")]
    greedy, random_bot = [sys.executable, "-m", "bots", "greedy"], [sys.executable, "-m", "bots", "random"]
    activate(course, "s1", greedy, zipped(kit, 2025), "bot.zip")
    activate(course, "s2", random_bot, b"print('two')\n")
    strength = {"random": 0, "greedy": 1, "alphabeta": 5, "s1-v1": 3, "s1-v2": 3, "s1-v3": 3, "s2-v1": 2,
                "s2-v2": 2}
    for minute in range(30):
        now = T0 + timedelta(minutes=minute)
        for spec in ladder.due(now):
            ladder.record(decided(spec, strength), now)
    later = T0 + timedelta(minutes=30)
    before = rating(ladder, later)
    assert before["s1-v1"][2] >= 4 and before["s1-v1"][0] > 25, before
    # s1's files zipped again, in another order, dated otherwise; s2's very file again
    activate(course, "s1", greedy, zipped(kit[::-1], 2026), "again.zip", now=later)
    activate(course, "s2", random_bot, b"print('two')\n", now=later)
    after = rating(ladder, later)
    assert "s1-v1" not in after and after["s1-v2"] == before["s1-v1"], (before, after)
    assert after["s2-v2"] == before["s2-v1"] and after["s1-v2"][3], after
    assert not {spec.bots[0].name for spec in ladder.due(later)} & {"s1-v2", "s2-v2"}  # no placement
    for spec in ladder.due(later + timedelta(minutes=10)):
        ladder.record(decided(spec, strength), later + timedelta(minutes=10))
    moved = rating(ladder, later + timedelta(minutes=10))["s1-v2"]
    assert moved[2] > before["s1-v1"][2] and len(ladder.history("s1")) == moved[2]  # one history
    # new code: a new entrant, from the prior rating and its placement games
    newer = later + timedelta(minutes=20)
    better = zipped([kit[0], ("bot.py", "print('better')\n")], 2026)
    activate(course, "s1", greedy, better, "bot.zip", now=newer)
    fresh = rating(ladder, newer)["s1-v3"]
    assert fresh[2:] == (0, False) and abs(fresh[0] - 25) < 1e-9, fresh
    assert [b.name for b in ladder.due(newer)[0].bots] == ["s1-v3", "random"]  # its placement first


def test_the_ladder_pauses_while_the_final_is_played_and_ends_at_its_until(tmp_path):
    """The trial's ladder played 56 games during the final, competing with it for the CPU, and went
    on after the season. It pauses while a run of the final is under way (started, not finished)
    and ends at `[ladder] until`, by default the course's last deadline."""
    deadline = T0 + timedelta(hours=3)
    directory = make_course(tmp_path / "c", 2, "placement_games = 2\n",
                            head=f"deadline = {deadline.isoformat()}")
    course = Course(directory, sandbox="off")
    activate(course, "s1", [sys.executable, "-m", "bots", "random"])
    activate(course, "s2", [sys.executable, "-m", "bots", "greedy"])
    ladder = Ladder(course)
    hour = T0 + timedelta(hours=1)
    assert ladder.status(T0) == (LadderStatus.OPEN, "") and ladder.due(T0)
    final._begin(course, rerun=False)  # run 1 started, not finished: as a server stopped mid-final leaves it
    assert ladder.status(hour) == (LadderStatus.PAUSED, "the ladder is paused while the final is played "
                                   "(run 1), so that the final has the machine: it goes on once the final "
                                   "has finished")
    assert ladder.due(hour) == []
    with pytest.raises(Refused, match=r"^the ladder is paused while the final is played \(run 1\)"):
        ladder.request("s1", "greedy", now=hour)
    assert final.run_final(course).state == "finished"  # played to its end: the ladder goes on
    assert ladder.status(hour)[0] is LadderStatus.OPEN and ladder.due(hour)
    ended = (LadderStatus.ENDED, f"the ladder ended at {deadline.isoformat()} (the course's last deadline): "
                                 "its ratings are final")
    assert ladder.status(deadline) == ended and ladder.due(deadline) == []
    with pytest.raises(Refused, match="the ladder ended at"):
        ladder.request("s1", "greedy", now=deadline)
    until = T0 + timedelta(hours=2)
    with open(directory / "course.toml", "a") as f:
        f.write(f"until = {until.isoformat()}\n")  # in [ladder], the file's last section
    ladder = Ladder(Course(directory, sandbox="off"))
    assert ladder.status(until - timedelta(seconds=1))[0] is LadderStatus.OPEN
    assert ladder.status(until)[1] == (f"the ladder ended at {until.isoformat()} ([ladder] until): its "
                                       "ratings are final")
    code, out, err = arena("course", "ladder", str(directory))  # today is past `until`
    assert code == 0 and out.splitlines()[-1] == ladder.status(until)[1], (out, err)


def test_the_ladder_page_says_it_is_paused_and_why(tmp_path):
    require(sandbox.unavailable_reason() is None, f"bots cannot be sandboxed: {sandbox.unavailable_reason()}")
    directory = make_course(tmp_path / "c", 2, "placement_games = 2\npoll_s = 0.2\n")
    course = Course(directory)
    activate(course, "s1", [sys.executable, "-m", "bots", "random"])
    activate(course, "s2", [sys.executable, "-m", "bots", "greedy"])
    final._begin(course, rerun=False)  # a final under way (no [final]: the server leaves it to staff)
    server = Server(directory)
    try:
        page = signed_in(server.url, invite_links(directory, server.url)["s1"]).get("/ladder").text
    finally:
        assert server.stop() == 0
    assert 'id="ladder-status" data-status="paused"' in page, page
    assert "the ladder is paused while the final is played (run 1)" in page
    assert 'action="/ladder/request"' not in page and "Not while the ladder is paused." in page
    assert Ladder(Course(directory)).games() == []  # nothing played meanwhile


def lost_on_time_under_load(spec: MatchSpec, number: int, loser: int) -> GameRecord:
    """Game `number` of `spec`, lost on time by seat `loser` while the machine kept it from a CPU,
    as the referee records it (arena/match/turns.py)."""
    seats = [b.name for b in spec.seats(number)]
    return GameRecord(game_id=spec.game_id(number), game=spec.game, params=spec.params, players=seats,
                      time_control="0.2", winner=1 - loser, scores=[0, 0], reason="timeout",
                      forfeit={"seat": loser, "reason": "timeout", "under_load": True,
                               "detail": "no move for ply 0 within 0.200 s + 0.05 s margin (under load: it "
                                         "waited 0.157 s of it for a CPU)"})


def test_a_ladder_game_lost_on_time_under_load_is_kept_not_rated(tmp_path):
    """4 of the trial's 10 ladder timeouts came under load and counted as losses."""
    settings = "placement_games = 0\nreference = []\ngames_per_hour = 4\n"
    course = Course(make_course(tmp_path / "c", 2, settings), sandbox="off")
    activate(course, "s1", [sys.executable, "-m", "bots", "random"])
    activate(course, "s2", [sys.executable, "-m", "bots", "greedy"])
    ladder = Ladder(course)
    ladder.table(T0)  # they join the ladder
    [spec] = ladder.due(T0 + timedelta(minutes=30))  # half an hour: 2 games each
    before = rating(ladder, T0)
    won = decided(spec, {"s1-v1": 1, "s2-v1": 0})[1]
    ladder.record([lost_on_time_under_load(spec, 0, 0), won], T0 + timedelta(minutes=31))
    after = rating(ladder, T0)
    assert [after[b][2] for b in ("s1-v1", "s2-v1")] == [1, 1], after  # game 2 only
    assert after["s1-v1"][0] > before["s1-v1"][0], after  # s1 won game 2; game 1 cost it nothing
    [game] = ladder.games("s1")
    assert game.state == "done" and len(game.game_ids) == 2
    assert game.detail == "not rated: lost on time under load (s1-v1 in game 1)", game.detail


@pytest.mark.loads_machine
def test_the_runner_plays_a_ladder_game_lost_on_time_under_load_again(tmp_path):
    """The runner plays a ladder game lost on time under load again, as the course's judged games
    (jobs.play_judged): under a heavy CPU hog a real bot using 0.12 s of CPU a move on a 0.4 s clock
    loses on time; once the hog is gone it plays normally, and only those games are rated."""
    from test_fair_clock import FirstCallUnderLoad, burner, start_hogs, stop

    directory = make_course(tmp_path / "c", 1, 'placement_games = 2\nreference = ["random"]\n', time_s=0.4)
    directory.joinpath("course.toml").write_text(
        directory.joinpath("course.toml").read_text().replace("rows = 4\ncols = 4", "rows = 5\ncols = 5"))
    course = Course(directory, sandbox="off")
    activate(course, "s1", list(burner(0.3, 0.4).command))
    hogs = start_hogs(4)  # four on each CPU
    try:
        player = FirstCallUnderLoad(hogs)
        runner = LadderRunner(course, play=player.play, clock=lambda: T0)
        # the placement pair against random (and another, if a game of it stayed unrated: random's
        # own placement is then owed)
        assert runner.run_once() >= 1
    finally:
        stop(hogs)
    lost = [f for f in player.results[0] if f and f["reason"] == Forfeit.TIMEOUT and f.get("under_load")]
    ladder = Ladder(course)
    games = sorted(ladder.games("s1"), key=lambda g: g.id)
    assert lost and 2 <= len(player.calls) <= len(games) * (1 + jobs.LOAD_REPLAYS), player.results
    assert games[0].state == "done", games
    assert games[0].detail.startswith("replayed: lost on time under load (s1-v1 in game"), games
    records = [ladder.record_of(i) for g in games for i in g.game_ids]
    rated = sum(1 for r in records if not r.lost_on_time_under_load())
    assert rating(ladder, T0)["s1-v1"][2] == rated >= 1, (records, player.results)
