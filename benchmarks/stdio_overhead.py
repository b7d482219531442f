"""What the stdio adapter adds to a move: the same trivial bot over protocol v1 and over stdin/stdout.

    python benchmarks/stdio_overhead.py [--moves 3000] [--games 20]

The bot (first legal move) is one Python script speaking either protocol (BOT below), so the two
runs differ only by the adapter (arena/match/stdio.py) and the line handling it implies.
1. Round trips: a ROUTER here sends a Domineering 8x8 turn-sized `turn` and waits for the `move`,
   MOVES times: median and p99 per move, over protocol v1 and through the adapter, and the
   difference (the adapter's hop). Target: at most 100 us a move.
2. Under the referee: `run_match` of GAMES games against the same bot over v1; the median of the
   referee's measured `time_s` per move of the bot under test, over v1 and over stdio.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import rules  # noqa: E402
from arena.cell.launcher import resolve_command  # noqa: E402
from arena.match.clock import TimeControl  # noqa: E402
from arena.match.protocol import RefereeEndpoint, decode_bot_message  # noqa: E402
from arena.match.referee import run_match  # noqa: E402
from arena.match.spec import BotSpec, MatchSpec  # noqa: E402

TARGET_US = 100.0
BOT = """
import os, sys
if sys.argv[1] == "v1":
    import msgpack, zmq
    s = zmq.Context().socket(zmq.DEALER); s.setsockopt(zmq.LINGER, 0)
    s.connect(os.environ["ARENA_ENDPOINT"])
    s.send(msgpack.packb({"type": "hello", "token": os.environ["ARENA_TOKEN"], "name": "first",
                          "protocol": 1}))
    while True:
        m = msgpack.unpackb(s.recv())
        if m["type"] == "bye": break
        if m["type"] == "turn":
            s.send(msgpack.packb({"type": "move", "game_id": m["game_id"], "ply": m["ply"],
                                  "move": m["legal"][0]}))
else:
    for line in sys.stdin:
        if line.startswith("turn "):
            words = line.split()
            sys.stdout.write("move " + words[words.index("legal") + 1] + "\\n"); sys.stdout.flush()
        elif line.startswith("bye"):
            break
"""


def command(protocol: str) -> tuple[str, ...]:
    argv = (sys.executable, "-c", BOT, protocol)
    return argv if protocol == "v1" else (sys.executable, "-m", "arena.match.stdio", *argv)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def round_trips(n: int) -> dict[str, list[float]]:
    """Per-move round trips with both bots running, alternating v1 and stdio move by move, so that
    the load of a shared machine falls on both alike."""
    state = rules.load("domineering").start()
    message = {"type": "turn", "game_id": "bench-g0", "ply": 0, "state": state.to_wire(),
               "moves": ["4C"] * 15, "legal": state.legal_moves(), "time_left_s": 1.0}
    python_path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    times: dict[str, list[float]] = {"v1": [], "stdio": []}
    with RefereeEndpoint(monitor=False) as v1, RefereeEndpoint(monitor=False) as stdio:
        endpoints = {"v1": v1, "stdio": stdio}
        children, identities = [], {}
        for protocol, endpoint in endpoints.items():
            env = dict(os.environ, ARENA_ENDPOINT=endpoint.endpoint, ARENA_TOKEN="t", PYTHONPATH=python_path)
            children.append(subprocess.Popen(command(protocol), env=env))
            identities[protocol], _ = endpoint.receive(10.0)
        for ply in range(n):
            message["ply"] = ply
            for protocol, endpoint in endpoints.items():
                start = time.perf_counter()
                endpoint.send(identities[protocol], message)
                got = endpoint.receive(5.0)
                times[protocol].append(time.perf_counter() - start)
                assert got is not None and decode_bot_message(got[1])["ply"] == ply
        for protocol, endpoint in endpoints.items():
            endpoint.send(identities[protocol], {"type": "bye"})
        for child in children:
            child.wait(5)
    return {protocol: values[n // 10:] for protocol, values in times.items()}  # without the warm-up


def referee_times(protocol: str, games: int) -> list[float]:
    bot = BotSpec(f"first-{protocol}", command(protocol))
    other = BotSpec("first-v1-opponent", command("v1"))
    spec = MatchSpec(match_id=f"bench-{protocol}", game="domineering", bots=(bot, other),
                     time_control=TimeControl(per_move=1.0), game_numbers=tuple(range(games)))
    times = []
    for record in run_match(spec):
        assert record.forfeit is None, record.forfeit
        seat = record.players.index(bot.name)
        times += [m.time_s for m in record.moves if m.seat == seat]
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=3000)
    parser.add_argument("--games", type=int, default=20)
    args = parser.parse_args()
    resolve_command("random")  # the same checks as arena does, before anything is timed

    print(f"1. round trips, Domineering 8x8 turn, {args.moves} moves each, v1 and stdio alternating "
          "(after 10% warm-up)")
    times = round_trips(args.moves)
    medians = {protocol: statistics.median(values) for protocol, values in times.items()}
    for protocol, values in times.items():
        print(f"   {protocol:5}  median {medians[protocol] * 1e6:7.1f} us   "
              f"p99 {percentile(values, 99) * 1e6:7.1f} us")
    added_us = (medians["stdio"] - medians["v1"]) * 1e6
    verdict = "within" if added_us <= TARGET_US else "OVER"
    print(f"   the adapter adds {added_us:.1f} us a move (median), {verdict} the {TARGET_US:g} us target")

    print(f"2. the referee's time_s per move, {args.games} games of Domineering 8x8 against a v1 bot, "
          "v1 and stdio matches alternating two games at a time")
    referee: dict[str, list[float]] = {"v1": [], "stdio": []}
    for _ in range(max(1, args.games // 2)):
        for protocol in referee:
            referee[protocol] += referee_times(protocol, 2)
    for protocol, values in referee.items():
        print(f"   {protocol:5}  median {statistics.median(values) * 1e6:7.1f} us   ({len(values)} moves)")
    difference_us = (statistics.median(referee["stdio"]) - statistics.median(referee["v1"])) * 1e6
    print(f"   difference {difference_us:.1f} us a move")
    return 0 if added_us <= TARGET_US else 1


if __name__ == "__main__":
    sys.exit(main())
