"""The text protocol's opt-in extensions (docs/PROTOCOL.md, section 11): `position`, `legal`, `fd3`
and `ready`, named by a `--arena-options=` word in the bot's command. Lines first, then real bot
processes under the real referee, in Python, C++ (g++) and Java (javac): a bot that reads only the
position word, a chatty bot speaking on fd 3, a slow starter whose warm-up is on no clock, and the
`legal` request; each beside the same bot without the option, which fails. (Every kit's `legal`
answer: tests/test_kits.py.)"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import require

import rules
from arena.cell.launcher import resolve_command
from arena.match.clock import TimeControl
from arena.match.legal_check import check_move_generation, sample_positions
from arena.match.records import Forfeit
from arena.match.referee import run_match
from arena.match.spec import BotSpec, MatchSpec
from arena.match.stdio import BadLine, Options, parse_line, position_word, split_options, to_line

HERE = Path(__file__).resolve().parent
EXT_BOT = HERE / "bots" / "stdio_ext_bot.py"
RANDOM = BotSpec("random", resolve_command("random"))
FAST = TimeControl(per_move=0.5, margin=0.05)
GAMES = ("domineering", "morris", "santorini", "freedom", "fanorona")


def ext_bot(*args: str) -> BotSpec:
    return BotSpec("ext", resolve_command(f"stdio:{sys.executable} {EXT_BOT} {' '.join(args)}"))


def play(bot: BotSpec, games: int = 2, **params) -> list:
    spec = MatchSpec(match_id="x", game="domineering", bots=(bot, RANDOM), time_control=FAST,
                     game_numbers=tuple(range(games)), params=params or {"rows": 5, "cols": 5})
    return run_match(spec)


# --- the options word ---

def test_the_options_word_is_taken_out_of_the_command_and_an_unknown_option_named():
    options, command = split_options(["java", "-jar", "bot.jar", "--arena-options=position,fd3", "-v"])
    assert options == Options(position=True, fd3=True) and command == ["java", "-jar", "bot.jar", "-v"]
    assert split_options(["./bot", "x"]) == (Options(), ["./bot", "x"])
    assert split_options(["./bot", "--arena-options=legal", "--arena-options=ready"])[0] == \
        Options(legal=True, ready=True)
    with pytest.raises(ValueError, match="unknown option 'fd4' in '--arena-options=fd4'"):
        split_options(["./bot", "--arena-options=fd4"])


def test_a_bad_options_word_is_a_crash_with_the_reason_in_the_log():
    [record] = play(ext_bot("--arena-options=position,fd4"), games=1)
    assert record.forfeit["reason"] == Forfeit.CRASHED
    assert "unknown option 'fd4'" in record.logs["0"]


# --- lines ---

def test_the_position_word_is_the_wire_state_in_one_word():
    game = rules.load("domineering", rows=3, cols=4)
    state = game.start().play("1A").play("3B")
    assert position_word(state.to_wire()) == "seat=0;ply=2;board=X...,X...,.OO."
    santorini = rules.load("santorini").start()
    assert position_word(santorini.to_wire()) == \
        "seat=0;ply=0;levels=0,0,0,0,0/0,0,0,0,0/0,0,0,0,0/0,0,0,0,0/0,0,0,0,0;workers=/"
    santorini = santorini.play("B2 C3").play("D4 E5")
    assert position_word(santorini.to_wire()).endswith(";workers=B2,C3/D4,E5")
    freedom = rules.load("freedom", size=4).start()
    assert position_word(freedom.to_wire()) == "seat=0;ply=0;board=....,....,....,....;last=;passed=false"
    morris = rules.load("morris").start().play("d6")
    assert position_word(morris.to_wire()) == \
        "seat=1;ply=1;board=...................W....;in_hand=8,9;quiet=1;history=281474977234944"


def _read_back(word: str, wire: dict) -> dict:
    """The documented reading of a position word, typed like `wire`'s fields."""
    def value(text: str, like):
        if isinstance(like, bool):
            return text == "true"
        if isinstance(like, int):
            return int(text)
        if like is None:
            return None if text == "" else text
        if isinstance(like, list):
            if like and isinstance(like[0], list):  # a list of lists: the game's page says which
                return [value(part, like[0] if like else []) for part in text.split("/")]
            items = [item for item in text.split(",") if item != ""]
            return [value(item, like[0]) if like else item for item in items]
        return text
    fields = dict(pair.split("=", 1) for pair in word.split(";"))
    return {key: value(fields[key], wire[key]) for key in fields}


@pytest.mark.parametrize("name", GAMES)
def test_every_games_position_word_is_one_word_that_reads_back_to_the_wire_state(name):
    game = rules.load(name)
    for state in sample_positions(game, 30, seed=5):
        wire = state.to_wire()
        word = position_word(wire)
        assert word and len(word.split()) == 1
        kept = {k: v for k, v in wire.items() if k not in ("game", "params", "outcome")}
        assert _read_back(word, wire) == kept, word


def test_turn_and_legal_lines_carry_the_position_only_for_a_bot_that_asked():
    wire = rules.load("domineering", rows=3, cols=4).start().play("1A").play("3B").to_wire()
    turn = {"type": "turn", "game_id": "g", "ply": 2, "state": wire, "moves": ["1A", "3B"],
            "legal": ["1B", "1C"], "time_left_s": 2.95}
    assert to_line(turn) == "turn 2 2.950 moves 1A 3B legal 1B 1C"  # today's line, unchanged
    assert to_line(turn, Options(position=True)) == \
        "turn 2 2.950 position seat=0;ply=2;board=X...,X...,.OO. moves 1A 3B legal 1B 1C"
    request = {"type": "legal", "request": 4, "position": wire}
    assert to_line(request) is None and to_line(request, Options(position=True)) is None
    assert to_line(request, Options(legal=True)) == "legal seat=0;ply=2;board=X...,X...,.OO."


def test_legal_and_ready_lines_are_read_only_from_a_bot_that_asked():
    legal = Options(legal=True)
    assert parse_line(b"legal_moves 1B C3,B3,A3\r\n", legal) == ("legal_moves", ["1B", "C3 B3 A3"], {})
    assert parse_line(b"legal_moves\n", legal) == ("legal_moves", [], {})
    assert parse_line(b"legal_error no generator for morris\n", legal) == \
        ("legal_error", "no generator for morris", {})
    assert parse_line(b"ready\n", Options(ready=True)) == ("ready", None, {})
    for line in (b"legal_moves 1B", b"ready"):
        with pytest.raises(BadLine, match="on stdout, which is not 'move MOVE'"):
            parse_line(line)
    with pytest.raises(BadLine, match="on fd 3"):
        parse_line(b"hello world", Options(fd3=True))


# --- real bots under the real referee ---

def test_the_prefix_names_the_options_and_an_unknown_one_is_refused_before_any_game(tmp_path):
    """`stdio+position,legal:COMMAND` is COMMAND with the options word; `stdio+fd4:` is refused by
    `arena match` at once, in one line (the word form is found only when the bot starts)."""
    from conftest import run_arena

    argv = resolve_command(f"stdio+position,legal:{sys.executable} {EXT_BOT}")
    assert argv[1:4] == ("-m", "arena.match.stdio", sys.executable)
    assert argv[-1] == "--arena-options=position,legal"
    bot = BotSpec("ext", resolve_command(f"stdio+position:{sys.executable} {EXT_BOT}"))
    records = play(bot, rows=5, cols=6)
    assert [r.forfeit for r in records] == [None, None], [r.logs for r in records]
    assert all(_my_moves_were_the_last_legal_ones(r) > 0 for r in records)
    refused = run_arena("match", "domineering", f"stdio+position,fd4:{sys.executable} {EXT_BOT}", "random",
                        cwd=tmp_path)
    assert refused.returncode == 2 and not (tmp_path / "out").exists()
    [line] = refused.stderr.strip().splitlines()
    assert "unknown text-protocol option 'fd4' (known: position, legal, fd3, ready)" in line, line


def _my_moves_were_the_last_legal_ones(record, name: str = "ext") -> int:
    game = rules.load(record.game, **record.params)
    state, mine = game.start(), 0
    for move in record.moves:
        if move.seat == record.players.index(name):
            assert move.move == state.legal_moves()[-1], (move.ply, move.move)
            mine += 1
        state = state.play(move.move)
    return mine


@pytest.mark.parametrize("first", ["vertical", "horizontal"])
def test_a_bot_reading_only_the_position_word_plays_the_move_it_computed(first):
    records = play(ext_bot("--arena-options=position"), rows=5, cols=6, first=first)
    assert [r.forfeit for r in records] == [None, None], [r.logs for r in records]
    assert all(_my_moves_were_the_last_legal_ones(r) > 0 for r in records)
    [without] = play(ext_bot(), games=1)  # the same bot, no option: no position word
    assert without.forfeit["reason"] == Forfeit.CRASHED and "AssertionError" in without.logs["0"]


def test_a_chatty_bot_speaks_on_fd3_and_its_stdout_goes_to_the_log():
    records = play(ext_bot("--junk", "--fd3", "--arena-options=position,fd3"))
    assert [r.forfeit for r in records] == [None, None], [r.logs for r in records]
    for record in records:
        seat = str(record.players.index("ext"))
        assert "junk: got" in record.logs[seat] and _my_moves_were_the_last_legal_ones(record) > 0
    assert "engine v1.0 booting" in records[0].logs["0"]  # printed before hello: the first game's
    [without] = play(ext_bot("--junk", "--arena-options=position"), games=1)
    assert without.forfeit["reason"] == Forfeit.MALFORMED_MESSAGE
    assert "on stdout, which is not 'move MOVE'" in without.forfeit["detail"]


def test_a_slow_starter_saying_ready_is_not_charged_its_warm_up():
    [record] = play(ext_bot("--warm", "1.2", "--ready", "--arena-options=position,ready"), games=1)
    assert record.forfeit is None, record.logs
    first = next(m for m in record.moves if m.seat == 0)
    assert first.time_s < FAST.per_move
    [fd3] = play(ext_bot("--warm", "1.2", "--ready", "--fd3", "--arena-options=position,ready,fd3"), games=1)
    assert fd3.forfeit is None, fd3.logs
    [without] = play(ext_bot("--warm", "1.2", "--arena-options=position"), games=1)
    assert (without.forfeit["seat"], without.forfeit["reason"]) == (0, Forfeit.TIMEOUT)
    [banner] = play(ext_bot("--banner", "--ready", "--arena-options=position,ready"), games=1)
    assert banner.forfeit is None, banner.logs  # before `ready` no game has started: noted, not judged
    assert "before 'ready' the bot printed b'engine v1.0 booting" in banner.logs["0"]


def test_a_bot_that_leaves_before_ready_has_crashed():
    bot = BotSpec("gone", resolve_command(f"stdio:{sys.executable} -c 'import sys; sys.exit(4)' "
                                          "--arena-options=ready"))
    [record] = play(bot, games=1)
    assert record.forfeit["reason"] == Forfeit.CRASHED and "exited with code 4" in record.logs["0"]


def test_the_legal_request_reaches_a_text_bot_and_its_answer_is_checked():
    good = check_move_generation(ext_bot("--arena-options=legal"), "domineering", {"rows": 5, "cols": 5}, 20,
                                 seed=2)
    assert (good.passed, good.agreed, good.error) == (True, 20, None), good.disagreements[:1]
    chatty = check_move_generation(ext_bot("--junk", "--fd3", "--arena-options=legal,fd3"), "domineering",
                                   {"rows": 4, "cols": 6, "first": "horizontal"}, 20, seed=2)
    assert (chatty.passed, chatty.agreed) == (True, 20), chatty.error
    silent = check_move_generation(ext_bot(), "domineering", {"rows": 5, "cols": 5}, 3, timeout_s=0.5)
    assert not silent.passed and silent.error.startswith("does not answer the `legal` request")


# --- the same in C++ and Java ---

def _compile(tmp_path_factory, tool: str, source: str, *args: str) -> Path:
    require(shutil.which(tool) is not None, f"{tool} is not installed")
    where = tmp_path_factory.mktemp(tool)
    shutil.copy(HERE / "bots" / source, where / source)
    done = subprocess.run([tool, *args, source], cwd=where, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return where


@pytest.fixture(scope="module")
def cpp_bot(tmp_path_factory) -> Path:
    return _compile(tmp_path_factory, "g++", "ext_bot.cpp", "-O2", "-o", "ext_bot") / "ext_bot"


@pytest.fixture(scope="module")
def java_classes(tmp_path_factory) -> Path:
    require(shutil.which("java") is not None, "java is not installed")
    return _compile(tmp_path_factory, "javac", "ExtBot.java")


def test_a_cpp_engine_printing_on_stdout_speaks_on_fd3_reading_only_the_position(cpp_bot):
    records = play(BotSpec("ext", resolve_command(f"stdio:{cpp_bot} --fd3 --arena-options=position,fd3")))
    assert [r.forfeit for r in records] == [None, None], [r.logs for r in records]
    for record in records:
        assert _my_moves_were_the_last_legal_ones(record) > 0
        assert "junk: read" in record.logs[str(record.players.index("ext"))]
    [without] = play(BotSpec("ext", resolve_command(f"stdio:{cpp_bot} --arena-options=position")), games=1)
    assert without.forfeit["reason"] == Forfeit.MALFORMED_MESSAGE
    assert "on stdout, which is not 'move MOVE'" in without.forfeit["detail"]


def test_a_jvm_saying_ready_is_not_charged_its_start_up_and_warm_up(java_classes):
    java = f"stdio:java -cp {java_classes} ExtBot --warm 1.0"
    ready = f"{java} --ready --fd3 --arena-options=position,fd3,ready"
    [record] = play(BotSpec("ext", resolve_command(ready)), games=1)
    assert record.forfeit is None, record.logs
    assert _my_moves_were_the_last_legal_ones(record) > 0 and "junk: read" in record.logs["0"]
    first = next(m for m in record.moves if m.seat == 0)
    assert first.time_s < FAST.per_move
    [without] = play(BotSpec("ext", resolve_command(f"{java} --fd3 --arena-options=position,fd3")), games=1)
    assert (without.forfeit["seat"], without.forfeit["reason"]) == (0, Forfeit.TIMEOUT)
