"""A sequential probability ratio test on game pairs (the pentanomial model of fishtest, fastchess
and cutechess-cli): decide whether bot A is at least `elo1` stronger than B, or at most `elo0`,
without fixing the number of games in advance.

Games come in pairs with the seats swapped (games 2k and 2k+1 of a match; with `--openings` both
start from the same opening, arena.match.openings), so the advantage of a seat cancels out; a pair
scores 0, 0.5, 1, 1.5 or 2 points for A, and the five counts are the pentanomial. The log-likelihood
ratio is the generalised SPRT's normal approximation (fishtest's `LLR_logistic`, Michel Van den
Bergh's derivation):

    LLR = N (s1 - s0) (2 m - s0 - s1) / (2 v)

with N pairs, m and v the mean and variance of a pair's score scaled to [0, 1], and s0, s1 the
expected scores of the logistic Elo bounds (s = 1 / (1 + 10^(-elo/400))). Counts of zero are
raised to a quarter of a pair (`_EMPTY_COUNT`) so that a one-sided start has a variance. The test stops at
LLR <= log(beta / (1 - alpha)) (H0 accepted: not stronger by elo1) or LLR >= log((1 - beta) / alpha)
(H1 accepted: stronger by about elo1 or more). Pure functions.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum

PAIR_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)
"""A pair's score for A scaled to [0, 1]: 0, 0.5, 1, 1.5 or 2 points out of 2."""
_EMPTY_COUNT = 0.25
"""What an empty pentanomial cell counts as: a quarter of a pair, so that a start where every pair
ends alike (variance 0) needs about 14 pairs rather than 1 to decide (1e-3, fishtest's, decided
simulated +30 Elo runs wrongly from their first pair)."""


class Verdict(StrEnum):
    """What the test says so far."""

    H0 = "H0"
    H1 = "H1"
    CONTINUE = "continue"


@dataclass(frozen=True)
class SprtConfig:
    """The hypotheses (logistic Elo of A over B) and the error rates."""

    elo0: float = 0.0
    elo1: float = 10.0
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if not 0.0 < value < 0.5:
                raise ValueError(f"SPRT {name} must be between 0 and 0.5, got {value:g}")
        if not (math.isfinite(self.elo0) and math.isfinite(self.elo1)) or self.elo1 <= self.elo0:
            raise ValueError(f"SPRT elo1 must be above elo0, got elo0={self.elo0:g} elo1={self.elo1:g}")

    @classmethod
    def parse(cls, items: list[str]) -> SprtConfig:
        """From `elo0=0 elo1=10 alpha=0.05 beta=0.05` (any subset; the rest take the defaults)."""
        values: dict[str, float] = {}
        for item in items:
            key, sep, text = item.partition("=")
            if not sep or key not in ("elo0", "elo1", "alpha", "beta"):
                raise ValueError(f"bad SPRT setting {item!r}: use elo0=X elo1=Y alpha=A beta=B")
            try:
                values[key] = float(text)
            except ValueError:
                raise ValueError(f"bad SPRT setting {item!r}: {text!r} is not a number") from None
        return cls(**values)

    def bounds(self) -> tuple[float, float]:
        """(lower, upper): accept H0 at LLR <= lower, H1 at LLR >= upper."""
        return math.log(self.beta / (1 - self.alpha)), math.log((1 - self.beta) / self.alpha)


@dataclass
class Sprt:
    """A running test: add each pair's points for A, read `llr()` and `verdict()`."""

    config: SprtConfig = field(default_factory=SprtConfig)
    counts: list[int] = field(default_factory=lambda: [0] * 5)

    def add_pair(self, points: float) -> None:
        """A pair's points for A: 0, 0.5, 1, 1.5 or 2."""
        index = round(points * 2)
        if not 0 <= index <= 4 or abs(points * 2 - index) > 1e-9:
            raise ValueError(f"a pair scores 0, 0.5, 1, 1.5 or 2 points, got {points!r}")
        self.counts[index] += 1

    @property
    def pairs(self) -> int:
        return sum(self.counts)

    def llr(self) -> float:
        return llr_logistic(self.config.elo0, self.config.elo1, self.counts)

    def verdict(self) -> Verdict:
        if not self.pairs:
            return Verdict.CONTINUE
        lower, upper = self.config.bounds()
        value = self.llr()
        return Verdict.H1 if value >= upper else Verdict.H0 if value <= lower else Verdict.CONTINUE

    def line(self) -> str:
        """One line for the terminal: pairs, the pentanomial, LLR and its bounds."""
        lower, upper = self.config.bounds()
        return (f"SPRT elo0={self.config.elo0:g} elo1={self.config.elo1:g}: {self.pairs} pairs "
                f"[{' '.join(map(str, self.counts))}], LLR {self.llr():.2f} ({lower:.2f}, {upper:.2f})")


def expected_score(elo: float) -> float:
    """The expected score of a logistic Elo difference."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def llr_logistic(elo0: float, elo1: float, counts: list[int] | tuple[int, ...]) -> float:
    """The log-likelihood ratio of H1 (elo1) over H0 (elo0) for pentanomial `counts`."""
    if len(counts) != len(PAIR_SCORES):
        raise ValueError(f"a pentanomial has 5 counts, got {len(counts)}")
    if not sum(counts):
        return 0.0
    regular = [max(float(c), _EMPTY_COUNT) for c in counts]
    n = sum(regular)
    mean = sum(c * x for c, x in zip(regular, PAIR_SCORES, strict=True)) / n
    variance = sum(c * (x - mean) ** 2 for c, x in zip(regular, PAIR_SCORES, strict=True)) / n
    s0, s1 = expected_score(elo0), expected_score(elo1)
    return n * (s1 - s0) * (2 * mean - s0 - s1) / (2 * variance)
