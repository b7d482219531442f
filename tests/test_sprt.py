"""SPRT: the statistics on simulated games of known Elo difference (seeded), and a real
`arena match --sprt` of champion against random that stops early."""
from __future__ import annotations

import math
import random
import subprocess
import sys
from pathlib import Path

import pytest

from arena.match.sprt import Sprt, SprtConfig, Verdict, expected_score, llr_logistic

ROOT = Path(__file__).resolve().parents[1]
DRAW_RATE = 0.3
MAX_PAIRS = 40_000


def simulate(elo: float, config: SprtConfig, rng: random.Random) -> tuple[Verdict, int]:
    """Play simulated pairs (each game: win/draw/loss with A's expected score for `elo`) until the
    test decides."""
    s = expected_score(elo)
    win, draw = s - DRAW_RATE / 2, DRAW_RATE
    test = Sprt(config)
    lower, upper = config.bounds()
    for _ in range(MAX_PAIRS):
        points = 0.0
        for _ in range(2):
            r = rng.random()
            points += 1.0 if r < win else 0.5 if r < win + draw else 0.0
        test.add_pair(points)
        value = test.llr()
        if value >= upper:
            return Verdict.H1, test.pairs
        if value <= lower:
            return Verdict.H0, test.pairs
    return Verdict.CONTINUE, test.pairs


RUNS = 150


@pytest.mark.parametrize(("elo", "wanted"), [(30.0, Verdict.H1), (0.0, Verdict.H0)])
def test_simulated_runs_decide_at_the_configured_error_rates(elo, wanted):
    config = SprtConfig(elo0=0, elo1=10, alpha=0.05, beta=0.05)
    rng = random.Random(2024 + int(elo))
    verdicts = [simulate(elo, config, rng)[0] for _ in range(RUNS)]
    assert Verdict.CONTINUE not in verdicts
    wrong = sum(v != wanted for v in verdicts) / RUNS
    # +30 is far above elo1 (power ~1); at 0 = elo0 the wrong verdict (H1) has probability alpha = 5%.
    # 150 runs: a binomial 5% gives at most 8.7% with probability > 0.99.
    assert wrong <= (0.02 if elo == 30.0 else 0.087), wrong


def test_llr_and_bounds_by_hand():
    config = SprtConfig()
    lower, upper = config.bounds()
    assert lower == pytest.approx(math.log(0.05 / 0.95)) and upper == pytest.approx(math.log(0.95 / 0.05))
    # 10 pairs, all 1-1: mean 0.5 exactly between s0 = 0.5 and s1 ~ 0.514: a negative LLR
    assert llr_logistic(0, 10, [0, 0, 10, 0, 0]) < 0
    # symmetric counts: mean 0.5, so LLR = N (s1 - s0)(1 - s0 - s1) / (2 v)
    counts = [10, 20, 40, 20, 10]
    v = (10 * 0.25 + 20 * 0.0625 + 20 * 0.0625 + 10 * 0.25) / 100
    s1 = expected_score(10)
    assert llr_logistic(0, 10, counts) == pytest.approx(100 * (s1 - 0.5) * (1 - 0.5 - s1) / (2 * v), rel=1e-4)
    test = Sprt(config)
    test.add_pair(2.0)
    assert test.verdict() is Verdict.CONTINUE  # one pair won is not enough, however one-sided
    for _ in range(19):
        test.add_pair(2.0)
    assert test.verdict() is Verdict.H1 and "20 pairs [0 0 0 0 20]" in test.line()


@pytest.mark.parametrize(("items", "message"), [
    (["elo0=x"], "not a number"), (["gamma=1"], "bad SPRT setting"), (["alpha=0.7"], "alpha"),
    (["elo0=10", "elo1=5"], "elo1 must be above elo0"),
])
def test_bad_settings_say_why(items, message):
    with pytest.raises(ValueError, match=message):
        SprtConfig.parse(items)


def test_arena_match_sprt_champion_against_random_stops_early(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "arena", "match", "domineering", "champion", "random", "--param", "rows=5",
         "--param", "cols=5", "--time", "0.05", "--games", "200", "--out", str(tmp_path),
         "--sprt", "elo0=0", "elo1=10", "alpha=0.05", "beta=0.05"],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("SPRT")]
    assert lines and "LLR" in lines[0] and "(-2.94, 2.94)" in lines[0]
    assert "H1 accepted" in done.stdout
    records = list(tmp_path.glob("matches/*/g*.json"))
    assert 2 <= len(records) < 200 and len(records) % 2 == 0  # stopped early, on a whole pair


def test_arena_match_sprt_bad_input_is_one_line(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "arena", "match", "domineering", "random", "random", "--games", "3",
         "--out", str(tmp_path), "--sprt", "elo1=5"],
        cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "even" in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
