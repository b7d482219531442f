"""Tournaments on a Dask cluster (arena.cluster): on a LocalCluster of 2 workers, the same games and
standings as the local pool with the same seeds, resume included; a worker killed mid-match loses
and repeats no game; every worker checks every bot at start-up; a clear error without Dask."""
from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import ENV, run_arena

from arena.tournament import runner as tmod
from arena.tournament.store import DB_NAME, Store

ROOT = Path(__file__).resolve().parents[1]
BROKEN = ROOT / "tests" / "bots" / "broken.py"


def write(path: Path, games=4, bots=("r1", "r2", "r3"), per_task=2, limits: str = "") -> Path:
    # 2 s a move: random bots answer in milliseconds, and a busy run (two hogs) once timed one out
    # at 0.2 s, so the pool's games and the cluster's differed
    lines = ['game = "domineering"', 'time = "2"', f"games_per_pairing = {games}", "seed = 7",
             f"games_per_task = {per_task}", "[params]", "rows = 5", "cols = 5"]
    if limits:
        lines += ["[limits]", limits]
    for bot in bots:
        name, command = bot if isinstance(bot, tuple) else (bot, "random")
        lines.append(f"[[bots]]\nname = \"{name}\"\ncommand = {json.dumps(command)}")
    path.write_text("\n".join(lines) + "\n")
    return path


def played(results_dir: Path) -> dict[str, tuple]:
    """game id -> what was played: pairing, number, players, moves, winner, reason, forfeit."""
    with Store(results_dir / DB_NAME, create=False) as store:
        return {g.record.game_id: (g.pairing, g.number, tuple(g.record.players),
                                   tuple(m.move for m in g.record.moves), g.record.winner, g.record.reason,
                                   g.record.forfeit)
                for g in store.games()}


def standings_of(results_dir: Path):
    from arena.tournament.standings import read

    return read(results_dir).tables[0].frame


QUIET = {
    "distributed.admin.tick.interval": "1s",  # the event loops' health check, every 20 ms
    "distributed.worker.profile.enabled": False,  # the workers' profiler, sampling every 10 ms
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.admin.system-monitor.interval": "1s",
    "distributed.deploy.lost-worker-timeout": "1h",
}
"""Dask settings of the tests' clusters. Dask watching itself costs an idle LocalCluster of 2 workers
about 0.2 CPU s a second (its scheduler, nannies and workers), 0.03 with these: none of it is
arena's, and none of it is checked. A worker lost for `lost-worker-timeout` (15 s by default) has
its nanny closed by the cluster: a test that kills workers faster than a loaded machine restarts
them was left with none (`workers {}`)."""


def quiet_env() -> dict[str, str]:
    """ENV with QUIET for an `arena` process's own cluster (Dask reads DASK_A__B_C as a.b-c)."""
    return {**ENV, **{"DASK_" + key.upper().replace(".", "__").replace("-", "_"): str(value)
                      for key, value in QUIET.items()}}


@contextlib.contextmanager
def local_cluster(workers: int = 2, threads: int = 1, processes: bool = True, settings: dict | None = None):
    """A Client of a LocalCluster on 127.0.0.1, with QUIET and Dask `settings`."""
    distributed = pytest.importorskip("distributed")
    import dask

    # the HTTP servers: the scheduler's, and an in-process worker's, listen on 0.0.0.0 unless told
    loopback = {"dashboard_address": "127.0.0.1:0"}
    if not processes:
        loopback["worker_dashboard_address"] = "127.0.0.1:0"
    with dask.config.set({**QUIET, **(settings or {})}), \
            distributed.LocalCluster(n_workers=workers, threads_per_worker=threads, processes=processes,
                                     **loopback) as local, \
            distributed.Client(local) as client:
        yield client


FORKED = {"distributed.worker.multiprocessing-method": "forkserver"}
"""Dask settings for a cluster whose workers are forked from this process's fork server, which has
imported Dask and arena's match code (forked_workers), rather than each a new Python importing them
(spawn: about 1.7 CPU s a worker, 0.3 forked). The workers are processes all the same, killed and
started again by their nannies as any."""

PRELOAD = ["distributed", "arena.tournament.cluster", "arena.match.referee", "arena.match.reuse"]
"""What the fork server imports for its workers (distributed's own choice adds numpy and pandas,
which a worker playing matches never imports, and leaves out arena, which each would)."""

_fork_users: list[object] = []


@contextlib.contextmanager
def forked_workers():
    """For clusters made with FORKED inside: this process's fork server, importing PRELOAD, started
    by the first of them (at its caller's priority, a timing test's), or if one runs already raised
    to the caller's priority meanwhile (its children started then inherit it); stopped when its last
    user ends, their clusters closed by then (a worker's exit is reported through the server)."""
    from multiprocessing import forkserver

    utils = pytest.importorskip("distributed.utils")
    server, me = forkserver._forkserver, object()
    if not _fork_users:
        assert server._forkserver_pid is None, "a fork server runs already, with another preload"
        server.set_forkserver_preload(PRELOAD)
        utils._forkserver_preload_set = True  # else distributed sets its own preload
    running = server._forkserver_pid
    if running is not None:
        priority = os.getpriority(os.PRIO_PROCESS, running)
        with contextlib.suppress(OSError):  # raising it needs root, as TIMING_BOOST does
            os.setpriority(os.PRIO_PROCESS, running, os.getpriority(os.PRIO_PROCESS, 0))
    _fork_users.append(me)
    try:
        yield
    finally:
        _fork_users.remove(me)
        if running is not None:
            with contextlib.suppress(OSError):
                os.setpriority(os.PRIO_PROCESS, running, priority)
        if not _fork_users:
            server._stop()
            utils._forkserver_preload_set = False


@pytest.fixture(scope="module")
def client():
    """The module's cluster: 2 worker processes of 1 thread (forked). A test that kills a worker
    waits for its nanny to start it again, leaving the cluster as it found it."""
    with forked_workers(), local_cluster(settings=FORKED) as c:
        yield c


def test_cluster_plays_the_same_games_as_the_local_pool(tmp_path, client):
    from arena.tournament import cluster

    path = write(tmp_path / "same.toml", games=4)
    pool = tmod.run(tmod.load(path), tmp_path / "pool", concurrency=2, progress=None)
    assert pool.stored == 12 and not pool.failures
    # on the cluster in two runs: 2 games a pairing, then raised to 4 (resume plays only the rest)
    write(path, games=2)
    tour = tmod.load(path)
    first = tmod.run(tour, tmp_path / "dask", progress=None, backend=cluster.DaskBackend(client, check=tour))
    assert (first.stored, first.already, first.failures) == (6, 0, [])
    write(path, games=4)
    tour = tmod.load(path)
    second = tmod.run(tour, tmp_path / "dask", progress=None, backend=cluster.DaskBackend(client, check=tour))
    assert (second.planned, second.stored, second.already, second.failures) == (6, 6, 6, [])
    tour = tmod.load(path)
    third = tmod.run(tour, tmp_path / "dask", progress=None, backend=cluster.DaskBackend(client, check=tour))
    assert (third.planned, third.stored) == (0, 0)

    local_games, dask_games = played(tmp_path / "pool" / "same"), played(tmp_path / "dask" / "same")
    assert len(dask_games) == 12
    assert dask_games == local_games  # same ids, seats, moves, winners: the random bot follows the seed
    assert len({moves for _, _, _, moves, _, _, _ in dask_games.values()}) == 12  # 12 different games
    assert all(forfeit is None for *_, forfeit in dask_games.values())
    local_table = standings_of(tmp_path / "pool" / "same")
    dask_table = standings_of(tmp_path / "dask" / "same")
    assert dask_table.equals(local_table), (dask_table, local_table)


def test_each_worker_keeps_its_bots_from_one_match_to_the_next(tmp_path, client):
    """Issue 15 on Dask: a worker starts a bot once and plays all its matches with that process;
    the run counts the starts, and stops the kept bots when it ends."""
    from arena.tournament import cluster

    starts = tmp_path / "starts"
    bots = [(name, ["sh", "-c", f"echo {name} $$ $PPID >> {starts}; exec {sys.executable} -m bots random"])
            for name in ("a", "b", "c")]
    tour = tmod.load(write(tmp_path / "keep.toml", games=4, bots=bots, per_task=1, limits='sandbox = "off"'))
    summary = tmod.run(tour, tmp_path / "res", progress=None, backend=cluster.DaskBackend(client))
    assert (summary.stored, summary.failures) == (12, [])  # 12 matches of one game: 24 seats
    lines = [line.split() for line in starts.read_text().splitlines()]
    workers = set(client.run(os.getpid).values())
    by_worker: dict[tuple[str, int], set[int]] = {}
    for name, pid, parent in lines:
        by_worker.setdefault((name, int(parent)), set()).add(int(pid))
    assert {parent for _, parent in by_worker} <= workers, (by_worker, workers)
    assert all(len(pids) == 1 for pids in by_worker.values()), by_worker  # one process per bot and worker
    assert len(lines) <= 3 * len(workers) and summary.bot_starts == len(lines), (lines, summary.bot_starts)
    alive = still_running({int(pid) for _, pid, _ in lines}, 10)  # the run's end closed the hubs
    assert not alive, f"kept bots still running after the run: {alive}"


def test_a_worker_with_two_threads_keeps_a_hub_for_each(tmp_path):
    """A hub's socket is used from one thread: each thread of a worker keeps bots of its own. The
    worker runs in this process (what is checked is its threads; the module's cluster has worker
    processes of one thread), its bots are processes as on any worker."""
    from arena.tournament import cluster

    starts = tmp_path / "starts"
    bots = [(name, ["sh", "-c", f"echo {name} $$ >> {starts}; exec {sys.executable} -m bots random"])
            for name in ("a", "b", "c")]
    tour = tmod.load(write(tmp_path / "two.toml", games=4, bots=bots, per_task=1, limits='sandbox = "off"'))
    with local_cluster(workers=1, threads=2, processes=False) as c:
        summary = tmod.run(tour, tmp_path / "res", progress=None, backend=cluster.DaskBackend(c))
    assert (summary.stored, summary.failures) == (12, [])
    lines = starts.read_text().splitlines()
    assert summary.bot_starts == len(lines) <= 6, lines  # at most once per bot and thread, not 24


def descendants(pid: int) -> set[int]:
    """The processes below `pid` (from /proc)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def still_running(pids: set[int], timeout_s: float) -> set[int]:
    """Those of `pids` still running (not zombies) after up to `timeout_s` seconds."""
    deadline, alive = time.monotonic() + timeout_s, set(pids)
    while alive and time.monotonic() < deadline:
        for pid in list(alive):
            try:
                if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                    alive.discard(pid)
            except (OSError, IndexError):
                alive.discard(pid)
        time.sleep(0.05)
    return alive


def test_a_worker_killed_mid_match_loses_and_repeats_no_game(tmp_path, client):
    """kill -9 of a worker of the module's cluster mid-match: its match is played again on the other
    worker, no game is stored twice, its bots die with it; its nanny starts it again."""
    from arena.tournament import cluster

    tour = tmod.load(write(tmp_path / "kill.toml", games=4, bots=("a", "b", "c", "d"), per_task=4))
    db = tmp_path / "res" / "kill" / DB_NAME
    outcome: dict = {}
    runner = threading.Thread(
        target=lambda: outcome.update(summary=tmod.run(tour, tmp_path / "res", progress=None,
                                                       backend=cluster.DaskBackend(client, check=tour))))
    runner.start()
    killed = None
    try:
        deadline = time.monotonic() + 60
        while killed is None and time.monotonic() < deadline and runner.is_alive():
            try:
                with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
                    stored = con.execute("SELECT COUNT(*) FROM games").fetchone()[0]
            except sqlite3.Error:  # not created yet
                stored = 0
            busy = [w for w, keys in client.processing().items()
                    if any("run_match_task" in str(k) for k in keys)]
            if stored >= 4 and busy:
                pid = client.run(os.getpid, workers=[busy[0]])[busy[0]]
                bots = descendants(pid)  # its kept bots and its match's, their sandboxes, the watchdog
                os.kill(pid, signal.SIGKILL)  # mid-match: its task goes to another worker
                killed = busy[0]
            time.sleep(0.02)
        runner.join(120)
        assert killed is not None, "no worker was killed: the run ended too soon"
        assert not runner.is_alive()
        assert bots and not still_running(bots, 10), "the killed worker's bots outlived it"
    finally:
        runner.join(120)
        if killed is not None:
            wait_for_workers(client, 2, gone=killed)
    summary = outcome["summary"]
    assert summary.failures == [] and summary.stored == 24 and not summary.interrupted
    with sqlite3.connect(db) as con:
        keys = con.execute("SELECT pairing, number, game_id FROM games ORDER BY pairing, number").fetchall()
    pairings = [p.pairing_id for p in tour.pairings()]
    assert [(p, n) for p, n, _ in keys] == sorted((p, n) for p in pairings for n in range(4))
    assert all(g == f"{p}-g{n}" for p, n, g in keys)


def wait_for_workers(client, count: int, gone: str, timeout_s: float = 60) -> None:
    """Wait until the cluster has `count` workers again, `gone` (a worker killed) not among them."""
    deadline = time.monotonic() + timeout_s
    while True:
        workers = client.nthreads()
        if gone not in workers and len(workers) == count:
            return
        if time.monotonic() > deadline:
            pytest.fail(f"{timeout_s:g} s after {gone} was killed, the cluster's workers are {workers}, "
                        f"not {count} others")
        time.sleep(0.1)


def test_every_worker_checks_every_bot_at_start_up(tmp_path, client):
    from arena.tournament import cluster

    dead = tmp_path / "dead.py"
    dead.write_text("import sys\nprint('no module named torch')\nsys.exit(1)\n")
    gone = tmp_path / "gone.py"
    gone.write_text("")
    tour = tmod.load(write(tmp_path / "check.toml", bots=(
        "r1", ("dead", f"{sys.executable} {dead}"), ("gone", f"{sys.executable} {gone}"),
        ("dead2", f"{sys.executable} {dead}"),  # the same command: checked once, reported for both
        ("silent", f"{sys.executable} {BROKEN} silent"))))
    gone.unlink()  # there when the file was read, missing on the workers
    with pytest.raises(cluster.ClusterError) as caught:
        cluster.check_workers(client, tour, startup_timeout_s=5.0)  # 1 s: too short under load
    message = str(caught.value)
    for worker in client.nthreads():
        assert f"worker {worker}: bot 'dead': exited with code 1 before saying hello" in message
        assert f"worker {worker}: bot 'dead2': exited with code 1 before saying hello" in message
        assert f"worker {worker}: bot 'gone': " in message and "no file" in message
        assert f"worker {worker}: bot 'silent': no hello within 5 s" in message
    assert "no module named torch" in message and "'r1'" not in message
    ok = tmod.load(write(tmp_path / "ok.toml"))
    assert sorted(cluster.check_workers(client, ok)) == sorted(client.nthreads())


arena = run_arena


def _listening_addresses(pid: int) -> set[str]:
    """The local addresses (hex, as /proc/net/tcp* writes them) of the TCP sockets `pid` listens on."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            target = os.readlink(fd)
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # LISTEN
                found.add(fields[1].rsplit(":", 1)[0])
    return found


def test_a_local_cluster_listens_on_loopback_only():
    """`--cluster local:N` starts its scheduler and its dashboard (in this process) on 127.0.0.1
    only: a local cluster serves this machine (Dask's dashboard listens on every address unless
    told)."""
    pytest.importorskip("distributed")
    from arena.tournament.cluster import connect

    with connect("local:1") as client:
        assert client.scheduler.address.startswith("tcp://127.0.0.1:"), client.scheduler.address
        listening = _listening_addresses(os.getpid())
    loopback = {"0100007F", "00000000000000000000000001000000"}  # 127.0.0.1, ::1
    assert listening and listening <= loopback, listening


def test_command_line_on_a_local_cluster(tmp_path, client):
    pytest.importorskip("distributed")
    write(tmp_path / "cli.toml", games=2)
    done = arena("tournament", "run", "cli.toml", "--cluster", "local:1", cwd=tmp_path, env=quiet_env())
    assert done.returncode == 0, done.stderr
    assert "checking 3 bots on 1 Dask worker " in done.stderr  # local:N starts N workers
    assert "6/6 games" in done.stderr and "rank" in done.stdout and "Traceback" not in done.stderr
    # a bot no worker can start: one line naming the worker and the bot, exit 2, nothing played
    dead = tmp_path / "dead.py"
    dead.write_text("import sys\nsys.exit(3)\n")
    write(tmp_path / "bad.toml", games=2, bots=("r1", ("dead", f"{sys.executable} {dead}")))
    refused = arena("tournament", "run", "bad.toml", "--cluster", client.scheduler.address, cwd=tmp_path)
    assert refused.returncode == 2, refused.stderr
    error = [line for line in refused.stderr.splitlines() if line.startswith("arena: error:")]
    assert len(error) == 1 and "worker tcp://" in error[0] and "bot 'dead': exited with code 3" in error[0]
    assert "Traceback" not in refused.stderr
    with Store(tmp_path / "results" / "bad" / DB_NAME, create=False) as store:
        assert store.count() == 0


HEARTBEAT_IN_FLIGHT_AT_CLOSE = """
import asyncio, sys, time
import distributed
from arena.tournament import cluster


def heartbeat_in_flight(client):
    # the in-process scheduler stops answering heartbeats: its worker's next one waits until the close
    asked = []

    async def never(*args, **kwargs):
        asked.append(True)
        await asyncio.sleep(3600)
    client.cluster.scheduler.handlers["heartbeat_worker"] = never
    deadline = time.monotonic() + 30
    while not asked and time.monotonic() < deadline:
        time.sleep(0.05)
    print(f"heartbeat in flight: {bool(asked)}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "dask":  # Dask's own LocalCluster, as local:N made it before
        with distributed.LocalCluster(n_workers=1, threads_per_worker=1, host="127.0.0.1",
                                      dashboard_address="127.0.0.1:0") as local:
            with distributed.Client(local) as client:
                heartbeat_in_flight(client)
    else:
        with cluster.connect("local:1") as client:
            heartbeat_in_flight(client)
"""


def test_a_local_cluster_closing_with_a_heartbeat_in_flight_prints_no_traceback(tmp_path):
    """A busy run's `--cluster local:1` once ended with Dask's "Failed to communicate with scheduler
    during heartbeat" and its traceback: a worker's close cut its own heartbeat. Made certain here
    (the scheduler never answers one), Dask's own LocalCluster still reports it; arena's does not."""
    pytest.importorskip("distributed")
    from arena.tournament.cluster import HEARTBEAT_CUT

    script = tmp_path / "heartbeat_at_close.py"
    script.write_text(HEARTBEAT_IN_FLIGHT_AT_CLOSE)
    runs = {kind: subprocess.run([sys.executable, str(script), kind], env=quiet_env(), capture_output=True,
                                 text=True, timeout=120) for kind in ("dask", "arena")}
    for kind, done in runs.items():
        assert done.returncode == 0 and "heartbeat in flight: True" in done.stderr, (kind, done.stderr)
    assert HEARTBEAT_CUT in runs["dask"].stderr, (
        f"Dask no longer reports a heartbeat cut by its worker's close (HeartbeatCutByClose can go): "
        f"{runs['dask'].stderr}")
    assert HEARTBEAT_CUT not in runs["arena"].stderr and "Traceback" not in runs["arena"].stderr, \
        runs["arena"].stderr


@pytest.mark.parametrize(("value", "why"), [
    ("local:0", "between 1 and"), ("local:many", "between 1 and"), ("local:100000", "between 1 and"),
    ("not an address", "not a Dask scheduler address"),
])
def test_bad_cluster_values_are_one_line(tmp_path, value, why):
    write(tmp_path / "v.toml")
    done = arena("tournament", "run", "v.toml", "--cluster", value, cwd=tmp_path)
    assert done.returncode == 2 and why in done.stderr and value in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "results").exists()


def test_a_cluster_and_a_concurrency_are_refused_together(tmp_path):
    write(tmp_path / "v.toml")
    both = arena("tournament", "run", "v.toml", "--cluster", "local:1", "-j", "2", cwd=tmp_path)
    assert both.returncode == 2 and "--concurrency" in both.stderr


def test_unreachable_scheduler_is_a_clear_error(tmp_path):
    pytest.importorskip("distributed")
    from arena.tournament import cluster

    with pytest.raises(cluster.ClusterError, match="cannot reach a Dask scheduler"):
        with cluster.connect("tcp://127.0.0.1:9", connect_timeout_s=1.0):
            pass


def test_without_dask_the_cluster_option_says_what_to_install(tmp_path):
    blocker = tmp_path / "blocker"
    for name in ("distributed", "dask"):
        (blocker / name).mkdir(parents=True)
        (blocker / name / "__init__.py").write_text(f"raise ImportError('{name} is not installed')\n")
    env = {**ENV, "PYTHONPATH": os.pathsep.join([str(blocker), ENV["PYTHONPATH"]])}
    write(tmp_path / "n.toml", games=2, bots=("r1", "r2"))
    done = arena("tournament", "run", "n.toml", "--cluster", "local:2", cwd=tmp_path, env=env)
    assert done.returncode == 2
    assert "pip install '.[dask]'" in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    plain = arena("tournament", "run", "n.toml", "--quiet", cwd=tmp_path, env=env)  # the pool needs no Dask
    assert plain.returncode == 0, plain.stderr


def test_a_cancelled_match_stops_its_bots(tmp_path, client):
    """Dask cannot stop a running task: the match itself notices it was cancelled (an interrupted
    run, a client gone) and stops, rather than play on for nobody."""
    from arena.cell.limits import Limits
    from arena.match.clock import TimeControl
    from arena.match.spec import BotSpec, MatchSpec
    from arena.tournament import cluster

    pids = tmp_path / "pids"
    slow = ("sh", "-c", f"echo $$ >> {pids}; exec {sys.executable} {BROKEN} sleep 0.05")
    spec = MatchSpec("slow-vs-random", "domineering", (BotSpec("slow", slow),
                     BotSpec("random", (sys.executable, "-m", "bots", "random"))),
                     TimeControl.parse("1"), game_numbers=tuple(range(40)), params={"rows": 8, "cols": 8},
                     limits=Limits(sandbox="off"))  # the bot writes its pid where this test reads it
    future = client.submit(cluster.run_match_task, spec, sys.executable, pure=False)
    deadline = time.monotonic() + 30  # the bot started, and the game under way (a move made)
    while not (pids.is_file() and client.get_events(cluster.PROGRESS_TOPIC + spec.match_id)) \
            and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pids.is_file() and client.get_events(cluster.PROGRESS_TOPIC + spec.match_id)
    assert future.status == "pending"  # 40 games of 8x8 at 0.05 s a move: 30 s or more
    client.cancel([future])
    bot = int(pids.read_text().split()[0])
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(bot, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the cancelled match's bot still runs")


def die_once(spec, parent_python, marks: Path = Path()):
    """A fake match task: the first attempt at each match kills its worker; later ones return the
    games of `spec` with seat 0 winning."""
    from arena.match.records import GameRecord

    mark = marks / f"{spec.match_id}-{spec.game_numbers[0]}"
    if not mark.exists():
        mark.touch()
        os._exit(1)
    return [GameRecord(game_id=spec.game_id(n), game=spec.game, params=spec.params,
                       players=[b.name for b in spec.seats(n)], time_control=str(spec.time_control),
                       winner=0, reason="fake").to_json() for n in spec.game_numbers]


def within(timeout_s: float, run, client):
    """run() in a thread, failing (with the cluster's state) rather than hanging past timeout_s."""
    outcome: dict = {}
    thread = threading.Thread(target=lambda: outcome.update(value=run()), daemon=True)
    thread.start()
    thread.join(timeout_s)
    if thread.is_alive():
        pytest.fail(f"still running after {timeout_s} s: workers {client.nthreads()}, "
                    f"processing {client.processing()}")
    assert "value" in outcome, "the run raised (see the thread's exception above)"
    return outcome["value"]


@pytest.mark.timing  # Dask restarts the killed workers against its own and within()'s deadlines
def test_a_match_that_keeps_killing_workers_is_resubmitted_then_aborted(tmp_path):
    import functools

    import cloudpickle

    from arena.tournament import cluster

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers cannot import tests/
    # kills its worker 0.05 s into its turn (of 0.2 s): Dask's progress events are batched, and a
    # worker killed a millisecond after logging one may take it along (the detail: the ply before)
    killer = ("killer", [sys.executable, str(BROKEN), "killparent", "0.05"])
    tour = tmod.load(write(tmp_path / "die.toml", games=2, bots=(killer, "random"), per_task=2,
                           limits='sandbox = "off"'))  # a sandboxed bot cannot see its worker
    task = functools.partial(die_once, marks=tmp_path)
    settings = {"distributed.scheduler.allowed-failures": 0, **FORKED}
    with forked_workers(), local_cluster(settings=settings) as c:
        summary = within(120, lambda: tmod.run(tour, tmp_path / "res", progress=None,
                                               backend=cluster.DaskBackend(c)), c)
        assert summary.stored == 2 and summary.failures == []
        games = played(tmp_path / "res" / "die")
        for number, seat in ((0, 0), (1, 1)):  # game 1: random moves first, the killer is to move
            pairing, _, players, moves, winner, reason, forfeit = games[f"killer-vs-random-g{number}"]
            assert players[seat] == "killer" and winner is None and reason == "aborted"
            assert forfeit is None
            with Store(tmp_path / "res" / "die" / DB_NAME, create=False) as store:
                record = next(g.record for g in store.games() if g.number == number)
            assert f"with killer (seat {seat}) to move" in record.aborted["detail"], record.aborted
        assert sorted(summary.aborted) == ["killer-vs-random-g0", "killer-vs-random-g1"]
        write(tmp_path / "die.toml", games=2, bots=("x", "y"), per_task=2)  # once per match
        ok = within(90, lambda: tmod.run(tmod.load(tmp_path / "die.toml"), tmp_path / "res2", progress=None,
                                         backend=cluster.DaskBackend(c, task=task)), c)
    assert ok.stored == 2 and ok.failures == []  # killed one worker, resubmitted, stored once
    assert (tmp_path / "x-vs-y-0").exists()


def test_resume_after_the_run_is_killed(tmp_path, client):
    """kill -9 of `arena tournament run --cluster ADDRESS` mid-way: the matches still running on the
    workers stop, and the next run stores every missing game once."""
    write(tmp_path / "k.toml", games=4, bots=("a", "b", "c", "d"), per_task=2)
    db = tmp_path / "results" / "k" / DB_NAME
    address = client.scheduler.address
    command = [sys.executable, "-m", "arena", "tournament", "run", "k.toml", "--cluster", address]
    proc = subprocess.Popen(command, cwd=tmp_path, env=ENV, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    count, deadline = 0, time.monotonic() + 60
    while count < 8 and time.monotonic() < deadline:
        try:
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
                count = con.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        except sqlite3.Error:
            pass
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    with Store(db, create=False) as store:
        before = {g.record.game_id: g.record.to_json() for g in store.games()}
    assert 8 <= len(before) < 24, "the run should be killed mid-way"
    deadline = time.monotonic() + 20  # the workers' matches notice they were cancelled, and stop
    while any(client.processing().values()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(client.processing().values())
    done = arena("tournament", "run", "k.toml", "--cluster", address, "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    with Store(db, create=False) as store:
        after = {g.record.game_id: g.record.to_json() for g in store.games()}
        assert store.count() == 24
    assert set(after) == {f"{p}-g{n}" for p in ("a-vs-b", "a-vs-c", "a-vs-d", "b-vs-c", "b-vs-d", "c-vs-d")
                          for n in range(4)}
    assert all(after[g] == record for g, record in before.items())  # nothing stored was rewritten


def test_a_cluster_run_keeps_its_timing_for_the_plan(tmp_path, client):
    """`arena tournament plan` calibrates on the last run, a Dask run included: its matches, games,
    worker threads and the time its games took (the cluster's start and bot check left out)."""
    from arena.tournament import cluster
    from arena.tournament.plan import BOT_START_S, calibrated_start_s, estimate

    path = write(tmp_path / "timed.toml", games=4, per_task=2)
    tour = tmod.load(path)
    summary = tmod.run(tour, tmp_path / "res", progress=None, backend=cluster.DaskBackend(client, check=tour))
    assert (summary.stored, summary.failures) == (12, [])
    with Store(tmp_path / "res" / "timed" / DB_NAME, create=False) as store:
        run = store.last_run()
        predicted = estimate(tmod.load(path), 2, store)
    assert run is not None, "a Dask run stored no timing"
    figures = (run["workers"], run["matches"], run["games"], run["phases"], run["cluster"])
    assert figures == (2, 6, 12, 1, True)
    assert 0 < run["wall_s"] <= summary.wall_s and run["game_s"] > 0
    assert run["bot_starts"] == summary.bot_starts > 0
    assert calibrated_start_s(run) != BOT_START_S  # calibrated on this run, not the default
    assert predicted.measured_games == 12 and predicted.full_wall_s > 0
