"""Backends: what plays MatchSpecs and streams their games back, the local process pool here, Dask's
backend beside the rest of Dask's code (arena.tournament.cluster.DaskBackend).

A backend takes MatchSpecs (`submit`) and yields events as they happen (`events`): each game that
comes back, once (GameDone, with its GameRecord), each match whose task returned (MatchDone), and
each problem (Problem: a one-line why, and the games given up, if any). What keeps a tournament
going when a worker dies stays inside the backend: the local pool replays the tasks that were
running one at a time, each alone in a pool of one worker, and records a game during which such a
worker died WORKER_DEATHS_PER_GAME times as `aborted`; Dask resubmits a match that killed its
workers, then records the game being played as `aborted` (arena.tournament.aborted). A backend is a
context manager: its workers, and the bots they keep, are stopped when it exits; at once when it
exits with an exception (Ctrl-C) or with games still in flight.

The tournament runner (arena.tournament.runner) is one loop over a backend: plan, submit, store
each game, plan the next Swiss round. A backend also works on its own, with no tournament and no
results database, e.g. to play a few games as jobs arrive:

    with LocalPool(concurrency=2) as pool:
        pool.submit(spec)                        # a MatchSpec (arena.match.spec)
        for event in pool.events(timeout=5.0):   # returns when nothing is in flight, or after 5 s
            if isinstance(event, GameDone):
                print(event.record.game_id, event.record.winner)

The game ids of the specs in flight at once must differ (a spec repeating one is refused). A backend
is driven from one thread (submit and events from the same one), like the runner's loop.

The local pool's workers are arena.tournament.workers.
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
import multiprocessing
import queue
import shutil
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.cell import scratch
from arena.cell.limits import cores_per_match
from arena.match.records import GameRecord
from arena.match.spec import MatchSpec
from arena.tournament.aborted import aborted_record, bot_logs
from arena.tournament.workers import (
    BOT_STARTS,
    PLAYING_DIR,
    Turn,
    interrupts_held,
    make_pool,
    note_path,
    play_task,
    read_note,
    seat_to_move,
    stop,
    work_path,
)

__all__ = [
    "WORKER_DEATHS_PER_GAME", "Backend", "Event", "GameDone", "LocalPool", "MatchDone",
    "Problem",
]

WORKER_DEATHS_PER_GAME = 2
"""A game whose worker process died this many times while it ran alone is recorded as `aborted`."""
_STREAM_POLL_S = 0.1
"""How often the parent takes the games workers streamed (seconds)."""
"""How often the parent looks for finished Dask tasks (seconds)."""


# --- the events ---

@dataclass(frozen=True)
class GameDone:
    """Game `number` of `spec` came back (each game once): its record, or an aborted record.
    `spec` is the MatchSpec it was played under: the one submitted, or what was left of it when it
    was played again (the same match id, fewer game numbers)."""

    spec: MatchSpec
    number: int
    record: GameRecord


@dataclass(frozen=True)
class MatchDone:
    """The task of `spec` returned (its games came back before, as GameDone, or as a Problem)."""

    spec: MatchSpec


@dataclass(frozen=True)
class Problem:
    """Something went wrong, in one line (`why`, naming the match); `games`: the game numbers of
    `spec` given up (they will not come back), none when only a stray record was refused."""

    spec: MatchSpec | None
    why: str
    games: tuple[int, ...] = ()


Event = GameDone | MatchDone | Problem
"""What a backend's `events` yield."""


# --- the parent side ---

_RECORD_FIELDS = {f.name for f in dataclasses.fields(GameRecord)}


class Backend:
    """What a backend is (LocalPool, DaskBackend): a context manager with `submit(spec)`, `events()`
    and `in_flight()`; and what both share: the games in flight (game id -> the spec it is played
    under, its number), how a task's records are checked, the events waiting to be yielded."""

    def __init__(self) -> None:
        self.bot_starts = 0
        """Bot processes the workers started (a bot kept between matches counts once)."""
        self.workers: int | None = None
        """Set when the backend exits: the workers a run's timing is recorded for (None: none)."""
        self.tags: dict[str, Any] = {}
        """What a run's timing record adds (Store.record_run)."""
        self.play_started: float | None = None
        """When play began (time.monotonic()), if later than the run's start (a cluster's check)."""
        self._expected: dict[str, tuple[MatchSpec, int]] = {}
        self._out: deque[Event] = deque()

    def __enter__(self) -> Backend:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        """Stop the workers (and the bots they keep); at once with an exception or games in flight."""

    def start(self) -> None:
        """Get ready to play (connect, check); submit does it when it was not done."""

    def submit(self, spec: MatchSpec) -> None:
        """Play `spec`: its games come back as events; ValueError if one of them is in flight."""
        raise NotImplementedError

    def in_flight(self) -> int:
        """Games submitted that have not come back yet (nor been given up)."""
        return len(self._expected)

    def _register(self, spec: MatchSpec) -> None:
        """`spec`'s games are in flight, played under `spec` (a spec rebuilt from what is left of
        another takes its games over)."""
        for n in spec.game_numbers:
            self._expected[spec.game_id(n)] = (spec, n)

    def _check_new(self, spec: MatchSpec) -> None:
        if not isinstance(spec, MatchSpec):
            raise TypeError(f"a backend plays MatchSpecs, not {type(spec).__name__}")
        taken = [spec.game_id(n) for n in spec.game_numbers if spec.game_id(n) in self._expected]
        if taken:
            raise ValueError(f"{spec.match_id}: game {taken[0]} is already being played")

    def _left(self, spec: MatchSpec) -> tuple[int, ...]:
        """The games of `spec` not come back yet (nor handed to another spec)."""
        return tuple(n for n in spec.game_numbers if self._expected.get(spec.game_id(n), (None,))[0] is spec)

    def _give_up(self, spec: MatchSpec, why: str, shown: tuple[int, ...] | None = None) -> None:
        """The games of `spec` not come back are given up: a Problem naming `shown` (by default
        those games)."""
        left = self._left(spec)
        for n in left:
            del self._expected[spec.game_id(n)]
        shown = left if shown is None else shown
        self._out.append(Problem(spec, f"{spec.match_id} games {list(shown)}: {why}", left))

    def _abort(self, spec: MatchSpec, record: GameRecord, number: int) -> None:
        """Game `number` of `spec` ends as the aborted `record`."""
        self._expected.pop(spec.game_id(number), None)
        self._out.append(GameDone(spec, number, record))

    def _returned(self, spec: MatchSpec, results: Any) -> None:
        """The task of `spec` returned `results`: check them and take each game not taken yet."""
        if not isinstance(results, list):
            self._out.append(Problem(spec, f"{spec.match_id}: the worker returned {type(results).__name__}, "
                                           "not a list"))
            results = []
        for item in results:
            self._take(item, spec.match_id)
        for n in self._left(spec):
            del self._expected[spec.game_id(n)]
            why = f"{spec.match_id}: game {spec.game_id(n)} did not come back"
            self._out.append(Problem(spec, why, (n,)))
        self._out.append(MatchDone(spec))

    def _take(self, item: Any, match_id: str) -> None:
        """One game record (JSON) from a worker, taken if it is a game in flight, for the right players."""
        try:
            data = json.loads(item) if isinstance(item, str) else item
            record = GameRecord.from_dict({k: v for k, v in data.items() if k in _RECORD_FIELDS})
        except (TypeError, ValueError, AttributeError) as exc:
            self._out.append(Problem(None, f"{match_id}: unreadable game record ({exc})"))
            return
        spec, number = self._expected.get(record.game_id, (None, -1))
        if spec is None:
            return  # taken already (streamed, then returned again), or not a game in flight
        if spec.match_id != match_id or list(record.players) != [b.name for b in spec.seats(number)]:
            self._out.append(Problem(None, f"{match_id}: unexpected game {record.game_id!r} "
                                           f"players {record.players!r} (not stored)"))
            return
        del self._expected[record.game_id]
        self._out.append(GameDone(spec, number, record))

    def _busy(self) -> bool:
        raise NotImplementedError

    def _step(self) -> None:
        """Wait a little for something to happen, and turn what happened into events."""
        raise NotImplementedError

    def events(self, timeout: float | None = None) -> Iterator[Event]:
        """The events as they happen, until nothing submitted is in flight any more, or until
        `timeout` seconds have passed (then call it again for the rest)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            while self._out:
                yield self._out.popleft()
            if not self._busy() or (deadline is not None and time.monotonic() >= deadline):
                return
            self._step()


class LocalPool(Backend):
    """The local process pool: `concurrency` spawned worker processes, each in a match slot of its
    own, each watching that this process lives, each keeping its bots from one match to the next
    unless `reuse` is False (arena.match.reuse). `executor`: any concurrent.futures-style executor
    to submit `task` to instead (no dead-worker replay then: a lost task is a Problem). `playing`: a
    directory to keep the games in progress in (PLAYING_DIR), emptied first and removed at exit.

    A worker that dies (a bot that kills its parent, a referee bug that takes the process down)
    breaks the pool: the tasks that were running become suspects, each replayed alone in a pool of
    one worker, where a death is unambiguous; the game being played when such a worker died (the
    first game of the task not come back) is charged one death, and at WORKER_DEATHS_PER_GAME it
    comes back as an `aborted` record with what both bots printed last: no bot is charged, since a
    bot can time the death to its opponent's turn."""

    def __init__(self, concurrency: int = 1, reuse: bool = True, executor: Executor | None = None,
                 task: Callable[[MatchSpec], list[str]] = play_task, playing: Path | None = None) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        super().__init__()
        self.concurrency, self.reuse, self.executor, self.task, self.playing = (
            concurrency, reuse, executor, task, playing)
        self.workers = concurrency if executor is None else None
        self._notes: Path | None = None
        self._kept: tuple[ProcessPoolExecutor, Any] | None = None
        """The shared pool and its stream, kept from one batch to the next so its workers keep their bots."""
        self._pool: Any = None
        """The pool playing the current batch (the shared one, a pool of one for suspects, the executor)."""
        self._stream: Any = None
        self._solo = False
        self._futures: dict[Future, tuple[int, MatchSpec]] = {}
        """The current batch's tasks still running, with their order of submission."""
        self._lost: list[tuple[int, MatchSpec]] = []
        """The current batch's tasks lost with their worker."""
        self._sent = 0
        self._waiting: list[MatchSpec] = []
        self._suspects: list[MatchSpec] = []
        self._deaths: dict[str, int] = {}
        """Game id -> worker deaths while it ran alone."""

    def __enter__(self) -> LocalPool:
        self._notes = scratch.make("notes")
        if self.playing is not None:
            shutil.rmtree(self.playing, ignore_errors=True)  # what a killed run left is stale
            self.playing.mkdir(exist_ok=True)
            (self._notes / PLAYING_DIR).symlink_to(self.playing.resolve(), target_is_directory=True)
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        try:
            if self.executor is None:
                if exc_type is not None or self._busy():
                    self.halt()
                elif self._kept is not None:  # the workers end (and stop their bots)
                    pool, stream = self._kept
                    self._kept = self._pool = None
                    pool.shutdown(wait=True)
                    self._drain(stream, games=False)  # what they streamed last: how many bots they started
        finally:
            if self._notes is not None:
                shutil.rmtree(self._notes, ignore_errors=True)
            if self.playing is not None:
                shutil.rmtree(self.playing, ignore_errors=True)

    def halt(self) -> None:
        """Stop at once (arena.tournament.backends.stop): no task starts any more, the workers stop
        their matches and their bots; what was in flight does not come back."""
        pools = {id(p): p for p in (self._pool, self._kept and self._kept[0]) if p is not None}
        self._pool = self._kept = None
        for pool in pools.values():
            stop(pool)

    def submit(self, spec: MatchSpec) -> None:
        """Play `spec` (its games come back as events)."""
        if self._notes is None:
            raise RuntimeError("a LocalPool plays inside a with statement (which stops its workers)")
        self._check_new(spec)
        self._register(spec)
        self._waiting.append(spec)
        self._launch()

    def _busy(self) -> bool:
        return bool(self._futures or self._lost or self._waiting or self._suspects)

    def _launch(self) -> None:
        """Hand what waits to a pool: to the one playing now if it takes more (the shared pool,
        unbroken, or the executor), else, once the batch is over, the suspects to a pool of one,
        or what waits to the shared pool."""
        if self._futures or self._lost:
            if self._solo or self._lost or not self._waiting:
                return
            batch, self._waiting = self._waiting, []
        elif self.executor is None and self._suspects:  # a suspect runs alone: a death is its own
            batch, self._suspects, self._solo, self._pool = self._suspects, [], True, None
        elif self._waiting:
            batch, self._waiting, self._solo = self._waiting, [], False
        else:
            return
        for spec in batch:  # a note left by an earlier try must not pass for this one's
            if self._notes is not None:
                note_path(self._notes, spec).unlink(missing_ok=True)
            self._register(spec)
        with interrupts_held():  # the pools and their queues start their processes here
            if self._pool is None:
                self._pool, self._stream = self._new_pool(batch[0])
            for k, spec in enumerate(batch):
                try:
                    future = self._pool.submit(self.task, spec)
                except BrokenProcessPool:  # broken meanwhile: played once the batch is over
                    self._broken(batch[k:])
                    break
                self._sent += 1
                self._futures[future] = (self._sent, spec)

    def _broken(self, unsent: list[MatchSpec]) -> None:
        """The pool broke before it took `unsent`: they wait for the batch's end (its tasks then
        fail too), or, if no task is running (a worker killed from outside while idle), for a new
        pool; an executor of the caller's cannot be replaced: they are given up."""
        if self.executor is not None and not self._futures:
            for spec in unsent:
                self._give_up(spec, "worker process died", spec.game_numbers)
            return
        self._waiting += unsent
        if not self._futures:
            self._pool.shutdown(wait=False, cancel_futures=True)
            if not self._solo:
                self._kept = None
            self._pool = self._stream = None

    def _new_pool(self, first: MatchSpec) -> tuple[Any, Any]:
        if self.executor is not None:
            return self.executor, None
        if self._solo:
            stream = multiprocessing.get_context("spawn").Queue()
            return make_pool(1, stream, self._notes, reuse=False), stream
        if self._kept is None:
            stream = multiprocessing.get_context("spawn").Queue()
            per_match = cores_per_match(first.limits.suspend) if first.limits is not None else 2
            self._kept = (make_pool(self.concurrency, stream, self._notes, self.reuse, per_match), stream)
        return self._kept

    def _step(self) -> None:
        if not self._futures:
            self._launch()
            return
        # wait() takes the futures' locks one by one: a Ctrl-C between two would leave one held, the
        # pool's manager thread would block on it, and this process would hang at exit (seen
        # once in a full run: the Ctrl-C under tee test). Held here, raised after.
        with interrupts_held():
            done, _ = wait(list(self._futures), timeout=_STREAM_POLL_S, return_when=FIRST_COMPLETED)
        self._drain(self._stream)
        for future in done:
            order, spec = self._futures.pop(future)
            try:
                results = future.result()
            except BrokenProcessPool:
                self._lost.append((order, spec))
                continue
            except Exception as exc:  # the referee failed on this match: report, go on
                self._give_up(spec, f"{type(exc).__name__}: {exc}", spec.game_numbers)
                continue
            self._returned(spec, results)
        if not self._futures:
            self._end_batch()
            self._launch()

    def _end_batch(self) -> None:
        """The batch's tasks are over. A broken pool, or a pool of one, is shut down; the tasks lost
        with a worker are played again: each that had begun as a suspect, alone (the first of a
        pool of one is the one its worker died in: one death for the game it was playing)."""
        self._drain(self._stream)
        lost, self._lost = [spec for _, spec in sorted(self._lost, key=lambda lost: lost[0])], []
        own, solo = self.executor is None, self._solo
        if own and (solo or lost):  # broken: do not wait for running matches
            self._pool.shutdown(wait=not lost, cancel_futures=True)
            if not solo:
                self._kept = None
        if own and (solo or lost) or not own:
            self._pool = self._stream = None
        self._solo = False
        if not lost:
            return
        rests = {s: self._left(s) for s in lost}
        left = [dataclasses.replace(s, game_numbers=rest) for s, rest in rests.items() if rest]
        if not own:
            for s, rest in rests.items():
                if rest:
                    self._give_up(s, "worker process died", rest)
        elif not solo:  # which of the running tasks killed it is not known: each runs alone
            notes = self._notes
            begun = [dataclasses.replace(s, game_numbers=rest) for s, rest in rests.items()
                     if rest and notes is not None and read_note(notes, s) is not None]
            self._suspects += begun or left
            self._waiting += [s for s in left if s not in self._suspects]
        else:  # alone in its pool, the first task not finished killed the worker
            culprit = next(iter(rests))
            self._waiting += [dataclasses.replace(s, game_numbers=rest) for s, rest in rests.items()
                              if rest and s is not culprit]
            if rests[culprit] and self._notes is not None:
                rest_of_culprit = dataclasses.replace(culprit, game_numbers=rests[culprit])
                turn = read_note(self._notes, culprit)
                self._suspects += self._charge_death(rest_of_culprit, turn, work_path(self._notes, culprit))
        for s in self._waiting + self._suspects:  # the rebuilt specs are what their games are played under
            self._register(s)

    def _charge_death(self, spec: MatchSpec, turn: Turn | None, workdir: Path) -> list[MatchSpec]:
        """The worker running `spec` alone (its bots in `workdir`) died during its first game: one more
        death for that game; at WORKER_DEATHS_PER_GAME the game comes back aborted, with what both
        bots printed. Returns what of `spec` is still to play."""
        number = spec.game_numbers[0]
        game_id = spec.game_id(number)
        self._deaths[game_id] = self._deaths.get(game_id, 0) + 1
        if self._deaths[game_id] < WORKER_DEATHS_PER_GAME:
            return [spec]
        ply, seat = seat_to_move(spec, number, turn)
        self._abort(spec, aborted_record(spec, number, ply, seat, self._deaths[game_id],
                                         bot_logs(workdir, spec, number)), number)
        rest = spec.game_numbers[1:]
        return [dataclasses.replace(spec, game_numbers=rest)] if rest else []

    def _drain(self, stream: Any, games: bool = True) -> None:
        """Take the games the workers streamed so far (`games` False: only count bot starts)."""
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
                    self.bot_starts += int(json.loads(item)["bot_starts"])
            elif games:
                self._take(item, match_id)
