"""The season as staff run it (issue 33): grades.csv a plain CSV (total, roster columns, its
provenance in grades.json), `arena course disqualify`, grades that follow the PUBLISHED run of the
final, a rerun that asks for confirmation (--yes; the run number on the page), the final's start
and end in the audit log, and one server a course directory. A real final of three bots (Domineering
4x4) played by `arena course final DIR --start`, a real server for the pages."""
from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
import time
from pathlib import Path

from conftest import ENV, arena_cmd
from course_helpers import Server, arena, csrf_of, make_course, signed_in
from test_course_ladder import activate

from arena.course.course import Course
from arena.course.db.accounts import Accounts

ROSTER_HEAD = "id,name,email,group,lms_id\n"
ROSTER_ROWS = [("s001", "Ada Lovelace", "ada@example.org", "A", "moodle-11"),
               ("s002", "Alan Turing", "alan@example.org", "A", "moodle-12"),
               ("s003", "Grace Hopper", "grace@example.org", "B", "moodle-13")]
SECTIONS = '\n[final]\ngames = 2\ntime = 0.2\n\n[grading]\nbonus = [5, 3, 2]\ncolumns = ["email", "lms_id"]\n'


def _course(directory: Path) -> Path:
    make_course(directory, time="0.2")
    (directory / "course.toml").write_text((directory / "course.toml").read_text() + SECTIONS)
    (directory / "roster.csv").write_text(ROSTER_HEAD + "".join(",".join(r) + "\n" for r in ROSTER_ROWS))
    course = Course(directory, sandbox="off")
    for sid, _, _, _, _ in ROSTER_ROWS:
        activate(course, sid, [sys.executable, "-m", "bots", "random"])
    course.close()
    return directory


def _grades(directory: Path) -> tuple[str, list[dict[str, str]], dict]:
    code, out, err = arena("course", "grades", str(directory))
    assert code == 0, err
    text = (directory / "grades.csv").read_text()
    return text, list(csv.DictReader(io.StringIO(text))), json.loads((directory / "grades.json").read_text())


def _actions(directory: Path) -> list[tuple[str, str, str]]:
    return [(e.actor, e.action, e.target) for e in reversed(Accounts(directory).audit_log())]


def test_grades_csv_disqualify_and_a_rerun_that_waits_for_its_publication(tmp_path):
    directory = _course(tmp_path / "c")
    code, out, err = arena("course", "final", str(directory), "--start", "--unsafe-no-sandbox")
    assert code == 0 and "finished" in out, (out, err)
    text, rows, provenance = _grades(directory)
    assert text.splitlines()[0] == ("id,name,group,final rank,points,score %,bonus,time forfeits,penalty,"
                                    "phases passed,total,disqualified,phases pending,email,lms_id"), text
    assert provenance["provisional"] is True and provenance["run"] == 1
    assert {r["id"]: r["lms_id"] for r in rows} == {r[0]: r[4] for r in ROSTER_ROWS}
    assert all(float(r["total"]) == float(r["bonus"]) - float(r["penalty"]) for r in rows)
    assert arena("course", "final", str(directory), "--publish")[0] == 0
    code, out, err = arena("course", "disqualify", str(directory), "s002", "--reason", "copied s001's search")
    assert code == 0, err
    text, rows, provenance = _grades(directory)
    by_id = {r["id"]: r for r in rows}
    assert by_id["s002"]["total"] == "0" and by_id["s002"]["disqualified"] == "copied s001's search"
    assert provenance["provisional"] is False and provenance["run"] == 1 and provenance["published"]
    published = {r["id"]: (r["final rank"], r["total"]) for r in rows}

    code, out, err = arena("course", "final", str(directory), "--rerun", "--unsafe-no-sandbox")
    assert code != 0 and "--yes" in err and "grades follow the published run 1" in err, (out, err)
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    code, out, err = arena("course", "final", str(directory), "--rerun", "--yes", "--unsafe-no-sandbox")
    assert code == 0 and "run 2: finished" in out, (out, err)
    _, rows, provenance = _grades(directory)
    assert provenance["run"] == 1 and any("a newer run, 2 (finished), is not published" in n
                                          for n in provenance["notes"]), provenance
    assert {r["id"]: (r["final rank"], r["total"]) for r in rows} == published

    assert arena("course", "disqualify", str(directory), "s002", "--undo")[0] == 0
    _, rows, _ = _grades(directory)
    assert {r["id"]: r["disqualified"] for r in rows}["s002"] == ""
    code, _, err = arena("course", "disqualify", str(directory), "nobody", "--reason", "x")
    assert code == 2 and "no student 'nobody'" in err and "Traceback" not in err
    code, _, err = arena("course", "disqualify", str(directory), "s001")
    assert code == 2 and "--reason" in err
    actions = _actions(directory)
    for entry in [("(final)", "final run 1 started", ""), ("(final)", "final run 1 finished", ""),
                  ("(terminal)", "disqualified", "s002"), ("(final)", "final run 2 started", ""),
                  ("(final)", "final run 2 finished", ""), ("(terminal)", "reinstated", "s002")]:
        assert entry in actions, (entry, actions)
    assert actions.index(("(terminal)", "disqualified", "s002")) < \
        actions.index(("(final)", "final run 2 started", ""))


def test_one_server_a_directory_and_the_pages_guard_the_rerun(tmp_path):
    directory = _course(tmp_path / "c")
    assert arena("course", "final", str(directory), "--start", "--unsafe-no-sandbox")[0] == 0
    assert arena("course", "final", str(directory), "--publish")[0] == 0
    assert arena("course", "disqualify", str(directory), "s003", "--reason", "pasted bots/search.py")[0] == 0
    server = Server(directory)
    try:
        second = subprocess.run(arena_cmd("course", "serve", str(directory), "--port", "0"), env=ENV,
                                capture_output=True, text=True, timeout=120)
        assert second.returncode == 2, (second.stdout, second.stderr)
        assert f"pid {server.process.pid} at {server.url}/" in second.stderr, second.stderr
        assert "Traceback" not in second.stderr and not second.stdout
        code, added, err = arena("course", "staff", "add", str(directory), "teacher", "--url", server.url)
        assert code == 0, err
        staff = signed_in(server.url, added.strip().splitlines()[-1])
        grades = staff.get("/staff/grades").text
        assert 'id="grades-state">published<' in grades and 'id="grades-published"' in grades
        assert "pasted bots/search.py" in grades and "pasted bots/search.py" in staff.get("/staff").text
        page = staff.get("/staff/final").text
        assert 'name="confirm_run"' in page and "grades follow the published run 1" in page
        answer = staff.post("/staff/final/rerun", data={"csrf": csrf_of(page)})
        assert answer.status_code == 409 and "Type the run number 1" in answer.text
        answer = staff.post("/staff/final/rerun", data={"csrf": csrf_of(page), "confirm_run": "2"})
        assert answer.status_code == 409
        assert "Run 1 " in staff.get("/staff/final").text  # nothing started
        answer = staff.post("/staff/final/rerun", data={"csrf": csrf_of(page), "confirm_run": "1"})
        assert answer.status_code == 303, answer.text
        deadline = time.monotonic() + 120
        while "Run 2 " not in staff.get("/staff/final").text:
            assert time.monotonic() < deadline, "the rerun did not start"
            time.sleep(0.5)
        assert 'id="grades-state">published<' in staff.get("/staff/grades").text  # still run 1's
        staff.close()
    finally:
        server.stop()
    assert ("teacher", "reran the final", "") in _actions(directory)
    again = Server(directory)  # the lock went with the first server
    again.stop()
