"""Fair clocks under load: how often a CPU-burning bot forfeits on time under a CPU hog, on a wall and
on a CPU clock, and what reading a bot's CPU time costs the referee per move.

    python benchmarks/fair_clock.py [--games 6] [--limit 0.25] [--hogs 3]

1. Forfeit rates: tests/bots/cpu_burner.py using 60% and 130% of a `--limit` per-move clock plays
   Domineering 8x8 against `random` while `--hogs` processes burn CPU without end (this machine
   has 2 cores), on `clock = "wall"` and `clock = "cpu"` (wall ceiling 3x), all in one run. The
   fair result: 0% forfeits at 60%, 100% at 130%. The issue's figure: at a wall clock, a bot using
   150 ms of a 250 ms limit forfeited 6 games of 6 on a loaded machine.
2. Reading cost: a bot's CPU time (one pread of its cgroup's cpuacct.usage or cpu.stat; goal at
   most 20 us a move) and its CPU time with its threads' wait for a CPU (what marks a move played
   under load), beside a bare system call (os.pread of /proc/self/stat) measured the same way.
"""
from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from arena.cell import cgroup  # noqa: E402
from arena.cell.limits import Limits  # noqa: E402
from arena.match.clock import TimeControl  # noqa: E402
from arena.match.referee import run_match  # noqa: E402
from arena.match.spec import BotSpec, MatchSpec  # noqa: E402

BURNER = ROOT / "tests" / "bots" / "cpu_burner.py"
READ_GOAL_US = 20.0


def forfeit_rate(share: float, kind: str, games: int, limit: float) -> tuple[int, int, int]:
    """(games, forfeits on time, games marked as played under load) for the burner at `share`."""
    bot = BotSpec("burner", (sys.executable, str(BURNER), str(limit * share)))
    other = BotSpec("random", (sys.executable, "-m", "bots", "random"))
    spec = MatchSpec("bench", "domineering", (bot, other),
                     TimeControl(per_move=limit, kind=kind), tuple(range(games)),
                     params={"rows": 8, "cols": 8}, limits=Limits())
    records = run_match(spec)
    lost = sum(1 for r in records if r.forfeit and r.players[r.forfeit["seat"]] == "burner")
    return len(records), lost, sum(1 for r in records if r.loaded_moves)


def reading_costs(repeat: int) -> tuple[float, float, float] | None:
    """Median microseconds of: a bare pread, a CPU-time reading, a CPU-and-wait reading, for a live
    process in a bot cgroup; None without cgroups."""
    try:
        group = cgroup.Cgroup.create(256 << 20, 64)
    except cgroup.CgroupError:
        return None
    child = subprocess.Popen([sys.executable, "-c", "import time, zmq; zmq.Context(); time.sleep(60)"],
                             preexec_fn=group.join_in_child)
    try:
        time.sleep(0.5)
        group.usage()  # opens its CPU file
        reader = group._usage
        fd = os.open("/proc/self/stat", os.O_RDONLY)
        timings = {"bare": [], "cpu": [], "usage": []}
        for _ in range(5):
            calls = (("bare", lambda: os.pread(fd, 4096, 0)), ("cpu", reader.cpu_s),  # type: ignore[union-attr]
                     ("usage", group.usage))
            for name, call in calls:
                start = time.perf_counter()
                for _ in range(repeat):
                    call()
                timings[name].append((time.perf_counter() - start) / repeat * 1e6)
        os.close(fd)
        return tuple(statistics.median(timings[k]) for k in ("bare", "cpu", "usage"))  # type: ignore[return-value]
    finally:
        child.kill()
        child.wait()
        group.remove()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=6, help="games per cell of the table (default 6)")
    parser.add_argument("--limit", type=float, default=0.25, help="per-move limit, s (default 0.25)")
    parser.add_argument("--hogs", type=int, default=3, help="CPU-bound processes (default 3)")
    args = parser.parse_args()
    costs = reading_costs(2000)
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
            for _ in range(args.hogs)]
    rows = []
    try:
        time.sleep(0.5)
        for share in (0.6, 1.3):
            for kind in ("wall", "cpu"):
                games, lost, loaded = forfeit_rate(share, kind, args.games, args.limit)
                rows.append((share, kind, games, lost, loaded))
    finally:
        for hog in hogs:
            os.killpg(hog.pid, signal.SIGKILL)
            hog.wait()
    print(f"burner vs random, Domineering 8x8, {args.limit:g} s a move, {args.hogs} CPU hogs on "
          f"{os.cpu_count()} cores")
    print(f"{'CPU used':>10} {'clock':>6} {'games':>6} {'lost on time':>13} {'marked under load':>18}")
    for share, kind, games, lost, loaded in rows:
        print(f"{share:>9.0%} {kind:>6} {games:>6} {lost:>6} ({lost / games:>4.0%}) "
              f"{loaded:>11} ({loaded / games:>4.0%})")
    fair = all((lost == 0) if share < 1 else (lost == games)
               for share, kind, games, lost, _ in rows if kind == "cpu")
    print(f"cpu clock fair (0% lost at 60%, 100% at 130%): {'yes' if fair else 'NO'}")
    if costs is None:
        print("reading costs: no usable cgroups here")
        return 0
    bare, cpu, usage = costs
    print(f"reading a bot's usage, median of 5 x 2000 (us): bare pread {bare:.1f}, CPU time {cpu:.1f}, "
          f"CPU time and wait {usage:.1f}")
    met = "met" if cpu <= READ_GOAL_US else "NOT met"
    print(f"goal: CPU time at most {READ_GOAL_US:g} us a reading: {met} ({cpu:.1f} us; a move reads twice)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
