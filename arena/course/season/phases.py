"""The season's phases: deadlines (`[[phases]]` and `[extensions]` of course.toml, read at load
into `CourseConfig.season`: arena/course/config/sections.py), reports, the upload freeze, and who
passed each phase with its evidence.

A phase has a name, a deadline and what must hold by then (`requires`): a qualified bot, a score
against a reference bot over N games, a move generator that agrees with the rules on N positions
(the `legal` protocol extension, arena/match/legal_check.py), and optionally a report (PDF or
Markdown) uploaded with the code. Each phase is judged on the student's latest qualified version
uploaded before the phase's deadline plus the student's extension. After the last deadline (plus
the student's extension) uploads are frozen.

Tables in course.db (made here): `reports` (a submission's report: name, sha256 of the content-
addressed file, size). The score games and move-generation checks are arena/course/season/
phase_checks.py's, run in the background once a version (`phase_checks`, `phase_check_runs`,
`phase_games`): judging here plays nothing, and a check not run yet is pending. The keys are
documented in docs/course.md, section "Phases".
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.course.config import checks, sections
from arena.course.config.sections import Phase
from arena.course.season import phase_checks
from arena.course.season.archives import Refused, clean_filename
from arena.match.records import GameRecord

if TYPE_CHECKING:
    import sqlite3

    from arena.course.config.course_toml import CourseConfig
    from arena.course.course import Course
    from arena.course.db.store import Store

REPORT_SUFFIXES = {".pdf": "PDF", ".md": "Markdown", ".markdown": "Markdown"}


@dataclass(frozen=True)
class PhaseResult:
    """Whether `student_id` passed `phase`, with the evidence: one line, the games played for it
    (qualification and score games), the positions where its move generation disagreed (wire
    form, moves left out, moves not legal) and the report's file name (None: no report).
    `submission_id` is the version judged (None: none qualified in time); `provisional` while the
    phase's deadline (plus extension) has not passed; `pending` while its checks have not run."""

    phase: str
    student_id: str
    passed: bool
    evidence: str
    game_ids: list[str] = field(default_factory=list)
    disagreements: list = field(default_factory=list)
    report: str | None = None
    submission_id: int | None = None
    provisional: bool = False
    report_url: str | None = None
    pending: tuple[str, ...] = ()
    """The checks of the version judged that have not run yet, each with where it stands
    ("score games: 4 of 10 played", "move generation check: queued"): until they have, the
    phase is not passed, and not failed either."""


# --- deadlines ---

def extension_for(config: CourseConfig, student_id: str) -> timedelta:
    """The student's extension (`[extensions]`), nothing without one."""
    return config.season.extension_for(student_id)


def last_deadline(config: CourseConfig) -> datetime | None:
    """The last of the phases' deadlines and the course's own `deadline`; None without any."""
    moments = [m for m in (config.season.last_deadline(), config.deadline) if m is not None]
    return max(moments) if moments else None


def deadline_for(config: CourseConfig, student_id: str) -> datetime | None:
    """The student's own last deadline: the last deadline (`last_deadline`) plus the student's
    extension; None when the course has no deadline at all."""
    last = last_deadline(config)
    return None if last is None else last + extension_for(config, student_id)


def upload_refusal(config: CourseConfig, student_id: str, now: datetime) -> str | None:
    """Why an upload of `student_id` at `now` is refused because its deadline passed, else None."""
    own = deadline_for(config, student_id)
    if own is None or now < own:
        return None
    last = last_deadline(config)
    frozen = bool(config.season.phases)
    text = (f"uploads are frozen: the last deadline was {last.isoformat()}" if frozen
            else f"submissions are closed: the deadline was {last.isoformat()}")  # type: ignore[union-attr]
    extension = extension_for(config, student_id)
    if extension:
        text += f" (yours, with your extension of {checks.duration_text(extension)}, was {own.isoformat()})"
    return text


def current_phase(config: CourseConfig, student_id: str, now: datetime) -> Phase | None:
    """The first phase whose deadline (plus the student's extension) is still ahead at `now`."""
    s = config.season
    extension = s.extension_for(student_id)
    ahead = [p for p in s.phases if now < p.deadline + extension]
    return min(ahead, key=lambda p: p.deadline) if ahead else None


# --- reports ---

def size_refusal(what: str, size: int, limit: int) -> str:
    """"too big" in exact units: "the report is too big: 6,000,000 bytes, the limit is 5,000,000
    bytes (5 MB)" (a rounded "5.0 MB, the limit is 5 MB" read as a refusal of a file that fits)."""
    return f"{what} is too big: {size:,} bytes, the limit is {limit:,} bytes ({limit / 1e6:g} MB)"


def check_report(config: CourseConfig, student_id: str, now: datetime, report: tuple[str, bytes],
                 phase: Phase | None = None) -> str:
    """The report's clean file name; Refused (a message for the student) for one that is no PDF
    or Markdown file, or too big for `phase` (by default the current phase: `report_max_mb`)."""
    filename, data = report
    name = clean_filename(filename)
    suffix = Path(name).suffix.lower()
    if suffix not in REPORT_SUFFIXES:
        raise Refused(f"the report {name!r} must be a PDF or Markdown file (.pdf, .md)")
    phase = phase or current_phase(config, student_id, now)
    limit = phase.report_max_bytes if phase is not None else int(sections.REPORT_MAX_MB * 1_000_000)
    if len(data) > limit:
        raise Refused(size_refusal("the report", len(data), limit))
    if not data:
        raise Refused(f"the report {name!r} is empty")
    if suffix == ".pdf" and not data.startswith(b"%PDF-"):
        raise Refused(f"the report {name!r} is not a PDF file (it does not start with %PDF-)")
    if suffix != ".pdf":
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            raise Refused(f"the report {name!r} is not Markdown: it is not UTF-8 text") from None
    return name


def keep_report(db: sqlite3.Connection, submission_id: int, filename: str, sha256: str, size: int) -> None:
    """Record the report of a submission (in the submission's own transaction)."""
    db.execute("INSERT INTO reports (submission_id, filename, sha256, size) VALUES (?, ?, ?, ?)",
               (submission_id, filename, sha256, size))


def report_of(store: Store, submission_id: int) -> tuple[str, bytes] | None:
    """(file name, bytes) of the report uploaded with a submission, None without one."""
    row = store.rows("SELECT filename, sha256 FROM reports WHERE submission_id = ?", submission_id)
    return (row[0]["filename"], store.read_file(row[0]["sha256"])) if row else None


def report_name(store: Store, submission_id: int) -> str | None:
    row = store.rows("SELECT filename FROM reports WHERE submission_id = ?", submission_id)
    return row[0]["filename"] if row else None


# --- who passed ---

def phase_results(course: Course, now: datetime | None = None, *,
                  evaluate: bool = False) -> list[PhaseResult]:
    """Each phase's result for each student of the roster (phases in course.toml's order, students
    in id order), judged on the student's latest qualified version uploaded before the phase's
    deadline plus the student's extension (before `now` while that has not passed: provisional).
    Plays nothing: a score or move-generation check without a verdict yet (the background runs it:
    arena/course/background/phase_checks.py) is pending, its progress in the evidence.
    (`evaluate`: gone, only False is taken.)"""

    if evaluate:
        raise ValueError("phase_results plays nothing: the phase checks run in the background "
                         "(arena.course.background.phase_checks.run_pending)")
    now = now or course.clock.now()
    s = course.config.season
    running = phase_checks.progress(course.store)
    return [_judge(course, phase, student.id, phase.deadline + s.extension_for(student.id), now, running)
            for phase in s.phases for student in course.students()]


def student_results(course: Course, student_id: str, now: datetime) -> list[PhaseResult]:
    """One student's result in each phase (its season page); plays nothing, as phase_results."""
    season = course.config.season
    running = phase_checks.progress(course.store)
    return [_judge(course, phase, student_id, phase.deadline + season.extension_for(student_id), now, running)
            for phase in season.phases]


def _judge(course: Course, phase: Phase, student_id: str, own: datetime, now: datetime,
           running: dict[tuple[int, str], phase_checks.Progress]) -> PhaseResult:
    store = course.store
    provisional = now < own
    cutoff = min(own, now)
    rows = store.rows("SELECT * FROM submissions WHERE student_id = ? ORDER BY id DESC", student_id)
    taken = [r for r in rows if datetime.fromisoformat(r["created"]) < cutoff]
    sub = phase_checks.judged_row(taken, cutoff)
    so_far = "so far: " if provisional else ""
    if sub is None:
        if not taken:
            why = "no upload"
        else:
            last = taken[0]
            why = f"no qualified version (v{last['version']} is {last['status']}" + \
                  (f": {last['reason']})" if last["reason"] else ")")
        when = f"by {now.isoformat(timespec='seconds')}" if provisional else f"before {own.isoformat()}"
        return PhaseResult(phase.name, student_id, False, f"{so_far}{why} {when}", provisional=provisional)
    handed = judged_report(course, phase, student_id, cutoff) if phase.report else None
    report = handed.filename if handed is not None else None
    parts = [f"v{sub['version']} (#{sub['id']}) qualified"]
    game_ids = [GameRecord.from_json(text).game_id for text in store.game_texts(sub["id"])]
    disagreements: list = []
    pending: list[str] = []
    passed = True
    if phase.report:
        if report is None:
            passed = False
            parts.append("no report handed in")
        else:
            parts.append(f"report {report}")
    for kind, key in phase_checks.requirements(course, phase):
        found = phase_checks.cached(store, sub["id"], key)
        if found is None:
            passed = False
            state = running.get((sub["id"], key), phase_checks.Progress()).text(kind)
            pending.append(state)
            parts.append(state)
            continue
        ok, evidence, ids, disagreed, value = found
        if kind == phase_checks.SCORE:
            ok = value is not None and value >= phase.score.at_least - 1e-9  # type: ignore[union-attr]
            evidence += f" (needs {phase.score.at_least:g})"  # type: ignore[union-attr]
        passed = passed and ok
        parts.append(evidence)
        game_ids += ids
        disagreements += disagreed
    return PhaseResult(phase.name, student_id, passed, so_far + "; ".join(parts), game_ids, disagreements,
                       report, sub["id"], provisional, handed.url if handed is not None else None,
                       tuple(pending))


@dataclass(frozen=True)
class Report:
    """A report a phase may judge: its file name, size, when it was uploaded (ISO 8601 UTC) and
    where it is read (`url`: /reports/ID for one handed in on its own, /submissions/ID/report for
    one uploaded with the code)."""

    filename: str
    size: int
    created: str
    url: str
    report_id: int | None = None
    submission_id: int | None = None


def judged_report(course: Course, phase: Phase, student_id: str, cutoff: datetime) -> Report | None:
    """The report the phase judges for the student: the latest handed in for it before `cutoff`;
    without one, the latest uploaded with the code before `cutoff` while this phase was current."""
    store = course.store
    for r in store.rows("SELECT * FROM phase_reports WHERE student_id = ? AND phase = ? ORDER BY id DESC",
                        student_id, phase.name):
        if datetime.fromisoformat(r["created"]) < cutoff:
            return Report(r["filename"], r["size"], r["created"], f"/reports/{r['id']}", report_id=r["id"])
    for r in _with_uploads(store, student_id):
        created = datetime.fromisoformat(r["created"])
        if created < cutoff:
            current = current_phase(course.config, student_id, created)
            if current is not None and current.name == phase.name:
                return Report(r["filename"], r["size"], r["created"], f"/submissions/{r['id']}/report",
                              submission_id=r["id"])
    return None


def _with_uploads(store: Any, student_id: str) -> list:
    """The student's reports uploaded with the code, newest first."""
    return store.rows("SELECT s.id, s.created, r.filename, r.size FROM reports r JOIN submissions s "
                      "ON r.submission_id = s.id WHERE s.student_id = ? ORDER BY s.id DESC", student_id)




def phase_game(course: Course, game_id: str) -> GameRecord | None:
    """The record of a game played for a phase (a score game, or a qualification game), None for
    an unknown id."""
    rows = course.store.rows("SELECT record FROM phase_games WHERE game_id = ?", game_id)
    if rows:
        return GameRecord.from_json(rows[0]["record"])
    match = re.fullmatch(r"qualify-(\d+)-g(\d+)", game_id)
    if match:
        texts = course.store.game_texts(int(match.group(1)))
        number = int(match.group(2))
        if number < len(texts):
            return GameRecord.from_json(texts[number])
    return None
