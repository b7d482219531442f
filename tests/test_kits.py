"""The starter kits in examples/kits/ and the code of docs/PROTOCOL.md, built with real compilers and
played against `random` under the real referee; every kit's answer to the `legal` request checked
against the rules (arena.match.legal_check), with a bug planted in its sample generator caught.

Each kit is copied to a temporary directory and built once per run with its own
`build.sh` (the `built_kit` fixture of tests/conftest.py), whose last line is the command that
runs the bot. A missing compiler or library skips with the reason (fails under CI=true: .ci/run
installs them).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import require

import rules
from arena.cell.launcher import resolve_command
from arena.match.clock import TimeControl
from arena.match.legal_check import NO_ANSWER, check_move_generation
from arena.match.referee import run_match
from arena.match.reuse import BotHub
from arena.match.spec import BotSpec, MatchSpec

ROOT = Path(__file__).resolve().parents[1]
KITS = ROOT / "examples" / "kits"
PROTOCOL_PAGE = ROOT / "docs" / "PROTOCOL.md"
BUILD_TIMEOUT_S = 300
DEBIAN_JARS = (Path("/usr/share/java/jeromq.jar"), Path("/usr/share/java/msgpack-core.jar"))

GAMES = {  # small and short: the point is a whole game without a forfeit, not the play
    "domineering": {"rows": 5, "cols": 5},
    "morris": {"max_turns": 40},
    "santorini": {},
}
CLOCK = TimeControl(per_move=2.0, margin=0.05)


def _has_header(name: str) -> bool:
    return any(Path(d, name).is_file() for d in ("/usr/include", "/usr/local/include"))


def _cpp_ready() -> str | None:
    missing = [p for p in ("g++", "make") if shutil.which(p) is None]
    missing += [h for h in ("zmq.hpp", "msgpack.hpp", "zmq.h") if not _has_header(h)]
    return None if not missing else f"missing {', '.join(missing)} (apt-get install g++ make " \
                                      "libzmq3-dev cppzmq-dev libmsgpack-cxx-dev)"


def _java_ready() -> str | None:
    missing = [p for p in ("javac", "java", "jar") if shutil.which(p) is None]
    missing += [str(j) for j in DEBIAN_JARS if not j.is_file()]
    return None if not missing else f"missing {', '.join(missing)} (apt-get install default-jdk " \
                                      "libjeromq-java libmsgpack-java)"


def _java_stdio_ready() -> str | None:
    missing = [p for p in ("javac", "java", "jar") if shutil.which(p) is None]
    return None if not missing else f"missing {', '.join(missing)} (apt-get install default-jdk)"


def _csharp_ready() -> str | None:
    missing = [p for p in ("mcs", "mono") if shutil.which(p) is None]
    return None if not missing else f"missing {', '.join(missing)} (apt-get install mono-mcs)"


READY = {"cpp": _cpp_ready, "java": _java_ready, "java-stdio": _java_stdio_ready, "csharp": _csharp_ready,
         "python-stdio": lambda: None}
SOURCES = {"cpp": "bot.cpp", "java": "src/Bot.java", "java-stdio": "src/Bot.java", "csharp": "Bot.cs",
           "python-stdio": "bot.py"}
"""Each kit's one source file, holding its sample move generator."""
PLANTED_BUG = ("r + 1 < rows", "r + 2 < rows")
"""The same text in every kit's generator, changed: vertical dominoes just under the top row are
forgotten."""
LEGAL_PARAMS = ({"rows": 5, "cols": 5}, {"rows": 4, "cols": 6, "first": "horizontal"})


def build_kit(kit: str, where: Path, plant: tuple[str, str] | None = None) -> str:
    """Copy the kit to `where` (with `plant`: that text of its source replaced), run its build.sh,
    return the last line it printed."""
    why = READY[kit]()
    require(why is None, f"kit {kit}: {why}")
    copy = where / kit
    shutil.copytree(KITS / kit, copy, ignore=shutil.ignore_patterns("bot", "*.jar", "*.exe", "build", "lib"))
    if plant is not None:
        source = copy / SOURCES[kit]
        text = source.read_text(encoding="utf-8")
        assert text.count(plant[0]) == 1, f"{kit}: {plant[0]!r} is not once in {SOURCES[kit]}"
        source.write_text(text.replace(*plant), encoding="utf-8")
    return run_build(kit, copy)


def run_build(kit: str, copy: Path) -> str:
    """Run the kit's build.sh in `copy`; the last line it printed."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    done = subprocess.run(["sh", str(copy / "build.sh")], capture_output=True, text=True,
                          timeout=BUILD_TIMEOUT_S, env={**os.environ, "PATH": path})
    assert done.returncode == 0, f"{kit}/build.sh failed:\n{done.stdout}\n{done.stderr}"
    lines = done.stdout.strip().splitlines()
    assert lines, f"{kit}/build.sh printed no run command"
    return lines[-1]


@pytest.fixture(scope="module", params=sorted(READY))
def kit_command(request, built_kit) -> tuple[str, str]:
    return request.param, built_kit(request.param)[1]


@pytest.fixture(scope="module")
def kit_hub(kit_command):
    """The kit's bot and `random`, kept running from one game's match to the next (a BotHub, as a
    tournament worker keeps them): a JVM, Mono or adapter start-up a kit, not one a match. The
    first match starts them; the kit then gets the next game's `new_game`, as in a tournament."""
    hub = BotHub()
    yield hub
    hub.close()


@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_kit_builds_and_plays_random_without_a_forfeit(kit_command, kit_hub, game):
    kit, command = kit_command
    bot = BotSpec(f"kit-{kit}", resolve_command(command))
    spec = MatchSpec(match_id=f"kit-{kit}", game=game,
                     bots=(bot, BotSpec("random", resolve_command("random"))), time_control=CLOCK,
                     game_numbers=(0, 1), params=GAMES[game])
    records = run_match(spec, hub=kit_hub)
    assert [r.forfeit for r in records] == [None, None], [r.logs for r in records]
    from arena.cell import sandbox  # sandboxed where it can be: Java's JeroMQ goes through the relay
    assert {r.isolation for r in records} == {sandbox.decide("auto").label}
    for record in records:
        seat = record.players.index(f"kit-{kit}")
        mine = [m for m in record.moves if m.seat == seat]
        assert mine and all(m.info.get("comment") == "first legal move" for m in mine)


def test_every_kit_answers_legal_from_its_own_generator_and_says_which_games_it_lacks(kit_command):
    kit, command = kit_command
    bot = BotSpec(f"kit-{kit}", resolve_command(command))
    for params in LEGAL_PARAMS:
        check = check_move_generation(bot, "domineering", params, 30, seed=4)
        assert (check.passed, check.agreed, check.error) == (True, 30, None), (kit, check.disagreements[:1])
    other = check_move_generation(bot, "morris", {}, 2)
    assert other.error == f"{NO_ANSWER} (it answered with an error: this bot has no move generator for " \
                          "morris)"


@pytest.mark.parametrize("kit", sorted(READY))
def test_a_bug_planted_in_a_kits_generator_is_caught_and_no_legal_turns_the_answer_off(kit, tmp_path):
    command = build_kit(kit, tmp_path, plant=PLANTED_BUG)
    params = LEGAL_PARAMS[0]
    bad = check_move_generation(BotSpec("planted", resolve_command(command)), "domineering", params, 30,
                                seed=4)
    assert not bad.passed and bad.error is None and 0 < bad.agreed < 30, bad.summary()
    game = rules.load("domineering", **params)
    for wire, missing, extra in bad.disagreements:  # exactly the vertical dominoes under the top row
        state = game.state_from_wire(wire)
        assert missing == [m for m in state.legal_moves() if m.startswith(str(params["rows"] - 1))]
        assert missing and extra == [] and state.seat == 0
    (tmp_path / kit / "no-legal").write_text("")
    without = run_build(kit, tmp_path / kit)
    silent = check_move_generation(BotSpec("silent", resolve_command(without)), "domineering", params, 3,
                                   timeout_s=0.5)
    assert not silent.passed and silent.error.startswith(NO_ANSWER)


def test_every_kit_has_a_readme_with_debian_packages_build_and_run():
    for kit in READY:
        text = (KITS / kit / "README.md").read_text(encoding="utf-8")
        assert "apt-get install" in text and "build.sh" in text and "arena match" in text, kit
        assert os.access(KITS / kit / "build.sh", os.X_OK), kit


# --- the code printed in docs/PROTOCOL.md ---

def code_block(language: str) -> str:
    """The one ```language block of docs/PROTOCOL.md, exactly as printed."""
    blocks = re.findall(rf"^```{language}\n(.*?)^```$", PROTOCOL_PAGE.read_text(encoding="utf-8"),
                        re.MULTILINE | re.DOTALL)
    assert len(blocks) == 1, f"expected one {language} block in docs/PROTOCOL.md, found {len(blocks)}"
    return blocks[0]


def build_page_cpp(where: Path) -> str:
    require(_cpp_ready() is None, f"C++ block: {_cpp_ready()}")
    source = where / "bot.cpp"
    source.write_text(code_block("cpp"), encoding="utf-8")
    first = code_block("cpp").splitlines()[0]
    assert first.startswith("// g++ ")  # the page's own build command, used as printed
    command = first[3:].split("  ")[0].strip()
    done = subprocess.run(command, shell=True, cwd=where, capture_output=True, text=True,
                          timeout=BUILD_TIMEOUT_S)
    assert done.returncode == 0, f"{command}:\n{done.stderr}"
    return str(where / "bot")


def build_page_java(where: Path) -> str:
    require(_java_ready() is None, f"Java block: {_java_ready()}")
    (where / "Bot.java").write_text(code_block("java"), encoding="utf-8")
    classpath = os.pathsep.join([str(where), *map(str, DEBIAN_JARS)])
    quick = "-J-XX:TieredStopAtLevel=1"  # javac's own JIT: the same classes, as the kits build them
    done = subprocess.run(["javac", quick, "-cp", classpath, "Bot.java"], cwd=where, capture_output=True,
                          text=True, timeout=BUILD_TIMEOUT_S)
    assert done.returncode == 0, f"javac against Debian's JeroMQ 0.3.6:\n{done.stderr}"
    return f"java -cp {classpath} Bot"


@pytest.mark.parametrize("language", ["cpp", "java"])
def test_the_code_blocks_of_the_protocol_page_compile_as_printed_and_play(language, tmp_path):
    command = build_page_cpp(tmp_path) if language == "cpp" else build_page_java(tmp_path)
    bot = BotSpec(f"page-{language}", resolve_command(command))
    spec = MatchSpec(match_id=f"page-{language}", game="domineering",
                     bots=(bot, BotSpec("random", resolve_command("random"))), time_control=CLOCK,
                     game_numbers=(0, 1), params=GAMES["domineering"])
    assert [r.forfeit for r in run_match(spec)] == [None, None]


def test_a_java_bot_that_cannot_start_shows_why_in_the_record(tmp_path):
    require(_java_ready() is None, f"java: {_java_ready()}")
    bot = BotSpec("lost", resolve_command(f"java -cp {DEBIAN_JARS[0]} NoSuchBot"))
    spec = MatchSpec(match_id="lost", game="domineering",
                     bots=(bot, BotSpec("random", resolve_command("random"))), time_control=CLOCK,
                     game_numbers=(0,), params=GAMES["domineering"])
    [record] = run_match(spec)
    assert record.forfeit["reason"] == "crashed" and "before saying hello" in record.forfeit["detail"]
    assert "Could not find or load main class NoSuchBot" in record.logs["0"]
