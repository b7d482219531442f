"""Elo by maximum likelihood: checked against a separate brute-force maximisation, and for order
independence, finiteness with perfect scores, centring and interval size."""
from __future__ import annotations

import math
import random

import pytest

from arena.tournament.ratings import expected_score, fit

# A small field with every kind of result; nobody wins or loses everything.
RESULTS = (
    [("ann", "bob", 1)] * 6 + [("ann", "bob", 0.5)] * 2 + [("ann", "bob", 0)] * 2
    + [("bob", "cat", 1)] * 5 + [("bob", "cat", 0)] * 5
    + [("cat", "ann", 1)] * 3 + [("cat", "ann", 0.5)] * 4 + [("cat", "ann", 0)] * 3
    + [("dan", "ann", 0)] * 7 + [("dan", "ann", 1)] * 1
    + [("dan", "bob", 0.5)] * 2 + [("cat", "dan", 1)] * 4 + [("cat", "dan", 0)] * 2
)


def brute_force_mle(results, names, prior_draws):
    """Independent MLE: the per-game log-likelihood in Elo units with 10** (not the module's logistic in
    natural units, not its pair aggregation), maximised by cyclic coordinate search with shrinking steps."""
    games = list(results)
    for i, a in enumerate(names):  # the prior as explicit virtual half-games
        for b in names[i + 1:]:
            games.append((a, b, 0.5, prior_draws))

    def loglik(elo):
        total = 0.0
        for item in games:
            a, b, s = item[:3]
            weight = item[3] if len(item) > 3 else 1.0
            e = 1.0 / (1.0 + 10.0 ** ((elo[b] - elo[a]) / 400.0))
            total += weight * (s * math.log(e) + (1 - s) * math.log(1 - e))
        return total

    elo = {n: 1500.0 for n in names}
    step = 200.0
    best = loglik(elo)
    while step > 1e-4:
        improved = False
        for n in names:
            for delta in (step, -step):
                elo[n] += delta
                value = loglik(elo)
                if value > best + 1e-13:
                    best = value
                    improved = True
                    break
                elo[n] -= delta
        if not improved:
            step /= 2
    mean = sum(elo.values()) / len(elo)
    return {n: v - mean + 1500.0 for n, v in elo.items()}, loglik


@pytest.mark.parametrize("prior", [0.0, 1.0, 3.0])
def test_matches_brute_force_maximum_likelihood(prior):
    ratings = fit(RESULTS, prior_draws=prior)
    names = sorted(ratings)
    expected, _ = brute_force_mle(RESULTS, names, prior)
    for n in names:
        assert ratings[n].elo == pytest.approx(expected[n], abs=0.01)
    assert sum(r.elo for r in ratings.values()) / len(ratings) == pytest.approx(1500.0)


def test_interval_matches_numerical_hessian():
    """95% half-width = 1.96 * sqrt(diag of the pseudo-inverse of the numerical negative Hessian)."""
    ratings = fit(RESULTS, prior_draws=0.0)
    names = sorted(ratings)
    _, loglik = brute_force_mle(RESULTS, names, 0.0)
    at = {n: ratings[n].elo for n in names}
    h = 1.0
    k = len(names)
    neg_hess = [[0.0] * k for _ in range(k)]
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            def f(da, db, a=a, b=b):
                x = dict(at)
                x[a] += da
                x[b] += db
                return loglik(x)
            neg_hess[i][j] = -(f(h, h) - f(h, -h) - f(-h, h) + f(-h, -h)) / (4 * h * h)
    # pseudo-inverse by eigen-free trick: fix the constant direction with J/k, invert by Gauss-Jordan
    m = [[neg_hess[i][j] + 1.0 / k for j in range(k)] + [1.0 if i == j else 0.0 for j in range(k)]
         for i in range(k)]
    for c in range(k):
        p = max(range(c, k), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        pv = m[c][c]
        m[c] = [v / pv for v in m[c]]
        for r in range(k):
            if r != c:
                f_ = m[r][c]
                m[r] = [v - f_ * w for v, w in zip(m[r], m[c], strict=True)]
    for i, n in enumerate(names):
        var = m[i][k + i] - 1.0 / k
        assert ratings[n].ci95 == pytest.approx(1.959964 * math.sqrt(var), rel=1e-3)


def test_order_of_games_does_not_matter():
    base = fit(RESULTS)
    rng = random.Random(7)
    for _ in range(5):
        shuffled = list(RESULTS)
        rng.shuffle(shuffled)
        # also flip the orientation of some results: (a, b, s) is the same game as (b, a, 1-s)
        flipped = [(b, a, 1 - s) if rng.random() < 0.5 else (a, b, s) for a, b, s in shuffled]
        again = fit(flipped)
        for n in base:
            assert again[n].elo == pytest.approx(base[n].elo, abs=1e-6)
            assert again[n].ci95 == pytest.approx(base[n].ci95, abs=1e-6)


def test_perfect_score_stays_finite_thanks_to_prior():
    results = [("champ", "a", 1)] * 10 + [("champ", "b", 1)] * 10 + [("a", "b", 1)] * 5 + [("a", "b", 0)] * 5
    ratings = fit(results)
    assert all(math.isfinite(r.elo) and math.isfinite(r.ci95) for r in ratings.values())
    assert ratings["champ"].elo > ratings["a"].elo + 300
    assert ratings["a"].elo == pytest.approx(ratings["b"].elo)
    assert ratings["champ"].ci95 > ratings["a"].ci95  # less information about an extreme bot


def test_even_results_give_1500_and_more_games_narrow_the_interval():
    few = fit([("x", "y", 1), ("x", "y", 0)])
    many = fit([("x", "y", 1), ("x", "y", 0)] * 50)
    assert few["x"].elo == pytest.approx(1500) and few["y"].elo == pytest.approx(1500)
    assert many["x"].ci95 < few["x"].ci95 / 5


def test_known_two_player_value():
    """Two bots, 75% score, no prior: the MLE is the Elo difference whose expectation is 0.75."""
    r = fit([("a", "b", 1)] * 3 + [("a", "b", 0)], prior_draws=0)
    diff = r["a"].elo - r["b"].elo
    assert expected_score(r["a"].elo, r["b"].elo) == pytest.approx(0.75)
    assert diff == pytest.approx(400 * math.log10(3))


def test_players_order_and_unrated_bots():
    r = fit([("b", "a", 1), ("a", "b", 1)], players=["z", "b", "a"])
    assert list(r) == ["b", "a"]  # z has no games: no rating
    assert r["a"].games == r["b"].games == 2
    assert fit([]) == {}


@pytest.mark.parametrize("bad", [("a", "b", 2), ("a", "a", 1), ("a", "b"), ("a", "b", True)])
def test_bad_result_is_named(bad):
    with pytest.raises(ValueError, match="a"):
        fit([bad])
