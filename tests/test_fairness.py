"""Fairness against a dishonest opponent (issue 21), with real attacking bots (tests/bots/attacks.py).

- Thinking on the opponent's time: by default the bot not to move is frozen (its cgroup's
  freezer), so an opponent that keeps CPU-burning children running takes nothing of an honest
  bot's move; with `--no-suspend` (suspend = false) the same children burn through the honest
  bot's turns.
- Pinning: a pinned bot's cgroup has a cpuset, so the bot's own sched_setaffinity(all CPUs) leaves
  it on its CPU; without the sandbox (no cgroup) the same call widens it (the attack is real).
"""
from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest
from conftest import require

from arena.cell import cgroup, sandbox
from arena.cell.launcher import resolve_command
from arena.cell.limits import Limits, cpu_for
from arena.cli import build_parser
from arena.cli.match import limits_of
from arena.match.clock import TimeControl
from arena.match.referee import run_match
from arena.match.spec import BotSpec, MatchSpec

HERE = Path(__file__).resolve().parent
ATTACKS = HERE / "bots" / "attacks.py"
TAG = f"fair{os.getpid()}"
"""In the command line of every attacker process of this run (and of its forked children)."""
THINK_S = 0.15
"""CPU seconds the honest bot needs for each move."""
CLOCK = TimeControl(per_move=0.4)


@pytest.fixture(autouse=True)
def _no_attacker_left():
    yield
    left = _tagged()
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    assert left == []


def _tagged(word: str = "") -> list[int]:
    """Live processes of this run's bots (those whose command line holds `word`)."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid():
            try:
                line = Path(f"/proc/{name}/cmdline").read_bytes()
                state = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if TAG.encode() in line and word.encode() in line and b"bwrap" not in line and state not in "ZX":
                found.append(int(name))
    return found


def _cpu_s(pids: list[int]) -> float:
    """CPU seconds (user + system) used so far by `pids`."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def needs_freezer() -> None:
    reason = sandbox.unavailable_reason()
    require(reason is None, f"bots cannot be sandboxed here: {reason}")
    layout = cgroup.detect()
    require(layout.kind != "none", f"no usable cgroups: {layout.reason}")


def bot(mode: str, *options: str) -> BotSpec:
    return BotSpec(f"{mode}", (sys.executable, str(ATTACKS), mode, f"tag={TAG}", *options))


def _ponder_match(limits: Limits) -> tuple[list, list[tuple[float, float]]]:
    """Two games of the pondering attacker (two CPU-burning children) against the honest bot that
    needs THINK_S of CPU a move at a 0.4 s clock: the records, and for each of the honest bot's
    moves (the attacker's CPU seconds during it, the move's time on the clock)."""
    samples: list[tuple[str, str, float]] = []

    def on_move(record, move, state):
        samples.append((record.game_id, record.players[move.seat], _cpu_s(_tagged("ponder"))))

    spec = MatchSpec("ponder", "domineering", (bot("ponder", "n=2"), bot("think", f"s={THINK_S}")),
                     CLOCK, (0, 1), params={"rows": 5, "cols": 5}, limits=limits)
    records = run_match(spec, on_move=on_move)
    used = [m.time_s for r in records for m in r.moves if r.players[m.seat] == "think"]
    during = [b[2] - a[2] for a, b in zip(samples, samples[1:], strict=False)
              if a[0] == b[0] and a[1] == "ponder" and b[1] == "think"]
    return records, list(zip(during, used, strict=False))


def test_by_default_a_pondering_opponent_is_frozen_and_the_honest_bot_never_loses_on_time():
    needs_freezer()
    records, turns = _ponder_match(Limits(sandbox="on"))  # suspend left to its default
    print("attacker CPU s, honest move s:", [(round(a, 3), round(b, 3)) for a, b in turns])
    assert all(r.forfeit is None for r in records), [r.forfeit for r in records]
    assert len(turns) >= 6
    assert max(a for a, _ in turns) < 0.05, turns  # frozen: its children burned nothing meanwhile


def test_with_no_suspend_the_pondering_children_burn_through_the_honest_bots_turns():
    needs_freezer()
    records, turns = _ponder_match(Limits(sandbox="on", suspend=False))
    forfeits = [r.forfeit for r in records if r.forfeit]
    print("attacker CPU s, honest move s:", [(round(a, 3), round(b, 3)) for a, b in turns],
          "forfeits:", forfeits)
    assert turns
    assert sum(a for a, _ in turns) / len(turns) > 0.05, turns  # the attack is real


def test_suspend_options_default_none_and_no_suspend_and_suspend():
    parser = build_parser()
    base = ["match", "domineering", "random", "random"]
    assert limits_of(parser.parse_args(base)).suspend is None
    assert limits_of(parser.parse_args([*base, "--no-suspend"])).suspend is False
    assert limits_of(parser.parse_args([*base, "--suspend"])).suspend is True
    assert Limits.from_dict({"suspend": False}).suspend is False
    assert Limits.from_dict({}).suspend is None
    with pytest.raises(ValueError, match="suspend must be true or false"):
        Limits.from_dict({"suspend": "no"})


def test_a_pinned_sandboxed_bot_cannot_widen_its_cpus_but_an_unsandboxed_one_can():
    needs_freezer()
    require(cgroup.detect().cpuset is not None, "no writable cpuset hierarchy for the bots' cgroups")
    require(len(os.sched_getaffinity(0)) > 1, "a single CPU: nothing to widen")
    everything = sorted(range(os.cpu_count() or 1))

    def cpus_reported(limits: Limits) -> list[list[int]]:
        spec = MatchSpec("pin", "domineering", (bot("unpin"), BotSpec("random", resolve_command("random"))),
                         TimeControl(per_move=2.0), (0,), params={"rows": 4, "cols": 4}, limits=limits)
        record = run_match(spec)[0]
        assert record.forfeit is None, record.forfeit
        return [m.info["cpus"] for m in record.moves if m.seat == 0]

    held = cpus_reported(Limits(sandbox="on", pin_cpus=True))
    assert held and all(cpus == [cpu_for(0)] for cpus in held), held
    free = cpus_reported(Limits(sandbox="off", pin_cpus=True))
    assert free and all(cpus == everything for cpus in free), free  # sched_setaffinity alone: undone
