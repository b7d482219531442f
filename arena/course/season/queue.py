"""What the course server has to do, for staff's queue page (`/staff/queue` and its JSON): the
submissions waiting to be built and qualified, the matches the game player is playing, the
ladder's backlog, the phase checks not made yet and the season clock's next events.

Everything here only reads: course.db's tables, the game player's snapshot (`GamePlayer.snapshot`)
and course.toml. Nothing is scheduled, played or written, so the page can ask every few seconds.
"""
from __future__ import annotations

import math
import sqlite3
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from arena.course.db.states import FinalState, SubmissionStatus
from arena.course.db.store import iso, utc_now
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
    `oldest_s` ago), handed out and not recorded (`scheduled`), and games its entrants are owed now
    (`owed`: placement games left, and the hour's share of `games_per_hour` not yet played; what
    the scheduler would hand out at its next look, counted in games, not pairs)."""

    queued: int
    scheduled: int
    oldest_s: float | None
    owed: int
    entrants: int


@dataclass(frozen=True)
class PendingChecks:
    """A phase requirement (`requirement`: phase_checks' key) of phases `phases`, and how many
    qualified versions have no verdict for it yet (`pending`) or have one (`checked`)."""

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
    now = now or utc_now()
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
    `Ladder.due`, nothing is scheduled and no entrant's row is made."""
    if "ladder" not in course.config.sections:
        return None
    store, settings = course.store, course.config.ladder
    queued = store.rows("SELECT created FROM ladder_games WHERE state = 'queued' ORDER BY id")
    scheduled = store.rows("SELECT a, b FROM ladder_games WHERE state = 'scheduled'")
    players = {r["key"]: r for r in store.rows("SELECT key, games, created FROM ladder_players")}
    recent: dict[str, int] = {}
    pending: dict[str, int] = {}
    since = iso(now - WINDOW)
    for r in store.rows("SELECT a, b, state FROM ladder_games WHERE rated = 1 AND state IN "
                        "('scheduled', 'done') AND created > ?", since):
        for key in (r["a"], r["b"]):
            recent[key] = recent.get(key, 0) + 2
    for r in store.rows("SELECT a, b FROM ladder_games WHERE rated = 1 AND state = 'scheduled'"):
        for key in (r["a"], r["b"]):
            pending[key] = pending.get(key, 0) + 2
    owed, entrants = 0.0, 0
    for row in course.rows():
        if row.active_id is None or row.disabled:
            continue
        sub = store.submission_row(row.active_id)
        if sub is None or not sub["command"]:
            continue
        entrants += 1
        key = f"v{sub['id']}"
        player = players.get(key)
        played = (player["games"] if player is not None else 0) + pending.get(key, 0)
        if played < settings.placement_games:
            owed += settings.placement_games - played
            continue
        age_s = _age_s(player["created"], now) if player is not None else 0.0
        share = min(1.0, age_s / WINDOW.total_seconds())
        owed += max(0.0, settings.games_per_hour * share - recent.get(key, 0))
    return LadderBacklog(queued=len(queued), scheduled=len(scheduled),
                         oldest_s=_age_s(queued[0]["created"], now) if queued else None,
                         owed=math.ceil(owed), entrants=entrants + len(settings.reference))


def requirement_keys(course: Course) -> dict[str, list[str]]:
    """phase_checks' key of each judged requirement of course.toml's phases -> the phases asking for
    it. The keys come from phases.py's own key functions; where those are gone (renamed), the
    requirement's kind ("legal:", "score:") stands for any key of that kind."""
    keys: dict[str, list[str]] = {}
    legal_key = getattr(phases, "_legal_key", None)
    score_key = getattr(phases, "_score_key", None)
    for phase in course.config.season.phases:
        found = []
        if phase.legal is not None:
            found.append(_key(legal_key, (course, phase.legal), "legal:"))
        if phase.score is not None:
            found.append(_key(score_key, (phase.score,), "score:"))
        for key in found:
            keys.setdefault(key, []).append(phase.name)
    return keys


def _key(make: Any, args: tuple[Any, ...], kind: str) -> str:
    """phases.py's key of a requirement, `make(*args)`; the kind ("legal:") where that fails."""
    if make is None:
        return kind
    try:
        key = make(*args)
    except Exception:  # the key function changed its signature: the kind stands for it
        return kind
    return key if isinstance(key, str) else kind


def pending_checks(course: Course) -> tuple[list[PendingChecks], str]:
    """Per judged requirement, the qualified versions lacking a phase_checks row for it, and those
    with one; ("", the problem) where the table cannot be read (its shape changed, say)."""
    keys = requirement_keys(course)
    if not keys:
        return [], ""
    store = course.store
    try:
        rows = store.rows("SELECT * FROM phase_checks")
    except sqlite3.Error as exc:
        return [], f"phase_checks cannot be read: {exc}"
    checked: set[tuple[Any, str]] = set()
    for r in rows:
        names = r.keys()
        if "submission_id" not in names or "requirement" not in names:
            return [], f"phase_checks has no submission_id and requirement columns ({', '.join(names)})"
        checked.add((r["submission_id"], str(r["requirement"])))
    qualified = [r["id"] for r in store.rows("SELECT id FROM submissions WHERE status = ?",
                                             SubmissionStatus.QUALIFIED.value)]
    found = []
    for key, names in keys.items():
        if key.endswith(":"):  # a kind standing for its keys
            done = {sid for sid, req in checked if req.startswith(key)}
        else:
            done = {sid for sid, req in checked if req == key}
        has = sum(1 for sid in qualified if sid in done)
        found.append(PendingChecks(key, tuple(names), len(qualified) - has, has))
    return found, ""


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
