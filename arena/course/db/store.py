"""The course's store: one SQLite file (`DIR/course.db`, WAL mode) and content-addressed files.

Tables: `students` (synced from the roster; `disabled`, the chosen active submission),
`submissions` (a row an upload: its file's sha256, its status, reason and detail), `jobs` (the
queue: a row a submission to build and qualify, `queued` or `running`, with its attempts),
`build_logs`, `games` (qualification game records as JSON). Files: `DIR/files/<sha[:2]>/<sha>`,
written by db/files.py's `write_atomically` (a temporary name, fsynced, renamed, the folder
fsynced): a file is either whole or absent. The connections are db/database.py's (one a thread);
every write is one transaction committed (synchronous FULL) before the call returns, so what a
caller acknowledges survives kill -9.
"""
from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from arena.course.config.course_toml import Student
from arena.course.db.clock import CourseClock
from arena.course.db.database import DB_NAME, Database
from arena.course.db.files import write_atomically
from arena.course.db.states import FINISHED, UNDER_WAY, SubmissionStatus

FILES_DIR = "files"
STATUSES = tuple(SubmissionStatus)
FINAL = FINISHED
RUNNING = UNDER_WAY
MAX_ATTEMPTS = 3
"""A job interrupted (the server killed) this many times fails with reason "interrupted"."""



def iso(moment: datetime) -> str:
    """`moment` as ISO 8601 in UTC to the second: "2026-11-26T12:34:56Z"."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class RateLimited(Exception):
    """The student uploaded less than the course's interval ago: `wait_s` seconds are left."""

    def __init__(self, wait_s: float) -> None:
        super().__init__(f"try again in {wait_s:.0f} s")
        self.wait_s = wait_s


@dataclass(frozen=True)
class NewSubmission:
    """What `Store.add_submission` records."""

    student_id: str
    filename: str
    protocol: str
    kind: str
    sha256: str
    size: int


class Store:
    """The course's database and files under `directory`."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self.path = self.directory / DB_NAME
        self.files = self.directory / FILES_DIR
        self.directory.mkdir(parents=True, exist_ok=True)
        self.files.mkdir(mode=0o700, exist_ok=True)  # students' code: arena's user's only
        self.db = Database(self.path)
        """course.db's connections (one a thread), shared with the accounts (db/accounts.py)."""
        self.clock = CourseClock(self.directory)
        """The course's time (db/clock.py: real time, or staff's rehearsal clock): every time the
        store records, and every "now" of the season's logic (`Course.clock` is this one)."""

    # --- connections (db/database.py) ---
    def connection(self) -> sqlite3.Connection:
        """This thread's connection."""
        return self.db.connection()

    def write(self) -> AbstractContextManager[sqlite3.Connection]:
        """One write transaction, committed on leaving the block (Database.write)."""
        return self.db.write()

    def close(self) -> None:
        """Close this thread's connection."""
        self.db.close()

    def rows(self, sql: str, *args: Any) -> list[sqlite3.Row]:
        return self.connection().execute(sql, args).fetchall()

    # --- files ---
    def put_file(self, data: bytes) -> str:
        """Store `data` as a content-addressed file (fsynced, then renamed into place, its folder
        fsynced) and return its sha256."""
        sha = hashlib.sha256(data).hexdigest()
        path = self.file_path(sha)
        if path.is_file() and path.stat().st_size == len(data):
            return sha
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        write_atomically(path, data, 0o600)
        return sha

    def file_path(self, sha: str) -> Path:
        return self.files / sha[:2] / sha

    def read_file(self, sha: str) -> bytes:
        return self.file_path(sha).read_bytes()

    # --- students ---
    def sync_students(self, students: list[Student]) -> None:
        """Make the students table the roster: new ones added, names, emails and groups updated;
        those no longer in it kept (their submissions stay) but marked out of the roster."""
        with self.write() as db:
            db.execute("UPDATE students SET in_roster = 0")
            db.executemany(
                "INSERT INTO students (id, name, email, grp, in_roster) VALUES (?, ?, ?, ?, 1) "
                "ON CONFLICT (id) DO UPDATE SET name = excluded.name, email = excluded.email, "
                "grp = excluded.grp, in_roster = 1",
                [(s.id, s.name, s.email, s.group) for s in students])

    def student_rows(self) -> list[sqlite3.Row]:
        return self.rows("SELECT * FROM students WHERE in_roster = 1 ORDER BY id")

    def student_row(self, student_id: str) -> sqlite3.Row | None:
        found = self.rows("SELECT * FROM students WHERE id = ? AND in_roster = 1", student_id)
        return found[0] if found else None

    def set_disabled(self, student_id: str, disabled: bool) -> None:
        with self.write() as db:
            db.execute("UPDATE students SET disabled = ? WHERE id = ?", (int(disabled), student_id))

    def set_chosen(self, student_id: str, submission_id: int | None) -> None:
        with self.write() as db:
            db.execute("UPDATE students SET chosen_id = ? WHERE id = ?", (submission_id, student_id))

    # --- submissions ---
    def add_submission(self, new: NewSubmission, now: datetime, interval_s: float,
                       also: Callable[[sqlite3.Connection, int], None] | None = None) -> int:
        """Record a submission and its job in one transaction; RateLimited if the student's last
        upload is less than `interval_s` before `now`. Its id. `also(db, id)` writes what belongs
        with the submission (its report) in the same transaction."""
        with self.write() as db:
            last = db.execute("SELECT created, version FROM submissions WHERE student_id = ? "
                              "ORDER BY id DESC LIMIT 1", (new.student_id,)).fetchone()
            if last is not None and interval_s > 0:
                since = (now - datetime.fromisoformat(last["created"])).total_seconds()
                if since < interval_s:
                    raise RateLimited(max(1.0, interval_s - since))
            version = (last["version"] if last else 0) + 1
            cursor = db.execute(
                "INSERT INTO submissions (student_id, version, filename, protocol, kind, sha256, size, "
                "created, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'queued')",
                (new.student_id, version, new.filename, new.protocol, new.kind, new.sha256, new.size,
                 iso(now)))
            submission_id = int(cursor.lastrowid)  # type: ignore[arg-type]
            if also is not None:
                also(db, submission_id)
            db.execute("INSERT INTO jobs (submission_id, state, enqueued) VALUES (?, 'queued', ?)",
                       (submission_id, iso(now)))
        return submission_id

    def upload_wait(self, student_id: str, now: datetime, interval_s: float) -> float:
        """Seconds before the student may upload again (0: now), from their last upload's time."""
        last = self.rows("SELECT created FROM submissions WHERE student_id = ? ORDER BY id DESC LIMIT 1",
                         student_id)
        if not last or interval_s <= 0:
            return 0.0
        since = (now - datetime.fromisoformat(last[0]["created"])).total_seconds()
        return max(1.0, interval_s - since) if since < interval_s else 0.0

    def stored_bytes(self, student_id: str) -> int:
        """What the store keeps for the student: the sizes of all their uploads and reports."""
        uploads = self.rows("SELECT COALESCE(SUM(size), 0) FROM submissions WHERE student_id = ?", student_id)
        reports = self.rows("SELECT COALESCE(SUM(r.size), 0) FROM reports r JOIN submissions s "
                            "ON r.submission_id = s.id WHERE s.student_id = ?", student_id) \
            if self.rows("SELECT 1 FROM sqlite_master WHERE name = 'reports'") else [(0,)]
        handed = self.rows("SELECT COALESCE(SUM(size), 0) FROM phase_reports WHERE student_id = ?",
                           student_id) \
            if self.rows("SELECT 1 FROM sqlite_master WHERE name = 'phase_reports'") else [(0,)]
        return int(uploads[0][0]) + int(reports[0][0]) + int(handed[0][0])

    def submission_row(self, submission_id: int) -> sqlite3.Row | None:
        found = self.rows("SELECT * FROM submissions WHERE id = ?", submission_id)
        return found[0] if found else None

    def active_rows(self) -> list[sqlite3.Row]:
        """Each roster student's active submission (with `disabled`, the student's), in id order:
        the chosen one while it is qualified, else the latest qualified (Course.rows, in one query)."""
        return self.rows(
            "SELECT s.*, st.disabled FROM students st JOIN submissions s ON s.id = COALESCE("
            "(SELECT c.id FROM submissions c WHERE c.id = st.chosen_id AND c.student_id = st.id "
            "AND c.status = 'qualified'), (SELECT MAX(q.id) FROM submissions q WHERE q.student_id = st.id "
            "AND q.status = 'qualified')) WHERE st.in_roster = 1 ORDER BY st.id")

    def submission_rows(self, student_id: str | None = None) -> list[sqlite3.Row]:
        """A student's submissions (everyone's with None), newest first."""
        if student_id is None:
            return self.rows("SELECT * FROM submissions ORDER BY id DESC")
        return self.rows("SELECT * FROM submissions WHERE student_id = ? ORDER BY id DESC", student_id)

    # --- the queue ---
    def requeue_interrupted(self) -> list[int]:
        """At the workers' start: every running job back to queued (its submission's status too),
        except one interrupted MAX_ATTEMPTS times, which fails with reason "interrupted". The ids
        requeued."""
        now = iso(self.clock.now())
        with self.write() as db:
            given_up = [r[0] for r in db.execute(
                "SELECT submission_id FROM jobs WHERE state = 'running' AND attempts >= ?", (MAX_ATTEMPTS,))]
            for submission_id in given_up:
                db.execute("DELETE FROM jobs WHERE submission_id = ?", (submission_id,))
                db.execute("UPDATE submissions SET status = 'failed', reason = 'interrupted', detail = ?, "
                           "finished = ? WHERE id = ?",
                           (f"the server stopped {MAX_ATTEMPTS} times while it was building or testing this "
                            "submission; staff can requeue it", now, submission_id))
            ids = [r[0] for r in db.execute("SELECT submission_id FROM jobs WHERE state = 'running'")]
            db.execute("UPDATE jobs SET state = 'queued', started = NULL WHERE state = 'running'")
            db.execute("UPDATE submissions SET status = 'queued' WHERE id IN "
                       "(SELECT submission_id FROM jobs) AND status != 'queued'")
        return ids

    def claim(self) -> int | None:
        """Take the oldest queued job (it becomes running, its attempts counted); its submission's id."""
        with self.write() as db:
            row = db.execute("SELECT submission_id FROM jobs WHERE state = 'queued' "
                             "ORDER BY submission_id LIMIT 1").fetchone()
            if row is None:
                return None
            db.execute("UPDATE jobs SET state = 'running', attempts = attempts + 1, started = ? "
                       "WHERE submission_id = ?", (iso(self.clock.now()), row[0]))
            return int(row[0])

    def set_status(self, submission_id: int, status: str) -> None:
        """A step of a running job (building, testing)."""
        with self.write() as db:
            db.execute("UPDATE submissions SET status = ? WHERE id = ?", (status, submission_id))

    def set_command(self, submission_id: int, command: str) -> None:
        with self.write() as db:
            db.execute("UPDATE submissions SET command = ? WHERE id = ?", (command, submission_id))

    def finish(self, submission_id: int, status: str, reason: str | None = None, detail: str | None = None,
               games: list[str] | None = None) -> None:
        """The job's end, in one transaction: its final status (qualified or failed, with the
        reason and detail), its games' records (JSON) when given, the job removed."""
        if status not in FINAL:
            raise ValueError(f"not a final status: {status!r}")
        with self.write() as db:
            if games is not None:
                db.execute("DELETE FROM games WHERE submission_id = ?", (submission_id,))
                db.executemany("INSERT INTO games (submission_id, number, record) VALUES (?, ?, ?)",
                               [(submission_id, n, text) for n, text in enumerate(games)])
            db.execute("UPDATE submissions SET status = ?, reason = ?, detail = ?, finished = ? WHERE id = ?",
                       (status, reason, detail, iso(self.clock.now()), submission_id))
            db.execute("DELETE FROM jobs WHERE submission_id = ?", (submission_id,))

    def requeue(self, submission_id: int) -> bool:
        """Build and qualify a finished submission again (staff): back to queued, its old verdict,
        log and games replaced when it runs again. False (nothing done) for one not finished: it is
        queued or running already, and must not run twice at once."""
        now = iso(self.clock.now())
        with self.write() as db:
            done = db.execute("UPDATE submissions SET status = 'queued', reason = NULL, detail = NULL, "
                              "finished = NULL WHERE id = ? AND status IN ('qualified', 'failed')",
                              (submission_id,)).rowcount
            if done:
                db.execute("INSERT INTO jobs (submission_id, state, enqueued) VALUES (?, 'queued', ?)",
                           (submission_id, now))
        return bool(done)

    def pending(self) -> int:
        """Jobs queued or running."""
        return int(self.rows("SELECT COUNT(*) FROM jobs")[0][0])

    # --- logs and games ---
    def set_build_log(self, submission_id: int, text: str) -> None:
        with self.write() as db:
            db.execute("INSERT INTO build_logs (submission_id, text) VALUES (?, ?) "
                       "ON CONFLICT (submission_id) DO UPDATE SET text = excluded.text",
                       (submission_id, text))

    def build_log(self, submission_id: int) -> str:
        found = self.rows("SELECT text FROM build_logs WHERE submission_id = ?", submission_id)
        return found[0][0] if found else ""

    def game_texts(self, submission_id: int) -> list[str]:
        return [r[0] for r in self.rows("SELECT record FROM games WHERE submission_id = ? ORDER BY number",
                                        submission_id)]
