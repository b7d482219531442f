"""Pairing formats: round-robin (every two bots meet), gauntlet (challengers against the rest) and
Swiss (rounds of bots with equal or near points that have not met). Pure functions.

A pairing is named by its two bots in the order of the tournament file (`alpha-vs-beta`), so its
name, its game numbers and therefore its seeds do not change when a bot is appended later.
In game `n` of a pairing the first bot takes seat 0 when `n` is even, seat 1 when it is odd
(`MatchSpec.seats`), so an even number of games gives each bot each seat equally often.
"""
from __future__ import annotations

from dataclasses import dataclass

FORMATS = ("round_robin", "gauntlet", "swiss")
"""The values of the tournament file's `format` key."""


def total_games(fmt: str, bots: int, games: int, challengers: int = 0, rounds: int = 0) -> int:
    """Every game of a tournament of `bots` bots and `games` games a pairing: a round-robin's
    bots x (bots - 1) / 2 pairings, a gauntlet's challengers x (bots - challengers), a Swiss's
    `rounds` rounds of bots // 2 pairings (the odd bot out has a bye)."""
    if fmt == "gauntlet":
        return challengers * (bots - challengers) * games
    if fmt == "swiss":
        return rounds * (bots // 2) * games
    return bots * (bots - 1) // 2 * games


@dataclass(frozen=True)
class Pairing:
    """Bots `a` and `b` (a listed first in the tournament file) and the number of games they play."""

    a: str
    b: str
    games: int

    @property
    def pairing_id(self) -> str:
        return f"{self.a}-vs-{self.b}"

    def seats(self, number: int) -> tuple[str, str]:
        """The bot names in seat order for game `number` (same rule as MatchSpec.seats)."""
        return (self.a, self.b) if number % 2 == 0 else (self.b, self.a)


def round_robin(bots: list[str] | tuple[str, ...], games: int) -> list[Pairing]:
    """Every pairing of `bots` once, ordered in rounds (circle method) so that no bot waits long.

    Raises ValueError for fewer than 2 bots, a repeated name, or an odd or non-positive `games`.
    """
    names = _check(bots, games, "a round-robin")
    position = {name: i for i, name in enumerate(names)}
    circle: list[str | None] = list(names)
    if len(circle) % 2:
        circle.append(None)  # the bye
    n = len(circle)
    pairings: list[Pairing] = []
    for _ in range(n - 1):
        for i in range(n // 2):
            x, y = circle[i], circle[n - 1 - i]
            if x is None or y is None:
                continue
            a, b = (x, y) if position[x] < position[y] else (y, x)
            pairings.append(Pairing(a, b, games))
        circle = [circle[0], circle[-1], *circle[1:-1]]  # rotate all but the first
    return pairings


def gauntlet(bots: list[str] | tuple[str, ...], challengers: list[str] | tuple[str, ...],
             games: int) -> list[Pairing]:
    """Each challenger against every bot that is not a challenger; challengers never meet.

    Pairings keep the file's order (`a` listed first), so their names do not depend on who is a
    challenger. Ordered so that every challenger plays its first opponent before anyone plays a
    second. ValueError for an unknown or repeated challenger, or no bot left to challenge.
    """
    names = _check(bots, games, "a gauntlet")
    position = {name: i for i, name in enumerate(names)}
    chosen = list(challengers)
    if not chosen:
        raise ValueError("a gauntlet needs at least one challenger")
    for name in chosen:
        if name not in position:
            raise ValueError(f"challenger {name!r} is not one of the bots")
    if len(set(chosen)) != len(chosen):
        raise ValueError("a challenger is listed twice")
    others = [n for n in names if n not in set(chosen)]
    if not others:
        raise ValueError("every bot is a challenger: a gauntlet needs bots to challenge")
    pairings: list[Pairing] = []
    for shift in range(len(others)):
        for i, challenger in enumerate(chosen):
            other = others[(i + shift) % len(others)]
            a, b = (challenger, other) if position[challenger] < position[other] else (other, challenger)
            pairings.append(Pairing(a, b, games))
    return pairings


def _check(bots: list[str] | tuple[str, ...], games: int, what: str) -> list[str]:
    names = list(bots)
    if len(names) < 2:
        raise ValueError(f"{what} needs at least 2 bots, got {len(names)}")
    if len(set(names)) != len(names):
        twice = next(n for n in names if names.count(n) > 1)
        raise ValueError(f"bot name {twice!r} appears twice")
    if isinstance(games, bool) or not isinstance(games, int) or games < 2 or games % 2:
        raise ValueError(f"games per pairing must be an even number >= 2 (seats swap), got {games!r}")
    return names


# --- Swiss ---

SWISS_PREFIX = "r"
"""A Swiss pairing is named `r<round>-<a>-vs-<b>`: the round is part of its name (and seeds)."""
_SEARCH_NODES_MAX = 200_000
"""How many partial pairings the no-rematch search may try before it gives up on a round."""


@dataclass(frozen=True)
class SwissPairing(Pairing):
    """A pairing of Swiss round `round` (1-based); `a` takes seat 0 in the pairing's first game."""

    round: int = 1

    @property
    def pairing_id(self) -> str:
        return f"{SWISS_PREFIX}{self.round}-{self.a}-vs-{self.b}"


@dataclass(frozen=True)
class SwissRound:
    """One Swiss round: its pairings, and the bot with the bye (None for an even field)."""

    number: int
    pairings: tuple[SwissPairing, ...]
    bye: str | None = None


def swiss_round(bots: list[str] | tuple[str, ...], games: int, number: int,
                history: list[SwissRound] | tuple[SwissRound, ...],
                points: dict[str, float]) -> SwissRound:
    """Round `number` of a Swiss event, from the earlier rounds and the points so far (byes included).

    The system (Monrad, as many club events run it): bots are ranked by points, then by their order
    in the tournament file; the highest-ranked unpaired bot meets the next-highest it has not met,
    backtracking when that leaves the rest unpairable, so nobody meets twice. With an odd field the
    lowest-ranked bot that has not had a bye sits out (scored by the caller as a won pairing, as in
    chess Swiss events). In each pairing the bot that has started fewer pairings in seat 0 starts
    (then the one that did not start last time, then the higher-ranked), so seats stay balanced.
    Pure and deterministic: the same inputs give the same round. ValueError when no round without a
    rematch exists.
    """
    names = _check(bots, games, "a Swiss tournament")
    order = {name: i for i, name in enumerate(names)}
    ranked = sorted(names, key=lambda n: (-points.get(n, 0.0), order[n]))
    met: set[frozenset[str]] = {frozenset((p.a, p.b)) for r in history for p in r.pairings}
    had_bye = {r.bye for r in history if r.bye is not None}
    starts = {n: 0 for n in names}
    last_start: dict[str, bool] = {}
    for r in history:
        for p in r.pairings:
            starts[p.a] += 1
            last_start[p.a], last_start[p.b] = True, False
    candidates: list[str | None] = [None]
    if len(ranked) % 2:
        candidates = [n for n in reversed(ranked) if n not in had_bye] or list(reversed(ranked))
    budget = [_SEARCH_NODES_MAX]
    for bye in candidates:
        field = [n for n in ranked if n != bye]
        pairs = _pair(field, met, budget)
        if pairs is not None:
            pairings = []
            for x, y in pairs:  # x ranks above y
                def due(n: str) -> tuple[int, bool]:
                    return starts[n], last_start.get(n, False)

                a, b = (x, y) if due(x) <= due(y) else (y, x)
                pairings.append(SwissPairing(a, b, games, number))
            return SwissRound(number, tuple(pairings), bye)
    raise ValueError(f"Swiss round {number}: no pairing without a rematch is left for {len(names)} bots "
                     "(use fewer rounds)")


def _pair(field: list[str], met: set[frozenset[str]], budget: list[int]) -> list[tuple[str, str]] | None:
    """Pair `field` (best first) top-down without rematches, backtracking; None if impossible."""
    if not field:
        return []
    budget[0] -= 1
    if budget[0] < 0:
        return None
    top, rest = field[0], field[1:]
    for i, other in enumerate(rest):
        if frozenset((top, other)) in met:
            continue
        tail = _pair(rest[:i] + rest[i + 1:], met, budget)
        if tail is not None:
            return [(top, other), *tail]
    return None


def swiss_rounds(bots: list[str] | tuple[str, ...], games: int, rounds: int,
                 results: dict[str, dict[int, float]]) -> list[SwissRound]:
    """The Swiss rounds planned so far from stored results, up to and including the first one not
    complete (all of them once every game is stored).

    `results`: pairing name -> {game number: points of the pairing's `a` in that game}. A round is
    planned only when every game of the rounds before it is stored, so a run killed mid-round plans
    the same round again, and a rerun plays the same pairings.
    """
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise ValueError(f"rounds must be a whole number >= 1, got {rounds!r}")
    points = dict.fromkeys(bots, 0.0)
    planned: list[SwissRound] = []
    for number in range(1, rounds + 1):
        current = swiss_round(bots, games, number, planned, points)
        planned.append(current)
        if not round_complete(current, results):
            break
        add_round_points(current, results, points, games)
    return planned


def round_complete(swiss: SwissRound, results: dict[str, dict[int, float]]) -> bool:
    """Whether every game of the round is in `results`."""
    return all(len(results.get(p.pairing_id, {}).keys() & set(range(p.games))) == p.games
               for p in swiss.pairings)


def add_round_points(swiss: SwissRound, results: dict[str, dict[int, float]], points: dict[str, float],
                     games: int) -> None:
    """Add the round's points to `points`: the games' points, and a won pairing for the bye."""
    for p in swiss.pairings:
        for number, score in results.get(p.pairing_id, {}).items():
            if 0 <= number < p.games:
                points[p.a] = points.get(p.a, 0.0) + score
                points[p.b] = points.get(p.b, 0.0) + 1.0 - score
    if swiss.bye is not None:
        points[swiss.bye] = points.get(swiss.bye, 0.0) + bye_points(games)


def bye_points(games: int) -> float:
    """What a bye is worth: a won pairing, 1 point a game of it (chess Swiss events score a
    pairing-allocated bye as a win)."""
    return float(games)
