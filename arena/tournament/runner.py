"""The tournament runner: plays every missing game of a tournament exactly once.

The tournament file is read by `arena.tournament.config` (re-exported here: `runner.load`).

The parent: the parent process opens the results database (arena.store), accepts or refuses the
file's fingerprint, builds a MatchSpec for every chunk of games not yet stored, runs them through a
`concurrent.futures` executor (a ProcessPoolExecutor by default; any executor with `submit` works,
e.g. a Dask client's), and commits each returned game in its own transaction. Only the parent
writes the database. A task that is lost (killed worker, run interrupted) simply leaves its games
missing: the next run plays them.
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
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from arena.match import sandbox
from arena.match.records import GameRecord
from arena.match.spec import MatchSpec
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
from arena.tournament.store import DB_NAME, Store, StoreError, fingerprint_change

__all__ = [
    "DEFAULT_GAMES_PER_PAIRING", "DEFAULT_GAMES_PER_TASK", "DEFAULT_RESULTS_ROOT", "LOCK_NAME", "BotEntry",
    "Progress", "RunSummary", "Tournament", "TournamentError", "check_resumable", "exclusive", "from_dict",
    "load", "plan", "play_task", "run", "sealed", "store_results",
]

LOCK_NAME = "run.lock"
_POOL_RESTARTS = 2
"""How many times a broken process pool (a worker killed) is rebuilt before giving up."""
_PARENT_POLL_S = 0.5
_STREAM_POLL_S = 0.1
"""How often the parent commits the games workers streamed (seconds)."""


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


def play_task(spec: MatchSpec) -> list[str]:
    """Play `spec` (in a worker process) and return its game records as JSON strings.

    In the default pool each game is also sent to the parent as soon as it ends, so that it is
    committed at once rather than when the whole task returns."""
    from arena.match.referee import run_match

    stream = _STREAM

    def on_game(record: GameRecord) -> None:
        if stream is not None:
            try:
                stream.put((spec.match_id, record.to_json()))
            except Exception:  # the parent still gets the record in the returned list
                pass

    return [record.to_json() for record in run_match(spec, on_game=on_game)]


def _init_worker(parent_pid: int, stream: Any = None) -> None:
    """Worker initializer: keep the stream, and if the parent dies (even by kill -9), interrupt the
    running match so the referee stops its bots, then leave; the next run replays the lost games."""
    global _STREAM
    _STREAM = stream

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(_PARENT_POLL_S)
        _thread.interrupt_main()
        time.sleep(5.0)
        os._exit(1)

    threading.Thread(target=watch, name="arena-parent-watch", daemon=True).start()


# --- the parent side ---

@dataclass
class RunSummary:
    planned: int = 0
    stored: int = 0
    already: int = 0
    failures: list[str] = field(default_factory=list)
    interrupted: bool = False
    wall_s: float = 0.0

    @property
    def missing(self) -> int:
        return self.planned - self.stored


class Progress:
    """A one-line text progress bar with a running count of results, on stderr."""

    WIDTH = 30

    def __init__(self, total: int, done: int, stream: TextIO | None) -> None:
        self.total, self.done, self.stream = total, done, stream
        self.counts = {"seat 0 wins": 0, "seat 1 wins": 0, "draws": 0, "forfeits": 0}
        self.started = time.monotonic()
        self._last = 0.0
        self._printed = -1
        self._tty = bool(stream is not None and getattr(stream, "isatty", lambda: False)())

    def add(self, record: GameRecord) -> None:
        self.done += 1
        key = {0: "seat 0 wins", 1: "seat 1 wins"}.get(record.winner, "draws")  # type: ignore[arg-type]
        self.counts[key] += 1
        if record.forfeit:
            self.counts["forfeits"] += 1
        self.show()

    def line(self) -> str:
        filled = int(self.WIDTH * self.done / self.total) if self.total else self.WIDTH
        counts = ", ".join(f"{k} {v}" for k, v in self.counts.items())
        elapsed = time.monotonic() - self.started
        bar = "#" * filled + "." * (self.WIDTH - filled)
        return f"[{bar}] {self.done}/{self.total} games ({counts}) {elapsed:.0f}s"

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


def plan(tournament: Tournament, stored: dict[str, set[int]]) -> list[MatchSpec]:
    """MatchSpecs for every game not stored, in chunks of games_per_task, first chunks first."""
    chunked: list[list[MatchSpec]] = []
    for pairing in tournament.pairings():
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
) -> RunSummary:
    """Play every game of `tournament` not yet stored; each game is committed as it comes back.

    `executor`: any concurrent.futures-style executor (its `submit` must return Futures); by default
    a ProcessPoolExecutor of `concurrency` workers (spawned, each watching that the parent lives).
    StoreError if the file changed in a way that breaks exactly-once.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    started = time.monotonic()
    summary = RunSummary()
    out = tournament.results_dir(results_root)
    tournament = sealed(tournament, out, progress)
    umask = os.umask(0o077)  # results, logs and game files: the staff's user's only
    try:
        return _run(tournament, out, concurrency, executor, progress, task, started, summary)
    finally:
        os.umask(umask)


def _run(tournament: Tournament, out: Path, concurrency: int, executor: Executor | None,
         progress: TextIO | None, task: Callable[[MatchSpec], list[str]], started: float,
         summary: RunSummary) -> RunSummary:
    out.mkdir(parents=True, exist_ok=True)
    with exclusive(out / LOCK_NAME, tournament.name), Store(out / DB_NAME) as store:
        store.accept_fingerprint(tournament.fingerprint())
        stored = store.stored_numbers()
        summary.already = sum(len(v) for v in stored.values())
        specs = plan(tournament, stored)
        summary.planned = sum(len(s.game_numbers) for s in specs)
        bar = Progress(tournament.total_games(), summary.already, progress)
        bar.show()
        pending = list(specs)
        restarts = 0
        try:
            while pending:
                own = executor is None
                stream = multiprocessing.get_context("spawn").Queue() if own else None
                pool = executor if executor is not None else _make_pool(concurrency, stream)
                futures: dict[Future, MatchSpec] = {pool.submit(task, spec): spec for spec in pending}
                expected = {spec.game_id(n): (spec, n) for spec in pending for n in spec.game_numbers}
                pending = []
                broken = False
                clean = False
                try:
                    running = set(futures)
                    while running:
                        done, running = wait(running, timeout=_STREAM_POLL_S, return_when=FIRST_COMPLETED)
                        _drain(stream, store, expected, summary, bar)
                        for future in done:
                            spec = futures[future]
                            try:
                                results = future.result()
                            except BrokenProcessPool:
                                broken = True
                                pending.append(spec)
                                continue
                            except Exception as exc:  # the referee failed on this match: report, go on
                                summary.failures.append(f"{spec.match_id} games {list(spec.game_numbers)}: "
                                                        f"{type(exc).__name__}: {exc}")
                                continue
                            store_results(store, spec, results, expected, summary, bar)
                    _drain(stream, store, expected, summary, bar)
                    clean = not broken
                finally:
                    if own:  # after an interrupt, do not wait for the matches still running
                        pool.shutdown(wait=clean, cancel_futures=True)
                if broken:
                    restarts += 1
                    have = store.stored_numbers()
                    pending = [dataclasses.replace(s, game_numbers=left) for s in pending
                               if (left := tuple(n for n in s.game_numbers
                                                 if n not in have.get(s.match_id, set())))]
                    if restarts > _POOL_RESTARTS or not own:
                        summary.failures += [f"{s.match_id} games {list(s.game_numbers)}: worker process died"
                                             for s in pending]
                        pending = []
        except KeyboardInterrupt:
            summary.interrupted = True
        bar.show(final=True)
    summary.wall_s = time.monotonic() - started
    return summary


def sealed(tournament: Tournament, out: Path, stream: TextIO | None = sys.stderr) -> Tournament:
    """The tournament with its file and results directory hidden from sandboxed bots; prints one
    line to `stream` (or stderr) when bots will NOT be isolated (sandbox = auto on a machine that cannot).
    SandboxUnavailable (a ValueError, with the fix) for sandbox = on where bots cannot be isolated."""
    warning = sandbox.decide(tournament.limits.sandbox).warning()
    if warning:  # even when quiet: running unisolated bots is never silent
        (stream or sys.stderr).write(warning + "\n")
    hide = (*tournament.limits.hide, os.path.abspath(tournament.path), os.path.abspath(out))
    return dataclasses.replace(tournament, limits=dataclasses.replace(tournament.limits, hide=hide))


@contextlib.contextmanager
def exclusive(path: Path, name: str) -> Iterator[None]:
    """Hold an exclusive lock on `path` (released by the kernel even after kill -9): two runs of the
    same tournament at once would play the same games twice (though each would be stored once)."""
    with open(path, "a+") as handle:
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


def _make_pool(concurrency: int, stream: Any = None) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(max_workers=concurrency, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_init_worker, initargs=(os.getpid(), stream))


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
        bar.add(record)
