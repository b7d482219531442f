"""course.db's one connection manager (arena/course/db/database.py), shared by the store and the
accounts, and the one atomic file write (arena/course/db/files.py) every file of the course's goes
through (content-addressed uploads, the final's tournament file, grades.csv, invites.csv)."""
from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

import pytest

from arena.course.db.accounts import Accounts, write_invites
from arena.course.db.database import Database
from arena.course.db.files import write_atomically
from arena.course.db.store import Store


def settings_of(conn: sqlite3.Connection) -> tuple:
    return tuple(conn.execute(f"PRAGMA {name}").fetchone()[0]
                 for name in ("journal_mode", "synchronous", "foreign_keys", "busy_timeout"))


def test_the_store_and_the_accounts_open_course_db_alike(tmp_path):
    """Both were separate managers: the accounts' connections had no foreign keys."""
    store = Store(tmp_path)
    accounts = Accounts(tmp_path)
    expected = ("wal", 2, 1, 30000)  # synchronous FULL, foreign keys on, 30 s
    assert settings_of(store.connection()) == expected
    assert settings_of(accounts.database.connection()) == expected
    assert oct(os.stat(tmp_path / "course.db").st_mode & 0o777) == "0o600"


def test_a_connection_per_thread_made_again_after_close(tmp_path):
    database = Database(tmp_path / "course.db")
    mine = database.connection()
    assert database.connection() is mine
    theirs: list[sqlite3.Connection] = []
    thread = threading.Thread(target=lambda: theirs.append(database.connection()))
    thread.start()
    thread.join()
    assert theirs and theirs[0] is not mine
    database.close()
    assert database.connection() is not mine


def test_a_write_is_all_or_nothing(tmp_path):
    database = Database(tmp_path / "course.db")
    with database.write() as db:
        db.execute("INSERT INTO students (id, name, email, grp) VALUES ('s1', 'Ada', '', '')")
    with pytest.raises(sqlite3.IntegrityError), database.write() as db:
        db.execute("INSERT INTO students (id, name, email, grp) VALUES ('s2', 'Alan', '', '')")
        db.execute("INSERT INTO submissions (student_id, version, filename, protocol, kind, sha256, size, "
                   "created, status) VALUES ('nobody', 1, 'a.py', 'v1', 'python', 'x', 1, 'now', 'queued')")
    assert [r["id"] for r in database.rows("SELECT id FROM students")] == ["s1"]  # s2 rolled back
    assert database.one("SELECT name FROM students WHERE id = ?", "s1")["name"] == "Ada"


def test_the_server_shares_one_manager_between_the_store_and_the_accounts(tmp_path):
    store = Store(tmp_path)
    accounts = Accounts(tmp_path, database=store.db)
    accounts.add_staff("teacher")
    assert store.rows("SELECT id, role FROM accounts")[0]["role"] == "staff"
    assert accounts.database.connection() is store.connection()


def test_an_atomic_write_replaces_the_file_whole_with_its_mode(tmp_path):
    path = tmp_path / "grades.csv"
    path.write_text("old\n")
    old_umask = os.umask(0o022)
    try:
        assert write_atomically(path, "id,points\ns1,3\n", 0o600) == path
        write_atomically(tmp_path / "final.toml", b"name = 'final'\n", 0o644)
    finally:
        os.umask(old_umask)
    assert path.read_text() == "id,points\ns1,3\n" and oct(path.stat().st_mode & 0o777) == "0o600"
    assert oct((tmp_path / "final.toml").stat().st_mode & 0o777) == "0o644"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["final.toml", "grades.csv"]  # no temporary left


def test_an_atomic_write_never_follows_a_link_and_leaves_nothing_when_it_fails(tmp_path):
    target = tmp_path / "elsewhere"
    target.write_text("theirs\n")
    link = tmp_path / "invites.csv"
    link.symlink_to(target)
    write_atomically(link, "mine\n")  # the link itself is replaced, not what it points to
    assert target.read_text() == "theirs\n" and not link.is_symlink() and link.read_text() == "mine\n"
    with pytest.raises(FileNotFoundError):
        write_atomically(tmp_path / "no-such-folder" / "x.csv", "x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere", "invites.csv"]


def test_invites_are_written_whole_and_private(tmp_path: Path):
    accounts = Accounts(tmp_path)
    path = tmp_path / "invites.csv"
    assert write_invites(accounts, [("s1", "ada@example.org")], "http://127.0.0.1:8000", path) == 1
    lines = path.read_text().splitlines()
    assert lines[0] == "id,email,link" and lines[1].startswith("s1,ada@example.org,http://127.0.0.1:8000/invite/")
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_active_rows_agree_with_the_staff_table(tmp_path):
    """Store.active_rows (one query, for the ladder) names the same active version as
    Course.rows: the chosen one while qualified, else the latest qualified; none without one."""
    from datetime import UTC, datetime, timedelta

    from arena.course.course import Student, StudentRow, _student_row
    from arena.course.db.store import NewSubmission

    store = Store(tmp_path)
    store.sync_students([Student(f"s{n}", f"S {n}", f"s{n}@example.org", "") for n in range(5)])
    now = datetime(2026, 12, 1, tzinfo=UTC)
    plans = {"s0": ["qualified", "qualified", "failed"], "s1": ["qualified", "qualified"],
             "s2": ["failed"], "s3": [], "s4": ["qualified", "queued"]}
    ids: dict[str, list[int]] = {}
    for sid, statuses in plans.items():
        for n, status in enumerate(statuses):
            new = NewSubmission(sid, "bot.py", "v1", "file", "0" * 64, 1)
            ids.setdefault(sid, []).append(store.add_submission(new, now + timedelta(minutes=n), 0))
            if status != "queued":
                store.finish(ids[sid][-1], status)
    store.set_chosen("s1", ids["s1"][0])  # an older version chosen
    store.set_chosen("s0", ids["s0"][2])  # a failed one chosen: the latest qualified counts
    store.set_disabled("s4", True)
    table: list[StudentRow] = [_student_row(s, store.submission_rows(s["id"])) for s in store.student_rows()]
    expected = {r.student.id: r.active_id for r in table if r.active_id is not None}
    found = {r["student_id"]: r["id"] for r in store.active_rows()}
    assert found == expected == {"s0": ids["s0"][1], "s1": ids["s1"][0], "s4": ids["s4"][0]}
    assert [r["disabled"] for r in store.active_rows()] == [0, 0, 1]
