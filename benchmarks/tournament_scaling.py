"""How a tournament scales with workers: a round-robin of 6 random bots, 30 games a pairing
(450 games of Domineering), at concurrency 1 and 2, and on a local Dask cluster of 2 workers
(issue 8: `--cluster local:2`); prints each wall time, how many bot processes each run started,
and the ratios to one worker. The pair of runs with bots kept (the default) is made `--repeat`
times, in turn first and second, and the ratio is the median of the pairs' (the load of a
shared machine changes from one second to the next). The baseline in the same run: the same two
runs with every match starting its bots afresh (`--no-reuse-baseline` skips it).

Goal (issues 4 and 15): on a 2-core machine, 2 workers finish in at most 0.6 of the time of one.
Each run line also says when its first game was stored, how long its games took from the first to
the last, and how long its end took: a run's start (spawning the worker processes, importing
arena in each, starting the first bots: about 0.4 to 0.55 s here) does not halve with two
workers, and with fast bots it weighs on a short run (at 10 games a pairing, 150 games of about
3 s on one worker, it is a sixth of the run).
The Dask column is skipped when dask/distributed are not installed (pip install 'arena[dask]');
its wall time counts the bot check on every worker (also shown apart), not the cluster's start-up.
Bots run sandboxed where the machine can (`--sandbox auto`, the default; each line says how the
games' records say they ran); `--sandbox off` measures without the sandbox.

    python benchmarks/tournament_scaling.py [--games 30] [--bots 6] [--rows 8] [--per-task 10] [--repeat 3]
                                            [--no-dask] [--sandbox auto|on|off] [--think MS] [--pin-cpus]

With `--think MS` the bots think: each is tests/bots/cpu_burner.py, spending MS milliseconds of its
own CPU on every move before it plays (issue 23's figure: `--think 15 --rows 6`, concurrency 2 at
most 0.55 of concurrency 1, with and without `--pin-cpus`; 0.62-0.64 before). `--pin-cpus` pins
each match's bots to a core of its own (the bot not to move is frozen).
"""
from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.tournament import runner as tmod  # noqa: E402
from arena.tournament.store import DB_NAME, Store  # noqa: E402

BURNER = Path(__file__).resolve().parents[1] / "tests" / "bots" / "cpu_burner.py"


def write_file(directory: Path, bots: int, games: int, rows: int, per_task: int,
               sandbox: str = "auto", think_ms: float = 0.0, pin_cpus: bool = False) -> Path:
    lines = ['name = "scaling"', 'game = "domineering"', 'time = "0.5"', f"games_per_pairing = {games}",
             "seed = 11", f"games_per_task = {per_task}", "[params]", f"rows = {rows}", f"cols = {rows}",
             "[limits]", f'sandbox = "{sandbox}"', f"pin_cpus = {'true' if pin_cpus else 'false'}"]
    command = f'["{sys.executable}", "{BURNER}", "{think_ms / 1000:g}"]' if think_ms else '"random"'
    for k in range(bots):
        lines += ["[[bots]]", f'name = "bot{k + 1}"', f"command = {command}"]
    path = directory / "scaling.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=6)
    parser.add_argument("--games", type=int, default=30, help="games a pairing (even)")
    parser.add_argument("--rows", type=int, default=8, help="board size (rows = cols)")
    parser.add_argument("--per-task", type=int, default=tmod.DEFAULT_GAMES_PER_TASK,
                        help="games a worker plays with the same bot processes")
    parser.add_argument("--repeat", type=int, default=3,
                        help="pairs of runs (concurrency 1 and 2, with reuse) the ratio is the median of")
    parser.add_argument("--no-dask", action="store_true", help="skip the Dask column")
    parser.add_argument("--no-reuse-baseline", action="store_true",
                        help="skip the runs whose matches start their bots afresh")
    parser.add_argument("--sandbox", choices=("auto", "on", "off"), default="auto",
                        help="the tournament's [limits] sandbox (default auto)")
    parser.add_argument("--think", type=float, default=0.0, metavar="MS",
                        help="bots that spend MS ms of CPU on every move (default: random bots)")
    parser.add_argument("--pin-cpus", action="store_true", help="pin each match's bots (pin_cpus)")
    args = parser.parse_args()
    kind = f"thinking bots ({args.think:g} ms of CPU a move)" if args.think else "random bots"
    print(f"{args.bots} {kind}, {args.games} games a pairing, Domineering {args.rows}x{args.rows}, "
          f"{args.per_task} games a task, {os.cpu_count()} cores{', pinned' if args.pin_cpus else ''}")
    goal = 0.55 if args.think else 0.6
    with tempfile.TemporaryDirectory(prefix="arena-scaling-") as tmp:
        path = write_file(Path(tmp), args.bots, args.games, args.rows, args.per_task, args.sandbox,
                          args.think, args.pin_cpus)
        tour = tmod.load(path)
        runs = 0
        phases: dict[tuple[int, bool], list[float]] = {}  # from the first game stored to the last

        def timed(workers: int, reuse: bool) -> float:
            nonlocal runs
            runs += 1
            root = Path(tmp) / f"results-{runs}"
            started, clock = time.perf_counter(), time.time()
            summary = tmod.run(tour, root, concurrency=workers, progress=None, reuse=reuse)
            wall_s = time.perf_counter() - started
            db = tour.results_dir(root) / DB_NAME
            with Store(db, create=False) as store:
                stored = store.count()
                isolation = sorted({g.record.isolation for g in store.games()})
            with sqlite3.connect(db) as con:  # when the first and the last game were committed
                first, last = con.execute("SELECT MIN(stored_at), MAX(stored_at) FROM games").fetchone()
            label = f"concurrency {workers}{'' if reuse else ', bots started every match'}"
            show(label, wall_s, stored, tour, summary, reuse,
                 f"isolation: {', '.join(isolation)}; first game stored after {first - clock:.2f} s, "
                 f"games {last - first:.2f} s, end {clock + wall_s - last:.2f} s")
            phases.setdefault((workers, reuse), []).append(last - first)
            return wall_s

        if not args.no_reuse_baseline:
            fresh = [timed(1, False), timed(2, False)]
            print(f"ratio without reuse (2 workers / 1 worker): {fresh[1] / fresh[0]:.2f}")
        ratios, ones = [], []
        for repeat in range(args.repeat):
            order = (1, 2) if repeat % 2 == 0 else (2, 1)  # in turn first, so a drift favours neither
            wall = {workers: timed(workers, True) for workers in order}
            ones.append(wall[1])
            ratios.append(wall[2] / wall[1])
            print(f"  pair {repeat + 1}/{args.repeat}: ratio {ratios[-1]:.2f}")
        dask_s = None if args.no_dask else run_dask(tour, Path(tmp) / "results-dask")
    ratio = statistics.median(ratios)
    verdict = "met" if ratio <= goal else "not met"
    print(f"ratio (2 workers / 1 worker, median of {args.repeat} pairs): {ratio:.2f}  "
          f"(goal <= {goal:.2f}: {verdict})")
    games = [statistics.median(phases[w, True]) for w in (1, 2)]
    print(f"the games alone (first game stored to last, medians): {games[1]:.2f} s / {games[0]:.2f} s = "
          f"{games[1] / games[0]:.2f}; the rest of each run (worker start, first bots, end) does not halve")
    if dask_s is not None:
        print(f"ratio (Dask local:2 / 1 worker): {dask_s / statistics.median(ones):.2f}")
    return 0


def show(label: str, wall_s: float, stored: int, tour: tmod.Tournament, summary: tmod.RunSummary,
         counted: bool = False, note: str = "") -> None:
    failures = f", {len(summary.failures)} failures" if summary.failures else ""
    starts = (f", {summary.bot_starts} bot processes started" if counted
              else f", {2 * summary.matches} bot processes started (2 a match)" if summary.matches else "")
    print(f"{label:14}: {wall_s:6.2f} s wall, {stored}/{tour.total_games()} games, "
          f"{stored / wall_s:6.1f} games/s{starts}{failures}" + (f" ({note})" if note else ""))


def run_dask(tour: tmod.Tournament, root: Path) -> float | None:
    """The same tournament on a LocalCluster of 2 single-threaded workers: the wall time of the run."""
    try:
        import distributed
    except ImportError:
        print("Dask local:2   : skipped (pip install 'arena[dask]')")
        return None
    from arena.tournament import cluster

    started = time.perf_counter()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address="127.0.0.1:0") \
            as local, distributed.Client(local) as client:
        startup_s = time.perf_counter() - started
        started = time.perf_counter()
        cluster.check_workers(client, tour)
        check_s = time.perf_counter() - started
        summary = cluster.run(tour, root, client, progress=None, check=False)
        wall_s = time.perf_counter() - started
    with Store(tour.results_dir(root) / DB_NAME, create=False) as store:
        stored = store.count()
    show("Dask local:2", wall_s, stored, tour, summary, counted=True)
    print(f"{'':14}  (of which {check_s:.2f} s checking every bot on every worker; "
          f"+ {startup_s:.2f} s to start the LocalCluster, not counted)")
    return wall_s


if __name__ == "__main__":
    sys.exit(main())
