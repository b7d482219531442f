"""How much the referee adds to a move, how fast a match of fast bots runs, how exact the clock is.

    python benchmarks/referee_overhead.py [--games 200] [--clock-moves 20] [--repeat 5]

1. A bare pyzmq+msgpack round trip (ROUTER here, a DEALER echo process) with a turn-sized message.
2. The referee's time per move with two bots that answer at once (examples/raw_bot.py): the
   interval between consecutive moves of a game, median and p99, on Domineering 8x8.
   1 and 2 are measured `--repeat` times, one after the other, and the ratio of their medians is
   given for each repeat and as the median over the repeats (on a shared machine the load changes
   from one second to the next). For reference, also the bare round trip alternating between two
   echo processes, as a match alternates between two bots.
3. Games per second of a random-vs-random (SDK bots) Domineering 8x8 match of 200 games, the
   wall time of `run_match` including starting and stopping the bots.
4. Clock accuracy: a 200 ms limit with no margin; a bot answering after 180 ms must never be
   forfeited, one answering after 220 ms always.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import rules  # noqa: E402
from arena.match.clock import TimeControl  # noqa: E402
from arena.match.launcher import resolve_command  # noqa: E402
from arena.match.protocol import RefereeEndpoint, decode_bot_message, encode  # noqa: E402
from arena.match.referee import run_match  # noqa: E402
from arena.match.spec import BotSpec, MatchSpec  # noqa: E402

ECHO = """
import os, msgpack, zmq
s = zmq.Context().socket(zmq.DEALER); s.setsockopt(zmq.LINGER, 0); s.connect(os.environ["E"])
s.send(msgpack.packb({"type": "hello"}))
while True:
    m = msgpack.unpackb(s.recv())
    if m["type"] == "bye": break
    s.send(msgpack.packb({"type": "move", "game_id": m["game_id"], "ply": m["ply"], "move": m["legal"][0]}))
"""


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def bare_round_trip(n: int = 3000, peers: int = 1) -> list[float]:
    """Round trips of a turn-sized message to `peers` echo processes, taken in turn."""
    import os

    state = rules.load("domineering").start()
    message = {"type": "turn", "game_id": "bench-g0", "ply": 0, "state": state.to_wire(),
               "moves": ["4C"] * 15, "legal": state.legal_moves(), "time_left_s": 1.0}
    with RefereeEndpoint() as endpoint:
        children = [subprocess.Popen([sys.executable, "-c", ECHO], env=dict(os.environ, E=endpoint.endpoint))
                    for _ in range(peers)]
        identities = []
        for _ in range(peers):
            identity, _ = endpoint.receive(10.0)
            endpoint.bind(identity)  # as the referee does after a valid hello
            identities.append(identity)
        times = []
        for ply in range(n):
            message["ply"] = ply
            start = time.perf_counter()
            endpoint.send(identities[ply % peers], message)
            got = endpoint.receive(1.0)
            decode_bot_message(got[1])
            times.append(time.perf_counter() - start)
        for identity in identities:
            endpoint.send(identity, {"type": "bye"})
        for child in children:
            child.wait(5)
    assert encode  # the referee's own encoder was used through endpoint.send
    return times[100:]


def spec(match_id: str, bots: tuple[BotSpec, BotSpec], games: int, tc: TimeControl) -> MatchSpec:
    return MatchSpec(match_id=match_id, game="domineering", bots=bots, time_control=tc,
                     game_numbers=tuple(range(games)), params={"rows": 8, "cols": 8})


def per_move_times(games: int) -> list[float]:
    raw = BotSpec("raw", (sys.executable, str(ROOT / "examples" / "raw_bot.py")))
    intervals: list[float] = []
    last: dict[str, float] = {}

    def on_move(record, move, state) -> None:
        now = time.perf_counter()
        if record.game_id in last:
            intervals.append(now - last[record.game_id])
        last[record.game_id] = now

    run_match(spec("overhead", (raw, raw), games, TimeControl(per_move=1.0)), on_move=on_move)
    return intervals


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
    parser.add_argument("--repeat", type=int, default=5, help="measurements of the overhead ratio")
    parser.add_argument("--overhead-only", action="store_true", help="only the ratio (parts 1 and 2)")
    args = parser.parse_args()

    ratios = []
    for repeat in range(args.repeat):
        bare = bare_round_trip()
        moves = per_move_times(50)
        ratios.append(statistics.median(moves) / statistics.median(bare))
        print(f"[{repeat + 1}/{args.repeat}] bare pyzmq+msgpack round trip: median "
              f"{statistics.median(bare) * 1e6:6.1f} us  p99 {percentile(bare, 99) * 1e6:7.1f} us | "
              f"referee time per move (instant bots): median {statistics.median(moves) * 1e6:6.1f} us  "
              f"p99 {percentile(moves, 99) * 1e6:7.1f} us ({len(moves)} moves) | ratio {ratios[-1]:.2f}x",
              flush=True)
    two = bare_round_trip(peers=2)
    print(f"bare round trip alternating two echo processes (as a match alternates two bots): median "
          f"{statistics.median(two) * 1e6:6.1f} us")
    ratio = statistics.median(ratios)
    print(f"referee move / bare round trip (median of {args.repeat} repeats, same transport, same run): "
          f"{ratio:.2f}x  (goal <= 1.30: {'met' if ratio <= 1.3 else 'not met'}; "
          f"goal for the referee's move alone: median < 150 us)")
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
