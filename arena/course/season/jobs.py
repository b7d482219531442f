"""One submission's job: it is built, then plays its qualification games.

A submission goes `queued -> building -> testing -> qualified`, or ends `failed` with a `reason`
("compile error", "build timeout", "build too big", "unsafe build", "bad run command", "crashed",
"timeout", "illegal move", "no hello", "protocol error", "interrupted", "stuck", "server error")
and a `detail` a student can act on:
the build log's last lines, the forfeit's detail with what the bot printed, or the last lines of
the traceback its `choose` raised (the SDK plays on, but the course counts it as a crash).

`run_job` does one claimed job and records its one final status; the workers that claim jobs
and watch each under its deadline (`job_deadline_s`) are arena.course.background.submissions.Workers.
A `Job` is what they watch: its step (named in a "stuck" failure), and every write going through
`record`, which refuses once the worker abandoned it.

Qualification games: one `MatchSpec` (the bot against `random`, seats alternating, the course's
game, parameters, clock and limits, sandboxed), played by the course's game player (`Course.play`).
"""
from __future__ import annotations

import logging
import os
import shlex
import sys
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from arena.cell import sandbox
from arena.cell.launcher import STDIO_MODULE, STDIO_PREFIX, LaunchError, resolve_command
from arena.course.db.states import SubmissionStatus
from arena.course.db.store import Store
from arena.course.season import archives, builds
from arena.course.season.games import PlayerStopped, PlayGames, play_each
from arena.match.records import Forfeit, GameRecord
from arena.match.referee import STARTUP_TIMEOUT_S
from arena.match.spec import BotSpec, MatchSpec

if TYPE_CHECKING:
    from arena.course.config.course_toml import CourseConfig

log = logging.getLogger(__name__)

BUILDS_DIR = "builds"
OPPONENT = "random"
REASONS = {
    Forfeit.CRASHED: "crashed", Forfeit.TIMEOUT: "timeout", Forfeit.ILLEGAL_MOVE: "illegal move",
    Forfeit.NO_HELLO: "no hello", Forfeit.MALFORMED_MESSAGE: "protocol error", Forfeit.RESIGNED: "resigned",
}
"""A forfeit's reason (arena/match/records.py) -> the failed submission's reason."""
FAILED = SubmissionStatus.FAILED
DETAIL_MAX_CHARS = 4000
PRINTED_TAIL_LINES = 20


LOAD_REPLAYS = 2
"""A judged game (qualification, a phase's score, a ladder game) lost on time while the machine kept
the bot from a CPU is played again, at most this many times: a verdict must not hang on the
server's load, and a bot that loads its own CPU gains nothing but the delay."""


def play_judged(spec: MatchSpec, play: PlayGames = play_each,
                replaced: list[GameRecord] | None = None) -> tuple[list[GameRecord], int]:
    """The games of `spec` played by `play` (the course's: Course.play), each one lost on time
    under load played again, up to LOAD_REPLAYS times: (the records in order, how many games were
    played again). The records played again are appended to `replaced`, when given (the ladder
    says so beside its game)."""
    records = play([spec])
    replayed = 0
    for _ in range(LOAD_REPLAYS):
        again = [i for i, record in enumerate(records) if record.lost_on_time_under_load()]
        if not again:
            break
        if replaced is not None:
            replaced.extend(records[i] for i in again)
        numbers = tuple(spec.game_numbers[i] for i in again)
        for i, record in zip(again, play([replace(spec, game_numbers=numbers)]), strict=True):
            records[i] = record
        replayed += len(again)
    return records, replayed


def qualification_spec(config: CourseConfig, submission_id: int, name: str,
                       command: tuple[str, ...]) -> MatchSpec:
    """The bot `name` (its argv `command`) against `random`: `config.qualification_games` games,
    seats alternating, under the course's game, clock and limits."""
    return MatchSpec(
        match_id=f"qualify-{submission_id}", game=config.game,
        bots=(BotSpec(name, command), BotSpec(OPPONENT, resolve_command(OPPONENT))),
        time_control=config.time_control, game_numbers=tuple(range(config.qualification_games)),
        params=dict(config.params), seed=submission_id, limits=config.limits)


def verdict(records: list[GameRecord], name: str) -> tuple[SubmissionStatus, str | None, str | None]:
    """(status, reason, detail) of the bot `name` after its qualification games: failed at its
    first forfeit or the first move its `choose` raised on (SDK bots play on with a first legal
    move: `info["error"]`), else qualified. Losing to `random` is no failure."""
    for number, record in enumerate(records, 1):
        seat = record.players.index(name)
        failure = _forfeit_of(record, seat)
        where = f"game {number} of {len(records)} (seat {seat})"
        if failure is not None:
            reason, detail = failure
            printed = builds.tail(record.logs.get(str(seat), ""), PRINTED_TAIL_LINES)
            text = f"{where}: {detail}"
            if printed and printed not in detail:
                text += f"\nit printed:\n{printed}"
            return FAILED, REASONS.get(reason, reason.value.replace("_", " ")), _cut(text)
        if record.errors[seat]:
            move = next((m for m in record.moves if m.seat == seat and m.info.get("error")), None)
            error = str(move.info["error"]) if move is not None else "(no traceback sent)"
            ply = f" at ply {move.ply}" if move is not None else ""
            return FAILED, "crashed", _cut(f"{where}: choose() raised{ply}:\n{builds.tail(error)}")
    return SubmissionStatus.QUALIFIED, None, None


def _forfeit_of(record: GameRecord, seat: int) -> tuple[Forfeit, str] | None:
    """(reason, detail) when seat `seat` forfeited `record` (alone or with its opponent)."""
    side = record.forfeit_of(seat)
    return (Forfeit(side.reason), side.detail) if side is not None else None


def _cut(text: str) -> str:
    """The last DETAIL_MAX_CHARS of `text` (the end of a traceback matters most)."""
    return text if len(text) <= DETAIL_MAX_CHARS else "..." + text[-(DETAIL_MAX_CHARS - 3):]


class JobFailed(Exception):
    """A step of a job found the submission failing: `reason` and `detail` for the student."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


ARENA_ROOT = str(Path(__file__).resolve().parents[3])
"""Where arena is installed: named "<arena>" in what students read (an SDK traceback's lines)."""


def for_student(text: str, folder: Path) -> str:
    """`text` (a build log, a failure's detail) without the server's paths: the submission's own
    files named from its build folder ("bot.cpp:3: error"), arena's own as "<arena>/bots/sdk.py"."""
    return text.replace(f"{folder}/", "").replace(str(folder), ".").replace(ARENA_ROOT, "<arena>")


class Abandoned(Exception):
    """The worker gave up on this job (past its deadline): its thread must record nothing more."""


class Job:
    """One submission's run, as its worker watches it: the `step` it is in (named in a "stuck"
    failure), and whether the worker `abandoned` it; every write of the job goes through `record`,
    which refuses once it was abandoned."""

    def __init__(self, submission_id: int) -> None:
        self.submission_id = submission_id
        self.step = "starting"
        self.abandoned = threading.Event()
        self._lock = threading.Lock()

    def enter(self, step: str) -> None:
        """The job begins `step`; Abandoned if the worker gave up on it."""
        if self.abandoned.is_set():
            raise Abandoned(step)
        self.step = step

    def record(self, write: Callable[[], object]) -> None:
        """Run `write` (a store call) unless the job was abandoned (then Abandoned)."""
        with self._lock:
            if self.abandoned.is_set():
                raise Abandoned(self.step)
            write()

    def abandon(self, write: Callable[[], object], wait_s: float = 5.0) -> bool:
        """Mark the job abandoned and run `write` (its failure) unless the job is writing its own
        end right now (then False, and the job's own end stands)."""
        if not self._lock.acquire(timeout=wait_s):
            return False
        try:
            self.abandoned.set()
            write()
            return True
        finally:
            self._lock.release()


def run_job(config: CourseConfig, store: Store, submission_id: int, job: Job | None = None,
            play: PlayGames = play_each) -> None:
    """Build and qualify one claimed submission, its games played by `play` (the Workers' game
    player), and record its one final status (through `job`, when a worker watches it)."""
    job = job or Job(submission_id)
    row = store.submission_row(submission_id)
    if row is None:  # cannot happen: jobs reference submissions
        return
    folder = config.directory / BUILDS_DIR / str(submission_id)
    try:
        job.record(lambda: store.set_status(submission_id, SubmissionStatus.BUILDING))
        job.enter("reading the upload")
        data = store.read_file(row["sha256"])
        command = _build(config, store, row["filename"], row["kind"], row["protocol"], data, folder, job)
        job.record(lambda: store.set_command(submission_id, shlex.join(command)))
        job.record(lambda: store.set_status(submission_id, SubmissionStatus.TESTING))
        job.enter("qualification games")
        name = f"{row['student_id']}-v{row['version']}"
        records, _ = play_judged(qualification_spec(config, submission_id, name, command), play)
        status, reason, detail = verdict(records, name)
        detail = for_student(detail, folder) if detail is not None else None
        job.record(lambda: store.finish(submission_id, status, reason, detail,
                                        games=[r.to_json() for r in records]))
    except JobFailed as failed:
        why, text = failed.reason, _cut(for_student(failed.detail, folder))
        job.record(lambda: store.finish(submission_id, FAILED, why, text))
    except PlayerStopped:  # the server is stopping: the job stays running, requeued at the next start
        log.info("submission %s: left for the next start (%s)", submission_id, "the server stopped")
    except Abandoned:
        log.warning("submission %s: its abandoned job ended (in step %s)", submission_id, job.step)
    except Exception as exc:  # a bug of ours must not leave the submission unfinished
        log.exception("submission %s", submission_id)
        text = for_student(f"{type(exc).__name__}: {_error_text(exc)}", folder).replace(str(config.directory),
                                                                                     "<course>")
        job.record(lambda: store.finish(submission_id, FAILED, "server error",
                                        text.splitlines()[0][:DETAIL_MAX_CHARS]))


def _error_text(exc: BaseException) -> str:
    """An error's text for a student: an OSError without its file names (they are the server's)."""
    if isinstance(exc, OSError) and exc.errno is not None:
        return os.strerror(exc.errno)
    return str(exc)


def _build(config: CourseConfig, store: Store, filename: str, kind: str, protocol: str, data: bytes,
           folder: Path, job: Job | None = None) -> tuple[str, ...]:
    """Unpack the upload into a fresh `folder`, build it, and return the argv that runs the bot;
    JobFailed for a compile error, a build that failed, timed out, wrote too much or left what a bot
    must not be given, or a bad run command."""
    job = job or Job(int(folder.name))
    if folder.exists():
        builds.remove(folder)
    folder.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    submission_id = int(folder.name)
    if kind in ("python", "stdio"):
        job.enter("writing the upload")
        folder.mkdir(mode=0o755)
        name = archives.clean_filename(filename)
        archives.write_file(folder / name, data, 0o644)
        try:
            compile(data, name, "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as exc:
            text = for_student(_syntax_error(exc), folder)
            job.record(lambda: store.set_build_log(submission_id, text))
            raise JobFailed("compile error", text) from None
        job.record(lambda: store.set_build_log(submission_id,
                                               f"{name}: compiles (Python {sys.version.split()[0]})\n"))
        text = (STDIO_PREFIX if kind == "stdio" else "") + shlex.join([sys.executable, str(folder / name)])
        return resolve_command(text, base=folder)  # our own command: nothing to check
    job.enter("unpacking the upload")
    try:
        archives.unpack(filename, data, folder)
    except archives.Refused as exc:
        raise JobFailed("compile error", str(exc)) from None
    job.enter(f"build.sh (at most {config.build_time_s:g} s)")
    result = builds.build(folder, config.build_time_s, config.build_memory_mb, config.limits,
                          disk_mb=config.build_disk_mb, private=tuple(private_paths(config.directory)))
    shown = for_student(result.log, folder) + builds.footer(result)
    job.record(lambda: store.set_build_log(submission_id, shown))
    if not result.ok:
        reason = ("build timeout" if result.timed_out else "build too big" if result.too_big
                  else "unsafe build" if result.unsafe else "compile error")
        tail = builds.tail(result.log)
        raise JobFailed(reason, f"{result.error}" + (f"; its last lines:\n{tail}" if tail else ""))
    job.enter("checking the run command")
    text = check_run_command(result.command)  # type: ignore[arg-type]
    if protocol == "stdio" and not text.startswith(STDIO_PREFIX):
        text = STDIO_PREFIX + text
    try:
        command = resolve_command(text, base=folder)
    except LaunchError as exc:
        raise JobFailed("bad run command", f"the command build.sh printed last cannot run: {exc}") from None
    except OSError as exc:
        raise JobFailed("bad run command", "the command build.sh printed last cannot run: "
                                           f"{_error_text(exc)}") from None
    check_own(command, folder)
    return command


RUN_COMMAND_MAX_BYTES = 4096
RUN_COMMAND_MAX_WORDS = 256
WORD_MAX_BYTES = 255
"""What the run command build.sh prints may be: at most this many bytes, words, bytes a word (a
file name's limit; a longer first word would only meet the system's "file name too long")."""


def check_run_command(text: str) -> str:
    """`text` (the last line build.sh printed) if it is a run command that can be read; JobFailed
    ("bad run command") for one too long, with too many or too long words, a NUL or bytes that are
    not UTF-8, or that cannot be split as a shell line, naming no path of the server's."""
    def bad(why: str) -> JobFailed:
        return JobFailed("bad run command", f"the command build.sh printed last {why}")

    if "\0" in text:
        return _raise(bad("holds a NUL character"))
    if "\ufffd" in text:
        return _raise(bad("is not UTF-8 text"))
    size = len(text.encode("utf-8"))
    if size > RUN_COMMAND_MAX_BYTES:
        return _raise(bad(f"is {size} bytes long; at most {RUN_COMMAND_MAX_BYTES} are taken"))
    try:
        words = shlex.split(text.removeprefix(STDIO_PREFIX))
    except ValueError as exc:
        return _raise(bad(f"cannot be split into words ({exc})"))
    if len(words) > RUN_COMMAND_MAX_WORDS:
        return _raise(bad(f"has {len(words)} words; at most {RUN_COMMAND_MAX_WORDS} are taken"))
    long = next((w for w in words if any(len(part.encode()) > WORD_MAX_BYTES for part in w.split("/"))), None)
    if long is not None:
        return _raise(bad(f"has a name of more than {WORD_MAX_BYTES} bytes ({long[:40]!r}...); a file "
                          "name may have at most 255"))
    return text


def _raise(error: Exception) -> str:
    raise error


PRIVATE_NAMES = ("course.toml", "course.db", "course.db-wal", "course.db-shm", "course.db-journal",
                 "session.key", "invites.csv", "roster.csv", "files", "grades.csv")
"""Files and folders of a course directory the server uses that no sandbox may ever show."""


def private_paths(directory: Path) -> list[str]:
    """The course directory's own files and folders (all but its build folders): never bound into
    a sandbox (sandbox.check_private), whatever user the server runs as."""
    try:
        names = set(os.listdir(directory))
    except OSError:
        names = set()
    return [str(directory / n) for n in sorted(names | set(PRIVATE_NAMES)) if n != BUILDS_DIR]


def hide_from_bots(directory: Path) -> None:
    """Name the course directory's private paths (private_paths) in this process's environment,
    so that every bot it starts from now on is refused a sandbox that would show one of them."""
    private = private_paths(directory)
    known = os.environ.get(sandbox.PRIVATE_ENV, "").split(os.pathsep)
    os.environ[sandbox.PRIVATE_ENV] = os.pathsep.join(p for p in dict.fromkeys([*known, *private]) if p)


def check_own(command: tuple[str, ...], folder: Path) -> None:
    """JobFailed unless `command` runs a program of the submission's own `folder` and names no
    other file or folder of this machine (the sandbox would show the bot whatever its command
    names: `python3 mine.py /home/staff/grades.csv` must not run, nor a shipped bot). Paths are
    judged resolved: a link in the folder leading out of it (`a1 -> ../1`) is outside."""
    own = command[3:] if tuple(command[1:3]) == ("-m", STDIO_MODULE) else command  # behind the adapter
    real_folder = os.path.realpath(folder)
    named = [(p, os.path.realpath(p)) for p in sandbox.named_paths(own)]
    inside = [p for p, real in named if real == real_folder or real.startswith(f"{real_folder}/")]
    outside = [p for p, _ in named if p not in inside]
    shown = shlex.join(command)
    if outside:
        link = outside[0].startswith(f"{folder}/")
        raise JobFailed("bad run command", f"the run command {shown!r} names {outside[0]}, "
                                           f"{'a link leading ' if link else ''}outside the "
                                           "submission's folder: a bot may use only its own files")
    if not inside:
        raise JobFailed("bad run command", f"the run command {shown!r} names no file of the submission: "
                                           "it must run the bot build.sh built (its last line printed)")


def _syntax_error(exc: BaseException) -> str:
    if isinstance(exc, SyntaxError):
        where = f"{exc.filename}, line {exc.lineno}" if exc.lineno else str(exc.filename)
        shown = f"    {exc.text.strip()}\n" if exc.text and exc.text.strip() else ""
        return f"{shown}{where}: {type(exc).__name__}: {exc.msg}"  # last: the pages show the last line
    return f"{type(exc).__name__}: {exc}"


GAME_PLIES_BOUND = 400
"""Plies a qualification game is reckoned to take at most, for a job's deadline (never a limit
of the game itself: the deadline is only there to end a job nothing else would)."""
JOB_MARGIN_S = 120.0


def job_deadline_s(config: CourseConfig) -> float:
    """How long one job may take before its worker fails it as stuck: its build's time, each of its
    qualification games (replays under load included) at its longest, and a margin."""
    clock = config.time_control
    if clock.per_move is not None:
        game = GAME_PLIES_BOUND * (clock.wall_allowed(clock.per_move) + clock.margin)
    else:
        bank = clock.base + GAME_PLIES_BOUND * clock.increment  # type: ignore[operator]
        game = 2 * clock.wall_allowed(bank) + GAME_PLIES_BOUND * clock.margin
    games = config.qualification_games * (1 + LOAD_REPLAYS)
    return config.build_time_s + games * (game + 2 * STARTUP_TIMEOUT_S) + JOB_MARGIN_S
