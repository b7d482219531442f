"""The local pool's worker processes (arena.tournament.backends.LocalPool): what runs in them.

Each worker is spawned, takes a match slot of its own (cores for pinned bots), watches that its
parent lives (if the parent dies, even by kill -9, the running match is interrupted so the referee
stops its bots), keeps its bots from one match to the next (a hub, arena.match.reuse), streams each
game to the parent as soon as it ends, and keeps a progress note (Turn) of its task, rewritten in
place after every move with one synchronous write (no buffer a killed process could lose), so that
the parent knows whose move it was if the worker dies; a task replayed alone runs its bots in a
directory beside that note, where the parent finds their logs. An interrupt (Ctrl-C, or the
parent's SIGINT) stops the match being played and its bots, and no later task starts.
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
import multiprocessing
import os
import shutil
import signal
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.cell.limits import set_match_cpus
from arena.match.records import GameRecord
from arena.match.spec import MatchSpec

PLAYING_DIR = "playing"
"""In the results directory while a run plays: one JSON file per game in progress (its id, game,
params, players and the moves so far), rewritten after every move by the worker playing it and
removed when the game ends, so that `arena serve` can show games as they are played. The workers
find it as <notes>/playing, a link the local pool makes in the directory of the progress notes."""
_PARENT_POLL_S = 0.1
"""How often a worker looks whether the run that started it is still there (a getppid() call)."""
_ORPHAN_GRACE_S = 0.5
"""A worker whose run died (kill -9) gives its referee this long to stop its bots, then exits."""
_STOP_GRACE_S = 2.0
"""Interrupted: how long the workers have to stop their matches and their bots before they are
killed (seconds; their bots' watchdogs then kill the bots)."""


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
    note = None if _NOTES is None else os.open(note_path(_NOTES, spec), flags, 0o600)

    def write(turn: Turn) -> None:
        if note is not None:
            os.pwrite(note, json.dumps(dataclasses.asdict(turn)).encode().ljust(_NOTE_BYTES), 0)

    def on_move(record: GameRecord, move: Any, state: Any) -> None:
        if playing is not None:
            show_playing(playing, record)
        write(Turn(record.game_id, state.ply, state.seat))
        if _STOPPING:  # interrupted, but the interrupt was lost (see _on_unraisable)
            raise KeyboardInterrupt

    workdir = None if _NOTES is None or hub is not None else work_path(_NOTES, spec)
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


def note_path(directory: Path, spec: MatchSpec) -> Path:
    return directory / f"{spec.match_id}-{spec.game_numbers[0]}.turn"


def work_path(directory: Path, spec: MatchSpec) -> Path:
    """Where the task `spec` runs its bots when it keeps none between matches (a task replayed alone)."""
    return directory / f"{spec.match_id}-{spec.game_numbers[0]}.work"


def read_note(directory: Path, spec: MatchSpec) -> Turn | None:
    """The last progress note of the task `spec` in `directory`, None if it never started."""
    try:
        data = json.loads(note_path(directory, spec).read_bytes().strip() or b"null")
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
        if _PLAYING:  # the referee stops its bots: a real SIGINT to the main thread, so that a wait
            with contextlib.suppress(Exception):  # in a system call ends now, not after the move
                signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)  # type: ignore[arg-type]
            time.sleep(_ORPHAN_GRACE_S)
        os._exit(1)  # the bots' watchdog kills whatever is left once this process is gone

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
def interrupts_held() -> Iterator[None]:
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


def make_pool(concurrency: int, stream: Any = None, notes: Path | None = None,
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
