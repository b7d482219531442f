"""Before a run: how many games and matches a tournament has, and about how long it will take.

The estimate of the wall time schedules the matches still to play on the workers (each takes the
next match in the runner's order as soon as it is free), a match lasting the start of its two bots
plus its games. A game lasts, until games are stored, its typical number of plies (random
playouts of the game with its parameters) times the clock's time a move, that is bots using their
whole clock: an upper bound for bots that answer sooner. Once games are stored it lasts their
measured mean, and the start of a match is calibrated on the last run (Store.last_run: the start
cost per match that makes this model give that run's measured wall time). A Swiss is played round
after round, so its rounds add up.
"""
from __future__ import annotations

import heapq
import random
from dataclasses import dataclass

import rules
from arena.match.clock import TimeControl
from arena.match.records import GameRecord
from arena.tournament.runner import Tournament, duration, plan
from arena.tournament.store import Store

BOT_START_S = 0.8
"""Starting a match's two bot processes (Python bots: interpreter, imports, hello), seconds;
measured on 2 shared cores (0.75 to 0.85 s between one match's last game and the next's first)."""
POOL_START_S = 2.0
"""Starting the pool of worker processes, once per run, seconds."""
_BISECTION_STEPS = 40
PLAYOUTS = 16
"""Random playouts that give a game's typical number of plies."""
_PLAYOUT_PLIES_MAX = 1000
_PLAYOUT_SEED = 15


@dataclass(frozen=True)
class Estimate:
    """What `arena tournament plan` prints (`text()`); times in seconds of wall time."""

    name: str
    kind: str
    games: int
    matches: int
    left: int
    left_matches: int
    workers: int
    plies: float
    game_s: float
    measured_games: int
    wall_s: float
    full_wall_s: float

    def text(self) -> str:
        basis = (f"measured over {self.measured_games} stored games" if self.measured_games
                 else "random playouts; bots using their whole clock, so faster bots finish sooner")
        lines = [
            f"{self.name}: {self.kind}: {self.games} games in {self.matches} matches",
            f"  a game: about {self.plies:.0f} plies, {self.game_s:.2f} s ({basis})",
            f"  all of it on {self.workers} worker{'s' * (self.workers != 1)}: "
            f"about {duration(self.full_wall_s)}",
        ]
        if self.left != self.games:
            lines.append(f"  left: {self.left} games in {self.left_matches} matches: about "
                         f"{duration(self.wall_s)}")
        return "\n".join(lines)


def typical_plies(game_name: str, params: dict, playouts: int = PLAYOUTS) -> float:
    """The mean number of plies of random playouts (seeded, so the plan prints the same figure)."""
    game = rules.load(game_name, **params)
    rng = random.Random(_PLAYOUT_SEED)
    total = 0
    for _ in range(playouts):
        state = game.start()
        plies = 0
        while state.outcome is None and plies < _PLAYOUT_PLIES_MAX:
            state = state.play(rng.choice(state.legal_moves()))
            plies += 1
        total += plies
    return total / playouts


def clock_game_s(clock: TimeControl, plies: float) -> float:
    """A game's length when both bots use their whole clock."""
    if clock.per_move is not None:
        return plies * clock.per_move
    return 2 * (clock.base or 0.0) + plies * clock.increment


def makespan(durations: list[float], workers: int) -> float:
    """The wall time of `durations` taken in order by `workers` workers, each as soon as it is free."""
    free = [0.0] * max(1, workers)
    for d in durations:
        heapq.heappush(free, heapq.heappop(free) + d)
    return max(free)


def estimate(tournament: Tournament, workers: int, store: Store | None = None) -> Estimate:
    """The plan of `tournament` on `workers` workers, from its stored games when `store` is given."""
    records: list[GameRecord] = [g.record for g in store.iter_games()] if store is not None else []
    start_s = BOT_START_S
    if records:
        plies = sum(len(r.moves) for r in records) / len(records)
        game_s = sum(r.duration_s for r in records) / len(records)
        last = store.last_run() if store is not None else None
        if last:
            start_s = calibrated_start_s(last)
    else:
        plies = typical_plies(tournament.game, tournament.params)
        game_s = clock_game_s(tournament.time_control, plies)
    stored = store.stored_numbers() if store is not None else {}
    results = store.pairing_results() if store is not None else {}
    per_task = tournament.games_per_task
    chunk_games = [min(per_task, tournament.games_per_pairing - i)
                   for i in range(0, tournament.games_per_pairing, per_task)]

    def task_s(games: int) -> float:
        return start_s + games * game_s

    phases = tournament.rounds if tournament.format == "swiss" else 1
    pairings = (tournament.pairings_per_round() if tournament.format == "swiss"
                else len(tournament.pairings()))
    full_phase = [task_s(g) for g in chunk_games for _ in range(pairings)]
    full_wall = POOL_START_S + phases * makespan(full_phase, workers)
    specs = plan(tournament, stored, results)
    left_matches = len(specs)
    wall = POOL_START_S + makespan([task_s(len(s.game_numbers)) for s in specs], workers) if specs else 0.0
    if tournament.format == "swiss":
        played_rounds = _rounds_begun(tournament, results)
        later = max(0, tournament.rounds - played_rounds)
        wall += later * makespan(full_phase, workers)
        left_matches += later * len(full_phase)
    left = tournament.total_games() - sum(len(v) for v in stored.values())
    return Estimate(
        name=tournament.name, kind=describe(tournament), games=tournament.total_games(),
        matches=phases * len(full_phase), left=left, left_matches=left_matches, workers=workers,
        plies=plies, game_s=game_s, measured_games=len(records), wall_s=wall, full_wall_s=full_wall,
    )


def calibrated_start_s(run: dict) -> float:
    """The start cost per match that makes the model give the wall time of `run` (Store.last_run:
    wall_s, workers, matches, game_s, phases), found by bisection; BOT_START_S if it cannot tell."""
    try:
        wall, workers = float(run["wall_s"]), int(run["workers"])
        matches, phases = int(run["matches"]), max(1, int(run["phases"]))
        mean = float(run["game_s"]) / matches
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return BOT_START_S
    per_phase = max(1, round(matches / phases))

    def model(start: float) -> float:
        return POOL_START_S + phases * makespan([start + mean] * per_phase, workers)

    low, high = 0.0, max(wall, 0.0)
    if model(low) >= wall:
        return 0.0
    for _ in range(_BISECTION_STEPS):
        middle = (low + high) / 2
        low, high = (middle, high) if model(middle) < wall else (low, middle)
    return (low + high) / 2


def _rounds_begun(tournament: Tournament, results: dict[str, dict[int, float]]) -> int:
    """How many Swiss rounds are paired already (the current one included)."""
    from arena.tournament.formats import swiss_rounds

    return len(swiss_rounds([b.name for b in tournament.bots], tournament.games_per_pairing,
                            tournament.rounds, results))


def describe(tournament: Tournament) -> str:
    """`round-robin of 4 bots`, `gauntlet of alice, bob against 4 bots`, `Swiss of 7 rounds, 200 bots`,
    with the clock and games a pairing."""
    n = len(tournament.bots)
    if tournament.format == "gauntlet":
        others = n - len(tournament.challengers)
        kind = f"gauntlet of {', '.join(tournament.challengers)} against {others} bots"
    elif tournament.format == "swiss":
        kind = f"Swiss of {tournament.rounds} rounds, {n} bots"
    else:
        kind = f"round-robin of {n} bots"
    return (f"{kind}, {tournament.game}, {tournament.time_control} s, "
            f"{tournament.games_per_pairing} games a pairing")
