"""The backends on their own (arena.tournament.backends), with no tournament and no results database,
as the course server uses them: MatchSpecs in, every game's record out exactly once, real workers,
real bots; a worker killed by a bot gives an aborted game, once; the workers end with the backend."""
from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from arena.cell.launcher import resolve_command
from arena.cell.limits import Limits
from arena.match.clock import TimeControl
from arena.match.spec import BotSpec, MatchSpec
from arena.tournament.backends import WORKER_DEATHS_PER_GAME, GameDone, LocalPool, MatchDone, Problem

ROOT = Path(__file__).resolve().parents[1]
BROKEN = ROOT / "tests" / "bots" / "broken.py"
RANDOM = resolve_command("random")


def spec(match_id: str, games: tuple[int, ...], a: BotSpec | None = None, b: BotSpec | None = None,
         per_move: float = 0.5) -> MatchSpec:
    return MatchSpec(match_id=match_id, game="domineering",
                     bots=(a or BotSpec("one", RANDOM), b or BotSpec("two", RANDOM)),
                     time_control=TimeControl(per_move=per_move), game_numbers=games,
                     params={"rows": 4, "cols": 4}, limits=Limits(sandbox="off"))


def collect(backend, timeout_s: float = 120.0) -> list:
    events, deadline = [], time.monotonic() + timeout_s
    while backend.in_flight() and time.monotonic() < deadline:
        events += list(backend.events(timeout=1.0))
    assert not backend.in_flight(), f"games still in flight after {timeout_s} s"
    return events


def games_of(events) -> dict[str, list]:
    """game id -> the GameDone events for it (each must be there once)."""
    seen: dict[str, list] = {}
    for event in events:
        if isinstance(event, GameDone):
            seen.setdefault(event.record.game_id, []).append(event)
    return seen


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:  # a zombie is not alive
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_local_pool_plays_match_specs_and_gives_every_game_back_once():
    first, second = spec("one-vs-two", (0, 1)), spec("two-vs-one", (0, 1, 2), BotSpec("two", RANDOM),
                                                      BotSpec("one", RANDOM))
    with LocalPool(concurrency=2) as pool:
        pool.submit(first)
        pool.submit(second)
        with pytest.raises(ValueError, match="one-vs-two-g1 is already being played"):
            pool.submit(spec("one-vs-two", (1,)))  # a game in flight is not played twice
        assert pool.in_flight() == 5
        events = collect(pool)
        workers = [p.pid for p in pool._kept[0]._processes.values()]
    seen = games_of(events)
    assert sorted(seen) == ["one-vs-two-g0", "one-vs-two-g1", "two-vs-one-g0", "two-vs-one-g1",
                            "two-vs-one-g2"]
    assert all(len(done) == 1 for done in seen.values()), seen
    for game_id, (done,) in seen.items():
        assert done.spec.match_id == game_id.rsplit("-g", 1)[0] and game_id == done.spec.game_id(done.number)
        assert list(done.record.players) == [b.name for b in done.spec.seats(done.number)]
        assert done.record.moves and done.record.winner in (0, 1) and done.record.forfeit is None
    assert sorted(e.spec.match_id for e in events if isinstance(e, MatchDone)) == ["one-vs-two", "two-vs-one"]
    assert not [e for e in events if isinstance(e, Problem)]
    assert pool.bot_starts >= 2  # counted as the workers ended, each having kept its bots
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(pid) for pid in workers), "the pool's workers outlived it"


def test_events_return_at_their_timeout_and_the_rest_comes_on_the_next_call():
    with LocalPool(concurrency=1) as pool:
        slow = BotSpec("slow", (sys.executable, str(BROKEN), "sleep", "0.05"))  # 0.05 s a move
        pool.submit(spec("slow-vs-two", tuple(range(4)), slow))
        started = time.monotonic()
        early = list(pool.events(timeout=0.3))
        assert time.monotonic() - started < 5 and pool.in_flight() > 0
        events = early + collect(pool)
    seen = games_of(events)
    assert sorted(seen) == [f"slow-vs-two-g{n}" for n in range(4)] and all(len(d) == 1 for d in seen.values())


def test_a_ctrl_c_never_lands_inside_the_wait_for_the_pools_tasks(monkeypatch):
    """concurrent.futures.wait takes its futures' locks one by one: a KeyboardInterrupt between two
    leaves one held, and the pool's manager thread, then the process's exit, hang on it (`arena
    tournament run` was still alive 5 s after a Ctrl-C under tee, its workers killed). The pool holds
    SIGINT while it waits, and raises the interrupt once the wait is over."""
    from concurrent.futures import ThreadPoolExecutor

    from arena.tournament import backends

    real_wait, inside = backends.wait, []

    def wait(fs, timeout=None, return_when=backends.FIRST_COMPLETED):
        try:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C, now
            for _ in range(100_000):  # bytecodes: a handler that may run would run here
                pass
        except KeyboardInterrupt:
            inside.append("interrupted inside wait()")
            raise
        return real_wait(fs, timeout=timeout, return_when=return_when)

    monkeypatch.setattr(backends, "wait", wait)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in `arena`
    release = threading.Event()
    try:
        with ThreadPoolExecutor(1) as executor:
            try:
                with LocalPool(executor=executor, task=lambda spec: [] if release.wait(30) else []) as pool:
                    pool.submit(spec("one-vs-two", (0,)))
                    with pytest.raises(KeyboardInterrupt):
                        list(pool.events(timeout=10))
            finally:
                release.set()
    finally:
        signal.signal(signal.SIGINT, previous)
    assert inside == []


def test_a_worker_killed_by_a_bot_gives_an_aborted_game_once_and_the_other_games_back():
    killer = BotSpec("killer", (sys.executable, str(BROKEN), "killparent"))
    with LocalPool(concurrency=2) as pool:
        pool.submit(spec("killer-vs-two", (0,), killer))
        pool.submit(spec("one-vs-two", (0, 1)))
        events = collect(pool)
    seen = games_of(events)
    assert sorted(seen) == ["killer-vs-two-g0", "one-vs-two-g0", "one-vs-two-g1"]
    assert all(len(done) == 1 for done in seen.values()), seen
    (aborted,) = seen["killer-vs-two-g0"]
    assert aborted.record.is_aborted() and aborted.record.aborted["deaths"] == WORKER_DEATHS_PER_GAME
    assert "with killer (seat 0) to move" in aborted.record.aborted["detail"]
    assert all(not d.record.is_aborted() for (d,) in (seen["one-vs-two-g0"], seen["one-vs-two-g1"]))
    assert not [e for e in events if isinstance(e, Problem)]


def test_a_local_pool_refuses_to_play_outside_a_with_statement():
    with pytest.raises(RuntimeError, match="with statement"):
        LocalPool().submit(spec("one-vs-two", (0,)))


def test_a_dask_backend_plays_match_specs_and_gives_every_game_back_once():
    distributed = pytest.importorskip("distributed")
    from arena.tournament.cluster import DaskBackend

    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True,  # loopback only
                                  dashboard_address="127.0.0.1:0") as local, \
            distributed.Client(local) as client:
        with DaskBackend(client) as backend:
            backend.submit(spec("one-vs-two", (0, 1)))
            backend.submit(spec("two-vs-one", (0,), BotSpec("two", RANDOM), BotSpec("one", RANDOM)))
            events = collect(backend)
        assert backend.bot_starts >= 2 and backend.workers == 2
        workers = client.run(os.getpid)
    seen = games_of(events)
    assert sorted(seen) == ["one-vs-two-g0", "one-vs-two-g1", "two-vs-one-g0"]
    assert all(len(done) == 1 for done in seen.values()), seen
    assert all(d.record.moves and d.record.forfeit is None for (d,) in seen.values())
    assert sorted(e.spec.match_id for e in events if isinstance(e, MatchDone)) == ["one-vs-two", "two-vs-one"]
    assert not [e for e in events if isinstance(e, Problem)] and workers
