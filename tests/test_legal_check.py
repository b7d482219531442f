"""The `legal` protocol extension (docs/PROTOCOL.md, "Move generation") checked by the real referee
(arena/match/legal_check.py) against real bot processes, sandboxed: the SDK's answer, a planted
move-generation bug shown with its position, a bot without the extension, and the C++ kit with and
without it (built once with its own build.sh)."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import require

import rules
from arena.cell import sandbox
from arena.cell.launcher import resolve_command
from arena.cell.limits import Limits
from arena.match.legal_check import NO_ANSWER, check_move_generation, sample_positions
from arena.match.spec import BotSpec

ROOT = Path(__file__).resolve().parents[1]
PARAMS = {"rows": 5, "cols": 5}
PLANTED_BUG = (ROOT / "tests" / "bots" / "buggy_legal.py").read_text()
"""A bot whose `legal` answer forgets column A."""


@pytest.fixture(scope="module")
def limits() -> Limits:
    reason = sandbox.unavailable_reason()
    require(reason is None, f"bots cannot be sandboxed here: {reason}")
    return Limits(sandbox="on")


def test_positions_are_reproducible_distinct_and_in_play():
    game = rules.load("domineering", **PARAMS)
    first, again = sample_positions(game, 40, seed=7), sample_positions(game, 40, seed=7)
    assert [s.to_wire() for s in first] == [s.to_wire() for s in again]
    assert len({repr(s.to_wire()) for s in first}) == 40 and all(s.outcome is None for s in first)
    assert {s.seat for s in first} == {0, 1}
    assert [s.to_wire() for s in sample_positions(game, 40, seed=8)] != [s.to_wire() for s in first]


def test_the_sdk_answers_from_the_rules_and_a_planted_bug_fails_on_its_positions(limits, tmp_path):
    good = check_move_generation(BotSpec("random", resolve_command("random")), "domineering", PARAMS, 30,
                                 limits, seed=3)
    assert (good.passed, good.agreed, good.total, good.error, good.disagreements) == (True, 30, 30, None, [])
    script = tmp_path / "buggy.py"
    script.write_text(PLANTED_BUG)
    bad = check_move_generation(BotSpec("buggy", (sys.executable, str(script))), "domineering", PARAMS, 30,
                                limits, seed=3)
    assert not bad.passed and bad.error is None and 0 < bad.agreed < 30 and bad.disagreements
    game = rules.load("domineering", **PARAMS)
    for wire, missing, extra in bad.disagreements:  # exactly the moves of column A, and nothing more
        assert missing == [m for m in game.state_from_wire(wire).legal_moves() if m.endswith("A")]
        assert missing and extra == []
    wire, missing, _ = bad.disagreements[0]
    assert f"left out {', '.join(missing)}" in bad.summary()


def test_a_bot_without_the_extension_fails_with_the_reason(limits):
    raw = check_move_generation(BotSpec("raw", (sys.executable, str(ROOT / "examples" / "raw_bot.py"))),
                                "domineering", PARAMS, 5, limits, timeout_s=0.5)
    assert not raw.passed and raw.agreed == 0
    assert raw.error == f"{NO_ANSWER} (no answer within 0.5 s)"
    assert raw.summary() == f"move generation not checked: the bot {raw.error}"


def _build(kit: Path) -> str:
    """The kit's build.sh run in `kit`: the run command it prints last."""
    done = subprocess.run(["sh", str(kit / "build.sh")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_the_cpp_kit_answers_from_its_own_generator_unless_told_not_to(limits, tmp_path, built_kit):
    kit = tmp_path / "cpp"
    shutil.copytree(built_kit("cpp")[0], kit)  # the process's build, copied with its times: up to date
    command = _build(kit)
    assert command == f"{kit}/bot"
    (kit / "no-legal").write_text("")
    without = _build(kit)
    assert without == f"{command} --no-legal"
    for params in (PARAMS, {"rows": 4, "cols": 6, "first": "horizontal"}):
        check = check_move_generation(BotSpec("kit", resolve_command(command)), "domineering", params, 40,
                                      limits, seed=1)
        assert (check.passed, check.agreed, check.error) == (True, 40, None), check.disagreements[:1]
    silent = check_move_generation(BotSpec("kit", resolve_command(without)), "domineering", PARAMS, 5, limits,
                                   timeout_s=0.5)
    assert not silent.passed and silent.error.startswith(NO_ANSWER)
    other = check_move_generation(BotSpec("kit", resolve_command(command)), "morris", {}, 3, limits)
    assert other.error == f"{NO_ANSWER} (it answered with an error: this bot has no move generator for " \
                          "morris)"
