"""Round-robin pairings: every two bots meet once, for an even number of games with seats swapped.

A pairing is named by its two bots in the order of the tournament file (`alpha-vs-beta`), so its
name, its game numbers and therefore its seeds do not change when a bot is appended later.
In game `n` of a pairing the first bot takes seat 0 when `n` is even, seat 1 when it is odd
(`MatchSpec.seats`), so an even number of games gives each bot each seat equally often.
"""
from __future__ import annotations

from dataclasses import dataclass


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
    names = list(bots)
    if len(names) < 2:
        raise ValueError(f"a round-robin needs at least 2 bots, got {len(names)}")
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ValueError(f"bot name {name!r} appears twice")
        seen.add(name)
    if isinstance(games, bool) or not isinstance(games, int) or games < 2 or games % 2:
        raise ValueError(f"games per pairing must be an even number >= 2 (seats swap), got {games!r}")
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
