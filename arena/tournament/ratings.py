"""Elo by maximum likelihood over all games at once (Bradley-Terry, draws as half points).

The model, as in Ordo and BayesElo: bot i scores against bot j with expectation
    E_ij = 1 / (1 + 10 ** ((R_j - R_i) / 400))
and a game result s (1 win, 0.5 draw, 0 loss) contributes s*log(E_ij) + (1-s)*log(1-E_ij) to the
log-likelihood. The ratings maximise the sum over every game, so the order of the games does not
matter (unlike a sequential K-factor update). Only differences are identified; the ratings are
centred so that the rated bots average 1500.

Prior: `prior_draws` virtual draws (default 1) are added between every two rated bots. Without it a
bot with 100% (or 0%) has an infinite maximum-likelihood rating; with it the rating is finite and the
effect on real results is small (one virtual draw against each opponent beside, say, 10 real games).
It also ties the whole field together when some pairings have not played yet. `prior_draws=0` gives
the plain MLE (which exists only when no bot or group of bots won or lost everything).

The 95% interval is +-1.96 standard errors from the Fisher information: the covariance of the centred
ratings is the pseudo-inverse of the negative Hessian of the log-likelihood (a weighted graph
Laplacian whose null space is the all-ones vector), computed as (F + J/n)^-1 - J/n.
Solved by Newton's method with step halving; pure Python (fields of up to a few hundred bots).
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

MEAN_ELO = 1500.0
SCALE = 400.0 / math.log(10.0)  # Elo points per natural-log unit of strength
Z95 = 1.959963984540054
DEFAULT_PRIOR_DRAWS = 1.0
_MAX_ITERATIONS = 200
_TOLERANCE = 1e-10


@dataclass(frozen=True)
class Rating:
    """A bot's Elo and the half-width of its 95% interval (Elo +- ci95)."""

    name: str
    elo: float
    ci95: float
    games: int

    def __str__(self) -> str:
        return f"{self.elo:.0f} ± {self.ci95:.0f}"


def fit(
    results: Iterable[tuple[str, str, float]],
    players: Iterable[str] | None = None,
    prior_draws: float = DEFAULT_PRIOR_DRAWS,
) -> dict[str, Rating]:
    """Ratings from `results`, each (bot_a, bot_b, score of bot_a: 1, 0.5 or 0).

    `players` (optional) fixes the order of the returned dict and may name bots without games yet;
    those get no rating (they are left out of the returned dict). Raises ValueError on a bad result.
    """
    games: dict[tuple[str, str], list[float]] = {}  # (i, j) with i < j by name -> [games, score of i]
    count: dict[str, int] = {}
    for item in results:
        try:
            a, b, score = item
        except (TypeError, ValueError):
            raise ValueError(f"a result is (bot_a, bot_b, score), got {item!r}") from None
        if score not in (0, 0.5, 1) or isinstance(score, bool):
            raise ValueError(f"a score is 1, 0.5 or 0, got {score!r} in {item!r}")
        if a == b:
            raise ValueError(f"a bot cannot play itself: {item!r}")
        if a > b:
            a, b, score = b, a, 1 - score
        cell = games.setdefault((a, b), [0.0, 0.0])
        cell[0] += 1
        cell[1] += score
        count[a] = count.get(a, 0) + 1
        count[b] = count.get(b, 0) + 1
    order = list(dict.fromkeys(players)) if players is not None else []
    order += sorted(n for n in count if n not in set(order))
    rated = [n for n in order if count.get(n)]
    if not rated:
        return {}
    index = {name: k for k, name in enumerate(rated)}
    n = len(rated)
    # pair list: (i, j, games, score of i), including the prior's virtual draws
    pairs: dict[tuple[int, int], list[float]] = {}
    for (a, b), (g, s) in games.items():
        pairs[(index[a], index[b])] = [g, s]
    if prior_draws > 0:
        for i in range(n):
            for j in range(i + 1, n):
                cell = pairs.setdefault((i, j), [0.0, 0.0])
                cell[0] += prior_draws
                cell[1] += prior_draws / 2
    plist = [(i, j, g, s) for (i, j), (g, s) in pairs.items() if g > 0]
    theta = _newton(n, plist)
    info = _information(n, plist, theta)
    cov = _pseudo_inverse(info)
    out: dict[str, Rating] = {}
    for name in order:
        if name not in index:
            continue
        k = index[name]
        se = math.sqrt(max(cov[k][k], 0.0)) * SCALE
        out[name] = Rating(name, MEAN_ELO + theta[k] * SCALE, Z95 * se, count[name])
    return out


def expected_score(elo_a: float, elo_b: float) -> float:
    """The model's expected score of a against b."""
    return 1.0 / (1.0 + 10.0 ** ((elo_b - elo_a) / 400.0))


def _p(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _loglik(plist: list[tuple[int, int, float, float]], theta: list[float]) -> float:
    total = 0.0
    for i, j, g, s in plist:
        d = theta[i] - theta[j]
        # log p = -log(1+e^-d), log(1-p) = -log(1+e^d), computed stably
        total -= s * _softplus(-d) + (g - s) * _softplus(d)
    return total


def _softplus(x: float) -> float:
    return x + math.log1p(math.exp(-x)) if x > 0 else math.log1p(math.exp(x))


def _gradient(n: int, plist: list[tuple[int, int, float, float]], theta: list[float]) -> list[float]:
    grad = [0.0] * n
    for i, j, g, s in plist:
        r = s - g * _p(theta[i] - theta[j])
        grad[i] += r
        grad[j] -= r
    return grad


def _information(n: int, plist: list[tuple[int, int, float, float]], theta: list[float]) -> list[list[float]]:
    """The negative Hessian of the log-likelihood (the observed Fisher information)."""
    info = [[0.0] * n for _ in range(n)]
    for i, j, g, _s in plist:
        p = _p(theta[i] - theta[j])
        w = g * p * (1.0 - p)
        info[i][i] += w
        info[j][j] += w
        info[i][j] -= w
        info[j][i] -= w
    return info


def _newton(n: int, plist: list[tuple[int, int, float, float]]) -> list[float]:
    theta = [0.0] * n
    current = _loglik(plist, theta)
    for _ in range(_MAX_ITERATIONS):
        grad = _gradient(n, plist, theta)
        if max(abs(x) for x in grad) < _TOLERANCE:
            break
        step = _solve_shifted(_information(n, plist, theta), grad)
        scale = 1.0
        while True:
            trial = [t + scale * d for t, d in zip(theta, step, strict=True)]
            value = _loglik(plist, trial)
            if value >= current - 1e-12 or scale < 1e-6:
                break
            scale /= 2
        mean = sum(trial) / n
        theta = [t - mean for t in trial]
        if abs(value - current) < _TOLERANCE * max(1.0, abs(current)) and scale == 1.0:
            current = value
            break
        current = value
    return theta


def _solve_shifted(info: list[list[float]], rhs: list[float]) -> list[float]:
    """Solve (F + J/n) x = rhs: F's null space is the constant vector, the shift J/n removes it."""
    n = len(info)
    a = [[info[i][j] + 1.0 / n for j in range(n)] + [rhs[i]] for i in range(n)]
    return _gauss(a, n)


def _pseudo_inverse(info: list[list[float]]) -> list[list[float]]:
    n = len(info)
    shifted = [[info[i][j] + 1.0 / n for j in range(n)] for i in range(n)]
    inv = _invert(shifted)
    return [[inv[i][j] - 1.0 / n for j in range(n)] for i in range(n)]


def _gauss(a: list[list[float]], n: int) -> list[float]:
    """Gaussian elimination with partial pivoting on the augmented matrix `a` (n x n+1)."""
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        if abs(a[pivot][col]) < 1e-300:
            raise ValueError("ratings: singular information matrix (a bot with no games?)")
        a[col], a[pivot] = a[pivot], a[col]
        p = a[col][col]
        row = a[col]
        for r in range(col + 1, n):
            f = a[r][col] / p
            if f:
                target = a[r]
                for c in range(col, n + 1):
                    target[c] -= f * row[c]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        x[r] = (a[r][n] - sum(a[r][c] * x[c] for c in range(r + 1, n))) / a[r][r]
    return x


def _invert(m: list[list[float]]) -> list[list[float]]:
    n = len(m)
    columns = []
    for k in range(n):
        a = [list(m[i]) + [1.0 if i == k else 0.0] for i in range(n)]
        columns.append(_gauss(a, n))
    return [[columns[j][i] for j in range(n)] for i in range(n)]
