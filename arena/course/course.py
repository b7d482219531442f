"""`Course`: the facade the web app and the command line use over a course directory.

It loads course.toml, opens the store (and the course's clock: "now" for the season), syncs the
students from the roster, takes submissions (checked, stored and committed before `submit`
returns) and answers what students and staff see. It runs nothing itself: the background threads
(arena/course/background) build, qualify and play, through what the Course owns for them: its game
player (`player`, set while Workers run: how every course game is played, `play`), the listeners
woken by an upload or a ladder request or by a finished job (the phase checks), the final's thread
and the lock the phase checks take.
"""
from __future__ import annotations

import dataclasses
import io
import sqlite3
import threading
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from arena.course.config import course_toml as config
from arena.course.config.course_toml import CourseConfig, Student
from arena.course.db.states import SubmissionStatus
from arena.course.db.store import FINAL, NewSubmission, RateLimited, Store
from arena.course.season import archives, phases
from arena.course.season.archives import Refused
from arena.course.season.games import play_each
from arena.match.records import GameRecord

if TYPE_CHECKING:
    from arena.course.season.games import GamePlayer, OnGame
    from arena.match.spec import MatchSpec

__all__ = ["Course", "Refused", "StudentRow", "Submission", "TooSoon"]


class TooSoon(Refused):
    """An upload within the course's interval of the last: `wait_s` seconds are left."""

    def __init__(self, message: str, wait_s: float) -> None:
        super().__init__(message)
        self.wait_s = wait_s


@dataclass(frozen=True)
class Submission:
    """One upload and where it stands. `created`: ISO 8601 UTC; `status`: queued, building,
    testing, qualified or failed (with `reason` and `detail`); `active`: the student's bot;
    `finished`: its status is final."""

    id: int
    student_id: str
    version: int
    filename: str
    protocol: str
    kind: str
    sha256: str
    size: int
    created: str
    status: SubmissionStatus
    reason: str | None
    detail: str | None
    active: bool
    finished: bool


@dataclass(frozen=True)
class StudentRow:
    """A student as staff see them: the last submission (None before any), how many versions,
    the active submission's id, and whether the student is disabled."""

    student: Student
    last: Submission | None
    versions: int
    active_id: int | None
    disabled: bool
    active_version: int | None = None
    """The active submission's version number (None without one)."""

    @property
    def status(self) -> SubmissionStatus | None:
        return self.last.status if self.last is not None else None


class Course:
    """The course in `directory`. CourseError (one line) for a bad course.toml or roster.

    `sandbox`: "on" (the default; a course always sandboxes students' code), or "off" for a server
    started with --unsafe-no-sandbox."""

    def __init__(self, directory: Path, *, sandbox: str = "on") -> None:
        self.config: CourseConfig = config.load(directory)
        if sandbox != "on":
            self.config = dataclasses.replace(self.config,
                                              limits=dataclasses.replace(self.config.limits, sandbox=sandbox))
        self.directory = self.config.directory
        self.store = Store(self.directory)
        self.clock = self.store.clock
        """What "now" is for the season (db/clock.py): real time, or staff's rehearsal clock."""
        self.listeners: list[Callable[[], None]] = []
        """Called after a submission is queued (Workers.wake)."""
        self.ladder_listeners: list[Callable[[], None]] = []
        """Called after a student asked for a ladder game (LadderRunner.wake)."""
        self.phase_listeners: list[Callable[[], None]] = []
        """Called when phase checks may have come due: a submission's job ended, staff asked for a
        check again (PhaseChecks.wake)."""
        self.player: GamePlayer | None = None
        """Where this course's games are played while Workers run (their GamePlayer); None: in the
        caller's thread, one match after the other (a command, a test, a benchmark)."""
        self.final_thread: threading.Thread | None = None
        """The final playing in this process (arena.course.season.final.start_final), if any."""
        self.final_lock = threading.Lock()
        """start_final's check and start take turns on it."""
        self.phase_lock = threading.Lock()
        """Running the phase checks due takes it (arena.course.season.phase_checks.run_due): two
        threads of a process never play the same phase games at once."""
        self._locks: dict[str, threading.Lock] = {}
        """Student id -> the lock its uploads take turns on (the checks and the writes together)."""
        self._locks_lock = threading.Lock()
        self.store.sync_students(config.read_roster(self.config.roster))
        problems = self.config.roster_problems({s.id for s in self.students()})  # the rest: at load
        if problems:
            raise config.CourseError("\n".join(problems))

    def play(self, specs: list[MatchSpec], on_game: OnGame | None = None) -> list[GameRecord]:
        """Every game of `specs`, their records in order: the one place the course plays games,
        through the running Workers' game player, else here one match after the other. GamesLost
        when games did not come back (PlayerStopped: the server is stopping). `on_game(record)`:
        called in the caller's thread for each game as it comes back (a check's progress)."""
        player = self.player
        if player is not None:
            return player.play(specs, on_game)
        return play_each(specs, on_game)

    def close(self) -> None:
        """Close this thread's database connection."""
        self.store.close()

    # --- students ---
    def students(self) -> list[Student]:
        return [_student(r) for r in self.store.student_rows()]

    def student(self, student_id: str) -> Student | None:
        row = self.store.student_row(student_id)
        return _student(row) if row is not None else None

    def set_disabled(self, student_id: str, disabled: bool) -> None:
        """Disable a student (no more uploads; no active bot in `active_sources_zip`) or enable again."""
        self._need_student(student_id)
        self.store.set_disabled(student_id, disabled)

    # --- submitting ---
    def submit(self, student_id: str, filename: str, data: bytes, protocol: str = "v1",
               now: datetime | None = None, report: tuple[str, bytes] | None = None) -> Submission:
        """Take an upload: Refused (a message for the student) when the course is closed (past the
        student's own last deadline: arena.course.season.phases.deadline_for), the student is disabled or
        uploaded too recently, the file too big or not a bot, the report (file name, bytes; PDF or
        Markdown) bad or too big. Stored (files fsynced, rows committed) before it returns, the
        report with its version; the workers are woken."""
        now = now or self.clock.now()
        if now.tzinfo is None:
            raise ValueError(f"submit(now=...) needs a time with its zone, got {now.isoformat()}")
        row = self._need_student(student_id)
        if row["disabled"]:
            raise Refused("your submissions are disabled: ask the course staff")
        opens = self.config.opens
        if opens is not None and now < opens:
            raise Refused(f"submissions are not open yet: they open at {opens.isoformat()}")
        closed = phases.upload_refusal(self.config, student_id, now)
        if closed is not None:
            raise Refused(closed)
        limit = self.config.upload_max_bytes
        if len(data) > limit:
            raise Refused(f"too big: {len(data):,} bytes, the limit is {limit:,} bytes ({limit / 1e6:g} MB)")
        name = archives.clean_filename(filename)
        kind = archives.kind_of(name, data, protocol)
        report_name = phases.check_report(self.config, student_id, now, report) if report is not None else ""
        with self._lock(student_id):  # the limits are checked before anything is written
            self.check_upload(student_id, len(data) + (len(report[1]) if report is not None else 0), now)
            sha = self.store.put_file(data)
            also = None
            if report is not None:
                report_sha, report_size = self.store.put_file(report[1]), len(report[1])

                def also(db: sqlite3.Connection, submission_id: int) -> None:
                    phases.keep_report(db, submission_id, report_name, report_sha, report_size)
            new = NewSubmission(student_id, name, protocol, kind, sha, len(data))
            try:
                submission_id = self.store.add_submission(new, now, self.config.upload_interval_s, also)
            except RateLimited as exc:  # another process's upload came between
                raise self._too_soon(exc.wait_s) from None
        for listener in self.listeners:
            listener()
        return self.submission(submission_id)  # type: ignore[return-value]

    def check_upload(self, student_id: str, size: int, now: datetime | None = None) -> None:
        """Refuse, before anything is read or written, an upload of `size` bytes the student may
        not make now: TooSoon within the upload interval, Refused past the storage cap
        (`storage_mb`)."""
        now = now or self.clock.now()
        wait_s = self.store.upload_wait(student_id, now, self.config.upload_interval_s)
        if wait_s:
            raise self._too_soon(wait_s)
        cap, used = self.config.storage_bytes, self.store.stored_bytes(student_id)
        if used + size > cap:
            raise Refused(f"storage full: your uploads and reports take {used / 1e6:.2f} MB of the "
                          f"{cap / 1e6:g} MB the server keeps for each student (storage_mb), and this one "
                          f"({size / 1e6:.2f} MB) does not fit: ask the course staff")

    def _too_soon(self, wait_s: float) -> TooSoon:
        interval = _interval_text(self.config.upload_interval_s)
        return TooSoon(f"{interval}: try again in {wait_s:.0f} s", wait_s)

    def _lock(self, student_id: str) -> threading.Lock:
        with self._locks_lock:
            return self._locks.setdefault(student_id, threading.Lock())

    def requeue(self, submission_id: int) -> None:
        """Build and qualify a finished submission again (staff); nothing for one queued or
        running already; KeyError for an unknown id."""
        self._need_submission(submission_id)
        if self.store.requeue(submission_id):
            for listener in self.listeners:
                listener()

    # --- what students and staff see ---
    def submissions(self, student_id: str) -> list[Submission]:
        """A student's submissions, newest first."""
        rows = self.store.submission_rows(student_id)
        student = self.store.student_row(student_id)
        active = _active_id(rows, student["chosen_id"] if student is not None else None)
        return [_submission(r, active) for r in rows]

    def submission(self, submission_id: int) -> Submission | None:
        row = self.store.submission_row(submission_id)
        if row is None:
            return None
        for sub in self.submissions(row["student_id"]):
            if sub.id == submission_id:
                return sub
        return None

    def build_log(self, submission_id: int) -> str:
        """What the build printed ("" before it ran)."""
        return self.store.build_log(submission_id)

    def source(self, submission_id: int) -> tuple[str, bytes]:
        """(file name, bytes) as uploaded; KeyError for an unknown id."""
        row = self._need_submission(submission_id)
        return row["filename"], self.store.read_file(row["sha256"])

    def source_files(self, submission_id: int) -> list[tuple[str, str]]:
        """(path, text) of the upload to show: the file, or each member of an archive."""
        row = self._need_submission(submission_id)
        return archives.shown_files(row["filename"], self.store.read_file(row["sha256"]), row["kind"])

    def report(self, submission_id: int) -> tuple[str, bytes] | None:
        """(file name, bytes) of the report uploaded with the submission, None without one."""
        return phases.report_of(self.store, submission_id)

    def games(self, submission_id: int) -> list[GameRecord]:
        """The submission's qualification games (none before it was tested)."""
        return [GameRecord.from_json(text) for text in self.store.game_texts(submission_id)]

    def set_active(self, student_id: str, submission_id: int) -> None:
        """Make one of the student's own qualified submissions its active bot; Refused otherwise."""
        row = self.store.submission_row(submission_id)
        if row is None or row["student_id"] != student_id:
            raise Refused(f"no submission {submission_id} of yours")
        if row["status"] != SubmissionStatus.QUALIFIED:
            raise Refused(f"submission {submission_id} is {row['status']}: only a qualified one can be "
                          "active")
        self.store.set_chosen(student_id, submission_id)

    def rows(self) -> list[StudentRow]:
        """Every student of the roster as staff see them, in id order."""
        by_student: dict[str, list[sqlite3.Row]] = {}
        for r in self.store.submission_rows():
            by_student.setdefault(r["student_id"], []).append(r)
        return [_student_row(s, by_student.get(s["id"], [])) for s in self.store.student_rows()]

    def row(self, student_id: str) -> StudentRow | None:
        """One student as staff see them (None: not in the roster)."""
        student = self.store.student_row(student_id)
        return None if student is None else _student_row(student, self.store.submission_rows(student_id))

    def active_sources_zip(self) -> bytes:
        """A zip of every enabled student's active source: a folder per student id holding the
        uploaded file, or the archive's files unpacked."""
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as out:
            for row in self.rows():
                if row.active_id is None or row.disabled:
                    continue
                sub = self._need_submission(row.active_id)
                data = self.store.read_file(sub["sha256"])
                if sub["kind"] == "archive":
                    for member, content in archives.read_members(sub["filename"], data):
                        info = zipfile.ZipInfo(f"{row.student.id}/{member.path}")
                        info.external_attr = (0o755 if member.executable else 0o644) << 16
                        out.writestr(info, content)
                else:
                    out.writestr(f"{row.student.id}/{sub['filename']}", data)
        return buffer.getvalue()

    # --- helpers ---
    def _need_student(self, student_id: str) -> sqlite3.Row:
        row = self.store.student_row(student_id)
        if row is None:
            raise Refused(f"no student {student_id!r} in the roster")
        return row

    def _need_submission(self, submission_id: int) -> sqlite3.Row:
        row = self.store.submission_row(submission_id)
        if row is None:
            raise KeyError(f"no submission {submission_id}")
        return row


def _interval_text(interval_s: float) -> str:
    if interval_s == 60:
        return "one upload a minute"
    return f"one upload every {interval_s:g} s"


def _student(row: sqlite3.Row) -> Student:
    return Student(row["id"], row["name"], row["email"], row["grp"])


def _student_row(student: sqlite3.Row, rows: list[sqlite3.Row]) -> StudentRow:
    """The staff's row of `student` from its submissions (newest first)."""
    active = _active_id(rows, student["chosen_id"])
    last = _submission(rows[0], active) if rows else None
    version = next((r["version"] for r in rows if r["id"] == active), None)
    return StudentRow(_student(student), last, len(rows), active, bool(student["disabled"]), version)


def _active_id(rows: list[sqlite3.Row], chosen: int | None) -> int | None:
    """The student's active submission: the chosen one while it is qualified, else the latest
    qualified (rows newest first)."""
    qualified = [r["id"] for r in rows if r["status"] == SubmissionStatus.QUALIFIED]
    if chosen is not None and chosen in qualified:
        return chosen
    return qualified[0] if qualified else None


def _submission(row: sqlite3.Row, active: int | None) -> Submission:
    return Submission(id=row["id"], student_id=row["student_id"], version=row["version"],
                      filename=row["filename"], protocol=row["protocol"], kind=row["kind"],
                      sha256=row["sha256"], size=row["size"], created=row["created"],
                      status=SubmissionStatus(row["status"]),
                      reason=row["reason"], detail=row["detail"], active=row["id"] == active,
                      finished=row["status"] in FINAL)

