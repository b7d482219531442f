"""Fair clocks (issue 23): what each move cost a bot in CPU time is recorded, `clock = "cpu"`
charges that instead of the wall time (so a busy machine costs an honest bot nothing, while a
bot that sleeps still loses on time), and games played under load are marked.

A real CPU-burning bot (tests/bots/cpu_burner.py, it spins until its own CPU time reaches a set
amount, in its main thread or in a new thread each move) plays under a real hog: two CPU-bound
processes pinned to each CPU.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import require

from arena.cell import sandbox
from arena.cell.limits import Limits
from arena.course.season import jobs
from arena.match.clock import TimeControl
from arena.match.records import Forfeit
from arena.match.referee import run_match
from arena.match.spec import BotSpec, MatchSpec

pytestmark = pytest.mark.loads_machine  # CPU hogs of its own, clocks tens of milliseconds wide
HERE = Path(__file__).resolve().parent
PARAMS = {"rows": 8, "cols": 8}
LIMIT_S = 0.05
MARGIN_S = 0.01
"""The clocks' margin here: small, so that 130% of the limit is past limit + margin."""


CPU_CLOCK = TimeControl(per_move=LIMIT_S, kind="cpu", wall_factor=20.0, margin=MARGIN_S)
"""The CPU clock under the hog: its wall ceiling (1 s) far above what the hog's waits cost a move,
so that only CPU time decides, however many other processes share the machine."""


def burner(share: float, limit_s: float = LIMIT_S) -> BotSpec:
    """The burner using `share` of `limit_s` of CPU a move."""
    command = (sys.executable, str(HERE / "bots" / "cpu_burner.py"), str(limit_s * share))
    return BotSpec(f"burner-{share:g}", command)


def start_hogs(per_cpu: int) -> list[subprocess.Popen]:
    """`per_cpu` CPU-bound processes pinned to each CPU this process may use: wherever the
    scheduler runs a bot, it shares that CPU with `per_cpu` of them (unpinned, three hogs on two
    cores once left a bot most of a core in CI: its timeout was not marked as under load)."""
    spin = "import os, sys; os.sched_setaffinity(0, {int(sys.argv[1])})\nwhile True: pass"
    return [subprocess.Popen([sys.executable, "-c", spin, str(cpu)], start_new_session=True)
            for cpu in sorted(os.sched_getaffinity(0)) for _ in range(per_cpu)]


@pytest.fixture
def hog():
    """Two CPU-bound processes on each CPU (a loaded machine: a bot gets at most a third of a
    core), killed afterwards."""
    hogs = start_hogs(2)
    yield hogs
    stop(hogs)


@pytest.fixture
def heavy_hog():
    """Four CPU-bound processes on each CPU: a bot then gets at most a fifth of a core, whatever
    else runs, where without them a machine loaded by others (a load of 4 or 5 on 2 cores) still
    leaves it half a core."""
    hogs = start_hogs(4)
    yield hogs
    stop(hogs)


def stop(hogs: list[subprocess.Popen]) -> None:
    for process in hogs:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def play(bot: BotSpec, clock: TimeControl, games: int, opponent: str = "random",
         params: dict | None = None) -> list:
    other = BotSpec(opponent, (sys.executable, "-m", "bots", opponent))
    spec = MatchSpec("clock", "domineering", (bot, other), clock, tuple(range(games)),
                     params=PARAMS if params is None else params, limits=Limits())
    return run_match(spec)


def burner_moves(records, name: str) -> list:
    return [m for r in records for m in r.moves if r.players[m.seat] == name]


def test_at_a_cpu_clock_a_bot_using_60_percent_never_forfeits_under_a_hog_and_its_cpu_is_measured(hog):
    clock = CPU_CLOCK
    bot = burner(0.6)
    records = []
    while len(burner_moves(records, bot.name)) < 40:  # three games on 8x8: 43 or 44 moves
        records += play(bot, clock, 3)
    assert [r.forfeit for r in records if r.forfeit] == []
    assert {r.clock for r in records} == {"cpu"}
    moves = burner_moves(records, bot.name)
    for move in moves:  # the referee's reading of its CPU agrees with the bot's own, within 10 ms
        assert abs(move.cpu_s - move.info["cpu_s"]) <= 0.010, (move.cpu_s, move.info)
    assert sum(m.time_s for m in moves) > 1.3 * sum(m.cpu_s for m in moves)  # the hog took wall time


def test_at_a_cpu_clock_a_bot_using_130_percent_always_forfeits_on_cpu_time(hog):
    clock = CPU_CLOCK
    records = play(burner(1.3), clock, 3)
    forfeits = [r.forfeit for r in records]
    assert all(f is not None and f["reason"] == Forfeit.TIMEOUT and r.players[f["seat"]] == "burner-1.3"
               for f, r in zip(forfeits, records, strict=True)), forfeits
    assert all("of CPU" in f["detail"] for f in forfeits), forfeits


def test_at_a_wall_clock_games_under_a_hog_are_marked_as_played_under_load(hog):
    # 0.15 s of CPU a move, a 2 s clock, on 5x5: five or six moves of the burner
    records = play(burner(1.5, 0.1), TimeControl(per_move=2.0), 1, params={"rows": 5, "cols": 5})
    assert [r.forfeit for r in records] == [None]
    assert all(r.loaded_moves > 0 and r.clock == "wall" for r in records), [r.loaded_moves for r in records]
    moves = burner_moves(records, "burner-1.5")
    assert len(moves) >= 4 and sum(m.under_load() for m in moves) >= len(moves) // 2, moves
    assert all(m.cpu_s is not None and m.wait_s is not None for m in moves)


def test_on_a_quiet_machine_nothing_is_marked_and_a_sleeping_bot_still_loses_at_a_cpu_clock():
    quiet = play(burner(0.3), TimeControl(per_move=2.0), 2)
    assert [r.forfeit for r in quiet] == [None, None]
    moves = burner_moves(quiet, "burner-0.3")
    assert sum(m.under_load() for m in moves) <= len(moves) // 5  # the suite's own processes aside
    sleeper = BotSpec("sleeper", (sys.executable, str(HERE / "bots" / "broken.py"), "sleep", "0.5"))
    other = BotSpec("random", (sys.executable, "-m", "bots", "random"))
    records = run_match(MatchSpec("sleep", "domineering", (sleeper, other),
                                  TimeControl(per_move=LIMIT_S, kind="cpu"), (0,), params=PARAMS,
                                  limits=Limits()))
    forfeit = records[0].forfeit
    assert forfeit["reason"] == Forfeit.TIMEOUT and forfeit["seat"] == 0, forfeit
    assert "0.150 s of wall time" in forfeit["detail"], forfeit  # 3 x 0.05 s: the wall ceiling
    # not under load, and the detail says why: what it used and waited (its own timeout)
    assert not forfeit.get("under_load") and " s of CPU and waited " in forfeit["detail"], forfeit


class FirstCallUnderLoad:
    """The course's game player, playing each call's games for real (run_match), that ends the
    hog once its first call is played: the replays run without it (on a machine that others may
    still load: what each call's games ended with is kept in `results`)."""

    def __init__(self, hogs: list[subprocess.Popen]) -> None:
        self.hogs, self.calls, self.results = hogs, [], []

    def play(self, specs: list[MatchSpec]) -> list:
        self.calls.append([spec.game_numbers for spec in specs])
        records = [record for spec in specs for record in run_match(spec)]
        self.results.append([record.forfeit for record in records])
        stop(self.hogs)
        return records


def judged(bot: BotSpec, per_move: float) -> MatchSpec:
    other = BotSpec("random", (sys.executable, "-m", "bots", "random"))
    return MatchSpec("judged", "domineering", (bot, other), TimeControl(per_move=per_move), (0,),
                     params={"rows": 5, "cols": 5}, limits=Limits())


def test_a_judged_game_lost_on_time_under_load_is_played_again_once_the_load_is_gone(heavy_hog):
    player = FirstCallUnderLoad(heavy_hog)
    # 0.12 s of CPU a move at 0.4 s: past the clock with a fifth of a core, well within it with half a core
    records, replayed = jobs.play_judged(judged(burner(0.3, 0.4), 0.4), player.play)
    # under the hog the game is lost on time, under load; it is played again once the hog is gone
    # (again, within the two replays, if someone else's load made it lose on time again)
    assert 2 <= len(player.calls) <= 1 + jobs.LOAD_REPLAYS and replayed == len(player.calls) - 1
    assert all(call == [(0,)] for call in player.calls), player.calls
    for lost in player.results[:-1]:
        assert lost[0]["reason"] == Forfeit.TIMEOUT and lost[0].get("under_load"), player.results
    assert player.results[-1] == [None] and records[0].forfeit is None, player.results
    assert jobs.verdict(records, "burner-0.3")[0] == "qualified"


def test_a_bot_that_runs_out_of_time_under_load_every_time_is_played_again_twice_then_charged(hog):
    records, replayed = jobs.play_judged(judged(burner(1.5, 0.2), 0.2))
    assert replayed == jobs.LOAD_REPLAYS == 2, records[0].forfeit
    forfeit = records[0].forfeit
    assert forfeit["reason"] == Forfeit.TIMEOUT and forfeit.get("under_load"), forfeit
    assert jobs.verdict(records, "burner-1.5")[:2] == ("failed", "timeout")


def test_a_bot_that_sleeps_past_its_clock_is_not_played_again_however_busy_the_machine(hog):
    sleeper = BotSpec("sleeper", (sys.executable, str(HERE / "bots" / "broken.py"), "sleep", "0.5"))
    records, replayed = jobs.play_judged(judged(sleeper, 0.2))  # it waits for no CPU: not under load
    assert replayed == 0 and records[0].forfeit["reason"] == Forfeit.TIMEOUT
    assert not records[0].forfeit.get("under_load"), records[0].forfeit


def test_a_sandboxed_bot_searching_in_a_new_thread_that_runs_out_of_time_under_load_is_marked(hog):
    """A course's bots run sandboxed, their wait for a CPU read from their cgroup's list of threads.
    That list (cgroup v1) was read once and served again while read more than once a second, so the
    thread a bot starts for each move's search went unseen: its timeout under load was charged as
    the bot's own, never played again (the trial season's resubmitted bot)."""
    require(sandbox.unavailable_reason() is None, f"bots cannot be sandboxed: {sandbox.unavailable_reason()}")
    searcher = BotSpec("searcher", (sys.executable, str(HERE / "bots" / "cpu_burner.py"), "0.3", "thread"))
    other = BotSpec("random", (sys.executable, "-m", "bots", "random"))
    spec = MatchSpec("threaded", "domineering", (searcher, other), TimeControl(per_move=0.2), (0, 1),
                     params={"rows": 5, "cols": 5}, limits=Limits(sandbox="on"))
    records = run_match(spec)  # 0.3 s of CPU a move on a 0.2 s clock: each game lost on time
    assert [r.isolation for r in records] == ["sandbox", "sandbox"]
    for record in records:
        forfeit = record.forfeiture
        assert forfeit is not None and forfeit.reason == Forfeit.TIMEOUT, record.forfeit
        assert record.players[forfeit.seat] == "searcher" and forfeit.under_load, record.forfeit
        assert "waited" in forfeit.detail and record.loaded_moves >= 1, record.forfeit
