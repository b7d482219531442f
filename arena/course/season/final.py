"""The course's final tournament (`[final]` in course.toml, issue 25).

Once every student's deadline has passed (the course deadline plus the longest `[extensions]`
entry), the final is played over each student's bot that qualified before that student's own
deadline: its chosen active version if that one qualifies, else its latest. The final is an
ordinary tournament: `final_tournament(course)` writes it as a tournament file,
`DIR/final/final-N.toml`, and plays it with the runner of `arena tournament run`
(arena.tournament.runner.run) into `DIR/final/final-N/` (results.sqlite, resumed game by game after
any stop, kill -9 included); `arena standings DIR/final/final-N` prints its standings.
`publish_final` writes the standings files and the website (arena.site) to `DIR/final/site/`:
the results are final only then.

The entrants are frozen when a run starts (table `final_entrants`), so a resumed run plays the
same bots; `start_final(course, rerun=True)` starts run N+1 from nothing. With `[privacy]
pseudonyms = true` the bots are named by their pseudonyms (arena.course.season.privacy), so the public
site names no one. Runs are kept in `final_runs` (started, finished, published).
"""
from __future__ import annotations

import dataclasses
import json
import logging
import os
import shlex
import sqlite3
import threading
import tomllib
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from arena.course.db.files import write_atomically
from arena.course.db.states import FINISHED as FINISHED_STATUSES
from arena.course.db.states import FinalState, SubmissionStatus
from arena.course.db.store import iso
from arena.course.season import phases
from arena.tournament import config as tconfig

if TYPE_CHECKING:  # the runner and the standings (pandas) are imported when a final is played or shown
    from arena.course.config.course_toml import CourseConfig
    from arena.course.course import Course
    from arena.tournament import standings as st

log = logging.getLogger(__name__)

FINAL_DIR = "final"
SITE_DIR = "site"
NOT_STARTED, RUNNING, FINISHED, PUBLISHED = (FinalState.NOT_STARTED, FinalState.RUNNING, FinalState.FINISHED,
                                            FinalState.PUBLISHED)
"""The final's states (arena/course/db/states.py)."""



class FinalError(ValueError):
    """The final cannot be started, resumed or published: one line saying why."""


# --- the deadlines ---

def deadline_for(config: CourseConfig, student_id: str) -> datetime | None:
    """The student's own last deadline (arena.course.season.phases.deadline_for: the course's last deadline
    plus its extension); None: no deadline."""
    return phases.deadline_for(config, student_id)


def final_deadline(config: CourseConfig) -> datetime | None:
    """When the final starts by itself: the last deadline plus the longest extension (None: never)."""
    last = phases.last_deadline(config)
    if last is None:
        return None
    return last + max(config.season.extensions.values(), default=timedelta(0))


# --- the entrants and the tournament ---

@dataclass(frozen=True)
class Entrant:
    """A student's bot in the final: its submission, its bot name there, the argv that runs it."""

    student_id: str
    submission_id: int
    bot: str
    command: tuple[str, ...]


def entrants(course: Course) -> list[Entrant]:
    """Each enabled student's bot for the final: of its submissions uploaded before its own
    deadline and qualified, the chosen active one, else the latest. Students without one are left
    out. Bot names are the students' display names for the public (pseudonyms when on)."""
    from arena.course.season.privacy import public_name

    found = []
    for student in course.store.student_rows():
        if student["disabled"]:
            continue
        deadline = deadline_for(course.config, student["id"])
        usable = [r for r in course.store.submission_rows(student["id"])
                  if r["status"] == SubmissionStatus.QUALIFIED and r["command"]
                  and (deadline is None or datetime.fromisoformat(r["created"]) < deadline)]
        if not usable:
            continue
        chosen = next((r for r in usable if r["id"] == student["chosen_id"]), usable[0])
        found.append(Entrant(student["id"], chosen["id"], public_name(course, student["id"]),
                             tuple(shlex.split(chosen["command"]))))
    return found


def _limits_table(course: Course) -> dict[str, Any]:
    """The course's bot limits as a tournament file's [limits] table."""
    table: dict[str, Any] = {}
    for f in dataclasses.fields(course.config.limits):
        value = getattr(course.config.limits, f.name)
        if f.name == "hide" or value is None and f.name == "suspend":
            continue
        table[f.name] = 0 if value is None else list(value) if isinstance(value, tuple) else value
    return table


def _toml(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)


def _tournament_text(course: Course, run: int, bots: list[tuple[str, tuple[str, ...]]]) -> str:
    """The tournament file of run `run` over `bots` (name, argv), reference opponents last."""
    cfg, final = course.config, course.config.final
    data: dict[str, Any] = {
        "name": f"final-{run}", "game": cfg.game, "title": f"{cfg.title or 'The course'}: the final",
        "time": final.time or str(cfg.time_control), "clock": final.clock or cfg.time_control.kind,
        "games_per_pairing": final.games, "seed": final.seed, "games_per_task": 2,
        "format": final.format,
    }
    if data["clock"] == "cpu":
        data["wall_factor"] = cfg.time_control.wall_factor
    if final.format == "swiss":
        data["rounds"] = final.rounds
    if final.format == "gauntlet":
        data["challengers"] = [name for name, _ in bots]
    lines = [f"# The course's final, run {run} (written by arena.course.final; replayed as is on resume).",
             *(f"{k} = {_toml(v)}" for k, v in data.items()),
             f"params = {_toml(cfg.params)}", f"limits = {_toml(_limits_table(course))}",
             "site = {show_commands = false}"]
    for name, argv in [*bots, *((o, (o,)) for o in final.opponents)]:
        command: Any = argv[0] if argv == (name,) and name in final.opponents else list(argv)
        lines += ["", "[[bots]]", f"name = {_toml(name)}", f"command = {_toml(command)}"]
    return "\n".join(lines) + "\n"


def final_dir(course: Course) -> Path:
    return course.directory / FINAL_DIR


def _last_run(course: Course) -> Any:
    rows = course.store.rows("SELECT * FROM final_runs ORDER BY run DESC LIMIT 1")
    return rows[0] if rows else None


def final_tournament(course: Course, run: int | None = None) -> tconfig.Tournament:
    """The final as a tournament (arena.tournament.config): run `run`'s file as written when it
    started, or (None, no run yet) the one a start would play now. TournamentError or FinalError
    when it cannot be made (fewer than two bots)."""
    if run is None:
        last = _last_run(course)
        run = last["run"] if last is not None else None
    if run is not None:
        path = final_dir(course) / f"final-{run}.toml"
        if path.is_file():
            return tconfig.load(path)
    bots = [(e.bot, e.command) for e in entrants(course)]
    text = _tournament_text(course, 0, bots)
    return tconfig.from_dict(tomllib.loads(text), final_dir(course) / "final-next.toml")


def _played(last: Any) -> FinalError:
    return FinalError(f"the final was played (run {last['run']}, finished {last['finished']}); rerun it to "
                      "play it again from the start")


def _begin(course: Course, rerun: bool) -> tuple[int, tconfig.Tournament]:
    """The run to play: the unfinished last one (resumed), or a new one with the entrants frozen
    (its tournament file made durable before its row is committed)."""
    last = _last_run(course)
    if last is not None and not rerun:
        if last["finished"] is not None:
            raise _played(last)
        return last["run"], tconfig.load(final_dir(course) / f"final-{last['run']}.toml")
    found = entrants(course)
    opponents = course.config.final.opponents
    if len(found) + len(opponents) < 2 or not found:
        raise FinalError(f"the final needs bots: {len(found)} student(s) have a bot qualified before "
                         "their deadline")
    run = (last["run"] if last is not None else 0) + 1
    text = _tournament_text(course, run, [(e.bot, e.command) for e in found])
    folder = final_dir(course)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = folder / f"final-{run}.toml"
    tournament = tconfig.from_dict(tomllib.loads(text), path)  # checked before anything is recorded
    write_atomically(path, text, 0o644)  # whole or absent after any stop
    with course.store.write() as db:
        db.execute("INSERT INTO final_runs (run, started) VALUES (?, ?)", (run, iso(course.clock.now())))
        db.executemany("INSERT INTO final_entrants (run, student_id, submission_id, bot, command) "
                       "VALUES (?, ?, ?, ?, ?)",
                       [(run, e.student_id, e.submission_id, e.bot, shlex.join(e.command)) for e in found])
    return run, tournament


def run_final(course: Course, rerun: bool = False, concurrency: int | None = None,
              progress: TextIO | None = None) -> FinalStatus:
    """Play the final to its end here (blocking): resume the unfinished run, or start the first
    (or, `rerun`, the next) one; every game is stored once (the runner's store). Its status after."""
    from arena.tournament import runner

    resumed = _last_run(course) is not None and not rerun
    run, tournament = _begin(course, rerun)
    _tell(course, f"final run {run} {'resumed' if resumed else 'started'}",
          f"{len(tournament.bots)} bots, {tournament.total_games()} games")
    if progress is not None:
        already = runner.check_resumable(tournament, final_dir(course))
        print(f"the final, run {run}: {len(tournament.bots)} bots, {tournament.total_games()} games "
              f"({already} already stored) -> {tournament.results_dir(final_dir(course))}", file=progress)
    summary = runner.run(tournament, final_dir(course), concurrency or course.config.final.concurrency,
                         progress=progress)
    played = runner.check_resumable(tournament, final_dir(course))
    if played >= tournament.total_games() and not summary.interrupted and not summary.failures:
        with course.store.write() as db:
            done = db.execute("UPDATE final_runs SET finished = ? WHERE run = ? AND finished IS NULL",
                              (iso(course.clock.now()), run)).rowcount
        if done:
            _tell(course, f"final run {run} finished", f"{played} games")
    elif summary.failures:
        log.warning("final run %s: %s", run, "; ".join(summary.failures))
    return final_status(course)


def _tell(course: Course, action: str, detail: str) -> None:
    """A milestone of the final (a run started or finished): logged, and in the audit log (actor
    "(final)"), so that staff can see when the results they grade from were made."""
    from arena.course.db.accounts import Accounts

    log.warning("%s: %s (%s)", course.directory, action, detail)  # warning: shown by a default logger
    try:
        Accounts(course.directory).audit("(final)", action, "", detail)
    except sqlite3.Error as exc:  # the final plays on; the log has it
        log.error("cannot write the audit log: %s", exc)


def start_final(course: Course, rerun: bool = False) -> threading.Thread:
    """Start (or resume) the final in a thread of this process and return it at once (the
    server's staff page and season clock); FinalError if it is running here already, or, before
    the thread starts, if it cannot start."""
    _begin_check(course, rerun)
    with course.final_lock:
        if is_running(course):
            raise FinalError("the final is running already")

        def play() -> None:
            try:
                run_final(course, rerun)
            except Exception:  # a thread has no caller to tell: the log and final_status do
                log.exception("the final of %s", course.directory)
            finally:
                course.store.close()

        thread = threading.Thread(target=play, name="course-final", daemon=True)
        course.final_thread = thread
        thread.start()
    return thread


def _begin_check(course: Course, rerun: bool) -> None:
    last = _last_run(course)
    if last is not None and last["finished"] is not None and not rerun:
        raise _played(last)
    if (last is None or rerun) and not entrants(course):
        raise FinalError("the final needs bots: no student has a bot qualified before their deadline")


def rerun_warning(course: Course) -> str:
    """What a rerun replaces, for the confirmation it asks for: the last run, its state, and
    that grades follow the published run until the new one is published."""
    status = final_status(course)
    if status.run is None:
        return "the final has not been played: start it, there is nothing to rerun"
    published = published_run(course)
    graded = (f"grades follow the published run {published} until the new run is published"
              if published is not None else "no run is published: grades follow the new run, provisional")
    return (f"--rerun plays the final again from the start as run {status.run + 1}, replacing run "
            f"{status.run} ({status.state}, {status.played}/{status.planned} games); {graded}")


def is_running(course: Course) -> bool:
    """A final thread of this course is playing (start_final; `Course.final_thread`)."""
    thread = course.final_thread
    return thread is not None and thread.is_alive()


def under_way(course: Course) -> int | None:
    """The run of the final under way: playing in this process, or started and not finished
    (played by `arena course final --start`, or stopped and resumed at the next start); None when
    no run is. The ladder pauses meanwhile (arena.course.season.ladder)."""
    last = _last_run(course)
    if last is not None and last["finished"] is None:
        return int(last["run"])
    if is_running(course):  # started here, its run not recorded yet
        return (last["run"] if last is not None else 0) + 1
    return None


# --- status and publishing ---

@dataclass(frozen=True)
class FinalStatus:
    """Where the final stands: `state` is "not started", "running" (started, not all games
    stored: playing, or stopped and resumed at the next start), "finished" or "published".
    `standings`: those of the stored games (arena.tournament.standings, as `arena standings`
    prints them), None before any run; `students`: bot name -> student id."""

    state: FinalState
    run: int | None = None
    started: str | None = None
    finished: str | None = None
    published: str | None = None
    played: int = 0
    planned: int = 0
    results_dir: Path | None = None
    standings: st.Standings | None = None
    students: dict[str, str] = field(default_factory=dict)
    site: Path | None = None


def published_run(course: Course) -> int | None:
    """The last published run (the one grades follow until a newer one is published), None before."""
    rows = course.store.rows("SELECT run FROM final_runs WHERE published IS NOT NULL "
                             "ORDER BY run DESC LIMIT 1")
    return rows[0]["run"] if rows else None


def final_status(course: Course, run: int | None = None) -> FinalStatus:
    """The final's state, with the standings of its last run (FinalStatus), or of run `run`."""
    from arena.tournament import standings as st
    from arena.tournament.store import DB_NAME

    if run is None:
        last = _last_run(course)
    else:
        found = course.store.rows("SELECT * FROM final_runs WHERE run = ?", run)
        last = found[0] if found else None
    if last is None:
        return FinalStatus(NOT_STARTED)
    run = last["run"]
    results = final_dir(course) / f"final-{run}"
    students = {r["bot"]: r["student_id"] for r in course.store.rows(
        "SELECT bot, student_id FROM final_entrants WHERE run = ?", run)}
    standings = st.read(results) if (results / DB_NAME).is_file() else None
    state = PUBLISHED if last["published"] else FINISHED if last["finished"] else RUNNING
    site = final_dir(course) / SITE_DIR
    return FinalStatus(state, run, last["started"], last["finished"], last["published"],
                       standings.played if standings else 0, standings.planned if standings else 0,
                       results, standings, students, site if last["published"] else None)


def status_text(status: FinalStatus) -> str:
    """What `arena course final` prints: the state, then the standings as `arena standings`
    prints them, with each bot's student."""
    from arena.tournament import standings as st

    if status.run is None:
        return "the final: not started"
    lines = [f"the final, run {status.run}: {status.state} ({status.played}/{status.planned} games; "
             f"started {status.started}"
             + (f", finished {status.finished}" if status.finished else "")
             + (f", published {status.published}: {status.site}" if status.published else "") + ")",
             f"results: {status.results_dir}"]
    if status.standings is not None:
        lines += ["", st.report_text(status.standings, crosstable=False)]
    if status.students:
        lines += ["", "bots: " + ", ".join(f"{bot} = {sid}" for bot, sid in sorted(status.students.items()))]
    return "\n".join(lines)


def publish_final(course: Course) -> FinalStatus:
    """Publish the finished final: standings.md/csv, crosstable.md, games.csv and records/ in its
    results directory, the website in DIR/final/site/; its results are final from now on.
    FinalError before it has finished."""
    status = final_status(course)
    if status.state == NOT_STARTED:
        raise FinalError("the final has not been played yet")
    if status.state == RUNNING:
        raise FinalError(f"the final is not finished ({status.played}/{status.planned} games): publish it "
                         "once every game is played")
    from arena.site.build import publish_site
    from arena.tournament import standings as st

    assert status.results_dir is not None
    st.publish(status.results_dir)
    publish_site(status.results_dir, final_dir(course) / SITE_DIR,
                 final_dir(course) / f"final-{status.run}.toml")
    with course.store.write() as db:
        db.execute("UPDATE final_runs SET published = ? WHERE run = ?", (iso(course.clock.now()), status.run))
    return final_status(course)


def due(course: Course, now: datetime | None = None) -> bool:
    """The season clock's question: should the final start (or resume) now? True for a course with
    a `[final]` section once every student's deadline has passed and the last run is unfinished or
    there is none (and no final thread of this process is playing, and no other process holds its
    run's lock). Without `[final]` staff start it themselves (`arena course final DIR --start`)."""
    when = final_deadline(course.config)
    if "final" not in course.config.sections or when is None or (now or course.clock.now()) < when \
            or is_running(course):
        return False
    last = _last_run(course)
    if last is None:
        return not still_judged(course)
    return last["finished"] is None and not _locked(final_dir(course) / f"final-{last['run']}" / "run.lock")


def still_judged(course: Course) -> bool:
    """Whether an enabled student's submission uploaded before its deadline is still queued, building
    or testing: the season clock waits for its verdict, so a bot uploaded in time is not left out of
    the final for being built late."""
    for student in course.store.student_rows():
        if student["disabled"]:
            continue
        deadline = deadline_for(course.config, student["id"])
        if any(r["status"] not in FINISHED_STATUSES
               and (deadline is None or datetime.fromisoformat(r["created"]) < deadline)
               for r in course.store.submission_rows(student["id"])):
            return True
    return False


def _locked(path: Path) -> bool:
    """Another run holds the runner's lock on `path` (`arena course final --start` playing it)."""
    import fcntl

    if not path.is_file():
        return False
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing drops the lock taken just now
    return False
