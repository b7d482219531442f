"""How strong the reference bots are: real matches through the referee, and minimax/alphabeta node counts.

    python benchmarks/bot_strength.py                      # quick: about a minute (see QUICK)
    python benchmarks/bot_strength.py --full               # every game, 1 s a move, 10 games a pairing
    python benchmarks/bot_strength.py --games 4 --time 0.5 --game santorini --jobs 2
    python benchmarks/bot_strength.py --ladder             # every step of the ladder, every game (long)
    python benchmarks/bot_strength.py --ladder --step alphabeta-champion --game fanorona --jobs 2

A progress line on stderr says which match or node count is running and how long it has taken.

Per game: `champion` against `alphabeta depth=2`, and `alphabeta` against `random`. The bots are
deterministic, so each pair of games (one per seat) starts from its own random opening of
`--opening` plies. Printed: the first bot's score, and each bot's nodes per second (its reported
nodes over the referee's time for its moves). Then the node counts of minimax and alphabeta at the
same depth over random positions, side by side. The issue's goals: champion >= 75%, alphabeta >= 90%.

`--ladder`: each step of the reference bots' ladder (random < greedy < minimax < alphabeta <
champion), in every game, over `--ladder-games` games at `--time` s a move (0.5 by default: the
games' 3-5 s clocks scaled down). Each pair of games starts from one of the game's random openings
of `--opening` plies (4 by default; in Fanorona and Morris only openings a shallow search finds
level: see LEVEL_DEPTH), once per seat; the openings depend only on the game and
`--seed`, so a subset (`--step`, `--game`) replays the full run's games. Printed: one table, a row
per game, a column per step, each cell the upper bot's score (wins + half the draws) with its
wins-draws-losses; cells under LADDER_GOAL are marked.
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tabulate import tabulate  # noqa: E402

import rules  # noqa: E402
from arena.match.clock import TimeControl  # noqa: E402
from arena.match.records import GameRecord  # noqa: E402
from arena.match.referee import run_match  # noqa: E402
from arena.match.spec import BotSpec, MatchSpec  # noqa: E402
from bots import evaluation  # noqa: E402
from bots.search import alphabeta, minimax  # noqa: E402

PAIRINGS = (("champion", "alphabeta depth=2"), ("alphabeta", "random"))
"""(first bot, second bot): the score printed is the first bot's."""
NODE_DEPTH = {"freedom": 3, "domineering": 3, "morris": 3, "santorini": 2, "fanorona": 3}
"""Depth of the minimax/alphabeta node count per game (Santorini's branching makes 3 slow here)."""
QUICK = {"games": 2, "time": 0.25, "positions": 10}
"""The defaults: one seat-swapped pair a pairing at 0.25 s a move (shorter clocks forfeit on a busy
machine); about a minute on one core."""
FULL = {"games": 10, "time": 1.0, "positions": 20}
"""`--full`: the figures the issue's goals are judged on (about half an hour on one core)."""
LADDER = ("random", "greedy", "minimax", "alphabeta", "champion")
"""The reference bots, weakest first: each must clearly beat the one before it."""
STEPS = tuple(f"{lower}-{upper}" for lower, upper in zip(LADDER, LADDER[1:], strict=False))
"""The ladder's steps as `lower-upper`, the names `--step` takes."""
LADDER_DEFAULTS = {"ladder_games": 20, "time": 0.5, "opening": 4}
"""`--ladder`: 20 games a step (10 openings, each bot in each seat), 0.5 s a move, 4-ply openings."""
LEVEL_DEPTH = {"fanorona": 3, "morris": 3}
"""Games whose random openings often hand one side a won position (Fanorona's first plies are all
compulsory captures): a ladder opening of these is kept only if alphabeta at this depth (simple
evaluation: material) finds it level within LEVEL_MARGIN, else each pair of games is decided by
its opening (one win each) whatever the bots, which pulls every score towards 50%."""
LEVEL_MARGIN = 1
LADDER_GOAL = 75.0
"""A step scoring under this percentage is marked in the table."""


class Progress:
    """One line on stderr, rewritten in place on a terminal: what is running, how far, how long."""

    def __init__(self, total: int, what: str) -> None:
        self.total, self.what, self.done = total, what, 0
        self.started = time.monotonic()
        self.tty = sys.stderr.isatty()

    def step(self, label: str) -> None:
        self.done += 1
        line = (f"{self.what} {self.done}/{self.total}: {label} "
                f"({time.monotonic() - self.started:.0f} s)")
        sys.stderr.write(("\r\033[K" + line) if self.tty else line + "\n")
        if self.tty and self.done == self.total:
            sys.stderr.write("\n")
        sys.stderr.flush()


@dataclass
class PairingResult:
    """One pairing in one game: the first bot's points, and each bot's nodes and seconds."""

    game: str
    bots: tuple[str, str]
    games: int = 0
    points: float = 0.0
    forfeits: int = 0
    nodes: tuple[int, int] = (0, 0)
    seconds: tuple[float, float] = (0.0, 0.0)


def opening(game: str, plies: int, rng: random.Random) -> tuple[str, ...]:
    """`plies` random moves from the start that leave the game running."""
    while True:
        state, moves = rules.load(game).start(), []
        for _ in range(plies):
            move = rng.choice(state.legal_moves())
            moves.append(move)
            state = state.play(move)
            if state.is_over():
                break
        if not state.is_over():
            return tuple(moves)


def bot_spec(text: str) -> BotSpec:
    """A shipped bot with its options, e.g. `alphabeta depth=2`, run as `python -m bots ...`."""
    return BotSpec(text, (sys.executable, "-m", "bots", *text.split()))


def play_pair(game: str, bots: tuple[str, str], seconds: float, start: tuple[str, ...],
              match_id: str) -> list[GameRecord]:
    """Two games from the same opening, each bot in each seat."""
    spec = MatchSpec(match_id, game, (bot_spec(bots[0]), bot_spec(bots[1])),
                     TimeControl(per_move=seconds), (0, 1), start_moves=start)
    return run_match(spec)


def tally(result: PairingResult, records: list[GameRecord]) -> None:
    """Add a pair of games (bots[0] in seat 0 in game 0, seat 1 in game 1) to `result`."""
    nodes, secs = list(result.nodes), list(result.seconds)
    for number, record in enumerate(records):
        first_seat = number % 2
        result.games += 1
        result.points += record.points(first_seat)
        result.forfeits += record.forfeit is not None
        for move in record.moves:
            who = 0 if move.seat == first_seat else 1
            nodes[who] += int(move.info.get("nodes", 0) or 0)
            secs[who] += move.time_s
    result.nodes, result.seconds = (nodes[0], nodes[1]), (secs[0], secs[1])


def strength(games: list[str], count: int, seconds: float, plies: int, jobs: int,
             seed: int) -> list[PairingResult]:
    """Play `count` games (in seat-swapped pairs) of every pairing in every game."""
    rng = random.Random(seed)
    work = []
    for game in games:
        for bots in PAIRINGS:
            for pair in range((count + 1) // 2):
                work.append((game, bots, seconds, opening(game, plies, rng), f"{game}-{bots[0]}-{pair}"))
    results = {(game, bots): PairingResult(game, bots) for game in games for bots in PAIRINGS}
    progress = Progress(len(work), "match pairs")
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(play_pair, *item): item for item in work}
        for future in as_completed(futures):
            game, bots, *_ = futures[future]
            tally(results[game, bots], future.result())
            progress.step(f"{game}, {bots[0]} vs {bots[1]}")
    return list(results.values())


@dataclass
class StepResult:
    """One step of the ladder in one game: the upper bot's wins, draws and losses, and forfeits."""

    game: str
    step: str
    wins: int = 0
    draws: int = 0
    losses: int = 0
    forfeits: int = 0
    notes: list[str] = field(default_factory=list)
    """One line per forfeit: the match, the bot that lost and why."""

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        """The upper bot's points (a win 1, a draw 1/2) as a percentage of the games."""
        return 100 * (self.wins + self.draws / 2) / max(self.games, 1)

    def add(self, records: list[GameRecord]) -> None:
        """Add a pair of games where the upper bot is bots[0]: seat 0 in game 0, seat 1 in game 1."""
        for number, record in enumerate(records):
            points = record.points(number % 2)
            self.wins += points == 1
            self.draws += points == 0.5
            self.losses += points == 0
            if record.forfeit is not None:
                self.forfeits += 1
                seat = record.forfeit.get("seat")
                who = record.players[seat] if seat in (0, 1) else "both"
                self.notes.append(f"{record.game_id}: {who} forfeited ({record.forfeit.get('reason')}: "
                                  f"{str(record.forfeit.get('detail', ''))[:120]})")

    def cell(self) -> str:
        mark = " *" if self.score < LADDER_GOAL else ""
        forfeits = f" {self.forfeits}F" if self.forfeits else ""
        return f"{self.score:.0f}% {self.wins}-{self.draws}-{self.losses}{forfeits}{mark}"


def level(game: str, moves: tuple[str, ...]) -> bool:
    """True unless `game` is one of LEVEL_DEPTH's and a shallow search finds one side ahead after `moves`."""
    if game not in LEVEL_DEPTH:
        return True
    state = rules.load(game).start()
    for move in moves:
        state = state.play(move)
    return abs(alphabeta(state, LEVEL_DEPTH[game], evaluation.simple(game)).score) <= LEVEL_MARGIN


def ladder_openings(game: str, pairs: int, plies: int, seed: int) -> list[tuple[str, ...]]:
    """The game's `pairs` level openings: the same for every step and every subset of the run."""
    rng = random.Random(f"{seed}:{game}")
    found: list[tuple[str, ...]] = []
    while len(found) < pairs:
        moves = opening(game, plies, rng)
        if moves not in found and level(game, moves):
            found.append(moves)
    return found


def ladder(games: list[str], steps: list[str], count: int, seconds: float, plies: int, jobs: int,
           seed: int) -> dict[tuple[str, str], StepResult]:
    """Play `count` games (in seat-swapped pairs from shared openings) of every step in every game."""
    work = []
    for game in games:
        starts = ladder_openings(game, (count + 1) // 2, plies, seed)
        for step in steps:
            lower, upper = step.split("-")
            for pair, start in enumerate(starts):
                work.append((game, (upper, lower), seconds, start, f"ladder-{game}-{step}-{pair}"))
    # the slow steps first, so that the last matches running in parallel are short ones
    work.sort(key=lambda item: -LADDER.index(item[1][0]))
    results = {(game, step): StepResult(game, step) for game in games for step in steps}
    progress = Progress(len(work), "ladder pairs")
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(play_pair, *item): item for item in work}
        for future in as_completed(futures):
            game, (upper, lower), *_ = futures[future]
            step = f"{lower}-{upper}"
            results[game, step].add(future.result())
            result = results[game, step]
            progress.step(f"{game}, {upper} vs {lower}: {result.wins}-{result.draws}-{result.losses}")
    return results


def run_ladder(args: argparse.Namespace, games: list[str]) -> int:
    """`--ladder`: play the steps and print the table."""
    for key, value in LADDER_DEFAULTS.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    steps = [s for s in STEPS if s in (args.step or STEPS)]
    started = time.monotonic()
    results = ladder(games, steps, args.ladder_games, args.time, args.opening, args.jobs, args.seed)
    print(f"reference bots' ladder: the upper bot's score (wins-draws-losses) over {args.ladder_games} games "
          f"a step, {args.time:g} s a move, {args.opening}-ply random openings played once per seat "
          f"(seed {args.seed}); * under {LADDER_GOAL:g}%, F forfeits ({time.monotonic() - started:.0f} s)")
    rows = [[game, *(results[game, step].cell() for step in steps)] for game in games]
    print(tabulate(rows, headers=["game", *(s.replace("-", " < ") for s in steps)]))
    for result in results.values():
        for note in result.notes:
            print(note)
    return 0


def node_counts(games: list[str], positions: int, seed: int) -> list[list[object]]:
    """Rows of (game, depth, minimax nodes, alphabeta nodes, ratio, same value) over random positions."""
    rows = []
    progress = Progress(len(games), "node counts")
    for game in games:
        rng = random.Random(seed)
        g = rules.load(game)
        depth = NODE_DEPTH[game]
        evaluate = evaluation.simple(game)
        mm = ab = agree = 0
        for _ in range(positions):
            state, path = g.start(), []
            while not state.is_over():
                if not (game == "santorini" and state.ply < 2):  # placements: 300 x 253 moves
                    path.append(state)
                state = state.play(rng.choice(state.legal_moves()))
            state = rng.choice(path)
            a, b = minimax(state, depth, evaluate), alphabeta(state, depth, evaluate)
            mm, ab, agree = mm + a.nodes, ab + b.nodes, agree + (a.score == b.score)
        rows.append([game, depth, mm, ab, f"{ab / mm:.2f}", f"{agree}/{positions}"])
        progress.step(game)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add = parser.add_argument
    add("--game", action="append", choices=rules.names(), help="a game (repeatable; default all)")
    add("--full", action="store_true", help=f"the full run: {FULL['games']} games per pairing, "
        f"{FULL['time']:g} s a move, {FULL['positions']} positions (default: the quick run, about a minute)")
    add("--games", type=int, help=f"games per pairing and game (default {QUICK['games']}, "
        f"--full {FULL['games']})")
    add("--time", type=float, help=f"seconds per move (default {QUICK['time']:g}, --full {FULL['time']:g}, "
        f"--ladder {LADDER_DEFAULTS['time']:g})")
    add("--opening", type=int, help="random opening plies per pair of games (default 2, --ladder 4)")
    add("--jobs", type=int, default=1, help="matches played at once (default 1)")
    add("--positions", type=int, help=f"positions for the node counts (default {QUICK['positions']}, "
        f"--full {FULL['positions']})")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--skip-matches", action="store_true", help="only the node counts")
    add("--ladder", action="store_true", help="each step of the ladder (random < greedy < minimax < "
        "alphabeta < champion) in every game: one table of the upper bots' scores")
    add("--ladder-games", type=int, help=f"--ladder: games a step and game (default "
        f"{LADDER_DEFAULTS['ladder_games']}: half as many openings, each played once per seat)")
    add("--step", action="append", choices=STEPS, help="--ladder: a step (repeatable; default all)")
    args = parser.parse_args(argv)
    games = args.game or rules.names()
    if args.ladder:
        return run_ladder(args, games)
    if args.opening is None:
        args.opening = 2
    for key, value in (FULL if args.full else QUICK).items():
        if getattr(args, key) is None:
            setattr(args, key, value)

    print(f"minimax and alphabeta, same depth, {args.positions} random positions per game (default boards)")
    print(tabulate(node_counts(games, args.positions, args.seed),
                   headers=["game", "depth", "minimax nodes", "alphabeta nodes", "ratio", "same value"]))
    if args.skip_matches:
        return 0
    started = time.monotonic()
    rows = []
    for r in strength(games, args.games, args.time, args.opening, args.jobs, args.seed):
        nps = [f"{n / s:,.0f}" if s > 0 else "-" for n, s in zip(r.nodes, r.seconds, strict=True)]
        rows.append([r.game, f"{r.bots[0]} vs {r.bots[1]}", r.games, f"{r.points:g}",
                     f"{100 * r.points / max(r.games, 1):.0f}%", r.forfeits, nps[0], nps[1]])
    print(f"\nmatches at {args.time:g} s per move, {args.games} games per pairing "
          f"({time.monotonic() - started:.0f} s)")
    print(tabulate(rows, headers=["game", "pairing", "games", "first's points", "score", "forfeits",
                                  "first's nodes/s", "second's nodes/s"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
