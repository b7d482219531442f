"""A course made before course.db had a schema version (tests/data/course_v0: made once by the
code of 73933c5, kept as `.dump` SQL and its files) opens with this code: migrated in place to
the current `PRAGMA user_version`, the same students, submissions and statuses, ladder, accounts,
pseudonyms and the final's run; a second open changes nothing; a file from a newer arena is refused
in one line."""
from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from course_helpers import arena

from arena.course.course import Course
from arena.course.db import schema
from arena.course.db.accounts import Accounts
from arena.course.season import final, privacy
from arena.course.season.ladder import Ladder

V0 = Path(__file__).resolve().parent / "data" / "course_v0"


def old_course(directory: Path) -> Path:
    """The version-0 course rebuilt in `directory` from its dump."""
    directory.mkdir()
    for name in ("course.toml", "roster.csv"):
        shutil.copy(V0 / name, directory / name)
    shutil.copytree(V0 / "files", directory / "files")
    _load(V0 / "course.sql", directory / "course.db")
    (directory / "final" / "final-1").mkdir(parents=True)
    shutil.copy(V0 / "final-1.toml", directory / "final" / "final-1.toml")
    _load(V0 / "final-1.sql", directory / "final" / "final-1" / "results.sqlite")
    return directory


def _load(dump: Path, db: Path) -> None:
    with sqlite3.connect(db) as conn:
        conn.executescript(dump.read_text())
    conn.close()


def _dump(db: Path) -> tuple[int, list[str]]:
    with sqlite3.connect(db) as conn:
        found = schema.version(conn), list(conn.iterdump())
    conn.close()
    return found


def test_a_version_0_course_opens_migrated_with_everything_in_it(tmp_path):
    directory = old_course(tmp_path / "course")
    version, before = _dump(directory / "course.db")
    assert version == 0
    course = Course(directory, sandbox="off")
    version, after = _dump(directory / "course.db")
    assert version == schema.VERSION >= 1
    old_rows = [line for line in before if line.startswith("INSERT")]
    assert old_rows and set(old_rows) <= set(after)  # every row kept
    assert [s.id for s in course.students()] == ["s1", "s2", "s3"]
    assert course.student("s1").name == "Ada Lovelace"
    subs = {s.id: s for sid in ("s1", "s2", "s3") for s in course.submissions(sid)}
    assert {i: (s.student_id, s.version, s.status) for i, s in subs.items()} == {
        1: ("s1", 1, "qualified"), 2: ("s2", 1, "qualified"), 3: ("s3", 1, "failed"), 4: ("s3", 2, "queued")}
    assert subs[1].active and subs[2].active and not subs[3].active
    assert (subs[3].reason, subs[3].detail) == ("build", "SyntaxError: invalid syntax")
    assert course.source(1) == ("bot.py", b"print('s1 v1')\n")
    assert course.store.pending() == 1  # the queued upload is still owed its build
    ladder = Ladder(course)
    table = {row.bot: row for row in ladder.table()}
    assert {"s1-v1", "s2-v1", "random"} <= set(table) and table["s1-v1"].games == 2
    assert [g.state for g in ladder.games()] == ["done", "done"]
    status = final.final_status(course)
    assert (status.state, status.run, status.played, status.planned) == ("finished", 1, 6, 6)
    assert privacy.pseudonym(course, "s1") == "eager-gecko"
    accounts = Accounts(directory)
    assert accounts.get("s2") is not None and accounts.get("prof").is_staff
    assert [(e.actor, e.action) for e in accounts.audit_log()][-1:] in ([("(terminal)", "staff added")],
                                                                        [("prof", "disable")])
    course.close()
    # a second open is a no-op: the same version, the same rows, nothing migrated again
    conn = sqlite3.connect(directory / "course.db", isolation_level=None)
    assert schema.migrate(conn) == 0
    conn.close()
    Course(directory, sandbox="off").close()
    Accounts(directory)
    assert _dump(directory / "course.db") == (schema.VERSION, after)


def test_the_commands_read_the_upgraded_course(tmp_path):
    directory = old_course(tmp_path / "course")
    code, out, err = arena("course", "status", str(directory))
    assert code == 0, err
    assert "Ada Lovelace" in out and "Grace Hopper" in out
    assert "3 students, 4 submissions, 1 to build or test" in out


def test_a_course_db_from_a_newer_arena_is_refused_in_one_line(tmp_path):
    directory = old_course(tmp_path / "course")
    conn = sqlite3.connect(directory / "course.db", isolation_level=None)
    conn.execute(f"PRAGMA user_version = {schema.VERSION + 1}")
    conn.close()
    with pytest.raises(schema.SchemaError, match="newer than this arena"):
        Course(directory, sandbox="off")
    code, _, err = arena("course", "status", str(directory))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "upgrade arena" in err, err
