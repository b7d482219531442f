"""Issue 33: the phase checks run in the background, never inside a page or a reporting command.
A real `arena course serve` (tests/course_helpers.py Server) with two phases, a move-generation
check and score games against `random`, and real bots that start slowly (so that a check lasts
seconds): the staff's phases page answers at once while checks are due, showing them queued or
running and playing nothing; the server's thread fills them in as versions qualify; `arena course
grades` and `phases` say what is still pending; `phases --wait` waits for the server's checks, and
without a server runs them itself; staff check a student again from the page (audit-logged with
the old verdict) and from the terminal; a check cut short by a stopped server runs again at the
next start. Domineering 4x4, 1 s a move."""
from __future__ import annotations

import csv
import html
import re
import sqlite3
import textwrap
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import require
from course_helpers import (
    GOOD_BOT,
    Server,
    arena,
    csrf_of,
    invite_links,
    make_course,
    signed_in,
    staff_signed_in,
    submitted_id,
    upload,
    wait_final,
    wait_phase_checks,
)

try:
    import httpx
except ImportError:  # the test extra
    httpx = None

from arena.cell import sandbox

T0 = datetime.now(UTC).replace(microsecond=0)
SCORE_GAMES = 4
SCORE_KEY = f"score:random:{SCORE_GAMES}"


def starts_slowly(seconds: float) -> str:
    """GOOD_BOT, sleeping `seconds` before its hello: each game (a fresh process) and each
    move-generation check takes that long more, its moves stay fast (no clock is at risk)."""
    return f"import time\ntime.sleep({seconds})  # a slow start: a check lasts seconds\n" + GOOD_BOT


def season() -> str:
    return textwrap.dedent(f"""
        [[phases]]
        name = "move generation"
        deadline = {(T0 + timedelta(hours=1)).isoformat()}
        requires = {{ legal = {{ positions = 6, timeout_s = 5 }} }}

        [[phases]]
        name = "search"
        deadline = {(T0 + timedelta(hours=2)).isoformat()}
        requires = {{ score = {{ against = "random", at_least = 0.25, games = {SCORE_GAMES} }} }}
        """)


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    require(httpx is not None, "needs httpx (pip install -e '.[test]')")
    reason = sandbox.unavailable_reason()
    require(reason is None, f"bots cannot be sandboxed here: {reason}")
    directory = make_course(tmp_path_factory.mktemp("checks") / "course")
    (directory / "course.toml").write_text((directory / "course.toml").read_text() + season())
    return directory


@pytest.fixture(scope="module")
def served(course):
    """{"server": the running Server}: a test may stop it and start another."""
    box = {"server": Server(course)}
    yield box
    if box["server"] is not None and box["server"].process.poll() is None:
        assert box["server"].stop() == 0, box["server"].errors()


@pytest.fixture(scope="module")
def people(course, served):
    """(staff, {student id: client}) signed in on the first server."""
    url = served["server"].url
    staff = staff_signed_in(course, url)
    links = invite_links(course, url)
    students = {sid: signed_in(url, links[sid]) for sid in ("s001", "s002", "s003")}
    yield staff, students
    for client in (staff, *students.values()):
        client.close()


def db_rows(course: Path, sql: str, *args) -> list[tuple]:
    db = sqlite3.connect(course / "course.db")
    try:
        return db.execute(sql, args).fetchall()
    finally:
        db.close()


def checked_at(course: Path, submission_id: int, key: str = SCORE_KEY) -> str | None:
    """When the verdict of `key` on the submission was kept, None while it has none."""
    rows = db_rows(course, "SELECT checked FROM phase_checks WHERE submission_id = ? AND requirement = ?",
                   submission_id, key)
    return rows[0][0] if rows else None


def section(page: str, phase: str) -> str:
    """The staff's phases page's section of `phase`."""
    match = re.search(rf'<section class="phase"[^>]*data-phase="{re.escape(phase)}">(.*?)</section>', page,
                      re.S)
    assert match, f"no section for phase {phase!r}"
    return match.group(1)


def row(page: str, phase: str, sid: str) -> str:
    """The `<tr>` of student `sid` in the phase's table (its opening tag and cells)."""
    match = re.search(rf'<tr data-student="{sid}"[^>]*>.*?</tr>', section(page, phase), re.S)
    assert match, f"no row for {sid} in phase {phase!r}"
    return match.group(0)


def submission_of(course: Path, sid: str) -> int:
    return db_rows(course, "SELECT MAX(id) FROM submissions WHERE student_id = ?", sid)[0][0]


def test_the_page_plays_nothing_while_checks_are_due_and_the_server_fills_them_in(course, served,
                                                                                   people):
    staff, students = people
    bot = starts_slowly(1.5)
    ids = {sid: submitted_id(upload(students[sid], "slow.py", bot)) for sid in ("s001", "s002")}
    for sid, sub in ids.items():
        assert wait_final(students[sid], sub, 120)["status"] == "qualified"
    # both qualified: four checks due, run one at a time, the move generation's first (its deadline
    # is nearer): s002's score games come last, seconds from now
    page = staff.get("/staff/phases")
    games = db_rows(course, "SELECT game_id FROM phase_games WHERE submission_id = ?", ids["s002"])
    assert page.status_code == 200 and games == []
    print(f"/staff/phases answered in {page.elapsed.total_seconds() * 1000:.0f} ms with checks due")
    text = page.text
    s002 = row(text, "search", "s002")
    assert 'data-checking="yes"' in s002 and "checking" in s002, s002
    assert re.search(r"score games: (queued|\d of 4 played)", s002), s002
    assert re.search(r'id="checking"><b>\d checks? to run</b>', text), text
    student_page = students["s002"].get("/me/season.json").json()
    search = next(p for p in student_page["phases"] if p["name"] == "search")
    assert not search["passed"] and search["pending"] and search["pending"][0].startswith("score games: ")
    # the commands say it too, and play nothing
    code, out, err = arena("course", "grades", str(course))
    assert code == 0, err
    assert re.search(r"^provisional: \d phase checks? not run yet", out, re.M), out
    rows = {r["id"]: r for r in csv.DictReader(open(course / "grades.csv", newline=""))}
    assert "search" in rows["s002"]["phases pending"] and "search" not in rows["s002"]["phases passed"]
    code, out, err = arena("course", "phases", str(course))
    assert code == 0, err
    waiting = r"  WAIT  s002  so far: v1 \(#\d+\) qualified; score games: (queued|\d of 4 played)"
    assert re.search(waiting, out), out
    assert "not run yet (WAIT): the server runs them" in out
    # --wait with the server running: it watches the server's thread until every check is done
    code, out, err = arena("course", "phases", str(course), "--wait")
    assert code == 0, err
    assert "waiting for the server's phase checks:" in err and "WAIT" not in out, (out, err)
    page = staff.get("/staff/phases").text
    assert 'data-checking="yes"' not in page
    assert "Every score game and move-generation check due has run" in page
    s002 = row(page, "search", "s002")
    assert f"/phase-games/phase-random-{ids['s002']}-g{SCORE_GAMES - 1}" in s002, s002
    assert "score " in s002 and " against random (" in s002
    played = db_rows(course, "SELECT COUNT(*) FROM phase_games WHERE submission_id IN (?, ?)", *ids.values())
    assert played == [(2 * SCORE_GAMES,)]
    assert "agreed with the rules on 6 of 6 positions" in row(page, "move generation", "s001")


def test_staff_check_a_student_again_from_the_page(course, served, people):
    staff, students = people
    sub = submission_of(course, "s001")
    before = checked_at(course, sub)
    assert before is not None
    form = {"student": "s001", "phase": "search"}
    student = students["s001"]
    nothing = [staff.post("/staff/phases/recheck", data=form),  # no CSRF token
               student.post("/staff/phases/recheck", data={**form, "csrf": csrf_of(student.get("/me").text)})]
    assert [a.status_code for a in nothing] == [403, 404] and checked_at(course, sub) == before
    page = staff.get("/staff/phases").text
    old = html.unescape(re.search(r'class="text evidence" data-label="evidence">([^<]*)',
                                  row(page, "search", "s001")).group(1)).strip()
    assert 'action="/staff/phases/recheck"' in row(page, "search", "s001")
    answer = staff.post("/staff/phases/recheck", data={"csrf": csrf_of(page), "student": "s001",
                                                        "phase": "search"})
    assert answer.status_code == 303 and answer.headers["location"] == "/staff/phases?rechecked=s001"
    page = staff.get(answer.headers["location"]).text
    assert 'id="rechecked"' in page
    assert 'data-checking="yes"' in row(page, "search", "s001")  # queued again: its games take seconds
    assert checked_at(course, sub) is None
    audit = html.unescape(staff.get("/staff/audit").text)
    assert "checked a phase again" in audit
    assert f"phase 'search', v1 (#{sub}), score games; was: " in audit
    assert old.split("qualified; ", 1)[1].split(" (needs")[0] in audit  # the old verdict's evidence
    assert f"(checked {before})" in audit
    wait_phase_checks(course)
    after = checked_at(course, sub)
    assert after is not None and after > before
    refused = staff.post("/staff/phases/recheck", data={"csrf": csrf_of(page), "student": "nobody",
                                                         "phase": "search"})
    assert refused.status_code == 409 and "no student &#39;nobody&#39; in the roster" in refused.text


def test_a_check_cut_short_by_a_stopped_server_runs_again_at_the_next_start(course, served, people):
    staff, students = people
    sub = submitted_id(upload(students["s003"], "slower.py", starts_slowly(3)))
    assert wait_final(students["s003"], sub, 120)["status"] == "qualified"
    deadline = time.monotonic() + 120
    while not db_rows(course, "SELECT pid FROM phase_check_runs WHERE submission_id = ? AND requirement = ? "
                              "AND pid IS NOT NULL", sub, SCORE_KEY):
        assert time.monotonic() < deadline, "the score check never started"
        assert checked_at(course, sub) is None, "the score check ended before it was seen running"
        time.sleep(0.05)
    server = served["server"]
    assert server.stop() == 0, server.errors()
    served["server"] = None
    assert checked_at(course, sub) is None  # cut short: no verdict
    assert db_rows(course, "SELECT pid, attempts FROM phase_check_runs WHERE submission_id = ?", sub) == \
        [(None, 1)]
    code, out, err = arena("course", "phases", str(course))  # no server: it says so, and plays nothing
    assert code == 0 and "  WAIT  s003  " in out and "score games: queued" in out, (out, err)
    served["server"] = Server(course)
    wait_phase_checks(course)
    assert checked_at(course, sub) is not None
    assert db_rows(course, "SELECT * FROM phase_check_runs WHERE submission_id = ?", sub) == []
    with httpx.Client(base_url=served["server"].url, cookies=staff.cookies, timeout=30) as again:
        s003 = row(again.get("/staff/phases").text, "search", "s003")
    assert 'data-checking="yes"' not in s003 and f"phase-random-{sub}-g0" in s003


def test_phases_wait_runs_the_checks_itself_without_a_server(course, served):
    if served["server"] is not None:
        assert served["server"].stop() == 0, served["server"].errors()
        served["server"] = None
    sub = submission_of(course, "s002")
    before = checked_at(course, sub)
    code, out, err = arena("course", "phases", str(course), "--recheck", "s002", "--phase", "search",
                           "--wait")
    assert code == 0, err
    assert f"s002: checked again: phase 'search', v1 (#{sub}), score games; was: " in err
    assert "no server runs on this course: running the phase checks here" in err
    assert f"checking s002 v1 (#{sub}) score games for phase 'search'" in err
    assert "WAIT" not in out and re.search(r"  (PASS|FAIL)  s002  so far: v1 .* score ", out), out
    after = checked_at(course, sub)
    assert before is not None and after is not None and after > before
    from arena.course.db.accounts import TERMINAL, Accounts

    [entry] = [e for e in Accounts(course).audit_log() if e.actor == TERMINAL and e.target == "s002"]
    assert entry.action == "checked a phase again" and f"(checked {before})" in entry.detail
    # the serve lock was the command's while it ran, and is free again: a server starts
    assert (course / "serve.lock").read_text().startswith("pid ")
    for args, words in ((("--phase", "search"), "--phase NAME goes with --recheck ID"),
                        (("--recheck", "s002", "--phase", "essay"), "no phase named 'essay': the phases "),
                        (("--recheck", "s004"), "nothing to check again for s004 in any phase")):
        code, out, err = arena("course", "phases", str(course), *args)
        assert code == 2 and words in err and len(err.strip().splitlines()) == 1, (args, err)
