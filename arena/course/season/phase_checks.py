"""The phase checks (issue 33): the score games and the move-generation check a phase's
requirements ask of the version it judges, run once a version by the server's background thread
(arena/course/background/phase_checks.py), never inside a page or a reporting command.

A check is one requirement (its key, `score:greedy:10`, `legal:50:GAME:PARAMS`) on one submission.
Its verdict is kept in `phase_checks`; while it runs a row of `phase_check_runs` says so (the
process running it, the games played of how many). A row whose process is gone is a check a
stopped server cut short: it is queued again, and after MAX_ATTEMPTS starts it is kept as failed
(staff may check it again). `due` lists the checks the phases may judge now that have no verdict,
nearest deadline first; `run_check` runs one, `run_pending` all of them (a round of the server's
thread, or `arena course phases --wait` without a server); `progress` says where the others
stand; `recheck` drops a verdict so that it runs again.
"""
from __future__ import annotations

import json
import logging
import os
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from arena.course.config.sections import Legal, Phase, Score
from arena.course.db.states import SubmissionStatus
from arena.course.db.store import iso
from arena.course.season.archives import Refused
from arena.course.season.games import PlayerStopped
from arena.match.records import GameRecord
from arena.match.spec import BotSpec, MatchSpec, safe_name

if TYPE_CHECKING:
    import sqlite3

    from arena.course.course import Course
    from arena.course.db.store import Store

log = logging.getLogger(__name__)

LEGAL, SCORE = "legal", "score"
"""The kinds of check: a move-generation check, score games against a reference bot."""
KIND_WORDS = {LEGAL: "move generation check", SCORE: "score games"}
QUEUED, RUNNING = "queued", "running"
MAX_ATTEMPTS = 3
"""Starts of one check a stopped server may cut short before it is kept as failed."""
RECHECKED = "checked a phase again"
"""The audit log's action for checks staff had run again (`recheck`; the detail: Dropped.detail)."""

Found = tuple[bool, str, list[str], list, float | None]
"""A requirement's verdict on a submission: (passed, evidence, game ids, disagreements, value)."""


@dataclass(frozen=True)
class Check:
    """A check a phase may judge now and that has no verdict yet: the version (`submission_id`,
    its student and version number), the requirement (`kind`, LEGAL or SCORE, and its `key` in
    phase_checks) and the earliest of the student's own deadlines of the phases that need it."""

    submission_id: int
    student_id: str
    version: int
    kind: str
    key: str
    phase: str
    deadline: datetime

    def __str__(self) -> str:
        return f"{self.student_id} v{self.version} (#{self.submission_id}) {KIND_WORDS[self.kind]}"


@dataclass(frozen=True)
class Progress:
    """Where a check without a verdict stands: QUEUED, or RUNNING with `done` games of `total`
    played (a score check; `total` 0 for a move-generation check)."""

    state: str = QUEUED
    done: int = 0
    total: int = 0

    def text(self, kind: str) -> str:
        """"score games: 4 of 10 played", "move generation check: queued"."""
        if self.state == RUNNING and self.total:
            return f"{KIND_WORDS[kind]}: {self.done} of {self.total} played"
        return f"{KIND_WORDS[kind]}: {self.state}"


def requirements(course: Course, phase: Phase) -> list[tuple[str, str]]:
    """(kind, key) of each check `phase` asks for, the move generation first."""
    found = []
    if phase.legal is not None:
        found.append((LEGAL, legal_key(course, phase.legal)))
    if phase.score is not None:
        found.append((SCORE, score_key(phase.score)))
    return found


def legal_key(course: Course, legal: Legal) -> str:
    return f"legal:{legal.positions}:{course.config.game}:{json.dumps(course.config.params, sort_keys=True)}"


def score_key(score: Score) -> str:
    return f"score:{score.against}:{score.games}"


def judged_row(rows: list[sqlite3.Row], cutoff: datetime) -> sqlite3.Row | None:
    """The version a phase judges among a student's submissions (newest first): the latest
    uploaded before `cutoff` that qualified."""
    for r in rows:
        if datetime.fromisoformat(r["created"]) < cutoff and r["status"] == SubmissionStatus.QUALIFIED:
            return r
    return None


# --- what is due, and where it stands ---

def due(course: Course, now: datetime | None = None) -> list[Check]:
    """Every check a phase may judge at `now` (on the student's latest qualified version uploaded
    before the phase's deadline plus its extension, or before `now`) that has no verdict yet,
    each once: nearest deadline first (a deadline passed comes before one ahead), then oldest
    submission."""
    now = now or course.clock.now()
    season = course.config.season
    wanted = [(phase, requirements(course, phase)) for phase in season.phases]
    wanted = [(phase, needs) for phase, needs in wanted if needs]
    if not wanted:
        return []
    store = course.store
    kept = {(r["submission_id"], r["requirement"]) for r in
            store.rows("SELECT submission_id, requirement FROM phase_checks")}
    by_student: dict[str, list[sqlite3.Row]] = {}
    for r in store.rows("SELECT id, student_id, version, created, status FROM submissions ORDER BY id DESC"):
        by_student.setdefault(r["student_id"], []).append(r)
    found: dict[tuple[int, str], Check] = {}
    for student in course.students():
        rows = by_student.get(student.id, [])
        for phase, needs in wanted:
            own = phase.deadline + season.extension_for(student.id)
            sub = judged_row(rows, min(own, now))
            if sub is None:
                continue
            for kind, key in needs:
                if (sub["id"], key) in kept:
                    continue
                check = Check(sub["id"], student.id, sub["version"], kind, key, phase.name, own)
                known = found.get((sub["id"], key))
                if known is None or own < known.deadline:
                    found[sub["id"], key] = check
    return sorted(found.values(), key=lambda c: (c.deadline, c.submission_id, c.kind))


def progress(store: Store) -> dict[tuple[int, str], Progress]:
    """(submission id, requirement) -> RUNNING, for the checks a live process runs now (with the
    games played); a check without a verdict that is not here is queued."""
    found = {}
    for r in store.rows("SELECT * FROM phase_check_runs WHERE pid IS NOT NULL"):
        if _alive(r["pid"]):
            found[r["submission_id"], r["requirement"]] = Progress(RUNNING, r["done"], r["total"])
    return found


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def cut_short(store: Store) -> int:
    """At the start of whatever runs the checks (a server, `phases --wait`): every check left
    running by a process that stopped is queued again (its attempts kept); how many."""
    with store.write() as db:
        return db.execute("UPDATE phase_check_runs SET pid = NULL WHERE pid IS NOT NULL").rowcount


# --- running them ---

def run_pending(course: Course, clock: Callable[[], datetime] | None = None,
                stopping: Callable[[], bool] = lambda: False,
                told: Callable[[str], None] | None = None) -> int:
    """Run the checks due (`due`, asked again after each one: a version that
    qualified meanwhile takes its place in the order) until none is left or `stopping()`; how many
    ran. A check that fails for a reason of ours is logged and left for the next round (a stopped
    server's: the round ends); `told(line)` hears of each check as it starts and ends. `clock`:
    what "now" is (default: the course's clock)."""
    clock = clock or course.clock.now
    ran = 0
    failed: set[tuple[int, str]] = set()
    with course.phase_lock:
        while not stopping():
            left = [c for c in due(course, clock()) if (c.submission_id, c.key) not in failed]
            if not left:
                break
            check = left[0]
            if told is not None:
                told(f"checking {check} for phase {check.phase!r} ({len(left)} due)")
            try:
                found = run_check(course, check)
            except PlayerStopped:  # the server is stopping: the check runs again at the next start
                break
            except Exception as exc:  # a build gone and unbuildable, games lost: next round, counted
                log.warning("phase check %s: %s", check, exc)
                if told is not None:
                    told(f"could not check {check} (it runs again later): {type(exc).__name__}: {exc}")
                failed.add((check.submission_id, check.key))
                continue
            ran += 1
            if told is not None:
                told(f"checked {check}: {'passed' if found[0] else 'not passed'}: {found[1]}")
    return ran


# --- verdicts ---

def cached(store: Store, submission_id: int, key: str) -> Found | None:
    """The kept verdict of a requirement on a submission, None before it was checked."""
    rows = store.rows("SELECT * FROM phase_checks WHERE submission_id = ? AND requirement = ?",
                      submission_id, key)
    if not rows:
        return None
    r = rows[0]
    disagreements = [tuple(d) for d in json.loads(r["disagreements"])]
    return bool(r["passed"]), r["evidence"], json.loads(r["game_ids"]), disagreements, r["value"]


def keep(store: Store, submission_id: int, key: str, found: Found) -> None:
    """Keep a verdict (its `checked` time now); the check is no longer running."""
    passed, evidence, ids, disagreements, value = found
    with store.write() as db:
        db.execute("INSERT OR REPLACE INTO phase_checks (submission_id, requirement, passed, evidence, "
                   "game_ids, disagreements, value, checked) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   (submission_id, key, int(passed), evidence, json.dumps(ids), json.dumps(disagreements),
                    value, iso(store.clock.now())))
        db.execute("DELETE FROM phase_check_runs WHERE submission_id = ? AND requirement = ?",
                   (submission_id, key))


def run_check(course: Course, check: Check) -> Found:
    """Run `check` here (its games through the course's game player, `Course.play`) and keep its
    verdict; the verdict. Its row in phase_check_runs says meanwhile that this process runs it, and
    how many games are played; a check started MAX_ATTEMPTS times already is kept as failed
    instead. Whatever stops it (the server stopping: PlayerStopped) leaves it queued."""
    store = course.store
    phase = next(p for p in course.config.season.phases if p.name == check.phase)
    total = phase.score.games if check.kind == SCORE and phase.score is not None else 0
    before = store.rows("SELECT attempts FROM phase_check_runs WHERE submission_id = ? AND requirement = ?",
                        check.submission_id, check.key)
    if before and before[0]["attempts"] >= MAX_ATTEMPTS:
        found: Found = (False, f"{KIND_WORDS[check.kind]} not done: started {MAX_ATTEMPTS} times, it never "
                               "ended (the server stopped, or its games were lost); staff can check it "
                               "again", [], [], None)
        keep(store, check.submission_id, check.key, found)
        return found
    with store.write() as db:
        db.execute("INSERT INTO phase_check_runs (submission_id, requirement, started, attempts, pid, done, "
                   "total) VALUES (?, ?, ?, 1, ?, 0, ?) ON CONFLICT (submission_id, requirement) DO UPDATE "
                   "SET started = excluded.started, attempts = attempts + 1, pid = excluded.pid, done = 0, "
                   "total = excluded.total",
                   (check.submission_id, check.key, iso(course.clock.now()), os.getpid(), total))
    sub = store.submission_row(check.submission_id)
    try:
        if check.kind == LEGAL:
            found = _check_legal(course, sub, phase.legal)  # type: ignore[arg-type]
        else:
            found = _check_score(course, sub, phase.score)  # type: ignore[arg-type]
    except BaseException:
        with store.write() as db:
            db.execute("UPDATE phase_check_runs SET pid = NULL WHERE submission_id = ? AND requirement = ?",
                       (check.submission_id, check.key))
        raise
    keep(store, check.submission_id, check.key, found)
    return found


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
    key = score_key(score)

    def played(record: GameRecord) -> None:  # the progress the pages show
        with course.store.write() as db:
            db.execute("UPDATE phase_check_runs SET done = MIN(done + 1, total) WHERE submission_id = ? "
                       "AND requirement = ?", (sub["id"], key))

    records, replayed = play_judged(spec, lambda specs: course.play(specs, on_game=played))
    points = sum(record.points(record.players.index(bot.name)) for record in records)
    share = points / len(records) if records else 0.0
    with course.store.write() as db:
        db.executemany("INSERT OR REPLACE INTO phase_games (game_id, submission_id, record) VALUES (?, ?, ?)",
                       [(r.game_id, sub["id"], r.to_json()) for r in records])
    evidence = f"score {share:.2f} against {score.against} ({points:g} of {len(records)} points)"
    if replayed:
        evidence += f"; {replayed} game{'s' if replayed > 1 else ''} lost on time under load played again"
    return share >= score.at_least, evidence, [r.game_id for r in records], [], share


# --- checking again ---

@dataclass(frozen=True)
class Dropped:
    """A verdict staff dropped so that its check runs again: the phase, the version, the check,
    and the old verdict (passed, evidence, when it was checked) for the audit log."""

    phase: str
    submission_id: int
    version: int
    kind: str
    passed: bool
    evidence: str
    checked: str

    def detail(self) -> str:
        """The audit log's detail: what is checked again, and the verdict it had."""
        return (f"phase {self.phase!r}, v{self.version} (#{self.submission_id}), {KIND_WORDS[self.kind]}; "
                f"was: {'passed' if self.passed else 'not passed'}: {self.evidence} (checked {self.checked})")


def recheck(course: Course, student_id: str, phase_name: str | None = None,
            now: datetime | None = None) -> list[Dropped]:
    """Drop the verdicts of the checks of the version each phase judges now (`phase_name`: that
    phase only) for `student_id`, so that they run again (the course's phase listeners are told);
    the verdicts dropped. Refused for an unknown student or phase, or when there is nothing to
    check again (no version judged, no check asked for, or its check is still to run)."""
    now = now or course.clock.now()
    season = course.config.season
    if course.student(student_id) is None:
        raise Refused(f"no student {student_id!r} in the roster")
    chosen = [p for p in season.phases if phase_name is None or p.name == phase_name]
    if not chosen:
        names = ", ".join(repr(p.name) for p in season.phases) or "none"
        raise Refused(f"no phase named {phase_name!r}: the phases are {names}")
    store = course.store
    rows = store.rows("SELECT * FROM submissions WHERE student_id = ? ORDER BY id DESC", student_id)
    dropped: list[Dropped] = []
    seen: set[tuple[int, str]] = set()
    with store.write() as db:
        for phase in chosen:
            sub = judged_row(rows, min(phase.deadline + season.extension_for(student_id), now))
            if sub is None:
                continue
            for kind, key in requirements(course, phase):
                if (sub["id"], key) in seen:
                    continue
                seen.add((sub["id"], key))
                old = db.execute("SELECT passed, evidence, checked FROM phase_checks WHERE submission_id = ? "
                                 "AND requirement = ?", (sub["id"], key)).fetchone()
                if old is None:
                    continue
                for table in ("phase_checks", "phase_check_runs"):
                    db.execute(f"DELETE FROM {table} WHERE submission_id = ? AND requirement = ?",
                               (sub["id"], key))
                dropped.append(Dropped(phase.name, sub["id"], sub["version"], kind, bool(old[0]), old[1],
                                       old[2]))
    if not dropped:
        which = f"phase {phase_name!r}" if phase_name else "any phase"
        raise Refused(f"nothing to check again for {student_id} in {which}: no version judged with a "
                      "score or move-generation verdict kept (a check still to run runs anyway)")
    for listener in course.phase_listeners:
        listener()
    return dropped
