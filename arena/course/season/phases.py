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
addressed file, size) and `phase_checks` (a requirement's verdict on one submission, so score games
and move-generation checks run once a version), `phase_games` (the records of those games). The
keys are documented in docs/course.md, section "Phases".
"""
from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.course.config import checks, sections
from arena.course.config.sections import Legal, Phase, Score
from arena.course.db.states import SubmissionStatus
from arena.course.season.archives import Refused, clean_filename
from arena.match.records import GameRecord
from arena.match.spec import BotSpec, MatchSpec, safe_name

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
    phase's deadline (plus extension) has not passed."""

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

def phase_results(course: Course, now: datetime | None = None, *, evaluate: bool = True) -> list[PhaseResult]:
    """Each phase's result for each student of the roster (phases in course.toml's order, students
    in id order), judged on the student's latest qualified version uploaded before the phase's
    deadline plus the student's extension (before `now` while that has not passed: provisional).
    Score games and move-generation checks run once a version (kept in course.db); with
    `evaluate=False` none runs, and a requirement not checked yet fails as "not checked yet"."""
    from arena.course.db.store import utc_now

    now = now or utc_now()
    s = course.config.season
    results = []
    with course.phase_lock:  # two callers never play the same games at once
        for phase in s.phases:
            for student in course.students():
                own = phase.deadline + s.extension_for(student.id)
                results.append(_judge(course, phase, student.id, own, now, evaluate))
    return results


def student_results(course: Course, student_id: str, now: datetime) -> list[PhaseResult]:
    """One student's result in each phase (its season page): the requirement checks of its own
    version run now if not run yet (kept: once a version), no other student's."""
    season = course.config.season
    with course.phase_lock:
        return [_judge(course, phase, student_id, phase.deadline + season.extension_for(student_id), now,
                       True) for phase in season.phases]


def _judge(course: Course, phase: Phase, student_id: str, own: datetime, now: datetime,
           evaluate: bool) -> PhaseResult:
    store = course.store
    provisional = now < own
    cutoff = min(own, now)
    rows = store.rows("SELECT * FROM submissions WHERE student_id = ? ORDER BY id DESC", student_id)
    taken = [r for r in rows if datetime.fromisoformat(r["created"]) < cutoff]
    qualified = [r for r in taken if r["status"] == SubmissionStatus.QUALIFIED]
    so_far = "so far: " if provisional else ""
    if not qualified:
        if not taken:
            why = "no upload"
        else:
            last = taken[0]
            why = f"no qualified version (v{last['version']} is {last['status']}" + \
                  (f": {last['reason']})" if last["reason"] else ")")
        when = f"by {now.isoformat(timespec='seconds')}" if provisional else f"before {own.isoformat()}"
        return PhaseResult(phase.name, student_id, False, f"{so_far}{why} {when}", provisional=provisional)
    sub = qualified[0]
    handed = judged_report(course, phase, student_id, cutoff) if phase.report else None
    report = handed.filename if handed is not None else None
    parts = [f"v{sub['version']} (#{sub['id']}) qualified"]
    game_ids = [GameRecord.from_json(text).game_id for text in store.game_texts(sub["id"])]
    disagreements: list = []
    passed = True
    if phase.report:
        if report is None:
            passed = False
            parts.append("no report handed in")
        else:
            parts.append(f"report {report}")
    checks = []
    if phase.legal is not None:
        checks.append(("legal", _legal_key(course, phase.legal),
                       lambda: _check_legal(course, sub, phase.legal)))
    if phase.score is not None:
        checks.append(("score", _score_key(phase.score), lambda: _check_score(course, sub, phase.score)))
    for kind, key, run in checks:
        found = _cached(store, sub["id"], key)
        if found is None and evaluate:
            found = run()
            _keep(store, sub["id"], key, found)
        if found is None:
            passed = False
            parts.append(f"{kind}: not checked yet")
            continue
        ok, evidence, ids, disagreed, value = found
        if kind == "score":
            ok = value is not None and value >= phase.score.at_least - 1e-9  # type: ignore[union-attr]
            evidence += f" (needs {phase.score.at_least:g})"  # type: ignore[union-attr]
        passed = passed and ok
        parts.append(evidence)
        game_ids += ids
        disagreements += disagreed
    return PhaseResult(phase.name, student_id, passed, so_far + "; ".join(parts), game_ids, disagreements,
                       report, sub["id"], provisional, handed.url if handed is not None else None)


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




Found = tuple[bool, str, list[str], list, float | None]
"""A requirement's verdict on a submission: (passed, evidence, game ids, disagreements, value)."""


def _legal_key(course: Course, legal: Legal) -> str:
    return f"legal:{legal.positions}:{course.config.game}:{json.dumps(course.config.params, sort_keys=True)}"


def _score_key(score: Score) -> str:
    return f"score:{score.against}:{score.games}"


def _cached(store: Store, submission_id: int, key: str) -> Found | None:
    rows = store.rows("SELECT * FROM phase_checks WHERE submission_id = ? AND requirement = ?",
                      submission_id, key)
    if not rows:
        return None
    r = rows[0]
    disagreements = [tuple(d) for d in json.loads(r["disagreements"])]
    return bool(r["passed"]), r["evidence"], json.loads(r["game_ids"]), disagreements, r["value"]


def _keep(store: Store, submission_id: int, key: str, found: Found) -> None:
    from arena.course.db.store import iso, utc_now

    passed, evidence, ids, disagreements, value = found
    with store.write() as db:
        db.execute("INSERT OR REPLACE INTO phase_checks (submission_id, requirement, passed, evidence, "
                   "game_ids, disagreements, value, checked) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   (submission_id, key, int(passed), evidence, json.dumps(ids), json.dumps(disagreements),
                    value, iso(utc_now())))


def _bot(course: Course, sub: sqlite3.Row) -> BotSpec:
    """The submission's bot as its qualification ran it (its build kept in DIR/builds/ID; built
    again there when it is gone)."""
    from arena.course.season import jobs

    folder = course.directory / jobs.BUILDS_DIR / str(sub["id"])
    command = sub["command"]
    if not command or not folder.is_dir():
        argv = jobs._build(course.config, course.store, sub["filename"], sub["kind"], sub["protocol"],
                           course.store.read_file(sub["sha256"]), folder)
        course.store.set_command(sub["id"], shlex.join(argv))
    else:
        argv = tuple(shlex.split(command))
    return BotSpec(f"{sub['student_id']}-v{sub['version']}", tuple(argv))


def _check_legal(course: Course, sub: sqlite3.Row, legal: Legal) -> Found:
    from arena.course.season.jobs import JobFailed
    from arena.match.legal_check import check_move_generation

    config = course.config
    try:
        bot = _bot(course, sub)
    except JobFailed as exc:
        return False, f"move generation not checked: its build failed ({exc.reason})", [], [], None
    check = check_move_generation(bot, config.game, dict(config.params), legal.positions, config.limits,
                                  seed=sub["id"], timeout_s=legal.timeout_s)
    return check.passed, check.summary(), [], list(check.disagreements), float(check.agreed)


def _check_score(course: Course, sub: sqlite3.Row, score: Score) -> Found:
    from arena.cell.launcher import resolve_command
    from arena.course.season.jobs import JobFailed, play_judged

    config = course.config
    try:
        bot = _bot(course, sub)
    except JobFailed as exc:
        return False, f"score not played: its build failed ({exc.reason})", [], [], None
    spec = MatchSpec(match_id=f"phase-{safe_name(score.against)}-{sub['id']}", game=config.game,
                     bots=(bot, BotSpec(score.against, resolve_command(score.against))),
                     time_control=config.time_control, game_numbers=tuple(range(score.games)),
                     params=dict(config.params), seed=sub["id"], limits=config.limits)
    records, replayed = play_judged(spec, course.play)
    points = sum(record.points(record.players.index(bot.name)) for record in records)
    share = points / len(records) if records else 0.0
    with course.store.write() as db:
        db.executemany("INSERT OR REPLACE INTO phase_games (game_id, submission_id, record) VALUES (?, ?, ?)",
                       [(r.game_id, sub["id"], r.to_json()) for r in records])
    evidence = f"score {share:.2f} against {score.against} ({points:g} of {len(records)} points)"
    if replayed:
        evidence += f"; {replayed} game{'s' if replayed > 1 else ''} lost on time under load played again"
    return share >= score.at_least, evidence, [r.game_id for r in records], [], share


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
