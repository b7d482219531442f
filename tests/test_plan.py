"""`arena tournament plan`: counts for every format, estimates for the examples, and an estimate
calibrated on one run that predicts a second run of the same file within 30%."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from arena.cli.tournament import main as tournament_main
from arena.tournament import runner as tmod
from arena.tournament.plan import POOL_START_S, calibrated_start_s, estimate, makespan, typical_plies
from arena.tournament.store import DB_NAME, Store
from tests.test_tournament import BROKEN, write

ROOT = Path(__file__).resolve().parents[1]


def test_makespan_takes_tasks_in_order_on_the_first_free_worker():
    assert makespan([3, 1, 1, 1], 2) == 3
    assert makespan([1, 1, 1], 2) == 2
    assert makespan([2, 2, 2, 2], 1) == 8


def test_counts_for_each_format(tmp_path):
    bots = ("a", "b", "c", "d", "e")
    rr = estimate(tmod.load(write(tmp_path / "rr.toml", bots=bots, games=4, per_task=2)), 2)
    assert (rr.games, rr.matches) == (10 * 4, 10 * 2)
    g = estimate(tmod.load(write(tmp_path / "g.toml", bots=bots,
                                 extra='format = "gauntlet"\nchallengers = ["a"]')), 1)
    assert (g.games, g.matches) == (4 * 2, 4)
    s = estimate(tmod.load(write(tmp_path / "s.toml", bots=bots, extra='format = "swiss"\nrounds = 3')), 2)
    assert (s.games, s.matches) == (3 * 2 * 2, 3 * 2)
    # a Swiss plays its rounds one after the other (one pool): 3 rounds take 3 times as long as 1
    one = estimate(tmod.load(write(tmp_path / "s1.toml", bots=bots, extra='format = "swiss"\nrounds = 1')), 2)
    assert s.full_wall_s - POOL_START_S == pytest.approx(3 * (one.full_wall_s - POOL_START_S))


def test_typical_plies_are_reproducible():
    small = {"rows": 5, "cols": 5}
    assert typical_plies("domineering", small) == typical_plies("domineering", small)
    assert 5 < typical_plies("domineering", small) < 25


@pytest.mark.parametrize("path", sorted((ROOT / "examples").glob("*.toml")), ids=lambda p: p.name)
def test_plan_prints_an_estimate_for_every_example(path, capsys, tmp_path):
    assert tournament_main(["tournament", "plan", str(path), "--concurrency", "2",
                            "--results", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert " games in " in out and " matches" in out and "all of it on 2 workers: about " in out


def test_calibration_inverts_the_model():
    run = {"wall_s": 10.0, "workers": 2, "matches": 6, "games": 12, "game_s": 6.0, "phases": 1}
    start = calibrated_start_s(run)
    # model: pool 2 s + 3 waves of (start + 1 s) = 10 s  ->  start = 5/3 s
    assert start == pytest.approx((10 - 2) / 3 - 1, abs=1e-6)
    assert calibrated_start_s({"wall_s": "x"}) > 0


def test_estimate_after_a_run_predicts_the_next_run_within_30_percent(tmp_path):
    """Bots that sleep 0.02 s a move (so the game time does not depend on the machine's load): run
    once, plan from the stored games and the run's timing, run again from scratch, compare."""
    sleeper = [sys.executable, str(BROKEN), "sleep", "0.02"]
    path = write(tmp_path / "t.toml", bots=[(n, sleeper) for n in ("s1", "s2", "s3", "s4")], games=4)
    first = tmod.run(tmod.load(path), tmp_path / "one", concurrency=2, progress=None)
    assert first.stored == 24 and not first.failures
    with Store(tmp_path / "one" / "t" / DB_NAME, create=False) as store:
        assert store.last_run()["matches"] == 6
        predicted = estimate(tmod.load(path), 2, store)
    assert predicted.measured_games == 24
    second = tmod.run(tmod.load(path), tmp_path / "two", concurrency=2, progress=None)
    assert second.stored == 24
    error = abs(predicted.full_wall_s - second.wall_s) / second.wall_s
    print(f"predicted {predicted.full_wall_s:.2f} s, measured {second.wall_s:.2f} s "
          f"(first run {first.wall_s:.2f} s)")
    assert error <= 0.30, (predicted.full_wall_s, second.wall_s, first.wall_s)
