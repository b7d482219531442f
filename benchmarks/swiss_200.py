"""A Swiss tournament for a whole class: 200 bots (copies of the reference bots, each copy its own
name, hence its own games' seeds), 7 rounds, Domineering 6x6, 0.05 s a move, 2 games a pairing:
1400 games. Run through the real `arena tournament run`, killed with SIGKILL in the middle of a
round, then run again to the end; checks every game is stored exactly once, no pairing repeats, and
the pairings are the ones replanned from the stored results. Prints the plan's estimate beside the
measured times.

    python benchmarks/swiss_200.py [--bots 200] [--rounds 7] [--concurrency 2] [--kill-at 300] [--keep DIR]
"""
from __future__ import annotations

import argparse
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from arena.tournament import runner as tmod  # noqa: E402
from arena.tournament.formats import swiss_rounds  # noqa: E402
from arena.tournament.plan import estimate  # noqa: E402
from arena.tournament.store import DB_NAME, Store  # noqa: E402

MIX = (("random", 8), ("greedy", 6), ("minimax", 2), ("alphabeta", 2), ("champion", 2))
"""Reference bots and their shares of the field (out of 20)."""


def write_file(directory: Path, bots: int, rounds: int) -> Path:
    lines = ['name = "swiss200"', 'game = "domineering"', 'time = "0.05"', "games_per_pairing = 2",
             "seed = 200", 'format = "swiss"', f"rounds = {rounds}", "[params]", "rows = 6", "cols = 6"]
    kinds = [kind for kind, share in MIX for _ in range(share)]
    for k in range(bots):
        kind = kinds[k % len(kinds)]
        lines += ["[[bots]]", f'name = "{kind}-{k + 1:03d}"', f'command = "{kind}"']
    path = directory / "swiss200.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def count(db: Path) -> int:
    try:
        con = sqlite3.connect(db)
        try:
            return con.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def run(path: Path, results: Path, concurrency: int, kill_at: int | None) -> tuple[float, int, bool]:
    """`arena tournament run` in a subprocess; SIGKILL once `kill_at` games are stored. Returns the
    wall time, the games stored at the end, and whether it was killed."""
    paths = [str(ROOT), os.environ.get("PYTHONPATH")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, paths))}
    command = [sys.executable, "-m", "arena", "tournament", "run", str(path), "--results", str(results),
               "--concurrency", str(concurrency), "--quiet"]
    started = time.monotonic()
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    db = results / "swiss200" / DB_NAME
    killed = False
    while proc.poll() is None:
        if kill_at is not None and count(db) >= kill_at:
            os.kill(proc.pid, signal.SIGKILL)
            killed = True
            break
        time.sleep(0.05)
    _, err = proc.communicate()
    if not killed and proc.returncode != 0:
        print(err, file=sys.stderr)
    return time.monotonic() - started, count(db), killed


def check(path: Path, results: Path) -> list[str]:
    """What is wrong with the stored Swiss (nothing: an empty list)."""
    tour = tmod.load(path, check_commands=False)
    names = [b.name for b in tour.bots]
    problems = []
    with Store(results / "swiss200" / DB_NAME, create=False) as store:
        games = store.games()
        planned = swiss_rounds(names, tour.games_per_pairing, tour.rounds, store.pairing_results())
    keys = Counter((g.pairing, g.number) for g in games)
    if any(v > 1 for v in keys.values()):
        problems.append("a game is stored twice")
    expected = {(p.pairing_id, n) for r in planned for p in r.pairings for n in range(p.games)}
    if set(keys) != expected:
        problems.append(f"{len(set(keys) ^ expected)} games differ from the replanned rounds")
    met = Counter(frozenset((p.a, p.b)) for r in planned for p in r.pairings)
    if any(v > 1 for v in met.values()):
        problems.append("a pairing repeats")
    byes = [r.bye for r in planned if r.bye is not None]
    if len(byes) != len(set(byes)):
        problems.append("a bot had two byes")
    if len(games) != tour.total_games():
        problems.append(f"{len(games)} of {tour.total_games()} games stored")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--kill-at", type=int, default=300, help="games stored when the first run is killed "
                        "(300: in the middle of round 2 of 200 bots); 0: no kill")
    parser.add_argument("--keep", metavar="DIR", help="keep the file and results in DIR")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="arena-swiss200-") as tmp:
        base = Path(args.keep) if args.keep else Path(tmp)
        base.mkdir(parents=True, exist_ok=True)
        path = write_file(base, args.bots, args.rounds)
        results = base / "results"
        tour = tmod.load(path)
        print(f"{os.cpu_count()} cores (shared with other jobs: the times vary with their load)")
        print(estimate(tour, args.concurrency).text())
        first, stored, killed = run(path, results, args.concurrency, args.kill_at or None)
        print(f"first run: {first:.1f} s, {stored} games stored, "
              f"{'killed with SIGKILL' if killed else 'not killed (it ended first)'}")
        with Store(results / "swiss200" / DB_NAME, create=False) as store:
            print("plan after the kill:\n" + estimate(tour, args.concurrency, store).text())
        second, stored, _ = run(path, results, args.concurrency, None)
        print(f"second run: {second:.1f} s, {stored}/{tour.total_games()} games; "
              f"total {first + second:.1f} s ({(first + second) / 60:.1f} min)")
        problems = check(path, results)
        print("checks: every game exactly once, no pairing repeated, rounds as replanned: "
              + ("ok" if not problems else "; ".join(problems)))
        return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
