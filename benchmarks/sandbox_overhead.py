"""What the sandbox costs: bot start-up time and the referee's time per move, sandbox on and off.

    python benchmarks/sandbox_overhead.py [--starts 10] [--games 20]

1. Start-up of one bot: from creating a match's players (sockets, and with the sandbox the
   private sockets) through starting a raw-protocol bot (examples/raw_bot.py; with the sandbox
   its cgroup and bwrap) to its hello; median and max over `--starts` runs, on and off
   interleaved.
2. Per move: the interval between consecutive moves in Domineering 8x8 games of two raw bots that
   answer at once (the referee's work plus two socket hops), median and p99.
Goals (issue 12): start-up at most 50 ms more with the sandbox, per-move time no worse. Both
modes are measured in the same run, so the figures share the machine's load.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from arena.cell import sandbox  # noqa: E402
from arena.cell.limits import Limits  # noqa: E402
from arena.match.clock import TimeControl  # noqa: E402
from arena.match.players import Players  # noqa: E402
from arena.match.referee import run_match  # noqa: E402
from arena.match.spec import BotSpec, MatchSpec  # noqa: E402

RAW = BotSpec("raw", (sys.executable, str(ROOT / "examples" / "raw_bot.py")))
MODES = ("on", "off")
STARTUP_GOAL_MS = 50.0


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def startup_ms(mode: str) -> float:
    with tempfile.TemporaryDirectory() as work:
        began = time.perf_counter()
        players = Players((RAW, RAW), Path(work), Limits(sandbox=mode), 10.0, None)
        try:
            players.start(players.players[:1])
            took = time.perf_counter() - began
            failed = [p.failure for p in players.players[:1] if p.failure is not None]
        finally:
            players.close()
    if failed:
        raise SystemExit(f"sandbox {mode}: a bot did not start: {failed}")
    return took * 1000


def move_intervals_ms(mode: str, games: int) -> list[float]:
    stamps: list[tuple[str, float]] = []
    spec = MatchSpec(f"bench-{mode}", "domineering", (RAW, RAW), TimeControl(per_move=5.0),
                     tuple(range(games)), params={"rows": 8, "cols": 8}, limits=Limits(sandbox=mode))
    run_match(spec, on_move=lambda record, move, state: stamps.append((record.game_id, time.perf_counter())))
    return [(b - a) * 1000 for (ga, a), (gb, b) in zip(stamps, stamps[1:], strict=False) if ga == gb]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument("--games", type=int, default=20)
    args = parser.parse_args()
    reason = sandbox.unavailable_reason()
    if reason is not None:
        print(f"the sandbox cannot run here ({reason}); nothing to compare")
        return 1
    startups: dict[str, list[float]] = {m: [] for m in MODES}
    for _ in range(args.starts):
        for mode in MODES:
            startups[mode].append(startup_ms(mode))
    moves = {mode: move_intervals_ms(mode, args.games) for mode in MODES}
    print(f"{'':28}{'sandbox on':>14}{'sandbox off':>14}{'difference':>14}")
    for label, pick in (("start-up, median (ms)", statistics.median), ("start-up, max (ms)", max)):
        on, off = pick(startups["on"]), pick(startups["off"])
        print(f"{label:28}{on:14.1f}{off:14.1f}{on - off:+14.1f}")
    for label, p in (("per move, median (ms)", 50), ("per move, p99 (ms)", 99)):
        on, off = percentile(moves["on"], p), percentile(moves["off"], p)
        print(f"{label:28}{on:14.3f}{off:14.3f}{on - off:+14.3f}")
    extra = statistics.median(startups["on"]) - statistics.median(startups["off"])
    verdict = "met" if extra <= STARTUP_GOAL_MS else "NOT met"
    print(f"goal: start-up at most {STARTUP_GOAL_MS:g} ms more with the sandbox: {verdict} "
          f"({extra:+.1f} ms); moves measured: {len(moves['on'])} on, {len(moves['off'])} off")
    return 0


if __name__ == "__main__":
    sys.exit(main())
