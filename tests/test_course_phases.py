"""The season's phases (arena/course/season/phases.py) on a real course: uploads through `Course.submit` at
chosen times, built and qualified by real `Workers` in the sandbox, the phase checks run by
`phase_checks.run_pending` (real score games against `greedy`, real move-generation checks: what the
server's background thread runs), each phase's pass list judged by `phase_results`, an extension
honoured, uploads frozen after the last deadline, reports kept with their version, and
`arena course phases DIR` printing the same lists. Domineering 4x4, 0.1 s a move."""
from __future__ import annotations

import sqlite3
import textwrap
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import require
from course_helpers import RAISING_BOT, arena, make_course

from arena.cell import sandbox
from arena.course.background.submissions import Workers
from arena.course.config import checks
from arena.course.config.course_toml import CourseError
from arena.course.course import Course
from arena.course.season import phase_checks, phases
from arena.course.season.archives import Refused

T0 = (datetime.now(UTC) - timedelta(hours=10)).replace(microsecond=0)
"""The season starts ten hours ago: every deadline below has passed, the results are final."""
STRONG = 'from bots import load\n\nif __name__ == "__main__":\n    load("alphabeta")().run()\n'
"""alphabeta under a student's name: it solves 4x4 Domineering, so it wins its game as first player."""
BUGGY = (Path(__file__).resolve().parent / "bots" / "buggy_legal.py").read_text()
"""Plays the first legal move (loses both games to greedy on 4x4) and its move generator has a bug."""
PDF = b"%PDF-1.4\n% a report\n%%EOF\n"
ROSTER = [("ann", "Ann A", "ann@example.org", "A"), ("bob", "Bob B", "bob@example.org", "A"),
          ("cid", "Cid C", "cid@example.org", "B"), ("dan", "Dan D", "dan@example.org", "B"),
          ("eve", "Eve E", "eve@example.org", "")]


def at(hours: float) -> datetime:
    return T0 + timedelta(hours=hours)


SEASON = textwrap.dedent(f"""
    [[phases]]
    name = "interface"
    deadline = {at(1).isoformat()}
    report = true
    report_max_mb = 0.001
    requires = {{ qualified = true }}

    [[phases]]
    name = "move generation"
    deadline = {at(2).isoformat()}
    requires = {{ legal = {{ positions = 20, timeout_s = 1 }} }}

    [[phases]]
    name = "search"
    deadline = {at(3).isoformat()}
    requires = {{ score = {{ against = "greedy", at_least = 0.5, games = 2 }} }}

    [extensions]
    dan = "2h"
    """)


def wait_final(course: Course, *ids: int, timeout_s: float = 90.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not all(course.submission(i).finished for i in ids):
        assert time.monotonic() < deadline, [course.submission(i) for i in ids]
        time.sleep(0.05)


@pytest.fixture(scope="module")
def season(tmp_path_factory):
    """The season played: who uploaded what when, and the refusals met on the way."""
    reason = sandbox.unavailable_reason()
    require(reason is None, f"bots cannot be sandboxed here: {reason}")
    directory = make_course(tmp_path_factory.mktemp("phases") / "course", roster=ROSTER, time="0.1")
    (directory / "course.toml").write_text((directory / "course.toml").read_text() + SEASON)
    course = Course(directory)
    workers = Workers(course, concurrency=2)
    workers.start()
    refusals = {}
    subs = {
        "ann": course.submit("ann", "ann.py", STRONG.encode(), now=at(0), report=("report.md", b"# Ann\n")),
        "bob": course.submit("bob", "bob.py", BUGGY.encode(), now=at(0.5), report=("bob.pdf", PDF)),
        "cid1": course.submit("cid", "cid.py", RAISING_BOT.encode(), now=at(0.2), report=("r.md", b"v1\n")),
        "cid2": course.submit("cid", "cid.py", STRONG.encode(), now=at(1.5)),  # too late for "interface"
        "dan": course.submit("dan", "dan.py", STRONG.encode(), now=at(4.5)),  # after the last deadline + 2h
    }
    bot = STRONG.encode()
    for name, (sid, when, report) in {"eve late": ("eve", at(3), None), "dan too late": ("dan", at(5), None),
                                      "docx report": ("eve", at(0), ("r.docx", b"x")),
                                      "big report": ("eve", at(0), ("r.md", b"#" * 1001)),
                                      "fake pdf": ("eve", at(0), ("r.pdf", b"# no"))}.items():
        with pytest.raises(Refused) as refused:
            course.submit(sid, "bot.py", bot, now=when, report=report)
        refusals[name] = str(refused.value)
    wait_final(course, *(s.id for s in subs.values()))
    unchecked = {(r.phase, r.student_id): r for r in phases.phase_results(course)}
    due = phase_checks.due(course)
    started = time.monotonic()
    ran = phase_checks.run_pending(course)
    results = {(r.phase, r.student_id): r for r in phases.phase_results(course)}
    first_s = time.monotonic() - started
    started = time.monotonic()
    ran_again = phase_checks.run_pending(course)
    again = phases.phase_results(course)
    again_s = time.monotonic() - started
    yield course, subs, refusals, results, (first_s, again_s, again, unchecked, due, ran, ran_again)
    workers.stop(timeout_s=30)
    course.close()


def passed(results, phase: str) -> list[str]:
    return sorted(sid for (name, sid), r in results.items() if name == phase and r.passed)


def test_each_phase_pass_list_is_right(season):
    course, subs, _, results, _ = season
    assert [s.status for s in (course.submission(x.id) for x in subs.values())] == \
        ["qualified", "qualified", "failed", "qualified", "qualified"]
    assert passed(results, "interface") == ["ann", "bob"]
    assert passed(results, "move generation") == ["ann", "cid"]
    assert passed(results, "search") == ["ann", "cid", "dan"]
    assert not any(r.provisional for r in results.values())
    ann = results["search", "ann"]
    assert ann.submission_id == subs["ann"].id and results["interface", "ann"].report == "report.md"
    assert ann.report is None  # the report uploaded with the code is the interface's: "search" takes none
    assert f"qualify-{subs['ann'].id}-g0" in ann.game_ids
    score_games = [g for g in ann.game_ids if not g.startswith("qualify-")]
    assert len(score_games) == 2 and "score 0.50 against greedy (1 of 2 points)" in ann.evidence
    record = phases.phase_game(course, score_games[0])
    assert record is not None and set(record.players) == {"ann-v1", "greedy"} and record.forfeit is None
    assert "score 0.00 against greedy (0 of 2 points) (needs 0.5)" in results["search", "bob"].evidence


def test_the_evidence_names_why_a_student_failed(season):
    _, subs, _, results, _ = season
    cid = results["interface", "cid"]  # v1 crashed, v2 came after the deadline
    assert cid.submission_id is None and cid.game_ids == []
    assert cid.evidence == f"no qualified version (v1 is failed: crashed) before {at(1).isoformat()}"
    assert results["interface", "eve"].evidence == f"no upload before {at(1).isoformat()}"
    assert results["move generation", "cid"].submission_id == subs["cid2"].id


def test_a_planted_move_generation_bug_fails_with_the_disagreeing_position(season):
    course, subs, _, results, _ = season
    bob = results["move generation", "bob"]
    assert not bob.passed and bob.submission_id == subs["bob"].id and bob.disagreements
    import rules

    game = rules.load(course.config.game, **course.config.params)
    for wire, missing, extra in bob.disagreements:
        column_a = [m for m in game.state_from_wire(wire).legal_moves() if m.endswith("A")]
        assert missing == column_a and not extra
    assert "move generation agreed with the rules on" in bob.evidence
    assert "first disagreement: left out" in bob.evidence
    ann = results["move generation", "ann"]
    assert "move generation agreed with the rules on 20 of 20 positions" in ann.evidence


def test_an_extension_is_honoured_and_uploads_freeze_after_the_last_deadline(season):
    course, subs, refusals, results, _ = season
    config = course.config
    assert phases.deadline_for(config, "eve") == at(3) and phases.deadline_for(config, "dan") == at(5)
    assert refusals["eve late"] == f"uploads are frozen: the last deadline was {at(3).isoformat()}"
    assert refusals["dan too late"] == (f"uploads are frozen: the last deadline was {at(3).isoformat()} "
                                        f"(yours, with your extension of 2h, was {at(5).isoformat()})")
    assert results["search", "dan"].passed and results["search", "dan"].submission_id == subs["dan"].id
    assert not results["interface", "dan"].passed  # the extension moves its deadline to 3 h: 4.5 h is late


def test_a_report_is_kept_with_its_version_and_bad_ones_are_refused(season):
    course, subs, refusals, results, _ = season
    assert course.report(subs["ann"].id) == ("report.md", b"# Ann\n")
    assert course.report(subs["bob"].id) == ("bob.pdf", PDF)
    assert course.report(subs["cid2"].id) is None and results["interface", "bob"].report == "bob.pdf"
    assert refusals["docx report"] == "the report 'r.docx' must be a PDF or Markdown file (.pdf, .md)"
    assert refusals["big report"] == "the report is too big: 1,001 bytes, the limit is 1,000 bytes (0.001 MB)"
    assert refusals["fake pdf"] == "the report 'r.pdf' is not a PDF file (it does not start with %PDF-)"
    assert [s.student_id for s in course.submissions("eve")] == []  # nothing refused was stored


def test_games_and_checks_run_once_a_version(season):
    course, subs, _, results, (first_s, again_s, again, unchecked, due, ran, ran_again) = season
    assert {(r.phase, r.student_id): r for r in again} == results
    assert again_s < first_s / 5, (first_s, again_s)
    assert (ran, ran_again, phase_checks.due(course)) == (len(due), 0, [])
    # what was due: each judged version's checks once, the nearest deadline first
    assert [(c.student_id, c.kind) for c in due] == [
        ("ann", "legal"), ("bob", "legal"), ("cid", "legal"),  # "move generation", at 2 h
        ("ann", "score"), ("bob", "score"), ("cid", "score"),  # "search", at 3 h
        ("dan", "score")]  # dan's own deadline, 5 h (its extension); its 4.5 h upload is late for 4 h
    assert {c.submission_id for c in due if c.student_id == "cid"} == {subs["cid2"].id}
    search = unchecked["search", "ann"]  # before anything was played: nothing passes on faith
    assert not search.passed and search.pending == ("score games: queued",)
    assert search.evidence.endswith("score games: queued")
    assert unchecked["interface", "ann"] == results["interface", "ann"]
    assert not any(r.pending for r in results.values())
    db = sqlite3.connect(course.directory / "course.db")
    assert db.execute("SELECT COUNT(*) FROM phase_games").fetchone()[0] == 2 * 4  # ann, bob, cid, dan


def test_arena_course_phases_prints_the_pass_lists(season):
    course = season[0]
    code, out, err = arena("course", "phases", str(course.directory))
    assert code == 0, err
    assert "interface: deadline" in out and "  passed: 2 of 5: ann, bob" in out
    assert "  passed: 3 of 5: ann, cid, dan" in out
    assert f"  FAIL  eve  no upload before {at(1).isoformat()}" in out
    _, _, _, results, _ = season
    wire, missing, _ = results["move generation", "bob"].disagreements[0]
    assert f"board {' / '.join(wire['board'])}: left out {', '.join(missing)}; not legal -" in out
    assert "        games: qualify-1-g0, phase-greedy-1-g0, phase-greedy-1-g1" in out


def test_a_bad_phase_is_one_line_naming_the_key(tmp_path):
    directory = make_course(tmp_path / "bad", roster=ROSTER)
    base = (directory / "course.toml").read_text()
    for extra, message in (
            ('[[phases]]\nname = "a"\ndeadline = 2026-01-01T00:00:00\n',
             "phases[1].deadline: 2026-01-01T00:00:00 has no zone: add it"),
            ('[[phases]]\nname = "a"\ndeadline = 2026-01-01T00:00:00Z\nrequires = { score = { against = '
             '"nobody", at_least = 0.5 } }\n', "phases[1].requires.score.against: must be a reference bot"),
            ('[[phases]]\nname = "a"\ndeadline = 2026-01-01T00:00:00Z\nrequires = { speed = 1 }\n',
             "phases[1].requires.speed: unknown requirement"),
            ('[extensions]\nann = "two days"\n', 'extensions.ann: must be a duration such as "48h"'),
            ('[extensions]\nzed = "2d"\n', "extensions.zed: no such student in the roster")):
        (directory / "course.toml").write_text(base + extra)
        with pytest.raises(CourseError) as error:
            Course(directory)
        assert f"{directory / 'course.toml'}: {message}" in str(error.value) and "\n" not in str(error.value)
    assert checks.duration("1d 12h") == timedelta(hours=36)
    assert checks.duration("90m") == timedelta(minutes=90)


def test_before_a_deadline_the_results_are_provisional(season):
    course, subs, _, results, _ = season
    early = {(r.phase, r.student_id): r for r in phases.phase_results(course, now=at(0.4))}
    assert all(r.provisional for r in early.values())
    ann = early["interface", "ann"]
    assert ann.passed and ann.evidence == f"so far: v1 (#{subs['ann'].id}) qualified; report report.md"
    assert early["interface", "bob"].evidence == f"so far: no upload by {at(0.4).isoformat()}"
    assert early["search", "ann"].passed == results["search", "ann"].passed  # kept: not played again
    assert phases.current_phase(course.config, "ann", at(1.5)).name == "move generation"
    assert phases.current_phase(course.config, "dan", at(4.5)).name == "search"  # its extension
    assert phases.current_phase(course.config, "ann", at(4.5)) is None


KILLER = '''import os, signal
from arena.match.protocol import BotClient
with BotClient(os.environ["ARENA_ENDPOINT"]) as client:
    client.send({"type": "hello", "token": os.environ["ARENA_TOKEN"], "name": "killer", "protocol": 1})
    while True:
        message = client.receive(10.0)
        if message is None or message["type"] == "bye":
            break
        if message["type"] == "turn":
            os.kill(os.getppid(), signal.SIGKILL)  # the worker process playing the game
'''
"""A bot that kills the worker process playing its game at its first turn: every game aborted."""


def test_an_aborted_game_scores_nothing_in_a_phase(tmp_path):
    """A phase's score counts each game as GameRecord.points does: a bot whose every game is aborted
    (it kills its worker; unsandboxed, or it could not see it) has 0 points, not a draw's half."""
    directory = make_course(tmp_path / "course", roster=ROSTER[:1], time="0.5")
    (directory / "course.toml").write_text((directory / "course.toml").read_text() + textwrap.dedent(f"""
        [[phases]]
        name = "search"
        deadline = {at(3).isoformat()}
        requires = {{ score = {{ against = "random", at_least = 0.5, games = 2 }} }}
        """))
    course = Course(directory, sandbox="off")
    workers = Workers(course, concurrency=1)
    workers.start()
    try:
        sub = course.submit("ann", "killer.py", KILLER.encode(), now=at(0))
        wait_final(course, sub.id, timeout_s=120)
        phase_checks.run_pending(course)
        [result] = [r for r in phases.phase_results(course) if r.phase == "search"]
    finally:
        workers.stop(timeout_s=30)
        course.close()
    assert not result.passed, result.evidence
    assert "score 0.00 against random (0 of 2 points)" in result.evidence, result.evidence
