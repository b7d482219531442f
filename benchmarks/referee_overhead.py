"""How much the referee adds to a move, how fast a match of fast bots runs, how exact the clock is.

    python benchmarks/referee_overhead.py [--games 200] [--clock-moves 20] [--repeat 21]
                                          [--sandbox auto|on|off] [--overhead-only]

1. The bare round trip: the referee's own socket class (RefereeEndpoint) sends the turn messages
   of real games (computed beforehand, so the same mix of sizes as a match) and waits for each
   answer, nothing else, to two bots taken in turn, launched and
   connected exactly as a match's are (BotProcess, sandboxed or not as the match, each on its own
   `ipc://` socket when sandboxed), the bots being examples/raw_bot.py, which answers at once.
2. The referee's time per move with the same two bots in a real match (`run_match`, Domineering
   8x8): the interval between consecutive moves of a game, median and p99.
   1 and 2 are measured back to back `--repeat` times with fresh bots, in turn first and second
   (the machine's load changes from one second to the next; a pair measured together sees the
   same load), 600 round trips against a match of 20 games (about 550 moves), and the ratio of
   their medians is given for each pair and as the median over the pairs. That ratio is what the
   referee adds to a move (issue 15: at most 1.3x). For comparison with earlier figures, each pair
   also measures the old baseline: one bot alone over TCP, which a sandboxed match never uses.
3. Games per second of a random-vs-random (SDK bots) Domineering 8x8 match of 200 games, the
   wall time of `run_match` including starting and stopping the bots.
4. Clock accuracy: a 200 ms limit with no margin; a bot answering after 180 ms must never be
   forfeited, one answering after 220 ms always.
"""
from __future__ import annotations

import argparse
import functools
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import rules  # noqa: E402
from arena.cell import sandbox  # noqa: E402
from arena.cell.endpoint import PrivateSocket  # noqa: E402
from arena.cell.launcher import BotProcess, resolve_command  # noqa: E402
from arena.cell.limits import Limits  # noqa: E402
from arena.match.clock import TimeControl  # noqa: E402
from arena.match.protocol import RefereeEndpoint, decode_bot_message  # noqa: E402
from arena.match.referee import run_match  # noqa: E402
from arena.match.spec import BotSpec, MatchSpec  # noqa: E402

RAW_BOT = (sys.executable, str(ROOT / "examples" / "raw_bot.py"))
"""A bot that answers every turn at once (pyzmq and msgpack only), for both measurements."""


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


@functools.cache
def turn_messages(games: int = 10, seed: int = 1) -> list[dict]:
    """The turn messages of `games` random games of Domineering 8x8, as the referee sends them:
    the bare round trip sends the same mix of sizes as a match, computed once beforehand."""
    game = rules.load("domineering", rows=8, cols=8)
    rng = random.Random(seed)
    messages = []
    for number in range(games):
        state, moves = game.start(), []
        while state.outcome is None:
            legal = state.legal_moves()
            messages.append({"type": "turn", "game_id": f"overhead-g{number:04d}", "ply": state.ply,
                             "state": state.to_wire(), "moves": list(moves), "legal": legal,
                             "time_left_s": 1.0})
            moves.append(rng.choice(legal))
            state = state.play(moves[-1])
    return messages


def bare_round_trips(n: int, peers: int, sandboxed: bool) -> list[float]:
    """Round trips of the turn messages of real games to `peers` raw bots taken in turn, started as
    a match starts its bots: sandboxed, each on a private ipc:// socket, or not, on the TCP socket."""
    messages = turn_messages()
    limits = Limits(sandbox="on" if sandboxed else "off")
    with tempfile.TemporaryDirectory(prefix="arena-bare-") as tmp, RefereeEndpoint() as endpoint:
        processes = []
        for k in range(peers):
            private = PrivateSocket(endpoint, f"{tmp}/{k}.sock") if sandboxed else None
            process = BotProcess(RAW_BOT, Path(tmp) / f"bot{k}", limits=limits, private=private)
            process.start(endpoint.endpoint, "bare")
            processes.append(process)
        identities = []
        for _ in range(peers):
            got = endpoint.receive(10.0)
            if got is None:
                raise RuntimeError("a raw bot did not say hello within 10 s")
            endpoint.bind(got[0])  # as the referee does after a valid hello
            identities.append(got[0])
        times = []
        for k in range(n):
            message = messages[k % len(messages)]
            start = time.perf_counter()
            endpoint.send(identities[k % peers], message)
            got = endpoint.receive(1.0)
            decode_bot_message(got[1])
            times.append(time.perf_counter() - start)
        for identity in identities:
            endpoint.send(identity, {"type": "bye"})
        for process in processes:
            process.stop(grace_s=1.0)
    return times[n // 10:]  # the first round trips warm up both sides


def spec(match_id: str, bots: tuple[BotSpec, BotSpec], games: int, tc: TimeControl) -> MatchSpec:
    return MatchSpec(match_id=match_id, game="domineering", bots=bots, time_control=tc,
                     game_numbers=tuple(range(games)), params={"rows": 8, "cols": 8})


def per_move_times(games: int, sandbox_mode: str) -> list[float]:
    raw = BotSpec("raw", RAW_BOT)
    intervals: list[float] = []
    last: dict[str, float] = {}

    def on_move(record, move, state) -> None:
        now = time.perf_counter()
        if record.game_id in last:
            intervals.append(now - last[record.game_id])
        last[record.game_id] = now

    run_match(spec("overhead", (raw, raw), games, TimeControl(per_move=1.0)), on_move=on_move,
              limits=Limits(sandbox=sandbox_mode))
    return intervals


def overhead(repeats: int, sandbox_mode: str) -> float:
    """Part 1 and 2, `repeats` pairs; prints each and returns the median ratio."""
    sandboxed = sandbox.decide(sandbox_mode).sandboxed
    where = "sandboxed, a private ipc:// socket each" if sandboxed else "not sandboxed, TCP"
    print(f"bots: examples/raw_bot.py, {where}; Domineering 8x8")
    ratios, old_ratios, extra = [], [], []
    for repeat in range(repeats):
        if repeat % 2 == 0:  # in turn first and second, so a drift of the load favours neither
            bare = statistics.median(bare_round_trips(600, 2, sandboxed))
            moves = per_move_times(20, sandbox_mode)
        else:
            moves = per_move_times(20, sandbox_mode)
            bare = statistics.median(bare_round_trips(600, 2, sandboxed))
        old = statistics.median(bare_round_trips(600, 1, False))
        move = statistics.median(moves)
        ratios.append(move / bare)
        old_ratios.append(move / old)
        extra.append(move - bare)
        print(f"[{repeat + 1:2}/{repeats}] bare round trip, two bots in turn: {bare * 1e6:6.1f} us | "
              f"referee move: median {move * 1e6:6.1f} us, p99 {percentile(moves, 99) * 1e6:7.1f} us "
              f"({len(moves)} moves) | ratio {ratios[-1]:.2f}x | one bot over TCP {old * 1e6:6.1f} us "
              f"({old_ratios[-1]:.2f}x)", flush=True)
    ratio = statistics.median(ratios)
    print(f"referee move / bare round trip (median of {repeats} pairs, same bots, same transport): "
          f"{ratio:.2f}x, {statistics.median(extra) * 1e6:.0f} us a move  "
          f"(goal <= 1.30: {'met' if ratio <= 1.3 else 'not met'})")
    print(f"against the old baseline (one bot alone over TCP): {statistics.median(old_ratios):.2f}x")
    return ratio


def games_per_second(games: int) -> tuple[float, float]:
    random_bot = BotSpec("random", resolve_command("random"))
    first_done: list[float] = []
    start = time.perf_counter()
    records = run_match(spec("throughput", (random_bot, random_bot), games, TimeControl(per_move=1.0)),
                        on_game=lambda r: first_done.append(time.perf_counter()))
    wall = time.perf_counter() - start
    assert all(r.forfeit is None for r in records), [r.forfeit for r in records if r.forfeit]
    in_match = (len(first_done) - 1) / (first_done[-1] - first_done[0])
    return len(records) / wall, in_match


def clock_accuracy(delay_s: float, games: int) -> tuple[int, int]:
    """(moves answered in time, forfeits for timeout) for a bot sleeping `delay_s` per move, in
    `games` games where it always has seat 0 (even game numbers)."""
    sleeper = BotSpec("sleeper", (sys.executable, str(ROOT / "tests" / "bots" / "broken.py"), "sleep",
                                  str(delay_s)))
    random_bot = BotSpec("random", resolve_command("random"))
    match = MatchSpec(f"clock{delay_s}", "domineering", (sleeper, random_bot),
                      TimeControl(per_move=0.2, margin=0.0), game_numbers=tuple(range(0, 2 * games, 2)),
                      params={"rows": 8, "cols": 8})
    in_time = timeouts = 0
    for record in run_match(match):
        in_time += sum(1 for m in record.moves if m.seat == 0)
        if record.forfeit is not None:
            assert record.forfeit["reason"] == "timeout" and record.forfeit["seat"] == 0, record.forfeit
            timeouts += 1
    return in_time, timeouts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--clock-moves", type=int, default=20, help="moves tried at 180 ms and at 220 ms")
    parser.add_argument("--repeat", type=int, default=21, help="pairs of measurements of the overhead ratio")
    parser.add_argument("--sandbox", choices=("auto", "on", "off"), default="auto",
                        help="how the bots of parts 1 and 2 run (default: as a match runs them)")
    parser.add_argument("--overhead-only", action="store_true", help="only the ratio (parts 1 and 2)")
    args = parser.parse_args()

    overhead(args.repeat, args.sandbox)
    if args.overhead_only:
        return
    total, in_match = games_per_second(args.games)
    print(f"random vs random, domineering 8x8, {args.games} games: {total:6.1f} games/s wall "
          f"(bots started and stopped included), {in_match:6.1f} games/s between games (goal: > 150)")
    for delay, expect_forfeit, games in ((0.18, False, max(1, args.clock_moves // 10)),
                                         (0.22, True, args.clock_moves)):
        in_time, timeouts = clock_accuracy(delay, games)
        verdict = "ok" if (timeouts == 0) != expect_forfeit else "WRONG"
        print(f"clock, 200 ms limit, bot answering after {delay * 1000:.0f} ms: {in_time} moves in time, "
              f"{timeouts} timeouts  [{verdict}]")


if __name__ == "__main__":
    main()
