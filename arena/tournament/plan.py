"""Before a run: how many games and matches a tournament has, and about how long it will take.

The estimate of the wall time schedules the matches still to play on the workers (each takes the
next match in the runner's order as soon as it is free), a match lasting the start of those of its
two bots its worker does not keep already, plus its games. With bots kept between matches (the
default pool and every thread of a `--cluster` worker, arena.match.reuse) each worker keeps the
bots of its last matches (up to reuse.IDLE_MAX idle ones, the least recently used stopped first),
so a bot is started once per worker rather than once per match; without (`pin_cpus`) every match
starts both.
A game lasts, until games are stored, its typical number of plies (random playouts of the game
with its parameters) times the clock's time a move, that is bots using their whole clock: an upper
bound for bots that answer sooner. `arena tournament plan` times real moves of each bot
first (`sample_bots`: a short game against the random bot, in the tournament's clock, limits and
sandbox), and a game then lasts its plies times the mean time a move of its two bots; the same
samples measure what starting a match's bots takes on this machine now. Once games are stored it
lasts their measured mean, and the start of a bot is calibrated on the last run (Store.last_run: the
start cost per bot process that makes this model give that run's measured wall time with the bot
processes it started). A Swiss is played round after round, so its rounds add up; its later rounds,
not paired yet, are stood in for by rounds of the circle method (each bot meets a new opponent every round).
"""
from __future__ import annotations

import dataclasses
import heapq
import random
import tempfile
import time
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import rules
from arena.match.clock import TimeControl
from arena.match.records import GameRecord
from arena.match.reuse import IDLE_MAX
from arena.match.spec import params_text
from arena.tournament.runner import Tournament, duration, plan
from arena.tournament.store import Store

BOT_START_S = 0.4
"""Starting a match's two bot processes (Python bots: interpreter, imports, hello) in a worker that
keeps its bots (arena.match.reuse.BotHub: its socket, watchdog and directory are already there),
seconds; the model charges half of it for each bot process a worker starts. Measured on 2 shared
cores: benchmarks/swiss_200.py's first run, where no bot is kept from one match to the next,
0.36 s a match (151 matches, 35.6 s on 2 workers, 6 s of games)."""
FRESH_MATCH_START_S = 0.6
"""Starting a match's two bots without reuse (pin_cpus): the bots plus the match's own
socket, watchdog and directory, seconds. benchmarks/tournament_scaling.py, the same round-robin
with bots started every match and with bots kept: 0.28 to 0.31 s more per bot process started."""
POOL_START_S = 2.0
"""Starting the pool of worker processes, once per run, seconds."""
SAMPLE_BOT_S = 3.0
"""`sample_bots` times a bot's moves over a whole game, or until they took this long (seconds; at least
one move): a bot's first moves often take longer than its later ones, and a bot that thinks long is
timed well enough by a move or two."""
SAMPLE_OPPONENT = "random"
"""The shipped bot each bot plays while its moves are timed."""
GAME_OVERHEAD_S = 0.05
"""What a game costs besides its moves (new_game, game_over, the record), seconds."""
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

    sampled: int = 0
    """Bots whose moves were timed (`sample_bots`), 0 when none were."""

    def text(self) -> str:
        if self.measured_games:
            basis = f"measured over {self.measured_games} stored games"
        elif self.sampled:
            basis = f"random playouts; a few moves of each of the {self.sampled} bots timed"
        else:
            basis = "random playouts; bots using their whole clock, so faster bots finish sooner"
        lines = [
            f"{self.name}: {self.kind}: {self.games} game{'s' * (self.games != 1)} in {self.matches} "
            f"match{'es' * (self.matches != 1)}",
            f"  a game: about {self.plies:.0f} plies, {self.game_s:.2f} s ({basis})",
            f"  all of it on {self.workers} worker{'s' * (self.workers != 1)}: "
            f"about {duration(self.full_wall_s)}",
        ]
        if self.left != self.games:
            lines.append(f"  left: {self.left} game{'s' * (self.left != 1)} in {self.left_matches} "
                         f"match{'es' * (self.left_matches != 1)}: about "
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


@dataclass(frozen=True)
class Task:
    """One match as the plan schedules it: its two bots (names), its number of games and, when
    known, how long one of its games lasts (seconds; else the schedule's `game_s`)."""

    bots: tuple[str, str]
    games: int
    game_s: float | None = None


@dataclass(frozen=True)
class Samples:
    """What timing a few moves of each bot found (`sample_bots`)."""

    move_s: dict[str, float]
    """Each bot's mean time a move, seconds (the clock's whole time a move for a bot that played none)."""
    start_s: float
    """Starting a match and its two bots, as `run_match` does it alone (no kept bots), seconds."""


class _Enough(Exception):
    """Raised from on_move once a bot's moves are timed: the sample game stops there."""


def sample_bots(tournament: Tournament, workers: int = 1) -> Samples:
    """Time the moves of each bot (until they took SAMPLE_BOT_S) in a game
    against the random bot, under the tournament's clock, limits and sandbox (its file and results
    hidden, as in a run), `workers` bots at a time; and how long the start of each such game took."""
    from arena.cell.launcher import resolve_command
    from arena.match.referee import run_match
    from arena.match.spec import BotSpec, MatchSpec

    clock_s = clock_game_s(tournament.time_control, 1.0)
    hide = (*tournament.limits.hide, str(tournament.path.resolve()), str(tournament.results_dir().resolve()))
    limits = dataclasses.replace(tournament.limits, hide=hide)

    def one(entry) -> tuple[float, float | None]:
        opponent = SAMPLE_OPPONENT if entry.name != SAMPLE_OPPONENT else f"{SAMPLE_OPPONENT}-timer"
        spec = MatchSpec(match_id=f"plan-{entry.name}", game=tournament.game,
                         bots=(entry.spec(), BotSpec(opponent, resolve_command(SAMPLE_OPPONENT))),
                         time_control=tournament.time_control, game_numbers=(0,),
                         params=dict(tournament.params), seed=tournament.seed, limits=limits)
        times: list[float] = []
        began = time.monotonic()
        first: list[float] = []

        def on_move(record: GameRecord, move, state) -> None:
            if not first:  # the match started, and one move was played
                first.append(time.monotonic() - began - move.time_s)
            if record.players[move.seat] == entry.name:
                times.append(move.time_s)
                if sum(times) >= SAMPLE_BOT_S:
                    raise _Enough

        with tempfile.TemporaryDirectory(prefix="arena-plan-") as work:
            try:
                run_match(spec, on_move=on_move, workdir=work)
            except _Enough:
                pass
            except Exception:  # a bot that cannot play: it counts its whole clock
                pass
        return (sum(times) / len(times) if times else clock_s), (first[0] if first else None)

    with ThreadPoolExecutor(max(1, workers)) as pool:
        found = list(pool.map(one, tournament.bots))
    starts = sorted(start for _, start in found if start is not None)
    start_s = starts[len(starts) // 2] if starts else FRESH_MATCH_START_S
    return Samples({b.name: move for b, (move, _) in zip(tournament.bots, found, strict=True)}, start_s)


def schedule_s(phases: Sequence[Sequence[Task]], workers: int, game_s: float, start_s: float,
               idle_max: int) -> float:
    """The wall time of `phases` (each phase begins when the one before has ended: Swiss rounds)
    whose tasks are taken in order by `workers` workers, each as soon as it is free. A task lasts
    its games plus `start_s / 2` for each of its bots its worker does not keep; a worker keeps the
    bots of its last tasks, at most `idle_max` between tasks, the least recently used dropped first
    (arena.match.reuse.BotHub; `idle_max` 0: every match starts both bots)."""
    count = max(1, workers)
    kept: list[OrderedDict[str, None]] = [OrderedDict() for _ in range(count)]
    now = 0.0
    for phase in phases:
        free = [(now, w) for w in range(count)]
        for task in phase:
            at, w = heapq.heappop(free)
            held = kept[w]
            starts = 0
            for name in task.bots:
                if name in held:
                    del held[name]
                else:
                    starts += 1
            for name in task.bots:
                held[name] = None
            while len(held) > idle_max:
                held.popitem(last=False)
            each = game_s if task.game_s is None else task.game_s
            heapq.heappush(free, (at + starts * start_s / 2 + task.games * each, w))
        now = max(at for at, _ in free)
    return now


def circle_rounds(names: Sequence[str], rounds: int) -> list[list[tuple[str, str]]]:
    """`rounds` rounds of the circle method over `names` (no pairing repeats within n - 1 rounds; the
    odd one out sits out): the stand-in for Swiss rounds not paired yet."""
    order = list(names) + ([""] if len(names) % 2 else [])
    n = len(order)
    out = []
    for r in range(rounds):
        rest = order[1:]
        shift = r % max(1, n - 1)
        ring = [order[0]] + rest[shift:] + rest[:shift]
        out.append([(ring[i], ring[n - 1 - i]) for i in range(n // 2) if ring[i] and ring[n - 1 - i]])
    return out


def estimate(tournament: Tournament, workers: int, store: Store | None = None,
             reuse: bool = True, samples: Samples | None = None) -> Estimate:
    """The plan of `tournament` on `workers` workers, from its stored games when `store` is given,
    else from `samples` (sample_bots) when given. `reuse`: the workers keep their bots between
    matches (the default pool and Dask workers, each thread of which is a worker here)."""
    records: list[GameRecord] = [g.record for g in store.iter_games()] if store is not None else []
    start_s = BOT_START_S if reuse else FRESH_MATCH_START_S
    pool_s = POOL_START_S
    move_s: dict[str, float] = {}
    if samples is not None and not records:  # this machine, now: as much slower or faster
        load = samples.start_s / FRESH_MATCH_START_S
        start_s, pool_s, move_s = start_s * load, pool_s * load, samples.move_s
    if records:
        plies = sum(len(r.moves) for r in records) / len(records)
        game_s = sum(r.duration_s for r in records) / len(records)
        last = store.last_run() if store is not None else None
        if last:
            start_s, pool_s = calibrated_start_s(last), calibrated_pool_s(last)
    else:
        plies = typical_plies(tournament.game, tournament.params)
        game_s = clock_game_s(tournament.time_control, plies)
    stored = store.stored_numbers() if store is not None else {}
    results = store.pairing_results() if store is not None else {}
    per_task = tournament.games_per_task
    chunk_games = [min(per_task, tournament.games_per_pairing - i)
                   for i in range(0, tournament.games_per_pairing, per_task)]

    idle_max = IDLE_MAX if reuse and not tournament.limits.pin_cpus else 0

    def wall_of(phases: list[list[Task]]) -> float:
        return pool_s + schedule_s(phases, workers, game_s, start_s, idle_max) if phases else 0.0

    def pair_game_s(pair: tuple[str, str]) -> float | None:
        if not move_s:
            return None
        return plies / 2 * (move_s[pair[0]] + move_s[pair[1]]) + GAME_OVERHEAD_S

    def tasks_of(pairs: Sequence[tuple[str, str]]) -> list[Task]:  # first chunks first, as runner.plan
        return [Task(pair, g, pair_game_s(pair)) for g in chunk_games for pair in pairs]

    if tournament.format == "swiss":
        names = [b.name for b in tournament.bots]
        full_phases = [tasks_of(pairs) for pairs in circle_rounds(names, tournament.rounds)]
    else:
        full_phases = [tasks_of([(p.a, p.b) for p in tournament.pairings()])]
    full_wall = wall_of(full_phases)
    specs = plan(tournament, stored, results)
    left_phases = [[Task((s.bots[0].name, s.bots[1].name), len(s.game_numbers),
                         pair_game_s((s.bots[0].name, s.bots[1].name))) for s in specs]]
    left_phases = left_phases if specs else []
    if tournament.format == "swiss":
        later = max(0, tournament.rounds - _rounds_begun(tournament, results))
        left_phases += full_phases[len(full_phases) - later:] if later else []
    wall = wall_of(left_phases)
    left_matches = sum(len(p) for p in left_phases)
    left = tournament.total_games() - sum(len(v) for v in stored.values())
    if move_s:  # the mean game of the whole tournament
        tasks = [t for phase in full_phases for t in phase]
        game_s = sum(t.games * (t.game_s or 0.0) for t in tasks) / max(1, sum(t.games for t in tasks))
    return Estimate(
        name=tournament.name, kind=describe(tournament), games=tournament.total_games(),
        matches=sum(len(p) for p in full_phases), left=left, left_matches=left_matches, workers=workers,
        plies=plies, game_s=game_s, measured_games=len(records), wall_s=wall, full_wall_s=full_wall,
        sampled=len(move_s),
    )


def calibrated_start_s(run: dict) -> float:
    """The cost of starting a match's two bots (twice that of one bot process) that makes the model
    give the wall time of `run` (Store.last_run: wall_s, workers, matches, game_s, phases, and
    bot_starts, the bot processes the run started: 2 a match when missing or 0), found by
    bisection; BOT_START_S if it cannot tell."""
    try:
        wall, workers = float(run["wall_s"]), int(run["workers"])
        matches, phases = int(run["matches"]), max(1, int(run["phases"]))
        mean = float(run["game_s"]) / matches
        starts_per_match = (int(run.get("bot_starts") or 0) or 2 * matches) / matches
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return BOT_START_S
    per_phase = max(1, round(matches / phases))

    def model(start: float) -> float:
        return POOL_START_S + phases * makespan([start / 2 * starts_per_match + mean] * per_phase, workers)

    low, high = 0.0, max(wall, 0.0) * max(1.0, 2 / starts_per_match)
    if model(low) >= wall:
        return 0.0
    for _ in range(_BISECTION_STEPS):
        middle = (low + high) / 2
        low, high = (middle, high) if model(middle) < wall else (low, middle)
    return (low + high) / 2


def calibrated_pool_s(run: dict) -> float:
    """POOL_START_S, or less when the run (Store.last_run) took less than the pool's start plus its
    games with no time at all to start bots: then what is left of its wall time after the games."""
    try:
        wall, workers = float(run["wall_s"]), int(run["workers"])
        matches, phases = int(run["matches"]), max(1, int(run["phases"]))
        mean = float(run["game_s"]) / matches
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return POOL_START_S
    games_s = phases * makespan([mean] * max(1, round(matches / phases)), workers)
    return min(POOL_START_S, max(0.0, wall - games_s))


def _rounds_begun(tournament: Tournament, results: dict[str, dict[int, float]]) -> int:
    """How many Swiss rounds are paired already (the current one included)."""
    from arena.tournament.formats import swiss_rounds

    return len(swiss_rounds([b.name for b in tournament.bots], tournament.games_per_pairing,
                            tournament.rounds, results))


def describe(tournament: Tournament) -> str:
    """`round-robin of 4 bots`, `gauntlet of alice, bob against 4 bots`, `Swiss of 7 rounds, 200 bots`,
    with the clock, games a pairing and the openings if any."""
    n = len(tournament.bots)
    if tournament.format == "gauntlet":
        others = n - len(tournament.challengers)
        kind = f"gauntlet of {', '.join(tournament.challengers)} against {others} bots"
    elif tournament.format == "swiss":
        kind = f"Swiss of {tournament.rounds} rounds, {n} bots"
    else:
        kind = f"round-robin of {n} bots"
    openings = f", openings {tournament.openings.source}" if tournament.openings is not None else ""
    shown = params_text(tournament.game, tournament.params)
    return (f"{kind}, {tournament.game}{f' ({shown})' if shown else ''}, {tournament.time_control} s, "
            f"{tournament.games_per_pairing} games a pairing{openings}")
