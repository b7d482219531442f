"""Where the course's games are played: one tournament backend (arena.tournament.backends) shared by
every thread that needs games (the workers qualifying submissions, and whatever else the server runs).

A backend is driven from one thread, so a `GamePlayer` owns it in a thread of its own: `play(specs)`
hands the specs over and blocks its caller until every game of them is back, as `arena tournament
run` gets its games, with the same care for workers that die (an `aborted` record) and the same
workers (the local pool, or Dask with a cluster's address).

    player = GamePlayer(lambda: LocalPool(concurrency=2, reuse=False))
    player.start()
    records = player.play([spec])   # from any thread
    player.stop()

Without a running player (a command, a test) `play_each` plays the games in the caller's thread;
`Course.play` chooses between the two. `snapshot()` tells staff's queue page what is in flight.
"""
from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from arena.match.records import GameRecord
from arena.match.referee import run_match
from arena.match.spec import MatchSpec
from arena.tournament.backends import Backend, GameDone, LocalPool, Problem

log = logging.getLogger(__name__)

PlayGames = Callable[[list[MatchSpec]], list[GameRecord]]
"""What plays games: their specs -> the records, in order (Course.play, GamePlayer.play, play_each)."""
OnGame = Callable[[GameRecord], None]
"""Told of each game as it comes back, in the thread that asked for the games (a check's progress)."""

POLL_S = 0.1
"""How long the player's thread waits for new specs or events at a time (seconds)."""


class GamesLost(RuntimeError):
    """Games that did not come back (the backend gave them up): the one-line reasons."""


class PlayerStopped(GamesLost):
    """The player stopped (the server is stopping) before the games came back: nobody's fault, the
    job is played again when the server starts again."""


@dataclass
class _Order:
    """One caller's specs, and what came back of them."""

    specs: list[MatchSpec]
    records: dict[str, GameRecord] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    left: int = 0
    stopped: bool = False
    done: threading.Event = field(default_factory=threading.Event)
    since: float = field(default_factory=time.time)
    """When the caller handed it over (Unix time)."""

    arrived: queue.Queue[GameRecord] = field(default_factory=queue.Queue)
    """Each record as it came back, for the caller's `on_game` (the player's thread puts them)."""


@dataclass(frozen=True)
class InFlight:
    """A match handed to the player and not yet back, as staff's queue page shows it: its id
    ("qualify-12", "ladder-7", "phase-random-12"), its bots, its games and how many are back,
    and since when it waits or plays (Unix time)."""

    match_id: str
    bots: tuple[str, ...]
    games: int
    done: int
    since: float


class GamePlayer:
    """Plays MatchSpecs for many threads through one backend made by `make_backend` (default: a
    local pool of one worker that starts each match's bots afresh)."""

    def __init__(self, make_backend: Callable[[], Backend] | None = None) -> None:
        self.make_backend = make_backend or (lambda: LocalPool(concurrency=1, reuse=False))
        self._inbox: queue.Queue[_Order] = queue.Queue()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._failed: BaseException | None = None
        self._orders: list[_Order] = []
        """The orders handed over and not yet done (read by `snapshot`, changed under `_lock`)."""
        self._lock = threading.Lock()

    def start(self) -> None:
        self._stopping.clear()
        self._thread = threading.Thread(target=self._run, name="course-games", daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float | None = 10.0) -> None:
        """Stop the backend (its workers and bots at once when games are still in flight)."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout_s)
            self._thread = None

    def play(self, specs: list[MatchSpec], on_game: OnGame | None = None) -> list[GameRecord]:
        """Every game of `specs`, in order of the specs and their game numbers; GamesLost when some did
        not come back (or the player stopped first). `on_game(record)`: called in this thread for
        each game as it comes back."""
        if self._thread is None or not self._thread.is_alive():
            raise PlayerStopped(f"the course's game player is not running{self._why_down()}")
        order = _Order(list(specs), left=sum(len(s.game_numbers) for s in specs))
        with self._lock:
            self._orders.append(order)
        try:
            self._inbox.put(order)
            while not order.done.wait(POLL_S):
                _tell(order, on_game)
                if self._thread is None or not self._thread.is_alive():
                    raise PlayerStopped(f"the course's game player stopped{self._why_down()}")
            _tell(order, on_game)
        finally:
            with self._lock:
                self._orders.remove(order)
        if order.stopped:
            raise PlayerStopped("the server stopped before the games ended")
        if order.problems:
            raise GamesLost("; ".join(order.problems))
        return [order.records[s.game_id(n)] for s in order.specs for n in s.game_numbers]

    def snapshot(self) -> list[InFlight]:
        """The matches handed over and not yet back, oldest first: a cheap read-only copy (no
        backend call), for staff's queue page."""
        with self._lock:
            orders = list(self._orders)
        found = []
        for order in orders:
            done = set(order.records.copy())  # the player's thread adds to it: copied at once
            for spec in order.specs:
                ids = [spec.game_id(n) for n in spec.game_numbers]
                found.append(InFlight(spec.match_id, tuple(b.name for b in spec.bots), len(ids),
                                      sum(1 for i in ids if i in done), order.since))
        return found

    def _why_down(self) -> str:
        return f": {type(self._failed).__name__}: {self._failed}" if self._failed else ""

    def _run(self) -> None:
        orders: dict[str, _Order] = {}  # match id -> its caller's order
        try:
            with self.make_backend() as backend:
                while not self._stopping.is_set():
                    self._take_new(backend, orders)
                    if not backend.in_flight():
                        continue
                    for event in backend.events(timeout=POLL_S):
                        self._route(event, orders)
        except BaseException as exc:  # the callers are told; the server keeps its pages
            self._failed = exc
            log.exception("the course's game player stopped")
        finally:
            pending = list({id(o): o for o in orders.values()}.values())
            while not self._inbox.empty():
                pending.append(self._inbox.get_nowait())
            for order in pending:
                order.stopped = True
                order.done.set()

    def _take_new(self, backend: Backend, orders: dict[str, _Order]) -> None:
        """Submit what callers handed over (waiting a little when nothing is in flight)."""
        wait = not backend.in_flight()
        while True:
            try:
                order = self._inbox.get(timeout=POLL_S) if wait else self._inbox.get_nowait()
            except queue.Empty:
                return
            wait = False
            for spec in order.specs:
                try:
                    backend.submit(spec)
                except ValueError as exc:  # a game id already in flight: the caller's mistake
                    order.problems.append(str(exc))
                    order.left -= len(spec.game_numbers)
                    continue
                orders[spec.match_id] = order
            if order.left <= 0:
                order.done.set()

    @staticmethod
    def _route(event: object, orders: dict[str, _Order]) -> None:
        if isinstance(event, GameDone):
            order = orders.get(event.spec.match_id)
            if order is None:
                return
            order.records[event.record.game_id] = event.record
            order.arrived.put(event.record)
            order.left -= 1
        elif isinstance(event, Problem) and event.spec is not None:
            order = orders.get(event.spec.match_id)
            if order is None:
                return
            order.problems.append(event.why)
            order.left -= len(event.games)
        else:
            if isinstance(event, Problem):
                log.warning("%s", event.why)
            return
        if order.left <= 0:
            for spec in order.specs:
                orders.pop(spec.match_id, None)
            order.done.set()


def _tell(order: _Order, on_game: OnGame | None) -> None:
    """Hand `on_game` the records that came back since it was last told."""
    while True:
        try:
            record = order.arrived.get_nowait()
        except queue.Empty:
            return
        if on_game is not None:
            on_game(record)


def play_each(specs: list[MatchSpec], on_game: OnGame | None = None) -> list[GameRecord]:
    """Every game of `specs` here, one match after the other: the records, in order (`on_game`
    told of each as it ends)."""
    return [record for spec in specs for record in run_match(spec, on_game=on_game)]
