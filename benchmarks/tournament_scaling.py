"""How a tournament scales with workers: a round-robin of 6 random bots, 10 games a pairing
(150 games of Domineering), at concurrency 1 and 2; prints each wall time and their ratio.

Goal (issue 4): on a 2-core machine, 2 workers finish in at most 0.6 of the time of one.

    python benchmarks/tournament_scaling.py [--games 10] [--bots 6] [--rows 8] [--per-task 10]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena import tournament as tmod  # noqa: E402
from arena.store import DB_NAME, Store  # noqa: E402


def write_file(directory: Path, bots: int, games: int, rows: int, per_task: int) -> Path:
    lines = ['name = "scaling"', 'game = "domineering"', 'time = "0.5"', f"games_per_pairing = {games}",
             "seed = 11", f"games_per_task = {per_task}", "[params]", f"rows = {rows}", f"cols = {rows}"]
    for k in range(bots):
        lines += ["[[bots]]", f'name = "random{k + 1}"', 'command = "random"']
    path = directory / "scaling.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=6)
    parser.add_argument("--games", type=int, default=10, help="games a pairing (even)")
    parser.add_argument("--rows", type=int, default=8, help="board size (rows = cols)")
    parser.add_argument("--per-task", type=int, default=tmod.DEFAULT_GAMES_PER_TASK,
                        help="games a worker plays with the same bot processes")
    args = parser.parse_args()
    print(f"{args.bots} random bots, {args.games} games a pairing, Domineering {args.rows}x{args.rows}, "
          f"{args.per_task} games a task, {os.cpu_count()} cores")
    times = {}
    with tempfile.TemporaryDirectory(prefix="arena-scaling-") as tmp:
        path = write_file(Path(tmp), args.bots, args.games, args.rows, args.per_task)
        tour = tmod.load(path)
        for workers in (1, 2):
            root = Path(tmp) / f"results-{workers}"
            started = time.perf_counter()
            summary = tmod.run(tour, root, concurrency=workers, progress=None)
            times[workers] = time.perf_counter() - started
            with Store(tour.results_dir(root) / DB_NAME, create=False) as store:
                stored = store.count()
            print(f"concurrency {workers}: {times[workers]:6.2f} s wall, "
                  f"{stored}/{tour.total_games()} games, "
                  f"{stored / times[workers]:6.1f} games/s" + (f", {len(summary.failures)} failures"
                                                               if summary.failures else ""))
    ratio = times[2] / times[1]
    verdict = "met" if ratio <= 0.6 else "not met"
    print(f"ratio (2 workers / 1 worker): {ratio:.2f}  (goal <= 0.60: {verdict})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
