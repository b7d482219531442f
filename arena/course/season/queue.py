"""What the course server has to do, for staff's queue page (`/staff/queue` and its JSON): the
submissions waiting to be built and qualified, the matches the game player is playing, the
ladder's backlog, the phase checks not made yet and the season clock's next events.

Everything here only reads: course.db's tables, the game player's snapshot (`GamePlayer.snapshot`)
and course.toml. Nothing is scheduled, played or written, so the page can ask every few seconds.
"""
from __future__ import annotations

import sqlite3
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from arena.course.db.states import FinalState, SubmissionStatus
from arena.course.season import final, phases

if TYPE_CHECKING:
    from arena.course.course import Course
    from arena.course.season.games import InFlight

WINDOW = timedelta(hours=1)
"""The ladder's scheduling window (arena.course.season.ladder.WINDOW): games owed are counted over it."""
KINDS = (("qualify-", "qualification"), ("ladder-", "ladder"), ("phase-", "phase score"))
"""A match id's prefix -> the kind of games it plays."""


@dataclass(frozen=True)
class QueuedJob:
    """A submission waiting or under way: its status (queued, building or testing), when it was
    queued (ISO 8601 UTC) and how long ago (`age_s`), when a worker took it (`started`, None while
    queued) and how often a worker took it (`attempts`: more than one after a server stopped)."""

    submission_id: int
    student_id: str
    version: int
    status: SubmissionStatus
    enqueued: str
    age_s: float
    started: str | None
    attempts: int


@dataclass(frozen=True)
class RunningMatch:
    """A match the game player holds: its kind (qualification, ladder, phase score, other), its
    bots, its games and how many are back, and how long it has waited or played (`age_s`)."""

    match_id: str
    kind: str
    bots: tuple[str, ...]
    games: int
    done: int
    age_s: float


@dataclass(frozen=True)
class LadderBacklog:
    """The ladder's backlog: ladder games asked for and not yet handed out (`queued`, the oldest
    `oldest_s` ago), handed out and not recorded (`scheduled`), and the rated ladder games (each a
    pair of games) its entrants are owed now (`owed`: what the scheduler would hand out at its next
    look, Ladder.owed); `status`: why the ladder is paused or ended ("" while it plays)."""

    queued: int
    scheduled: int
    oldest_s: float | None
    owed: int
    entrants: int
    status: str = ""


@dataclass(frozen=True)
class PendingChecks:
    """A phase requirement (`requirement`: phase_checks' key) of phases `phases`: its checks due and
    not made yet (`pending`: the background loop's work) and its verdicts kept (`checked`)."""

    requirement: str
    phases: tuple[str, ...]
    pending: int
    checked: int


@dataclass(frozen=True)
class SeasonEvent:
    """A moment of the season clock ahead: what happens (`what`), when (ISO 8601) and in how long."""

    what: str
    at: str
    in_s: float


@dataclass(frozen=True)
class QueueView:
    """Everything the queue page shows, at `now` (ISO 8601 UTC)."""

    now: str
    jobs: list[QueuedJob]
    counts: dict[str, int]
    """Jobs by status: queued, building, testing."""
    oldest_wait_s: float | None
    """How long the oldest queued job has waited (None: none queued)."""
    player_running: bool
    """The course's game player runs (a server's workers); False in a command."""
    running: list[RunningMatch]
    ladder: LadderBacklog | None
    checks: list[PendingChecks]
    checks_problem: str
    """Why the phase checks could not be counted ("" when they were)."""
    events: list[SeasonEvent]
    final_state: FinalState

    def to_json(self) -> dict[str, Any]:
        """The view as plain JSON types (the statuses as their strings)."""
        return asdict(self)


def queue_view(course: Course, now: datetime | None = None,
               in_flight: list[InFlight] | None = None) -> QueueView:
    """The course's queues at `now`: `in_flight` defaults to the running game player's snapshot."""
    now = now or course.clock.now()
    jobs = queued_jobs(course, now)
    counts = {s.value: sum(1 for j in jobs if j.status == s)
              for s in (SubmissionStatus.QUEUED, SubmissionStatus.BUILDING, SubmissionStatus.TESTING)}
    waiting = [j.age_s for j in jobs if j.status == SubmissionStatus.QUEUED]
    player = course.player
    if in_flight is None:
        in_flight = player.snapshot() if player is not None else []
    running = [RunningMatch(m.match_id, kind_of(m.match_id), m.bots, m.games, m.done,
                            max(0.0, now.timestamp() - m.since)) for m in in_flight]
    checks, problem = pending_checks(course)
    return QueueView(now=now.isoformat(timespec="seconds"), jobs=jobs, counts=counts,
                     oldest_wait_s=max(waiting) if waiting else None, player_running=player is not None,
                     running=running, ladder=ladder_backlog(course, now), checks=checks,
                     checks_problem=problem, events=season_events(course, now),
                     final_state=final_state(course))


def kind_of(match_id: str) -> str:
    """The kind of games a match id plays: qualification, ladder, phase score, or other."""
    return next((kind for prefix, kind in KINDS if match_id.startswith(prefix)), "other")


def _age_s(iso_text: str | None, now: datetime) -> float:
    if not iso_text:
        return 0.0
    try:
        return max(0.0, (now - datetime.fromisoformat(iso_text)).total_seconds())
    except ValueError:
        return 0.0


def queued_jobs(course: Course, now: datetime) -> list[QueuedJob]:
    """Every job of the queue (table `jobs`) with its submission, oldest first."""
    rows = course.store.rows(
        "SELECT j.submission_id, j.enqueued, j.started, j.attempts, s.student_id, s.version, s.status "
        "FROM jobs j JOIN submissions s ON s.id = j.submission_id ORDER BY j.submission_id")
    found = []
    for r in rows:
        try:
            status = SubmissionStatus(r["status"])
        except ValueError:
            continue
        found.append(QueuedJob(r["submission_id"], r["student_id"], r["version"], status, r["enqueued"],
                               _age_s(r["enqueued"], now), r["started"], r["attempts"]))
    return found


def ladder_backlog(course: Course, now: datetime) -> LadderBacklog | None:
    """The ladder's backlog (None for a course without `[ladder]`), read without writing: unlike
    `Ladder.due`, nothing is scheduled and no entrant's row is made (`Ladder.owed`)."""
    from arena.course.season.ladder import Ladder

    if "ladder" not in course.config.sections:
        return None
    ladder = Ladder(course)
    store = course.store
    queued = store.rows("SELECT created FROM ladder_games WHERE state = 'queued' ORDER BY id")
    scheduled = store.rows("SELECT id FROM ladder_games WHERE state = 'scheduled'")
    entrants = sum(1 for r in store.active_rows() if not r["disabled"] and r["command"])
    entrants += len(course.config.ladder.reference)
    return LadderBacklog(queued=len(queued), scheduled=len(scheduled),
                         oldest_s=_age_s(queued[0]["created"], now) if queued else None,
                         owed=ladder.owed(now), entrants=entrants, status=ladder.status(now)[1])


def pending_checks(course: Course) -> tuple[list[PendingChecks], str]:
    """Per judged requirement of the phases, the checks due and not made yet (what the background
    loop runs next: arena.course.season.phase_checks.due) and the verdicts kept; ("", the problem)
    where course.db cannot be read."""
    from arena.course.season import phase_checks

    keys: dict[str, list[str]] = {}
    for phase in course.config.season.phases:
        for _, key in phase_checks.requirements(course, phase):
            keys.setdefault(key, []).append(phase.name)
    if not keys:
        return [], ""
    try:
        due = phase_checks.due(course)
        kept = course.store.rows("SELECT requirement, COUNT(*) AS n FROM phase_checks GROUP BY requirement")
    except sqlite3.Error as exc:
        return [], f"phase_checks cannot be read: {exc}"
    checked = {r["requirement"]: r["n"] for r in kept}
    return [PendingChecks(key, tuple(names), sum(1 for c in due if c.key == key), checked.get(key, 0))
            for key, names in keys.items()], ""


def season_events(course: Course, now: datetime) -> list[SeasonEvent]:
    """The season clock's moments still ahead, soonest first: each phase's deadline, the course's
    deadline, the upload freeze (the last deadline), and the final's start (with `[final]`: the
    last deadline plus the longest extension)."""
    config = course.config
    moments: list[tuple[datetime, str]] = [(p.deadline, f"phase {p.name}: deadline")
                                           for p in config.season.phases]
    if config.deadline is not None:
        moments.append((config.deadline, "the course's deadline"))
    last = phases.last_deadline(config)
    if last is not None:
        moments.append((last, "uploads freeze (the last deadline; extensions later)"))
    if "final" in config.sections:
        start = final.final_deadline(config)
        if start is not None:
            moments.append((start, "the final starts (the last deadline plus the longest extension)"))
    ahead = sorted((m for m in moments if m[0] > now), key=lambda m: (m[0], m[1]))
    return [SeasonEvent(what, at.isoformat(), (at - now).total_seconds()) for at, what in ahead]


def final_state(course: Course) -> FinalState:
    """The final's state from its runs' table alone (no standings read: that is the final page's)."""
    rows = course.store.rows("SELECT finished, published FROM final_runs ORDER BY run DESC LIMIT 1")
    if not rows:
        return FinalState.NOT_STARTED
    if rows[0]["published"]:
        return FinalState.PUBLISHED
    return FinalState.FINISHED if rows[0]["finished"] else FinalState.RUNNING
