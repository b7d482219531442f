"""Game pairs: with balanced openings (arena.match.openings) the two games of a pair start from the
same opening with the seats swapped, so their results are not independent, and the pair is the
unit to count (the pentanomial of fishtest, fastchess and cutechess-cli). Pure functions.

An Elo interval of bot A against B comes from A's mean score m in [0, 1] and its standard error:

- trinomial (games independent): a game scores 0, 0.5 or 1; se = sqrt(v_game / games);
- pentanomial (pairs independent): a pair scores 0, 0.5, 1, 1.5 or 2 points, scaled to 0, 0.25,
  0.5, 0.75, 1; se = sqrt(v_pair / pairs);

with v the variance of those scores (over their count, as fishtest computes it). The interval is
the Elo of m - 1.96 se and m + 1.96 se, Elo(s) = -400 log10(1 / s - 1) (infinite at 0 and 1).

Why pairs: a pair's mean has variance v_game (1 + rho) / 2, rho the correlation of its two games.
An opening that favours a seat makes each bot win it once (rho < 0): the pentanomial interval is
narrower than the trinomial one, which counts that seat's luck as noise. Pairs whose two games go
the same way (rho > 0: an opening that suits one bot, in either seat) make it wider: the games are
fewer independent trials than they look. Only for rho = 0 do the two agree.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from arena.match.sprt import PAIR_SCORES

Z95 = 1.959963984540054
GAME_SCORES = (0.0, 0.5, 1.0)
"""A game's score: loss, draw, win."""


@dataclass(frozen=True)
class EloInterval:
    """An Elo difference and its 95% interval (low, high); `margin` is half its width, as "± margin"."""

    elo: float
    low: float
    high: float

    @property
    def margin(self) -> float:
        return (self.high - self.low) / 2


def elo(score: float) -> float:
    """The logistic Elo difference of an expected score (-inf at 0, +inf at 1)."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return 400.0 * math.log10(score / (1.0 - score))


def score_interval(counts: Sequence[float], scores: Sequence[float]) -> EloInterval:
    """The Elo interval of `counts[i]` independent trials scoring `scores[i]` (in [0, 1]) each;
    ValueError without any."""
    if len(counts) != len(scores):
        raise ValueError(f"{len(counts)} counts for {len(scores)} scores")
    n = sum(counts)
    if n <= 0:
        raise ValueError("an interval needs at least one result")
    mean = sum(c * x for c, x in zip(counts, scores, strict=True)) / n
    variance = sum(c * (x - mean) ** 2 for c, x in zip(counts, scores, strict=True)) / n
    half = Z95 * math.sqrt(variance / n)
    return EloInterval(elo(mean), elo(mean - half), elo(mean + half))


def pentanomial(pair_points: Iterable[float]) -> list[int]:
    """How many pairs scored 0, 0.5, 1, 1.5 and 2 points; ValueError for any other score."""
    counts = [0] * len(PAIR_SCORES)
    for points in pair_points:
        index = round(points * 2)
        if not 0 <= index <= 4 or abs(points * 2 - index) > 1e-9:
            raise ValueError(f"a pair scores 0, 0.5, 1, 1.5 or 2 points, got {points!r}")
        counts[index] += 1
    return counts


def pentanomial_interval(counts: Sequence[int]) -> EloInterval:
    """The Elo interval of pentanomial `counts` (pairs scoring 0, 0.5, 1, 1.5, 2 points)."""
    if len(counts) != len(PAIR_SCORES):
        raise ValueError(f"a pentanomial has 5 counts, got {len(counts)}")
    return score_interval(counts, PAIR_SCORES)


def trinomial_interval(losses: int, draws: int, wins: int) -> EloInterval:
    """The Elo interval of games taken as independent."""
    return score_interval((losses, draws, wins), GAME_SCORES)


def pair_factor(pairs: Sequence[tuple[float, float]]) -> float | None:
    """How much wider (> 1) or narrower (< 1) a score's standard error is when `pairs` (each the two
    games' scores of one bot, 0, 0.5 or 1) are the independent units rather than their games:
    se_pentanomial / se_trinomial over the same games, sqrt(1 + rho) in the terms above. None when
    it cannot tell (no pairs, or every game scored the same)."""
    if not pairs:
        return None
    games = [score for pair in pairs for score in pair]
    mean = sum(games) / len(games)
    game_variance = sum((x - mean) ** 2 for x in games) / len(games)
    if game_variance <= 0.0:
        return None
    pair_variance = sum(((a + b) / 2 - mean) ** 2 for a, b in pairs) / len(pairs)
    return math.sqrt((pair_variance / len(pairs)) / (game_variance / len(games)))
