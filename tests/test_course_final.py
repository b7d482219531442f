"""The course's final tournament, grades and pseudonyms (issue 25, arena/course/season/final.py, grades.py,
privacy.py): a real final of five tiny bots (Domineering 4x4, 0.05 s a move) played by `arena course
final DIR --start`, killed with SIGKILL midway and started again (every game stored exactly once),
its standings those of `arena standings` on the same results, grades.csv by the rules (5/3/2, a
tie at a bonus place, both penalty modes), and stable, private pseudonyms."""
from __future__ import annotations

import csv
import json
import os
import shlex
import signal
import sqlite3
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from conftest import require
from course_helpers import GOOD_BOT, Server, arena, make_course

from arena.cell import sandbox
from arena.course.background.season_clock import SeasonClock
from arena.course.course import Course
from arena.course.db.store import NewSubmission
from arena.course.season import final, grades, privacy

ROSTER = [("s001", "Ada Lovelace", "ada@example.org", "A"), ("s002", "Alan Turing", "alan@example.org", "A"),
          ("s003", "Grace Hopper", "grace@example.org", "B"),
          ("s004", "Katherine Johnson", "katherine@example.org", "B"),
          ("s005", "Edsger Dijkstra", "edsger@example.org", "B"),
          ("s006", "Barbara Liskov", "barbara@example.org", "A")]
DEADLINE = datetime.fromisoformat("2026-01-10T23:59:00+01:00")
BEFORE = DEADLINE - timedelta(days=2)
SHIPPED = "import sys\nfrom bots.__main__ import main\nsys.exit(main([{name!r}]))\n"
"""A student's bot that is a shipped one (its strength known)."""
SLEEPER = '''"""Thinks far past its clock on every move: it loses every game it has to move in on time."""
import time
from bots.sdk import Bot


class Sleeper(Bot):
    name = "sleeper"

    def choose(self, state, time_left):
        time.sleep(5)
        return self.legal[0]


if __name__ == "__main__":
    Sleeper().run()
'''
SETTINGS = """
[final]
format = "round-robin"
games = 2
time = 0.05
clock = "cpu"          # charged its own CPU time (under a 3x wall ceiling): no bot loses on time to load
opponents = ["random"]
concurrency = 2

[grading]
bonus = [5, 3, 2]
timeout_penalty = 2
penalty_per = "game"

[extensions]
s005 = "1h"

[privacy]
pseudonyms = true
"""
PRIVACY_SECRET = "0" * 32
"""The course's pseudonym secret, fixed. A game's seed comes from its match id, which holds the
pseudonyms, so with a secret made afresh each run `random` played other moves each run and, one run
in a few, beat a top bot twice: three bots level at the top where the checks below need two apart."""
FIELD_GAMES = 20
"""Five bots (four students', one reference), a round robin of two games a pairing."""


def needs_sandbox() -> None:
    reason = sandbox.unavailable_reason()
    require(reason is None, f"bots cannot be sandboxed here: {reason}")


def qualified(course: Course, student_id: str, text: str, created: datetime) -> int:
    """A submission of `text` uploaded at `created`, built and qualified (its run command set as
    jobs.run_job sets it; qualification itself is issue 24's and tested there)."""
    store = course.store
    sid = store.add_submission(NewSubmission(student_id, "bot.py", "v1", "python", store.put_file(
        text.encode()), len(text)), created, 0)
    folder = course.directory / "builds" / str(sid)
    folder.mkdir(parents=True)
    (folder / "bot.py").write_text(text)
    assert store.claim() == sid
    store.set_command(sid, shlex.join([sys.executable, str(folder / "bot.py")]))
    store.finish(sid, "qualified")
    return sid


@pytest.fixture(scope="module")
def season(tmp_path_factory) -> Path:
    """A course past its deadline: s001 greedy, s002 and s003 sleepers, s004 only after the
    deadline (not in the final), s005 random v1 then first-legal v2 inside its 1 h extension (v2
    plays), s006 disabled. Every bot but the sleepers answers at once."""
    directory = make_course(tmp_path_factory.mktemp("final") / "course", roster=ROSTER,
                            deadline=DEADLINE.isoformat())
    with (directory / "course.toml").open("a") as f:
        f.write(SETTINGS)
    course = Course(directory)
    with course.store.write() as db:  # the same pseudonyms, so the same games, every run
        db.execute("INSERT INTO privacy_secret (id, secret) VALUES (1, ?)", (PRIVACY_SECRET,))
    qualified(course, "s001", SHIPPED.format(name="greedy"), BEFORE)
    qualified(course, "s002", SLEEPER, BEFORE)
    qualified(course, "s003", SLEEPER, BEFORE)
    qualified(course, "s004", GOOD_BOT, DEADLINE + timedelta(minutes=5))
    qualified(course, "s005", SHIPPED.format(name="random"), BEFORE)
    qualified(course, "s005", GOOD_BOT, DEADLINE + timedelta(minutes=30))
    chosen = qualified(course, "s006", GOOD_BOT, BEFORE)
    qualified(course, "s006", SHIPPED.format(name="alphabeta"), BEFORE + timedelta(hours=1))
    course.set_active("s006", chosen)
    course.set_disabled("s006", True)  # disabled: no bot in the final
    course.close()
    return directory


def test_entrants_follow_each_students_own_deadline(season: Path) -> None:
    course = Course(season)
    found = {e.student_id: e for e in final.entrants(course)}
    assert sorted(found) == ["s001", "s002", "s003", "s005"]  # s004 too late, s006 disabled
    versions = {s.id: s.version for s in course.submissions("s005")}
    assert versions[found["s005"].submission_id] == 2  # inside its extension
    assert final.deadline_for(course.config, "s005") == DEADLINE + timedelta(hours=1)
    assert final.final_deadline(course.config) == DEADLINE + timedelta(hours=1)
    assert not final.due(course, now=DEADLINE + timedelta(minutes=59))
    assert final.due(course, now=DEADLINE + timedelta(hours=1))
    store = course.store  # an upload made in time and not judged yet holds the final back
    pending = store.add_submission(NewSubmission("s001", "bot.py", "v1", "python", store.put_file(
        b"x = 1\n"), 6), BEFORE + timedelta(minutes=1), 0)
    assert final.still_judged(course) and not final.due(course, now=DEADLINE + timedelta(hours=1))
    assert store.claim() == pending
    store.finish(pending, "failed", "crashed", "a test's stand-in verdict")
    assert not final.still_judged(course) and final.due(course, now=DEADLINE + timedelta(hours=1))
    assert all(e.bot == privacy.pseudonym(course, e.student_id) for e in found.values())
    tournament = final.final_tournament(course)
    assert tournament.total_games() == FIELD_GAMES and tournament.time_control.per_move == 0.05
    assert tournament.time_control.kind == "cpu" and not tournament.site.show_commands
    assert final.final_status(course).state == final.NOT_STARTED  # a look starts nothing
    toml = (season / "course.toml").read_text()
    for fmt, extra, check in (
            ("gauntlet", 'opponents = ["random", "greedy"]', lambda t: (t.challengers, t.total_games()) == (
                tuple(e.bot for e in found.values()), 4 * 2 * 2)),
            ("swiss", "rounds = 3", lambda t: t.rounds == 3 and t.total_games() == 3 * 2 * 2)):
        text = toml.replace('opponents = ["random"]', extra)
        (season / "course.toml").write_text(text.replace('format = "round-robin"', f'format = "{fmt}"'))
        assert check(final.final_tournament(Course(season))), fmt
    (season / "course.toml").write_text(toml)


def _stop_game_workers(server: Server) -> None:
    """SIGSTOP to the server's children in its own process group (its pool's workers, which play
    the games; bots and watchdogs have sessions of their own)."""
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == server.process.pid and int(fields[2]) == server.process.pid:
            os.kill(int(name), signal.SIGSTOP)


def _stored(results: Path) -> list[tuple[str, int]]:
    if not (results / "results.sqlite").is_file():
        return []
    with sqlite3.connect(f"file:{results / 'results.sqlite'}?mode=ro", uri=True) as db:
        try:
            return db.execute("SELECT pairing, number FROM games").fetchall()
        except sqlite3.OperationalError:  # the run has made the file, not yet its tables
            return []


def test_final_killed_and_resumed_then_published_and_graded(season: Path) -> None:
    needs_sandbox()
    results = season / "final" / "final-1"
    server = Server(season)  # past the deadline: its season clock starts the final at once
    try:
        deadline = time.monotonic() + 60
        while len(_stored(results)) < 6 and server.process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.process.poll() is None and len(_stored(results)) >= 6, server.errors()
        # the server's game workers stopped while the test looks (its own process still holds the
        # run's lock and answers): no game can end between the look and the kill, however slow
        # the machine makes the looking
        _stop_game_workers(server)
        assert not final.due(Course(season))  # a season clock leaves a final another process plays
        code, out, err = arena("course", "final", str(season), "--start")
        assert code == 2 and "another run" in err.splitlines()[-1], err  # no second copy of a game
    finally:
        server.kill()  # kill -9 of the server's process tree, mid-final
    assert final.due(Course(season))  # ... and the next start resumes it
    before = len(_stored(results))
    assert 6 <= before < FIELD_GAMES
    code, out, err = arena("course", "final", str(season), "--status")
    assert code == 0 and "running" in out, err

    code, out, err = arena("course", "final", str(season), "--publish")
    assert code == 2 and "not finished" in err  # one line, no traceback
    code, out, err = arena("course", "final", str(season), "--start")  # in this process
    assert code == 0, err
    stored = _stored(results)
    assert len(stored) == len(set(stored)) == FIELD_GAMES  # every game exactly once
    assert f"({before} already stored)" in err  # resumed, not started again
    code, out, err = arena("course", "final", str(season), "--start")
    assert code == 2 and "was played" in err

    course = Course(season)
    status = final.final_status(course)
    assert status.state == final.FINISHED and status.played == FIELD_GAMES
    code, standings_out, err = arena("standings", str(results))
    assert code == 0, err
    code, status_out, err = arena("course", "final", str(season), "--status")
    assert code == 0 and "finished (20/20 games" in status_out, err
    shown = status_out.split("\n\n", 1)[1].rpartition("\n\nbots:")[0]  # the standings it prints
    table = [line for line in shown.splitlines() if line.strip()]
    assert len(table) >= 5 + 2 and all(line in standings_out.splitlines() for line in table)
    assert all(privacy.pseudonym(course, sid) in status_out for sid in ("s001", "s002", "s003", "s005"))

    # grades before publishing: provisional, and says so
    grades.write_csv(course)
    assert any("NOT published" in n for n in json.loads((season / "grades.json").read_text())["notes"])
    assert not (season / "grades.csv").read_text().startswith("#")  # a plain CSV: its notes in grades.json
    status = final.publish_final(course)
    assert status.state == final.PUBLISHED
    site = (season / "final" / "site" / "index.html").read_text()
    for sid, name, *_ in ROSTER:  # pseudonyms only on the public site
        assert sid not in site and name not in site
    assert privacy.pseudonym(course, "s001") in site

    # grades.csv by the rules, from the standings' own order
    code, out, err = arena("course", "grades", str(season))
    assert code == 0, err
    text = (season / "grades.csv").read_text()
    notes = json.loads((season / "grades.json").read_text())["notes"]
    assert any("published" in n and "NOT" not in n for n in notes)
    assert any("head-to-head" in n and "split the bonuses" in n for n in notes)
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    rows = {r["id"]: r for r in csv.DictReader(lines)}
    assert list(rows["s001"]) == list(grades.COLUMNS)  # no [grading] columns: none added
    table = status.standings.tables[0].frame
    order = [status.students[b] for b in table["bot"] if b in status.students]
    top, second_place = order[0], order[1]
    assert {top, second_place} == {"s001", "s005"}  # the sleepers lose every game they move in
    assert rows[top]["final rank"] == "1" and rows[top]["bonus"] == "5"
    assert rows[second_place]["final rank"] == "2" and rows[second_place]["bonus"] == "3"
    points = dict(zip(table["bot"], table["points"], strict=True))
    for sid in ("s002", "s003"):  # level on every tie-break: they share 3rd and split 2 + 0
        row = rows[sid]
        assert row["final rank"] == "3=" and row["bonus"] == "1"
        assert row["time forfeits"] == "7" and row["penalty"] == "14"  # 8 games, 1 won on the other's time
        assert float(row["points"]) == points[privacy.pseudonym(course, sid)] == 1
    assert rows["s001"]["time forfeits"] == "0" and rows["s001"]["penalty"] == "0"
    assert rows["s004"]["final rank"] == "" and rows["s004"]["bonus"] == "0"
    assert rows["s001"]["name"] == "Ada Lovelace" and rows["s001"]["group"] == "A"

    toml = (season / "course.toml").read_text()
    (season / "course.toml").write_text(toml.replace('penalty_per = "game"', 'penalty_per = "student"'))
    by_student = {r.student_id: r for r in grades.grades(Course(season))}
    assert by_student["s002"].penalty == by_student["s003"].penalty == 2
    assert by_student["s001"].penalty == 0
    (season / "course.toml").write_text(toml)


def test_settings_errors_name_the_key(tmp_path: Path) -> None:
    directory = make_course(tmp_path / "c", roster=ROSTER[:2])
    base = (directory / "course.toml").read_text()
    for section, key in (('[final]\nformat = "knockout"\n', "final.format"),
                         ("[final]\ngames = 3\n", "final.games"),
                         ('[grading]\npenalty_per = "team"\n', "grading.penalty_per"),
                         ('[extensions]\ns001 = "soon"\n', "extensions.s001"),
                         ('[privacy]\npseudonyms = "yes"\n', "privacy.pseudonyms")):
        (directory / "course.toml").write_text(base + section)
        for command in (("grades", str(directory)), ("final", str(directory), "--start")):
            code, out, err = arena("course", *command)
            assert code == 2 and key in err and len(err.strip().splitlines()) == 1, err  # one line


def test_pseudonyms_stable_unique_and_shown_by_viewer(tmp_path: Path, monkeypatch) -> None:
    roster = [(f"s{n:03d}", f"Student {n}", f"s{n}@example.org", "") for n in range(40)]
    directory = make_course(tmp_path / "c", roster=roster)
    with (directory / "course.toml").open("a") as f:
        f.write("\n[privacy]\npseudonyms = true\n")
    course = Course(directory)
    names = {sid: privacy.pseudonym(course, sid) for sid, *_ in roster}
    assert len(set(names.values())) == len(roster)  # unique, even where two hashes meet
    assert all(n.count("-") >= 1 and n.replace("-", "").isalnum() for n in names.values())
    again = Course(directory)
    assert all(privacy.pseudonym(again, sid) == name for sid, name in names.items())  # kept
    assert privacy.display_name(again, "s007", viewer=None, staff=False) == names["s007"]
    assert privacy.display_name(again, "s007", viewer="s008", staff=False) == names["s007"]
    assert privacy.display_name(again, "s007", viewer="s007", staff=False) == "Student 7"
    assert privacy.display_name(again, "s007", viewer=None, staff=True) == "Student 7"
    assert privacy.display_name(again, "greedy", viewer=None, staff=False) == "greedy"
    other = make_course(tmp_path / "d", roster=roster[:20])
    with (other / "course.toml").open("a") as f:
        f.write("\n[privacy]\npseudonyms = true\n")
    theirs = [privacy.pseudonym(Course(other), sid) for sid, *_ in roster[:20]]
    assert theirs != [names[sid] for sid, *_ in roster[:20]]  # per course: a secret of its own
    (directory / "course.toml").write_text((directory / "course.toml").read_text().replace(
        "pseudonyms = true", "pseudonyms = false"))
    assert privacy.display_name(Course(directory), "s007", viewer=None, staff=False) == "Student 7"

    monkeypatch.setattr(privacy, "ADJECTIVES", ("bold", "calm"))  # 4 pairs for 20 students: they meet
    monkeypatch.setattr(privacy, "ANIMALS", ("owl", "yak"))
    crowded = Course(other)
    crowded.store.connection().execute("DELETE FROM pseudonyms")
    many = [privacy.pseudonym(crowded, sid) for sid, *_ in roster[:20]]
    assert len(set(many)) == 20 and {n.rsplit("-", 1)[0] for n in many if n.count("-") == 2} <= {
        f"{a}-{b}" for a in ("bold", "calm") for b in ("owl", "yak")}


def test_season_clock_says_once_why_the_final_cannot_start(tmp_path: Path, capsys) -> None:
    directory = make_course(tmp_path / "c", roster=ROSTER[:2], deadline=DEADLINE.isoformat())
    assert not final.due(Course(directory))  # no [final]: staff start it themselves
    with (directory / "course.toml").open("a") as f:
        f.write("\n[final]\ngames = 2\n")
    course = Course(directory)
    clock = SeasonClock(course, tick_s=0.01)
    assert final.due(course)
    clock.tick()
    clock.tick()
    err = capsys.readouterr().err
    assert err.count("the final cannot start: the final needs bots") == 1, err
    assert final.final_status(course).state == final.NOT_STARTED and not final.is_running(course)

