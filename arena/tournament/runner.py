"""The tournament runner: plays every missing game of a tournament exactly once.

The tournament file is read by `arena.tournament.config` (re-exported here: `runner.load`).

One loop over a backend (arena.tournament.backends: the local process pool, or Dask with
`--cluster`): the parent process opens the results database (arena.store), accepts or refuses the
file's fingerprint, plans a MatchSpec for every chunk of games not yet stored, submits them to the
backend, and commits each game the backend streams back in its own transaction; a Swiss is played
round by round, each round planned from the stored results. Only the parent writes the database. A
task that is lost (run interrupted) simply leaves its games missing: the next run plays them.

What keeps a run going when a worker dies is the backend's: the local pool replays the tasks that
were running one at a time, and records a game during which such a worker died
WORKER_DEATHS_PER_GAME times as `aborted` (arena.tournament.aborted), with whose move it was and what
both bots printed last; Dask resubmits, then aborts. No bot is charged for an aborted game, and the
tournament completes. Aborted games are played again only by `run(..., retry_aborted=True)`.
"""
from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import os
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Executor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from arena.cell.notices import notices
from arena.match.records import GameRecord
from arena.match.spec import MatchSpec
from arena.tournament.aborted import aborted_record
from arena.tournament.backends import (
    WORKER_DEATHS_PER_GAME,
    Backend,
    Event,
    GameDone,
    LocalPool,
    MatchDone,
    Problem,
)
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
from arena.tournament.workers import (  # re-exported: the local pool's names as they were here
    BOT_STARTS,
    PLAYING_DIR,
    Turn,
    play_task,
    read_note,
    seat_to_move,
    show_playing,
    stop,
)

__all__ = [
    "BOT_STARTS", "DEFAULT_GAMES_PER_PAIRING", "DEFAULT_GAMES_PER_TASK", "DEFAULT_RESULTS_ROOT", "LOCK_NAME",
    "PLAYING_DIR", "BotEntry", "Progress", "RunSummary", "Tournament", "TournamentError", "Turn",
    "WORKER_DEATHS_PER_GAME", "check_resumable", "duration", "exclusive", "from_dict", "load", "plan",
    "play_task", "read_note", "run", "sealed", "seat_to_move", "show_playing", "stop", "aborted_record",
]

LOCK_NAME = "run.lock"
_TRACKER_QUIET = "ignore:resource_tracker:UserWarning:multiprocessing.resource_tracker"
"""A warning filter for multiprocessing's resource tracker (its own warnings): after this process is
killed (kill -9) it removes the pool's semaphores itself, and need not print "There appear to be N
leaked semaphore objects" about them."""


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
            if record.forfeiture is not None and record.forfeiture.under_load:
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
    backend: Backend | None = None,
) -> RunSummary:
    """Play every game of `tournament` not yet stored; each game is committed as it comes back.
    `retry_aborted`: first make the stored aborted games missing again (Store.retry_aborted), so
    they are played too.

    `backend`: what plays the matches (arena.tournament.backends: a LocalPool, a DaskBackend; not
    entered yet: the run enters it, and it exits when the run ends). By default the local pool:
    `concurrency` spawned workers (each watching that the parent lives), which keep their bots
    running from one match to the next unless `reuse` is False (arena.match.reuse); `executor`: any
    concurrent.futures-style executor to submit `task` to instead.

    `eta_s`: the plan's estimate of the wall time (arena.tournament.plan), shown as the time left
    until the first game of this run is stored. A Swiss is played round by round: each round is
    planned from the stored results once the round before it is stored. StoreError if the file
    changed in a way that breaks exactly-once.

    The results directory, its database and the run's lock are created the user's only (0700,
    0600), whatever the umask.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    if _TRACKER_QUIET not in sys.warnoptions:  # passed on to the tracker process when it starts
        sys.warnoptions.append(_TRACKER_QUIET)
    started = time.monotonic()
    out = tournament.results_dir(results_root)
    tournament = sealed(tournament, out, progress)
    if backend is None:
        backend = LocalPool(concurrency, reuse, executor, task, playing=out / PLAYING_DIR)
    return _run(tournament, out, backend, progress, started, eta_s, retry_aborted)


def _run(tournament: Tournament, out: Path, backend: Backend, progress: TextIO | None, started: float,
         eta_s: float | None, retry_aborted: bool) -> RunSummary:
    """The one loop: plan, submit to `backend`, commit what comes back, plan the next Swiss round."""
    summary = RunSummary()
    out.mkdir(mode=RESULTS_DIR_MODE, parents=True, exist_ok=True)
    with exclusive(out / LOCK_NAME, tournament.name), Store(out / DB_NAME) as store:
        store.accept_fingerprint(tournament.fingerprint())
        if retry_aborted:
            summary.retried = len(store.retry_aborted())
        stored = store.stored_numbers()
        summary.already = sum(len(v) for v in stored.values())
        specs = plan(tournament, stored, store.pairing_results())
        summary.planned = sum(len(s.game_numbers) for s in specs)
        bar: Progress | None = None
        try:
            with backend:  # its workers end (and stop their bots) here; at once if interrupted
                if specs:
                    backend.start()  # Dask: connect, and check every bot on every worker
                bar = Progress(tournament.total_games(), summary.already, progress, eta_s)
                bar.show()
                while specs:
                    summary.phases += 1
                    stored_before = summary.stored
                    for spec in specs:
                        backend.submit(spec)
                    for event in backend.events():
                        _commit(store, event, summary, bar)
                    specs = []
                    progressed = summary.stored > stored_before and not summary.failures
                    if tournament.format == "swiss" and progressed:
                        specs = plan(tournament, store.stored_numbers(), store.pairing_results())
                        summary.planned += sum(len(s.game_numbers) for s in specs)
        except KeyboardInterrupt:
            summary.interrupted = True
        finally:
            summary.bot_starts += backend.bot_starts
        if bar is not None:
            bar.show(final=True)
        summary.wall_s = time.monotonic() - started
        finished = summary.stored and not summary.interrupted and not summary.failures
        if backend.workers is not None and finished:  # what the plan calibrates its estimates with
            since = backend.play_started  # Dask: the cluster's start and check left out
            wall_s = summary.wall_s if since is None else time.monotonic() - since
            played = dataclasses.replace(summary, wall_s=wall_s)
            store.record_run({**played.timing(backend.workers), **backend.tags})
    return summary


def _commit(store: Store, event: Event, summary: RunSummary, bar: Progress) -> None:
    """What the backend streamed back: a game is committed in its own transaction."""
    if isinstance(event, GameDone):
        record = event.record
        if store.add_game(event.spec.match_id, event.number, record):
            summary.stored += 1
            if record.is_aborted():
                summary.aborted.append(record.game_id)
            else:
                summary.game_s += record.duration_s
                summary.count_load(record)
            bar.add(record)
    elif isinstance(event, MatchDone):
        summary.matches += 1
    elif isinstance(event, Problem):
        summary.failures.append(event.why)


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
