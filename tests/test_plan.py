"""`arena tournament plan`: counts for every format, estimates for the examples, a first estimate
from a few timed moves of each bot within 2x of the real run (the demo), and an estimate
calibrated on one run that predicts a second run of the same file within 30%."""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from arena.cli.tournament import main as tournament_main
from arena.tournament import runner as tmod
from arena.tournament.plan import (
    BOT_START_S,
    POOL_START_S,
    Task,
    calibrated_start_s,
    circle_rounds,
    estimate,
    makespan,
    schedule_s,
    typical_plies,
)
from arena.tournament.store import DB_NAME, Store
from tests.test_tournament import BROKEN, arena, write

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
    # a Swiss plays its rounds one after the other (one pool): with every bot started for each
    # match 3 rounds take 3 times as long as 1; with bots kept, the later rounds start fewer
    one_file = tmod.load(write(tmp_path / "s1.toml", bots=bots, extra='format = "swiss"\nrounds = 1'))
    three_file = tmod.load(tmp_path / "s.toml")
    one, three = estimate(one_file, 2, reuse=False), estimate(three_file, 2, reuse=False)
    assert three.full_wall_s - POOL_START_S == pytest.approx(3 * (one.full_wall_s - POOL_START_S))
    assert s.full_wall_s - POOL_START_S < 3 * (estimate(one_file, 2).full_wall_s - POOL_START_S)


def test_typical_plies_are_reproducible():
    small = {"rows": 5, "cols": 5}
    assert typical_plies("domineering", small) == typical_plies("domineering", small)
    assert 5 < typical_plies("domineering", small) < 25


@pytest.mark.parametrize("path", sorted((ROOT / "examples").glob("*.toml")), ids=lambda p: p.name)
def test_plan_prints_an_estimate_for_every_example(path, capsys, tmp_path):
    assert tournament_main(["tournament", "plan", str(path), "--concurrency", "2", "--quick",
                            "--results", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert " games in " in out and " matches" in out and "all of it on 2 workers: about " in out


def test_calibration_inverts_the_model():
    run = {"wall_s": 10.0, "workers": 2, "matches": 6, "games": 12, "game_s": 6.0, "phases": 1}
    start = calibrated_start_s(run)
    # model: pool 2 s + 3 waves of (start + 1 s) = 10 s  ->  start = 5/3 s
    assert start == pytest.approx((10 - 2) / 3 - 1, abs=1e-6)
    assert calibrated_start_s({"wall_s": "x"}) > 0


@pytest.mark.timing  # two runs' wall times compared: no other test may load the machine between
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


def test_schedule_starts_a_kept_bot_once_per_worker():
    """Hand-worked: one worker, bots a b c, 1 s a game, 0.8 s to start a match's two bots."""
    tasks = [Task(("a", "b"), 1), Task(("a", "c"), 1), Task(("b", "c"), 1)]
    # kept: a, b started (0.8) then c (0.4), then nothing: 3 games + 1.2 s of starts
    assert schedule_s([tasks], 1, 1.0, 0.8, idle_max=8) == pytest.approx(3 + 1.2)
    # not kept: every match starts both
    assert schedule_s([tasks], 1, 1.0, 0.8, idle_max=0) == pytest.approx(3 + 3 * 0.8)
    # two idle bots kept at most: after a-c, b (least recently used) was dropped, so b-c starts b
    assert schedule_s([tasks], 1, 1.0, 0.8, idle_max=2) == pytest.approx(3 + 0.8 + 0.4 + 0.4)
    # two workers: each starts its own bots; the second phase begins when the first has ended
    two = schedule_s([tasks[:2], tasks[2:]], 2, 1.0, 0.8, idle_max=8)
    assert two == pytest.approx((1 + 0.8) + (1 + 0.4))  # b-c goes to worker 0, which keeps b only


def test_circle_rounds_never_repeat_a_pairing():
    names = [f"b{i}" for i in range(7)]
    rounds = circle_rounds(names, 6)
    pairs = [frozenset(p) for r in rounds for p in r]
    assert len(pairs) == len(set(pairs)) == 6 * 3
    assert all(len({n for p in r for n in p}) == 6 for r in rounds)  # one bye a round


def test_the_estimate_counts_kept_bots_once(tmp_path):
    bots = [f"b{i}" for i in range(6)]
    tour = tmod.load(write(tmp_path / "rr.toml", bots=bots, games=2, per_task=2))
    kept, fresh = estimate(tour, 2), estimate(tour, 2, reuse=False)
    assert kept.game_s == fresh.game_s and kept.matches == fresh.matches == 15
    # 15 matches: 30 bot starts without reuse; with it at most 6 bots on each of 2 workers
    saved = fresh.full_wall_s - kept.full_wall_s
    assert saved >= (30 - 12) * BOT_START_S / 2 / 2 - 1e-9


def test_a_local_cluster_is_planned_with_kept_bots_like_the_pool(tmp_path, capsys):
    """Dask workers keep their bots too (arena.tournament.cluster.WorkerHubs): `--cluster local:2`
    plans as `--concurrency 2` does, not with every match starting both bots."""
    path = write(tmp_path / "rr.toml", bots=[f"b{i}" for i in range(6)], games=2, per_task=2)
    texts = []
    for option in (["--concurrency", "2"], ["--cluster", "local:2"]):
        assert tournament_main(["tournament", "plan", str(path), *option, "--quick",
                                "--results", str(tmp_path)]) == 0
        texts.append(capsys.readouterr().out)
    assert texts[0] == texts[1] == estimate(tmod.load(path), 2).text() + "\n"
    assert texts[1] != estimate(tmod.load(path), 2, reuse=False).text() + "\n"


def test_calibration_with_the_bot_processes_started():
    # 6 matches on 2 workers, 4 bot starts in all: 2 s pool + 3 waves of (start/2 * 4/6 + 1 s) = 10 s
    run = {"wall_s": 10.0, "workers": 2, "matches": 6, "games": 12, "game_s": 6.0, "phases": 1,
           "bot_starts": 4}
    assert calibrated_start_s(run) == pytest.approx(((10 - 2) / 3 - 1) * 2 * 6 / 4, abs=1e-6)
    assert calibrated_start_s(dict(run, bot_starts=0)) == pytest.approx((10 - 2) / 3 - 1, abs=1e-6)


def test_calibration_lowers_the_pool_start_only_when_the_games_alone_fill_the_run():
    from arena.tournament.plan import calibrated_pool_s

    # 6 matches of 1 s on 2 workers: 3 s of games; a 4 s run leaves 1 s for the pool (and no bot start)
    quick = {"wall_s": 4.0, "workers": 2, "matches": 6, "games": 12, "game_s": 6.0, "phases": 1}
    assert calibrated_pool_s(quick) == pytest.approx(1.0)
    assert calibrated_start_s(quick) == 0.0
    assert calibrated_pool_s(dict(quick, wall_s=10.0)) == POOL_START_S
    assert calibrated_pool_s({"wall_s": None}) == POOL_START_S


def _seconds(text: str) -> float:
    """`58 s`, `1 min 11 s` or `2 h 05 min` (runner.duration) in seconds."""
    units = {"h": 3600, "min": 60, "s": 1}
    return sum(int(n) * units[u] for n, u in re.findall(r"(\d+) (h|min|s)\b", text))


@pytest.mark.loads_machine  # the machine timed by the plan must be the one the run meets: alone
def test_the_first_estimate_times_the_bots_and_is_within_2x_of_the_real_run(tmp_path, capsys, monkeypatch):
    """Before any game is stored, `plan` times a few moves of each bot: on the demo (4 bots of
    very different speeds, 0.2 s a move; 2 games a pairing here, not 4) its estimate is within 2x
    of the run's wall time, where bots using their whole clock (`--quick`) is several times too long.
    The plans run in this process (their bots are processes), the run as a user runs it."""
    demo = (ROOT / "examples" / "demo.toml").read_text()
    assert "games_per_pairing = 4\n" in demo
    (tmp_path / "demo.toml").write_text(demo.replace("games_per_pairing = 4\n", "games_per_pairing = 2\n"))
    monkeypatch.chdir(tmp_path)
    assert tournament_main(["tournament", "plan", "demo.toml", "--concurrency", "2"]) == 0
    planned = capsys.readouterr().out
    assert "a few moves of each of the 4 bots timed" in planned
    assert not (tmp_path / "results").exists()  # the plan plays no game of the tournament
    estimate_s = _seconds(planned.split("all of it on 2 workers: about ")[1].splitlines()[0])
    assert tournament_main(["tournament", "plan", "demo.toml", "--concurrency", "2", "--quick"]) == 0
    quick_s = _seconds(capsys.readouterr().out.split("all of it on 2 workers: about ")[1].splitlines()[0])
    done = arena("tournament", "run", "demo.toml", "--concurrency", "2", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    wall_s = float(re.search(r"all 12 games played: 12 this run in ([0-9.]+) s", done.stderr)[1])
    assert wall_s / 2 <= estimate_s <= wall_s * 2, (estimate_s, wall_s)
    assert quick_s > estimate_s


def test_plan_warns_as_run_does_when_concurrency_is_over_the_cores(capsys, tmp_path):
    demo = ROOT / "examples" / "demo.toml"
    over = len(os.sched_getaffinity(0)) + 1
    assert tournament_main(["tournament", "plan", str(demo), "--concurrency", str(over), "--quick",
                            "--results", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert f"--concurrency {over} is more than the" in err and "no longer fair" in err
    assert tournament_main(["tournament", "plan", str(demo), "--concurrency", "1", "--quick",
                            "--results", str(tmp_path)]) == 0
    assert "no longer fair" not in capsys.readouterr().err
