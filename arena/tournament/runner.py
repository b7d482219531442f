"""The tournament runner: plays every missing game of a tournament exactly once.

The tournament file is read by `arena.tournament.config` (re-exported here: `runner.load`).

The parent: the parent process opens the results database (arena.store), accepts or refuses the
file's fingerprint, builds a MatchSpec for every chunk of games not yet stored, runs them through a
`concurrent.futures` executor (a ProcessPoolExecutor by default; any executor with `submit` works,
e.g. a Dask client's), and commits each returned game in its own transaction. Only the parent
writes the database. A task that is lost (run interrupted) simply leaves its games missing: the
next run plays them.

A match that kills its worker process (a bot that kills its parent, a referee bug that takes the
process down): the tasks that were running when the pool broke become suspects and are replayed one
at a time in a pool of one worker, where a death is unambiguous. The game being played when such a
worker died (the first game of the task not stored) is charged one death; at
WORKER_DEATHS_PER_GAME it is recorded as `aborted` (arena.tournament.aborted): no bot is charged,
since a bot can time the death to its opponent's turn, and the tournament completes. The record says
whose move it was and keeps what both bots printed last: each task keeps a progress note (Turn) in a
file of its own, rewritten in place after every move with one synchronous write (no buffer a killed
process could lose), and a task replayed alone runs its bots in a directory beside that note, where
the parent finds their logs. Aborted games are played again only by `run(..., retry_aborted=True)`.
"""
from __future__ import annotations

import _thread
import contextlib
import dataclasses
import fcntl
import json
import multiprocessing
import os
import queue
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from arena.cell import scratch
from arena.cell.limits import cores_per_match, set_match_cpus
from arena.cell.notices import notices
from arena.match.records import GameRecord
from arena.match.spec import MatchSpec
from arena.tournament.aborted import aborted_record, bot_logs
from arena.tournament.config import (  # re-exported: `runner.load` and the rest keep working
    DEFAULT_GAMES_PER_PAIRING,
    DEFAULT_GAMES_PER_TASK,
    DEFAULT_RESULTS_ROOT,
    BotEntry,
    Tournament,
    TournamentError,
    from_dict,
    load,
)
from arena.tournament.store import DB_NAME, RESULTS_DIR_MODE, Store, StoreError, fingerprint_change

__all__ = [
    "DEFAULT_GAMES_PER_PAIRING", "DEFAULT_GAMES_PER_TASK", "DEFAULT_RESULTS_ROOT", "LOCK_NAME", "BotEntry",
    "Progress", "RunSummary", "Tournament", "TournamentError", "Turn", "WORKER_DEATHS_PER_GAME",
    "check_resumable", "duration", "exclusive", "from_dict", "load", "plan", "play_task", "read_note", "run",
    "sealed", "seat_to_move", "stop", "store_results", "aborted_record",
]

LOCK_NAME = "run.lock"
PLAYING_DIR = "playing"
"""In the results directory while a run plays: one JSON file per game in progress (its id, game,
params, players and the moves so far), rewritten after every move by the worker playing it and
removed when the game ends, so that `arena serve` can show games as they are played. The workers
find it as <notes>/playing, a link the run makes in the directory of the progress notes."""
WORKER_DEATHS_PER_GAME = 2
"""A game whose worker process died this many times while it ran alone is recorded as `aborted`."""
_PARENT_POLL_S = 0.5
_STREAM_POLL_S = 0.1
"""How often the parent commits the games workers streamed (seconds)."""
_TRACKER_QUIET = "ignore:resource_tracker:UserWarning:multiprocessing.resource_tracker"
"""A warning filter for multiprocessing's resource tracker (its own warnings): after this process is
killed (kill -9) it removes the pool's semaphores itself, and need not print "There appear to be N
leaked semaphore objects" about them."""
_STOP_GRACE_S = 2.0
"""Interrupted: how long the workers have to stop their matches and their bots before they are
killed (seconds; their bots' watchdogs then kill the bots)."""


def check_resumable(tournament: Tournament, results_root: str | Path = DEFAULT_RESULTS_ROOT) -> int:
    """How many games are stored already; StoreError if the file changed in a way that breaks
    exactly-once (checked without writing anything)."""
    db = tournament.results_dir(results_root) / DB_NAME
    if not db.is_file():
        return 0
    with Store(db, create=False) as store:
        old = store.fingerprint()
        if old is not None and old != tournament.fingerprint():
            reason = fingerprint_change(old, tournament.fingerprint())
            if reason is not None:
                raise StoreError(f"the tournament file changed since the first run: {reason}")
        return store.count()


# --- the worker side ---

_STREAM: Any = None
"""In a worker of the default pool: the queue on which each finished game goes to the parent."""
_HUB: Any = None
"""In a worker of the default pool: its bots kept from one match to the next (arena.match.reuse)."""
_REUSE = True
"""In a worker of the default pool: whether it keeps its bots between matches (run(reuse=...))."""
_NOTES: Path | None = None
"""In a worker of the default pool: the directory of the tasks' progress notes (see Turn)."""
_NOTE_BYTES = 256
_PLAYING = False
"""In a worker of the default pool: a task is being played (an interrupt stops it)."""
_STOPPING = False
"""In a worker of the default pool: the run was interrupted; the worker plays no more."""
BOT_STARTS = ""
"""The match id under which a worker streams how many bot processes a task started."""


def play_task(spec: MatchSpec) -> list[str]:
    """Play `spec` (in a worker process) and return its game records as JSON strings.

    In the default pool each game is also sent to the parent as soon as it ends, so that it is
    committed at once rather than when the whole task returns; the worker keeps its bots running
    from one match to the next (a hub, arena.match.reuse); and the task keeps a progress note
    (Turn) for the parent: whose move it was if this process dies."""
    global _PLAYING
    if _STOPPING:  # interrupted: a task queued before the interrupt starts no bot
        raise KeyboardInterrupt
    _PLAYING = True
    try:
        return _play_task(spec)
    finally:
        _PLAYING = False


def _play_task(spec: MatchSpec) -> list[str]:
    from arena.match.referee import run_match

    stream = _STREAM
    hub = _worker_hub() if stream is not None and _REUSE else None
    started = hub.started if hub is not None else 0

    playing = None
    if _NOTES is not None and (_NOTES / PLAYING_DIR).is_dir():
        playing = _NOTES / PLAYING_DIR / f"{spec.match_id}-{spec.game_numbers[0]}.json"

    def on_game(record: GameRecord) -> None:
        if playing is not None:
            playing.unlink(missing_ok=True)
        if stream is not None:
            try:
                stream.put((spec.match_id, record.to_json()))
            except Exception:  # the parent still gets the record in the returned list
                pass

    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    note = None if _NOTES is None else os.open(_note_path(_NOTES, spec), flags, 0o600)

    def write(turn: Turn) -> None:
        if note is not None:
            os.pwrite(note, json.dumps(dataclasses.asdict(turn)).encode().ljust(_NOTE_BYTES), 0)

    def on_move(record: GameRecord, move: Any, state: Any) -> None:
        if playing is not None:
            show_playing(playing, record)
        write(Turn(record.game_id, state.ply, state.seat))
        if _STOPPING:  # interrupted, but the interrupt was lost (see _on_unraisable)
            raise KeyboardInterrupt

    workdir = None if _NOTES is None or hub is not None else _work_path(_NOTES, spec)
    try:
        write(Turn(spec.game_id(spec.game_numbers[0]), -1, -1))
        records = run_match(spec, on_game=on_game, on_move=on_move if note is not None else None, hub=hub,
                            workdir=workdir)
        return [record.to_json() for record in records]
    finally:  # a worker that dies leaves its bots' logs to the parent
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)
        if note is not None:
            os.close(note)
        if playing is not None:
            playing.unlink(missing_ok=True)
        if hub is not None and stream is not None:
            try:
                stream.put((BOT_STARTS, json.dumps({"bot_starts": hub.started - started})))
            except Exception:  # a count for the benchmarks only
                pass


def show_playing(path: Path, record: GameRecord) -> None:
    """Write the game in progress `record` to `path` (PLAYING_DIR) in one atomic replace; a failure
    only costs the live view this move."""
    data = {"game_id": record.game_id, "game": record.game, "params": record.params,
            "players": list(record.players), "start_moves": list(record.start_moves),
            "moves": [m.move for m in record.moves], "started_at": record.started_at}
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass


def _playing_dir(out: Path, notes: Path) -> Path:
    """out/PLAYING_DIR, emptied (what a killed run left is stale; the run holds the lock), and
    linked from the notes' directory, where the default pool's workers find it."""
    playing = out / PLAYING_DIR
    shutil.rmtree(playing, ignore_errors=True)
    playing.mkdir(exist_ok=True)
    (notes / PLAYING_DIR).symlink_to(playing.resolve(), target_is_directory=True)
    return playing


def _note_path(directory: Path, spec: MatchSpec) -> Path:
    return directory / f"{spec.match_id}-{spec.game_numbers[0]}.turn"


def _work_path(directory: Path, spec: MatchSpec) -> Path:
    """Where the task `spec` runs its bots when it keeps none between matches (a task replayed alone)."""
    return directory / f"{spec.match_id}-{spec.game_numbers[0]}.work"


def read_note(directory: Path, spec: MatchSpec) -> Turn | None:
    """The last progress note of the task `spec` in `directory`, None if it never started."""
    try:
        data = json.loads(_note_path(directory, spec).read_bytes().strip() or b"null")
        return Turn(str(data["game_id"]), int(data["ply"]), int(data["seat"]))
    except (OSError, ValueError, TypeError, KeyError):
        return None


@dataclass(frozen=True)
class Turn:
    """A task's progress note: in game `game_id`, `seat` is to move at `ply` (ply -1: the task
    started, no move played yet). In the default pool a worker keeps it in a file of its own,
    rewritten in place after every move with one synchronous write, which outlives the worker
    however it dies."""

    game_id: str
    ply: int
    seat: int


def seat_to_move(spec: MatchSpec, number: int, turn: Turn | None) -> tuple[int, int]:
    """(ply, seat) to move in game `number` of `spec` at the last progress note `turn` of that game,
    or at its start position when there is none."""
    if turn is not None and turn.game_id == spec.game_id(number) and turn.ply >= 0:
        return turn.ply, turn.seat
    import rules
    from arena.match.referee import replay

    start = replay(rules.load(spec.game, **spec.params), spec.start_for(number))
    return start.ply, start.seat


def _worker_hub() -> Any:
    """This worker's hub, made at its first task and closed when the worker ends."""
    global _HUB
    if _HUB is None:
        from multiprocessing.util import Finalize

        from arena.match.reuse import BotHub

        _HUB = BotHub()
        Finalize(_HUB, _HUB.close, exitpriority=10)
    return _HUB


def _init_worker(parent_pid: int, stream: Any = None, notes: Path | None = None, reuse: bool = True,
                 slots: Any = None, per_match: int = 2) -> None:
    """Worker initializer: keep the stream, the notes' directory and whether to keep bots; take a
    match slot of the pool (`slots`: a queue of 0..concurrency-1) so that pinned bots get cores of
    their own, `per_match` a slot; and if the parent dies (even by kill -9), interrupt the running
    match so the referee stops its bots, then leave; the next run replays the lost games."""
    global _STREAM, _NOTES, _REUSE
    _STREAM, _NOTES, _REUSE = stream, notes, reuse
    if slots is not None:
        with contextlib.suppress(Exception):  # no slot left (a worker replaced): count from 0
            set_match_cpus(per_match * slots.get(timeout=5), per_match)
    signal.signal(signal.SIGINT, _on_interrupt)
    sys.unraisablehook = _on_unraisable
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # blocked since it was spawned

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(_PARENT_POLL_S)
        if _PLAYING:  # the referee stops its bots
            _thread.interrupt_main()
            time.sleep(5.0)
        os._exit(1)

    threading.Thread(target=watch, name="arena-parent-watch", daemon=True).start()


def _on_interrupt(signum: int, frame: Any) -> None:
    """A worker's SIGINT (Ctrl-C reaches the whole process group, and the parent sends one too):
    the match being played is interrupted once (its referee stops its bots), no later task starts,
    and an idle worker just waits for the parent to end it (no traceback of an interrupted wait)."""
    global _STOPPING
    if _STOPPING:  # a second one must not interrupt the referee while it stops the bots
        return
    _STOPPING = True
    if _PLAYING:
        raise KeyboardInterrupt


def _on_unraisable(info: Any) -> None:
    """Once a worker is interrupted, what Python could not raise is dropped without a word: the
    interrupt itself, raised in an at-fork callback while a bot started or in a finalizer (the match
    then stops at its next move), and what it broke there (logging's lock, not taken, not released)."""
    if _STOPPING:
        return
    sys.__unraisablehook__(info)


@contextlib.contextmanager
def _interrupts_held() -> Iterator[None]:
    """SIGINT held meanwhile: blocked in this thread, and so in every process started meanwhile (a
    blocked signal stays blocked across exec), so that a worker being spawned is not interrupted
    while it imports, before its own handler is in place (_init_worker unblocks it); and, in the main
    thread, only noted, so that it does not land in an at-fork callback, where it would be lost. An
    interrupt that came meanwhile is raised at the end."""
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()  # started later, it would unblock SIGINT behind our back
    main = threading.current_thread() is threading.main_thread()
    noted: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: noted.append(signum)) if main else None
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        if main:
            signal.signal(signal.SIGINT, previous)
    if noted:
        raise KeyboardInterrupt


# --- the parent side ---

@dataclass
class RunSummary:
    planned: int = 0
    stored: int = 0
    already: int = 0
    failures: list[str] = field(default_factory=list)
    interrupted: bool = False
    wall_s: float = 0.0
    matches: int = 0
    """Matches (tasks) played to their end in this run."""
    game_s: float = 0.0
    """The games' own durations (GameRecord.duration_s) stored in this run, added up."""
    bot_starts: int = 0
    """Bot processes the workers started (a bot kept between matches counts once; on Dask, not those
    of a worker that died)."""
    phases: int = 0
    """Pools started: 1, or one per Swiss round played."""
    under_load: int = 0
    """Games stored in this run that were played under load (GameRecord.loaded_moves)."""
    lost_on_time_under_load: int = 0
    """Of those, games a bot lost on time while the machine kept it from a CPU."""

    def count_load(self, record: GameRecord) -> None:
        """Count a stored game that was played under load."""
        if record.loaded_moves:
            self.under_load += 1
            if (record.forfeit or {}).get("under_load"):
                self.lost_on_time_under_load += 1

    def load_note(self) -> str:
        """What the summary line adds when games were played under load ("" when none were)."""
        if not self.under_load:
            return ""
        lost = (f", {self.lost_on_time_under_load} of them lost on time while a bot waited for a CPU"
                if self.lost_on_time_under_load else "")
        return (f"; {self.under_load} games played under load{lost} (the machine was busy: fewer "
                "--concurrency, or clock = \"cpu\", charges bots only their own time)")
    aborted: list[str] = field(default_factory=list)
    """Game ids recorded as aborted in this run (arena.tournament.aborted)."""
    retried: int = 0
    """Aborted games made missing again by `retry_aborted`, to be played in this run."""

    def timing(self, workers: int) -> dict[str, float]:
        """What the plan calibrates its next estimates with (Store.record_run)."""
        return {"wall_s": round(self.wall_s, 3), "workers": workers, "matches": self.matches,
                "games": self.stored, "game_s": round(self.game_s, 3), "phases": self.phases,
                "bot_starts": self.bot_starts}

    @property
    def missing(self) -> int:
        return self.planned - self.stored


def duration(seconds: float) -> str:
    """`42 s`, `3 min 20 s`, `5 h 07 min` (rounded up to a whole second)."""
    total = max(0, int(-(-seconds // 1)))
    if total < 60:
        return f"{total} s"
    minutes, secs = divmod(total, 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


class Progress:
    """A one-line text progress bar with a running count of results and the time left, on stderr.

    The time left is `eta_s` (the plan's estimate) minus the time elapsed until this run has
    stored a game, then the games left at this run's measured pace."""

    WIDTH = 30

    def __init__(self, total: int, done: int, stream: TextIO | None, eta_s: float | None = None) -> None:
        self.total, self.done, self.stream = total, done, stream
        self.first_done, self.eta_s = done, eta_s
        self.counts = {"seat 0 wins": 0, "seat 1 wins": 0, "draws": 0, "forfeits": 0}
        self.started = time.monotonic()
        self._last = 0.0
        self._printed = -1
        self._tty = bool(stream is not None and getattr(stream, "isatty", lambda: False)())

    def add(self, record: GameRecord) -> None:
        self.done += 1
        if record.is_aborted():  # shown from the first one on
            self.counts["aborted"] = self.counts.get("aborted", 0) + 1
        elif not record.is_double_forfeit():  # nobody won, and it was no draw: only a forfeit
            key = {0: "seat 0 wins", 1: "seat 1 wins"}.get(record.winner_seat(), "draws")  # type: ignore[arg-type]
            self.counts[key] += 1
        if record.forfeit:
            self.counts["forfeits"] += 1
        self.show()

    def line(self) -> str:
        filled = int(self.WIDTH * self.done / self.total) if self.total else self.WIDTH
        counts = ", ".join(f"{k} {v}" for k, v in self.counts.items())
        elapsed = time.monotonic() - self.started
        bar = "#" * filled + "." * (self.WIDTH - filled)
        return f"[{bar}] {self.done}/{self.total} games ({counts}) {elapsed:.0f}s{self.time_left(elapsed)}"

    def time_left(self, elapsed: float) -> str:
        if self.done >= self.total:
            return ""
        this_run = self.done - self.first_done
        if this_run > 0:
            left = elapsed / this_run * (self.total - self.done)
        elif self.eta_s is not None:
            left = max(0.0, self.eta_s - elapsed)
        else:
            return ""
        return f", about {duration(left)} left"

    def show(self, final: bool = False) -> None:
        if self.stream is None:
            return
        now = time.monotonic()
        if not final and not self._tty and now - self._last < 1.0 and self.done < self.total:
            return
        line = self.line()
        if not self._tty and self.done == self._printed:
            return
        self._printed = self.done
        self._last = now
        end = "\n" if final or not self._tty else ""
        self.stream.write(("\r" if self._tty else "") + line + end)
        self.stream.flush()


def plan(tournament: Tournament, stored: dict[str, set[int]],
         results: dict[str, dict[int, float]] | None = None) -> list[MatchSpec]:
    """MatchSpecs for every game not stored, in chunks of games_per_task, first chunks first.

    For a Swiss, only the games of the current round: `results` (Store.pairing_results) must hold
    the stored games' results, from which the round is planned."""
    if tournament.format == "swiss" and results is None:
        raise ValueError("planning a Swiss round needs the stored results")
    chunked: list[list[MatchSpec]] = []
    for pairing in tournament.pairings(results):
        have = stored.get(pairing.pairing_id, set())
        missing = [n for n in range(pairing.games) if n not in have]
        size = tournament.games_per_task
        chunks = [tuple(missing[i:i + size]) for i in range(0, len(missing), size)]
        chunked.append([tournament.match_spec(pairing, c) for c in chunks])
    specs = []
    for depth in range(max((len(c) for c in chunked), default=0)):
        specs += [c[depth] for c in chunked if depth < len(c)]
    return specs


def run(
    tournament: Tournament,
    results_root: str | Path = DEFAULT_RESULTS_ROOT,
    concurrency: int = 1,
    executor: Executor | None = None,
    progress: TextIO | None = sys.stderr,
    task: Callable[[MatchSpec], list[str]] = play_task,
    eta_s: float | None = None,
    reuse: bool = True,
    retry_aborted: bool = False,
) -> RunSummary:
    """Play every game of `tournament` not yet stored; each game is committed as it comes back.
    `retry_aborted`: first make the stored aborted games missing again (Store.retry_aborted), so
    they are played too.

    `eta_s`: the plan's estimate of the wall time (arena.tournament.plan), shown as the time left
    until the first game of this run is stored. `reuse`: the default pool's workers keep their bots
    running from one match to the next (arena.match.reuse); False starts them for every match.

    `executor`: any concurrent.futures-style executor (its `submit` must return Futures); by default
    a ProcessPoolExecutor of `concurrency` workers (spawned, each watching that the parent lives).
    A Swiss is played round by round: each round is planned from the stored results once the round
    before it is stored. StoreError if the file changed in a way that breaks exactly-once.

    The results directory, its database and the run's lock are created the user's only (0700,
    0600), whatever the umask.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    if _TRACKER_QUIET not in sys.warnoptions:  # passed on to the tracker process when it starts
        sys.warnoptions.append(_TRACKER_QUIET)
    started = time.monotonic()
    summary = RunSummary()
    out = tournament.results_dir(results_root)
    tournament = sealed(tournament, out, progress)
    return _run(tournament, out, concurrency, executor, progress, task, started, summary, eta_s, reuse,
                retry_aborted)


def _run(tournament: Tournament, out: Path, concurrency: int, executor: Executor | None,
         progress: TextIO | None, task: Callable[[MatchSpec], list[str]], started: float,
         summary: RunSummary, eta_s: float | None, reuse: bool, retry_aborted: bool = False) -> RunSummary:
    out.mkdir(mode=RESULTS_DIR_MODE, parents=True, exist_ok=True)
    with exclusive(out / LOCK_NAME, tournament.name), Store(out / DB_NAME) as store:
        store.accept_fingerprint(tournament.fingerprint())
        if retry_aborted:
            summary.retried = len(store.retry_aborted())
        stored = store.stored_numbers()
        summary.already = sum(len(v) for v in stored.values())
        specs = plan(tournament, stored, store.pairing_results())
        summary.planned = sum(len(s.game_numbers) for s in specs)
        bar = Progress(tournament.total_games(), summary.already, progress, eta_s)
        bar.show()
        pending = list(specs)
        kept: list[Any] = []  # the default pool and its stream, kept from one Swiss round to the next
        notes = scratch.make("notes")
        try:
            _playing_dir(out, notes)
            while pending:
                stored_before = summary.stored
                _play_specs(store, pending, concurrency, executor, task, summary, bar, reuse, kept, notes)
                pending = []
                if tournament.format == "swiss" and summary.stored > stored_before and not summary.failures:
                    pending = plan(tournament, store.stored_numbers(), store.pairing_results())
                    summary.planned += sum(len(s.game_numbers) for s in pending)
            if kept:  # the workers end (and stop their bots); what they streamed last is in the queue
                pool, stream = kept
                kept.clear()
                pool.shutdown(wait=True)
                _drain(stream, store, {}, summary, bar)
        except KeyboardInterrupt:
            summary.interrupted = True
        finally:
            if kept:  # interrupted between rounds, or while the workers ended
                stop(kept[0])
            shutil.rmtree(notes, ignore_errors=True)
            shutil.rmtree(out / PLAYING_DIR, ignore_errors=True)
        bar.show(final=True)
        summary.wall_s = time.monotonic() - started
        if executor is None and summary.stored and not summary.interrupted and not summary.failures:
            store.record_run(summary.timing(concurrency))
    return summary


def _play_specs(store: Store, pending: list[MatchSpec], concurrency: int,
                executor: Executor | None, task: Callable[[MatchSpec], list[str]], summary: RunSummary,
                bar: Progress, reuse: bool, kept: list[Any], notes: Path) -> None:
    """Play `pending` through the executor, committing each game. The default pool is made on first
    use and left in `kept` (pool, stream) for the next call, so its workers keep their bots. When a
    worker dies, the tasks that were running become suspects, each replayed alone in a pool of one
    worker, where a death is its own (see the module docstring)."""
    summary.phases += 1
    suspects: list[MatchSpec] = []
    deaths: dict[str, int] = {}  # game id -> worker deaths while it ran alone
    while pending or suspects:
        own = executor is None
        solo = own and bool(suspects)  # a suspect runs alone: a death is its own
        batch = suspects if solo else pending
        if solo:
            suspects = []
        else:
            pending = []
        for spec in batch:  # a note left by an earlier try must not pass for this one's
            _note_path(notes, spec).unlink(missing_ok=True)
        pool: Any = None
        expected = {spec.game_id(n): (spec, n) for spec in batch for n in spec.game_numbers}
        lost: set[MatchSpec] = set()
        clean = interrupted = False
        try:
            with _interrupts_held():  # the default pool and its queues start their processes here
                if solo:
                    stream = multiprocessing.get_context("spawn").Queue()
                    pool = _make_pool(1, stream, notes, reuse=False)
                elif own:
                    if not kept:
                        queue_ = multiprocessing.get_context("spawn").Queue()
                        limits = batch[0].limits if batch else None
                        per_match = cores_per_match(limits.suspend) if limits is not None else 2
                        kept += [_make_pool(concurrency, queue_, notes, reuse, per_match), queue_]
                    pool, stream = kept
                else:
                    pool, stream = executor, None
                futures: dict[Future, MatchSpec] = {pool.submit(task, spec): spec for spec in batch}
            running = set(futures)
            while running:
                done, running = wait(running, timeout=_STREAM_POLL_S, return_when=FIRST_COMPLETED)
                _drain(stream, store, expected, summary, bar)
                for future in done:
                    spec = futures[future]
                    try:
                        results = future.result()
                    except BrokenProcessPool:
                        lost.add(spec)
                        continue
                    except Exception as exc:  # the referee failed on this match: report, go on
                        summary.failures.append(f"{spec.match_id} games {list(spec.game_numbers)}: "
                                                f"{type(exc).__name__}: {exc}")
                        continue
                    store_results(store, spec, results, expected, summary, bar)
                    summary.matches += 1
            _drain(stream, store, expected, summary, bar)
            clean = not lost
        except KeyboardInterrupt:
            interrupted = True
            raise
        finally:
            if own and interrupted:
                kept.clear()
                if pool is not None:
                    stop(pool)
            elif own and pool is not None and (solo or not clean):  # broken: do not wait for running matches
                pool.shutdown(wait=clean, cancel_futures=True)
                if not solo:
                    kept.clear()
        if not lost:
            continue
        have = store.stored_numbers()
        rests = {s: tuple(n for n in s.game_numbers if n not in have.get(s.match_id, set()))
                 for s in batch if s in lost}
        left = [dataclasses.replace(s, game_numbers=rest) for s, rest in rests.items() if rest]
        if not own:
            summary.failures += [f"{s.match_id} games {list(s.game_numbers)}: worker process died"
                                 for s in left]
        elif not solo:  # which of the running tasks killed it is not known: each runs alone
            begun = [dataclasses.replace(s, game_numbers=rest) for s, rest in rests.items()
                     if rest and read_note(notes, s) is not None]
            suspects += begun or left
            pending += [s for s in left if s not in suspects]
        else:  # alone in its pool, the first task not finished killed the worker
            culprit = next(iter(rests))
            pending += [dataclasses.replace(s, game_numbers=rest) for s, rest in rests.items()
                        if rest and s is not culprit]
            if rests[culprit]:
                rest_of_culprit = dataclasses.replace(culprit, game_numbers=rests[culprit])
                turn = read_note(notes, culprit)
                suspects += _charge_death(store, rest_of_culprit, deaths, turn, summary, bar,
                                          _work_path(notes, culprit))


def _charge_death(store: Store, spec: MatchSpec, deaths: dict[str, int], turn: Turn | None,
                  summary: RunSummary, bar: Progress, workdir: Path) -> list[MatchSpec]:
    """The worker running `spec` alone (its bots in `workdir`) died during its first game: one more
    death for that game; at WORKER_DEATHS_PER_GAME the game is recorded as aborted, with what both
    bots printed. Returns what of `spec` is still to play."""
    number = spec.game_numbers[0]
    game_id = spec.game_id(number)
    deaths[game_id] = deaths.get(game_id, 0) + 1
    if deaths[game_id] < WORKER_DEATHS_PER_GAME:
        return [spec]
    ply, seat = seat_to_move(spec, number, turn)
    record = aborted_record(spec, number, ply, seat, deaths[game_id], bot_logs(workdir, spec, number))
    if store.add_game(spec.match_id, number, record):
        summary.stored += 1
        summary.aborted.append(game_id)
        bar.add(record)
    rest = spec.game_numbers[1:]
    return [dataclasses.replace(spec, game_numbers=rest)] if rest else []


def sealed(tournament: Tournament, out: Path, stream: TextIO | None = sys.stderr) -> Tournament:
    """The tournament with its file and results directory hidden from sandboxed bots; prints one
    line to `stream` (or stderr) for each thing not enforced (bots NOT isolated, limits without a
    cgroup, no freezing by default: arena.cell.notices). SandboxUnavailable (a ValueError, with the
    fix) for sandbox = on where bots cannot be isolated or have no cgroup."""
    for line in notices(tournament.limits.sandbox, tournament.limits.suspend):
        (stream or sys.stderr).write(line + "\n")  # even when quiet: never silent
    hide = (*tournament.limits.hide, os.path.abspath(tournament.path), os.path.abspath(out))
    return dataclasses.replace(tournament, limits=dataclasses.replace(tournament.limits, hide=hide))


@contextlib.contextmanager
def exclusive(path: Path, name: str) -> Iterator[None]:
    """Hold an exclusive lock on `path` (released by the kernel even after kill -9): two runs of the
    same tournament at once would play the same games twice (though each would be stored once).
    A new lock file is the user's only (0600)."""
    with open(os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600), "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.seek(0)
            pid = handle.read().strip() or "?"
            raise StoreError(f"another run of tournament {name!r} is in progress (pid {pid}); "
                             "wait for it or stop it first") from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def stop(pool: ProcessPoolExecutor, grace_s: float = _STOP_GRACE_S) -> None:
    """Interrupted: no task starts any more, every worker is interrupted (its referee stops the
    match and its bots; Ctrl-C at a terminal has interrupted them already, `kill -INT` of this
    process may not have) and ends; one still alive after `grace_s` is killed, and its bots'
    watchdogs kill its bots. Nothing more is stored: the stream is not read again (an interrupt may
    have cut a message in two), and the next run plays the games it held. A second Ctrl-C meanwhile
    only hurries the killing."""
    from multiprocessing.connection import wait as wait_for

    processes = [p for p in dict(getattr(pool, "_processes", None) or {}).values() if p.is_alive()]
    pool.shutdown(wait=False, cancel_futures=True)
    alive = {p.sentinel: p for p in processes}  # a sentinel is readable once its process has ended
    try:
        for process in processes:
            with contextlib.suppress(OSError):
                os.kill(process.pid, signal.SIGINT)
        deadline = time.monotonic() + grace_s
        while alive and time.monotonic() < deadline:
            for ended in wait_for(list(alive), timeout=max(0.0, deadline - time.monotonic())):
                del alive[ended]
    except KeyboardInterrupt:
        pass
    for process in alive.values():
        with contextlib.suppress(OSError, ValueError):
            process.kill()


def _make_pool(concurrency: int, stream: Any = None, notes: Path | None = None,
               reuse: bool = True, per_match: int = 2) -> ProcessPoolExecutor:
    """A pool of `concurrency` spawned workers, each in a match slot of its own (`per_match` cores
    a slot for pinned bots, arena.cell.limits.cores_per_match)."""
    context = multiprocessing.get_context("spawn")
    slots = context.Queue()
    for slot in range(concurrency):
        slots.put(slot)
    return ProcessPoolExecutor(max_workers=concurrency, mp_context=context,
                               initializer=_init_worker,
                               initargs=(os.getpid(), stream, notes, reuse, slots, per_match))


_RECORD_FIELDS = {f.name for f in dataclasses.fields(GameRecord)}


def _drain(stream: Any, store: Store, expected: dict[str, tuple[MatchSpec, int]], summary: RunSummary,
           bar: Progress) -> None:
    """Commit the games the workers streamed so far."""
    if stream is None:
        return
    while True:
        try:
            match_id, item = stream.get_nowait()
        except queue.Empty:
            return
        except (OSError, ValueError, EOFError):  # a worker died while writing: its games come again
            return
        if match_id == BOT_STARTS:
            with contextlib.suppress(TypeError, ValueError, AttributeError, KeyError):
                summary.bot_starts += int(json.loads(item)["bot_starts"])
            continue
        _store_one(store, item, expected, summary, bar, match_id)


def store_results(store: Store, spec: MatchSpec, results: Any, expected: dict[str, tuple[MatchSpec, int]],
                   summary: RunSummary, bar: Progress) -> None:
    """Check what a worker returned and commit each game of `spec` not yet committed."""
    if not isinstance(results, list):
        summary.failures.append(f"{spec.match_id}: the worker returned {type(results).__name__}, not a list")
        results = []
    for item in results:
        _store_one(store, item, expected, summary, bar, spec.match_id)
    for n in spec.game_numbers:
        if expected.get(spec.game_id(n), (None, None))[0] is spec:
            summary.failures.append(f"{spec.match_id}: game {spec.game_id(n)} did not come back")
            del expected[spec.game_id(n)]


def _store_one(store: Store, item: Any, expected: dict[str, tuple[MatchSpec, int]], summary: RunSummary,
               bar: Progress, match_id: str) -> None:
    """Commit one game record (JSON) if it is a game still expected, for the right players."""
    try:
        data = json.loads(item) if isinstance(item, str) else item
        record = GameRecord.from_dict({k: v for k, v in data.items() if k in _RECORD_FIELDS})
    except (TypeError, ValueError, AttributeError) as exc:
        summary.failures.append(f"{match_id}: unreadable game record ({exc})")
        return
    spec, number = expected.get(record.game_id, (None, -1))
    if spec is None:
        return  # already committed (streamed, then returned again), or not a game of this run
    if spec.match_id != match_id or list(record.players) != [b.name for b in spec.seats(number)]:
        summary.failures.append(f"{match_id}: unexpected game {record.game_id!r} "
                                f"players {record.players!r} (not stored)")
        return
    del expected[record.game_id]
    if store.add_game(spec.match_id, number, record):
        summary.stored += 1
        summary.game_s += record.duration_s
        summary.count_load(record)
        bar.add(record)
