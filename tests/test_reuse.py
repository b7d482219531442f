"""Bot processes kept from one match to the next (arena.match.reuse): real bots, real sockets."""
from __future__ import annotations

import os
import sys
from pathlib import Path

from arena.match.clock import TimeControl
from arena.match.launcher import resolve_command
from arena.match.limits import Limits
from arena.match.referee import run_match
from arena.match.reuse import BotHub
from arena.match.spec import BotSpec, MatchSpec
from arena.tournament import runner as tmod
from tests.test_tournament import write

ROOT = Path(__file__).resolve().parents[1]
BROKEN = ROOT / "tests" / "bots" / "broken.py"
CLOCK = TimeControl(per_move=0.5)


def spec(match_id: str, a: BotSpec, b: BotSpec, games=(0, 1), limits: Limits | None = None) -> MatchSpec:
    return MatchSpec(match_id=match_id, game="domineering", bots=(a, b), time_control=CLOCK,
                     game_numbers=games, params={"rows": 4, "cols": 4}, limits=limits)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as handle:  # a zombie is not alive
        return handle.read().rsplit(")", 1)[1].split()[0] != "Z"


def test_a_bot_is_kept_between_matches_and_stopped_with_the_hub():
    random_cmd = resolve_command("random")
    one, two, three = (BotSpec(n, random_cmd) for n in ("one", "two", "three"))
    hub = BotHub()
    try:
        first = run_match(spec("one-vs-two", one, two), hub=hub)
        assert hub.started == 2 and len(hub.idle) == 2
        pids = {p.spec.name: p.process.pid for p in hub.idle.values()}
        second = run_match(spec("one-vs-three", one, three), hub=hub)
        assert hub.started == 3 and hub.reused == 1  # "one" came from the hub, "three" was started
        assert {p.spec.name: p.process.pid for p in hub.idle.values()}["one"] == pids["one"]
        for record in first + second:
            assert record.forfeit is None and record.moves
        assert [r.players for r in second] == [["one", "three"], ["three", "one"]]
        kept = [p.process.pid for p in hub.idle.values()]
        assert all(alive(pid) for pid in kept)
    finally:
        hub.close()
    assert not any(alive(pid) for pid in kept)


def test_a_bot_that_crashed_is_not_kept_and_starts_afresh():
    crasher = BotSpec("crasher", (sys.executable, str(BROKEN), "crash"))
    other = BotSpec("random", resolve_command("random"))
    hub = BotHub()
    try:
        records = run_match(spec("c-vs-r", crasher, other, games=(0,)), hub=hub)
        assert records[0].forfeit["reason"] == "crashed"
        assert [p.spec.name for p in hub.idle.values()] == ["random"]
        again = run_match(spec("c-vs-r2", crasher, other, games=(0,)), hub=hub)
        assert again[0].forfeit["reason"] == "crashed"  # it played again: a new process was started
        assert hub.started == 3
    finally:
        hub.close()


def test_pinned_bots_are_not_reused():
    pinned = Limits(pin_cpus=True)
    a, b = (BotSpec(n, resolve_command("random")) for n in ("a", "b"))
    hub = BotHub()
    try:
        run_match(spec("a-vs-b", a, b, games=(0,), limits=pinned), hub=hub)
        assert not hub.idle
    finally:
        hub.close()


def test_a_tournament_worker_starts_each_bot_once(tmp_path):
    path = write(tmp_path / "r.toml", bots=("a", "b", "c", "d"), games=2)
    summary = tmod.run(tmod.load(path), tmp_path / "res", concurrency=1, progress=None)
    assert summary.stored == 12 and not summary.failures
    # 6 matches of 2 bots: 12 starts without reuse; one worker keeps all four bots
    assert summary.bot_starts == 4


def test_a_swiss_keeps_its_worker_and_bots_from_round_to_round(tmp_path):
    path = write(tmp_path / "s.toml", bots=("a", "b", "c", "d"), games=2,
                 extra='format = "swiss"\nrounds = 3')
    summary = tmod.run(tmod.load(path), tmp_path / "res", concurrency=1, progress=None)
    assert summary.stored == 3 * 2 * 2 and not summary.failures and summary.phases == 3
    assert summary.bot_starts == 4  # 6 matches, 12 seats: each bot started once for the 3 rounds
