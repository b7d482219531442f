"""A tournament on a Dask cluster: `arena tournament run TOURNAMENT --cluster ADDRESS` (or `local:N`).

The same tournament as the local process pool, with the matches sent to Dask workers: each
MatchSpec chunk is one task (`run_match_task`) whose return value is its game records as JSON. The
run is the runner's one loop, its one entry point
(`arena.tournament.runner.run(..., backend=DaskBackend(...))`), over the DaskBackend kept here
beside the rest of Dask's code: the parent alone opens the SQLite database, and commits each game
as its task completes, so resume works the same way. This module keeps what is Dask's own: the
address and the connection, the worker side (the match task, its hubs, its progress events), the
bots' check on every worker.

- A worker that dies mid-match loses that match only: the scheduler runs the task again on another
  worker (a task that raised is retried `TASK_RETRIES` times). A task that killed
  `distributed.scheduler.allowed-failures` workers comes back as KilledWorker; the backend then
  rebuilds it from what has come back (only the games still missing) and submits it again, at most
  `RESUBMITS` times. After that, the game being played is recorded as `aborted`
  (arena.tournament.aborted: no bot is charged, its bots' logs stay on the worker) and the rest of
  the match is submitted afresh, so the tournament completes. Whose move it was comes from the
  workers: after each move a task logs the seat to move next as a scheduler event (topic
  `arena-progress:MATCH_ID`), which outlives the worker. A game comes back once per task, and a
  game already stored is never stored again (the parent drops it; the store's UNIQUE key would
  refuse it anyway).
- Before the first match, every worker present checks that it can start every bot: the command
  resolves there (program and script files exist) and the bot says hello within the referee's
  start-up limit. ClusterError names the worker and the bot.
- Each worker thread keeps the bots of its matches for its next matches of the run (WorkerHubs, a
  BotHub per thread, as the local pool's workers do): a bot is started once per worker thread, not
  once per match; the hubs close when the run ends, and die with their worker.
- A bot command whose program is the parent's Python (shipped bots: `python -m bots NAME`) runs
  under the worker's Python; every other path must exist on the workers as on this machine
  (a shared file system, or the same directory copied to every worker): docs/cluster.md.
- The workers of `local:N` are arena's own and write to its standard error: they load this module
  as their Dask preload (`dask_setup`), which keeps Dask's report of a heartbeat cut short by the
  worker's own close (an ERROR with a traceback, dask/distributed#7105) off a clean run's output.

dask and distributed are imported here only, and only when a cluster is used: arena runs without
them (`pip install '.[dask]'` in arena's checkout adds them).
"""
from __future__ import annotations

import atexit
import contextlib
import dataclasses
import functools
import logging
import os
import re
import secrets
import shutil
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

from arena.cell import scratch
from arena.match.spec import BotSpec, MatchSpec
from arena.tournament.aborted import aborted_record
from arena.tournament.backends import Backend
from arena.tournament.config import Tournament
from arena.tournament.workers import Turn, seat_to_move

INSTALL_HINT = "pip install '.[dask]' (in arena's checkout)"
LOCAL_PREFIX = "local:"
LOCAL_MAX_WORKERS_PER_CORE = 4
"""`local:N` refuses more than this many worker processes per core (a typo, not a plan)."""
CONNECT_TIMEOUT_S = 10.0
"""How long to try to reach a scheduler (seconds)."""
WORKER_WAIT_S = 30.0
"""How long to wait for a scheduler with no workers to get its first one (seconds)."""
CHECK_TIMEOUT_S = 120.0
"""How long the start-up check of the bots may take on every worker together (seconds)."""
CHECK_BATCH = 8
"""Bots a worker starts at once during the start-up check."""
TASK_RETRIES = 2
"""Dask retries of a match task that raised (the referee itself failing, not a bot forfeiting)."""
RESUBMITS = 2
"""Times the parent rebuilds and resubmits a match whose task killed too many workers; then the bot
to move forfeits the game being played."""
PROGRESS_TOPIC = "arena-progress:"
"""Prefix of the scheduler event topic on which a match task logs, after each move, who is to move."""
MAX_PROBLEMS_SHOWN = 10


class ClusterError(ValueError):
    """The cluster cannot be used (Dask missing, bad address, no workers, a bot missing on a worker)."""


# --- the address ---

def parse_cluster(text: str) -> tuple[str, int | str]:
    """("local", N) for `local:N`, ("address", text) for a scheduler address; ClusterError names
    a bad value."""
    text = str(text).strip()
    if text.startswith(LOCAL_PREFIX):
        count = text[len(LOCAL_PREFIX):]
        limit = LOCAL_MAX_WORKERS_PER_CORE * (os.cpu_count() or 1)
        if not count.isdigit() or not 1 <= int(count) <= limit:
            raise ClusterError(f"--cluster {text!r}: local:N needs N workers between 1 and {limit} "
                               f"({os.cpu_count()} cores here)")
        return "local", int(count)
    if not re.match(r"^([a-z][a-z0-9+]*://)?[^\s:/]+(:\d+)?$", text) or text.startswith("local"):
        raise ClusterError(f"--cluster {text!r}: not a Dask scheduler address (tcp://HOST:PORT) "
                           "nor local:N")
    return "address", text


def require_dask() -> Any:
    """The `distributed` module; ClusterError with the install hint when Dask is not installed."""
    try:
        import distributed
    except ImportError as exc:
        raise ClusterError(f"--cluster needs Dask, which is not installed here ({exc}): "
                           f"{INSTALL_HINT}") from None
    return distributed


@contextlib.contextmanager
def connect(cluster: str, connect_timeout_s: float = CONNECT_TIMEOUT_S,
            worker_wait_s: float = WORKER_WAIT_S) -> Iterator[Any]:
    """A distributed.Client for `cluster` (an address or local:N), closed at the end; a LocalCluster
    of N single-threaded worker processes is started for local:N and closed with it."""
    kind, value = parse_cluster(cluster)
    distributed = require_dask()
    with contextlib.ExitStack() as stack:
        if kind == "local":
            local = distributed.LocalCluster(n_workers=value, threads_per_worker=1, processes=True,
                                             host="127.0.0.1", dashboard_address="127.0.0.1:0",
                                             preload=[__name__])
            stack.enter_context(local)
            client = stack.enter_context(distributed.Client(local))
        else:
            try:
                client = distributed.Client(value, timeout=connect_timeout_s)
            except (OSError, TimeoutError, ValueError, TypeError) as exc:
                raise ClusterError(f"--cluster {value}: cannot reach a Dask scheduler there "
                                   f"({type(exc).__name__}: {exc})") from None
            stack.enter_context(client)
            try:
                client.wait_for_workers(1, timeout=worker_wait_s)
            except (TimeoutError, OSError) as exc:
                raise ClusterError(f"--cluster {value}: the scheduler has no workers "
                                   f"(none joined within {worker_wait_s:g} s: {exc})") from None
        yield client


# --- the worker side ---

HEARTBEAT_CUT = "Failed to communicate with scheduler during heartbeat"
"""How a Dask worker reports a heartbeat that failed on a connection error (distributed.worker)."""


class HeartbeatCutByClose(logging.Filter):
    """Drops a worker's report of a failed heartbeat while that worker is closing: its close shuts
    the connection a heartbeat in flight waits on, which Dask logs as an ERROR with a traceback
    (dask/distributed#7105) at the end of a run that went well. Any other report passes."""

    def __init__(self, worker: Any) -> None:
        super().__init__()
        self._worker = weakref.ref(worker)

    def filter(self, record: logging.LogRecord) -> bool:
        worker = self._worker()
        closing = worker is None or worker.status.name in ("closing", "closing_gracefully", "closed")
        return not (closing and record.getMessage().startswith(HEARTBEAT_CUT))


def dask_setup(worker: Any) -> None:
    """Dask's preload hook, run in each worker of a `local:N` cluster as it starts (a restarted
    worker too): its heartbeat cut by its own close is not reported."""
    logging.getLogger("distributed.worker").addFilter(HeartbeatCutByClose(worker))


def localize(bot: BotSpec, parent_python: str) -> BotSpec:
    """The bot as it runs on this machine: a command run by the parent's Python interpreter runs
    under this machine's (which has arena installed); every other command is unchanged."""
    argv = bot.command
    if argv and argv[0] == parent_python and parent_python != sys.executable:
        return BotSpec(bot.name, (sys.executable, *argv[1:]))
    return bot


class MatchCancelled(Exception):
    """Raised inside a match whose task was cancelled, so that the referee stops its bots."""


class WorkerHubs:
    """The bots a Dask worker process keeps from one match to the next (issue 15): one
    arena.match.reuse.BotHub per worker thread (a hub's ZeroMQ socket is used from one thread), made
    by the thread's first match of a run and kept for that run's next matches on the thread.

    A hub is closed (its idle bots told bye and stopped) when the run ends (`end_run`, which the
    parent calls on every worker), when the thread plays a match of another run, when a match ends
    with an exception (a cancelled task: its bots are not left mid-game in the hub), or when the
    worker process exits; a worker killed with kill -9 takes its bots with it (the hub's watchdog)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._hubs: dict[int, dict[str, Any]] = {}
        """Thread id -> {"run": run id, "hub": BotHub, "busy": bool, "ended": bool}."""
        self._starts: dict[str, int] = {}
        """Run id -> bot processes the hubs of this worker started for it."""

    def acquire(self, run_id: str) -> dict[str, Any]:
        """This thread's hub entry for `run_id`, marked busy (another run's hub is closed first)."""
        from arena.match.reuse import BotHub

        thread = threading.get_ident()
        with self._lock:
            entry = self._hubs.pop(thread, None)
        if entry is not None and (entry["run"] != run_id or entry["ended"]):
            entry["hub"].close()
            entry = None
        if entry is None:
            entry = {"run": run_id, "hub": BotHub(), "busy": False, "ended": False}
        with self._lock:
            entry["busy"] = True
            self._hubs[thread] = entry
        return entry

    def release(self, entry: dict[str, Any], started: int, failed: bool) -> None:
        """The match using `entry` is over, having started `started` bot processes; its hub is closed
        if the match `failed` or its run has ended meanwhile."""
        with self._lock:
            entry["busy"] = False
            self._starts[entry["run"]] = self._starts.get(entry["run"], 0) + started
            close = failed or entry["ended"]
            if close and self._hubs.get(threading.get_ident()) is entry:
                del self._hubs[threading.get_ident()]
        if close:
            entry["hub"].close()

    def end_run(self, run_id: str) -> int:
        """Close the hubs of `run_id` (a busy one when its match ends); the bot processes started
        for that run on this worker."""
        closing = []
        with self._lock:
            for thread, entry in list(self._hubs.items()):
                if entry["run"] == run_id:
                    entry["ended"] = True
                    if not entry["busy"]:
                        closing.append(self._hubs.pop(thread))
            started = self._starts.pop(run_id, 0)
        for entry in closing:
            entry["hub"].close()
        return started

    def close_all(self) -> None:
        """Close every hub (the worker process is exiting)."""
        with self._lock:
            entries, self._hubs = list(self._hubs.values()), {}
        for entry in entries:
            with contextlib.suppress(Exception):
                entry["hub"].close()


_WORKER_HUBS: WorkerHubs | None = None
_WORKER_HUBS_LOCK = threading.Lock()


def worker_hubs() -> WorkerHubs:
    """This worker process's WorkerHubs, made on its first match and closed when the process exits."""
    global _WORKER_HUBS
    with _WORKER_HUBS_LOCK:
        if _WORKER_HUBS is None:
            from multiprocessing.util import Finalize

            _WORKER_HUBS = WorkerHubs()
            Finalize(_WORKER_HUBS, _WORKER_HUBS.close_all, exitpriority=10)
            atexit.register(_WORKER_HUBS.close_all)
        return _WORKER_HUBS


def end_run(run_id: str) -> int:
    """On a worker, when a run ends: close its hubs; the bot processes this worker started for it."""
    return worker_hubs().end_run(run_id) if _WORKER_HUBS is not None else 0


def run_match_task(spec: MatchSpec, parent_python: str = sys.executable, run_id: str = "") -> list[str]:
    """One match on a Dask worker: its game records as JSON, in game order.

    The bots come from this worker thread's hub for run `run_id` and go back to it (WorkerHubs), so
    a bot is started once per worker thread rather than once per match. A task cancelled while it
    runs (the run was interrupted, or its client went away) stops at the next move instead of
    playing on for nobody (Dask itself cannot stop a running task), and its bots are stopped."""
    from arena.match.referee import run_match

    cancelled = _cancel_check()
    log_event = _event_logger(PROGRESS_TOPIC + spec.match_id)

    def on_move(record: Any, move: Any, state: Any) -> None:
        if cancelled():
            raise MatchCancelled(f"{spec.match_id}: the task was cancelled during {record.game_id}")
        log_event({"game_id": record.game_id, "ply": state.ply, "seat": state.seat})

    spec = dataclasses.replace(spec, bots=tuple(localize(b, parent_python) for b in spec.bots))
    hubs = worker_hubs()
    entry = hubs.acquire(run_id)
    before, failed = entry["hub"].started, True
    try:
        records = run_match(spec, on_move=on_move, hub=entry["hub"])
        failed = False
        return [record.to_json() for record in records]
    finally:
        hubs.release(entry, entry["hub"].started - before, failed)


def _event_logger(topic: str) -> Callable[[dict[str, Any]], None]:
    """A function logging a scheduler event on `topic` from this worker; does nothing outside a
    Dask worker."""
    try:
        from distributed import get_worker

        worker = get_worker()
    except Exception:
        return lambda message: None

    def log_event(message: dict[str, Any]) -> None:
        try:
            worker.log_event(topic, message)
        except Exception:  # progress is a hint: the match goes on without it
            pass

    return log_event


def last_turn(client: Any, spec: MatchSpec, number: int) -> Turn | None:
    """The last progress note the workers logged for game `number` of `spec`, if any."""
    game_id = spec.game_id(number)
    try:
        events = client.get_events(PROGRESS_TOPIC + spec.match_id)
    except Exception:
        return None
    for _, message in reversed(tuple(events)):
        if isinstance(message, dict) and message.get("game_id") == game_id:
            return Turn(game_id, int(message["ply"]), int(message["seat"]))
    return None


def _cancel_check() -> Callable[[], bool]:
    """A function telling whether the task running in this thread was cancelled; always False
    outside a Dask worker, or if this version of distributed keeps its task states elsewhere."""
    try:
        from distributed import get_worker
        from distributed.worker import thread_state

        worker, key = get_worker(), thread_state.key
        worker.state.tasks  # noqa: B018 - fails early on a distributed without it
    except Exception:
        return lambda: False

    def cancelled() -> bool:
        try:
            task = worker.state.tasks.get(key)
            return task is not None and task.state == "cancelled"
        except Exception:
            return False

    return cancelled


def check_bots(bots: list[BotSpec], game: str, params: dict[str, Any], parent_python: str,
               startup_timeout_s: float | None = None, sandbox_mode: str = "off") -> list[tuple[str, str]]:
    """On a worker: (bot name, why) for each bot that cannot start here or does not say hello
    within the start-up limit; ("", why) if the game itself does not load, or if bots cannot be
    isolated here while the tournament says `sandbox = "on"`. Empty: all is well."""
    import rules
    from arena.cell import sandbox
    from arena.cell.launcher import LaunchError, check_command

    try:
        isolation = sandbox.decide(sandbox_mode)
    except ValueError as exc:
        return [("", str(exc))]
    from arena.match.protocol import RefereeEndpoint
    from arena.match.referee import STARTUP_TIMEOUT_S

    timeout = STARTUP_TIMEOUT_S if startup_timeout_s is None else startup_timeout_s
    try:
        rules.load(game, **params)
    except ValueError as exc:
        return [("", f"game {game!r} does not load: {exc}")]
    sharing: dict[tuple[str, ...], list[str]] = {}  # a command is checked once for all its bots
    for bot in bots:
        sharing.setdefault(localize(bot, parent_python).command, []).append(bot.name)
    problems: list[tuple[str, str]] = []
    runnable: list[BotSpec] = []
    for command, names in sharing.items():
        bot = BotSpec(names[0], command)
        try:
            check_command(bot.command)
        except LaunchError as exc:
            problems.append((bot.name, str(exc)))
        else:
            runnable.append(bot)
    tmp = scratch.make("check")
    try:
        with RefereeEndpoint() as endpoint:
            for start in range(0, len(runnable), CHECK_BATCH):
                problems += _hello_batch(endpoint, runnable[start:start + CHECK_BATCH], tmp / str(start),
                                         timeout, sandboxed=isolation.sandboxed)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    first = {names[0]: names for names in sharing.values()}
    return [(name, why) for bot, why in problems for name in first.get(bot, [bot])]


def _hello_batch(endpoint: Any, batch: list[BotSpec], workdir: Path, timeout_s: float,
                 sandboxed: bool = False) -> list[tuple[str, str]]:
    """Start `batch` at once (each in its sandbox, on a private socket of its own, when
    `sandboxed`), wait for each hello, say bye and stop them all: the problems seen."""
    from arena.cell.launcher import BotProcess
    from arena.match.protocol import BYE, HELLO, PROTOCOL_VERSION, ProtocolError, decode_bot_message

    problems: list[tuple[str, str]] = []
    tokens = {secrets.token_hex(16): bot for bot in batch}
    processes: dict[str, BotProcess] = {}
    identities: list[bytes] = []
    try:
        for k, (token, bot) in enumerate(tokens.items()):
            try:
                process = BotProcess(bot.command, workdir / str(k),
                                     private=_private_socket(endpoint, workdir, k) if sandboxed else None)
                process.start(endpoint.endpoint, token)
            except (OSError, ValueError) as exc:
                problems.append((bot.name, f"cannot start {' '.join(bot.command)!r}: {exc}"))
                continue
            processes[token] = process
        deadline = time.monotonic() + timeout_s
        waiting = set(processes)
        while waiting and time.monotonic() < deadline:
            got = endpoint.receive(min(0.05, max(0.0, deadline - time.monotonic())))
            if got is not None and got[1] is not None:
                try:
                    message = decode_bot_message(got[1])
                except ProtocolError:
                    message = {"type": "?"}
                token = message.get("token") if message["type"] == HELLO else None
                if token in waiting:
                    waiting.discard(token)
                    identities.append(got[0])
                    if message["protocol"] != PROTOCOL_VERSION:
                        problems.append((tokens[token].name,
                                         f"said hello for protocol {message['protocol']}, "
                                         f"the referee speaks {PROTOCOL_VERSION}"))
            for token in list(waiting):
                status = processes[token].exit_status()
                if status is not None:
                    waiting.discard(token)
                    printed = processes[token].read_log(0, 300).strip()
                    problems.append((tokens[token].name, f"{status} before saying hello"
                                     + (f"; it printed: {printed}" if printed else "")))
        problems += [(tokens[token].name, f"no hello within {timeout_s:g} s") for token in waiting]
    finally:
        for identity in identities:
            endpoint.send(identity, {"type": BYE})
        for process in processes.values():
            process.stop(grace_s=0.2)
    return problems


def _private_socket(endpoint: Any, workdir: Path, k: int) -> Any:
    """A private ipc:// socket (PrivateSocket) for check bot `k`, in a directory only this process
    can enter."""
    from arena.cell.endpoint import PrivateSocket

    directory = workdir.parent / "ipc"
    directory.mkdir(mode=0o700, exist_ok=True)
    return PrivateSocket(endpoint, str(directory / f"{workdir.name}-{k}.sock"))


# --- the parent side ---

def check_workers(client: Any, tournament: Tournament, timeout_s: float = CHECK_TIMEOUT_S,
                  startup_timeout_s: float | None = None) -> list[str]:
    """Ask every worker to start every bot of `tournament` (one pinned task per worker); returns
    the workers' addresses, or ClusterError naming each worker and bot that failed."""
    distributed = require_dask()
    workers = sorted(client.nthreads())
    if not workers:
        raise ClusterError("the cluster has no workers")
    bots = [b.spec() for b in tournament.bots]
    futures = {
        client.submit(check_bots, bots, tournament.game, dict(tournament.params), sys.executable,
                      startup_timeout_s, tournament.limits.sandbox, workers=[w], allow_other_workers=False,
                      pure=False): w
        for w in workers
    }
    problems: list[str] = []
    try:
        distributed.wait(list(futures), timeout=timeout_s)
    except TimeoutError:
        pass
    for future, worker in futures.items():
        if future.status == "finished":
            for name, why in future.result():
                problems.append(f"worker {worker}: " + (f"bot {name!r}: " if name else "") + why)
        elif future.status == "error":
            exc = future.exception()
            text = _one_line(exc)
            hint = (" (is arena installed on the scheduler and on every worker, at the same version?)"
                    if isinstance(exc, ImportError) or "deserializ" in text else "")
            problems.append(f"worker {worker}: the bot check failed: {type(exc).__name__}: {text}{hint}")
        else:
            problems.append(f"worker {worker}: did not finish the bot check within {timeout_s:g} s")
    client.cancel(list(futures))
    if problems:
        shown = problems[:MAX_PROBLEMS_SHOWN]
        more = f"; and {len(problems) - len(shown)} more" if len(problems) > len(shown) else ""
        raise ClusterError("not every worker can start every bot (see docs/cluster.md): "
                           + "; ".join(shown) + more)
    return workers


@contextlib.contextmanager
def client_for(cluster: Any) -> Iterator[Any]:
    """A distributed.Client for `cluster`: connected to (and closed at the end) for an address or
    local:N; a Client given is the caller's, who closes it."""
    if isinstance(cluster, str):
        with connect(cluster) as client:
            yield client
    else:  # a distributed.Client made by the caller, who closes it
        yield cluster


def worker_threads(client: Any) -> int:
    """The threads of all the cluster's workers (at least 1): the workers of the plan's model."""
    return max(1, sum(client.nthreads().values()))


def end_run_on(client: Any, run_id: str) -> int:
    """Tell every worker the run is over (they close its hubs); the bot processes they started for
    it (those of a worker that died are not counted)."""
    try:
        counts = client.run(end_run, run_id, on_error="return")
    except Exception:  # the count is for the benchmarks; the workers' hubs close at their exit
        return 0
    return sum(n for n in counts.values() if isinstance(n, int))


def allowed_failures() -> int:
    """Workers a task may kill before the scheduler gives it up (KilledWorker)."""
    try:
        import dask

        return int(dask.config.get("distributed.scheduler.allowed-failures"))
    except Exception:
        return 0


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


_DASK_POLL_S = 0.05
"""How long the backend sleeps when no task has finished (seconds)."""


class DaskBackend(Backend):
    """Dask: each MatchSpec is one task (arena.tournament.run_match_task) on the cluster
    `cluster` (a distributed.Client, closed by its maker; or an address, or local:N, connected to
    at `start` and closed at exit). `check`: a tournament whose bots every worker must be able to
    start (check_workers, at `start`; a line on `progress` says so). `run_id` names the run
    to the workers, which keep its bots from one match to the next and stop them when it exits.

    A worker that dies mid-match loses that match only: the scheduler runs the task again (a task
    that raised, TASK_RETRIES times). A task that killed too many workers comes back as
    KilledWorker: the games not come back are submitted again, at most RESUBMITS times;
    then the game being played comes back `aborted` (no bot is charged, whose move it was from the
    workers' progress events) and the rest of the match is submitted afresh."""

    def __init__(self, cluster: Any, run_id: str | None = None, task: Callable[..., list[str]] | None = None,
                 check: Any = None, progress: TextIO | None = None) -> None:
        super().__init__()
        self.cluster, self.check, self.progress = cluster, check, progress
        self.run_id = run_id or secrets.token_hex(8)
        self.task = task
        self.tags = {"cluster": True}
        self.client: Any = None
        self._stack = contextlib.ExitStack()
        self._futures: dict[Any, tuple[MatchSpec, int]] = {}
        self._completed: Any = None

    def __enter__(self) -> DaskBackend:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        try:
            if self.client is not None:
                if self._futures:
                    self.client.cancel(list(self._futures))  # their matches notice, and stop their bots
                    self._futures.clear()
                self.bot_starts += end_run_on(self.client, self.run_id)
                if exc_type is None:
                    with contextlib.suppress(Exception):  # a client gone: the run's timing is not kept
                        self.workers = worker_threads(self.client)
        finally:
            self.client = None
            self._stack.close()

    def start(self) -> None:
        """Connect (unless given a client) and check the bots on every worker; ClusterError if the
        cluster cannot be used."""
        if self.client is not None:
            return
        distributed = require_dask()
        client = self._stack.enter_context(client_for(self.cluster))
        if self.check is not None:
            if self.progress is not None:
                link = getattr(client, "dashboard_link", None)
                workers = len(client.nthreads())
                shown = f" (dashboard: {link})" if link else ""
                self.progress.write(f"checking {len(self.check.bots)} bots on {workers} "
                                    f"Dask worker{'s' if workers != 1 else ''}{shown}\n")
            check_workers(client, self.check)
        if self.task is None:
            self.task = functools.partial(run_match_task, run_id=self.run_id)
        self._completed = distributed.as_completed()
        self.client = client
        self.play_started = time.monotonic()  # a run's timing leaves out the cluster's start and check

    def submit(self, spec: MatchSpec) -> None:
        """Play `spec` (its games come back as events)."""
        self._check_new(spec)
        self.start()
        self._send(spec, 0)

    def _send(self, spec: MatchSpec, attempt: int) -> None:
        self._register(spec)
        future = self.client.submit(self.task, spec, sys.executable, pure=False, retries=TASK_RETRIES)
        self._futures[future] = (spec, attempt)
        self._completed.add(future)

    def _busy(self) -> bool:
        return bool(self._futures)

    def _step(self) -> None:
        ready = self._completed.next_batch(block=False)
        if not ready:
            time.sleep(_DASK_POLL_S)
        for future in ready:
            self._finished(future)

    def _finished(self, future: Any) -> None:
        distributed = require_dask()
        spec, attempt = self._futures.pop(future)
        try:
            results = future.result()
        except distributed.KilledWorker:
            left = self._left(spec)
            if not left:
                return
            if attempt >= RESUBMITS:  # the game being played is aborted
                number, attempt = left[0], -1
                ply, seat = seat_to_move(spec, number, last_turn(self.client, spec, number))
                deaths = (RESUBMITS + 1) * (1 + allowed_failures())
                self._abort(spec, aborted_record(spec, number, ply, seat, deaths), number)
                left = left[1:]
            if left:
                self._send(dataclasses.replace(spec, game_numbers=left), attempt + 1)
            return
        except Exception as exc:  # the referee failed on this match: report, go on
            self._give_up(spec, f"{type(exc).__name__}: {' '.join(str(exc).split())}")
            return
        self._returned(spec, results)
