"""`arena match` from the shell: a real match written to disk, and bad input refused in one line. The
command runs in this process (conftest.call_arena: the same main, its output caught at the file
descriptors), `arena replay` with its keyboard as a process of its own."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ENV, arena_cmd, call_arena

from arena.match.records import GameRecord

ROOT = Path(__file__).resolve().parents[1]


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return call_arena(*args, cwd=cwd, timeout=60)


def test_a_match_prints_each_result_and_the_score_and_writes_the_records(tmp_path):
    (tmp_path / "start.txt").write_text("// a comment\n3B\n\n")
    (tmp_path / "raw_bot.py").write_text((ROOT / "examples" / "raw_bot.py").read_text())
    result = arena("match", "domineering", "random", "python raw_bot.py", "--games", "3", "--time", "0.5",
                   "--param", "rows=5", "--param", "cols=5", "--from", "start.txt", "--out", "out",
                   cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert [line.split(":")[0] for line in lines if line.startswith("game ")] == ["game 1/3", "game 2/3",
                                                                                 "game 3/3"]
    assert lines[-1].startswith("score: random ") and lines[-1].endswith(" raw_bot")
    [directory] = (tmp_path / "out" / "matches").iterdir()
    records = [GameRecord.from_json(line) for line in (directory / "games.jsonl").read_text().splitlines()]
    assert len(records) == 3 and all(r.forfeit is None for r in records)
    a_b, b_a = ["random", "raw_bot"], ["raw_bot", "random"]
    assert [r.players for r in records] == [a_b, b_a, a_b]
    assert all(r.start_moves == ["3B"] and r.params["rows"] == 5 for r in records)
    assert GameRecord.from_json((directory / "g1.json").read_text()) == records[1]
    summary = json.loads((directory / "match.json").read_text())
    assert summary["played"] == 3 and sum(summary["score"].values()) == 3
    a, b = lines[-1].removeprefix("score: random ").removesuffix(" raw_bot").split(" - ")
    assert (float(a), float(b)) == (summary["score"]["random"], summary["score"]["raw_bot"])


def test_santorini_matches_also_write_the_assignments_game_file(tmp_path):
    pytest.importorskip("rules.santorini")
    result = arena("match", "santorini", "random", "random", "--games", "1", "--time", "0.5", "--out", "o",
                   cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    [directory] = (tmp_path / "o" / "matches").iterdir()
    from rules.santorini import read_game_file

    record = GameRecord.from_json((directory / "games.jsonl").read_text())
    state = read_game_file((directory / "g0.txt").read_text())
    assert state.outcome is not None and state.outcome.winner == record.winner


@pytest.mark.parametrize(
    "args, message",
    [
        (["chess", "random", "random"], "unknown game 'chess'"),
        (["domineering", "random", "no-such-bot"], "'no-such-bot'"),
        (["domineering", "random", "python missing_bot.py"], "no file 'missing_bot.py'"),
        (["domineering", "random", "b" * 300], "File name too long"),
        (["domineering", "random", "random", "--time", "fast"], "bad time control 'fast'"),
        (["domineering", "random", "random", "--time", "0"], "'0': the seconds must be finite and positive"),
        (["domineering", "random", "random", "--time", "inf"], "'inf': the seconds must be finite"),
        (["domineering", "random", "random", "--time", "nan"], "'nan': the seconds must be finite"),
        (["domineering", "random", "random", "--time", "1+inf"], "'1+inf': the seconds must be finite"),
        (["domineering", "random", "random", "--time", "1+nan"], "'1+nan': the seconds must be finite"),
        (["domineering", "random", "random", "--time", "1+2+3"], "'1+2+3': use SECONDS (0.5) or BASE+INC"),
        (["domineering", "random", "random", "--time=-1"], "bad time control '-1'"),
        (["domineering", "random", "random", "--time", "1e999+1"], "bad time control '1e999+1'"),
        (["domineering", "random", "random", "--param", "rows=big"], "'rows' must be a whole number"),
        (["domineering", "random", "random", "--param", "depth=3"], "unknown parameter 'depth'"),
        (["domineering", "random", "random", "--param", "rows"], "bad --param 'rows'"),
        (["domineering", "random", "random", "--games", "0"], "--games must be at least 1"),
        (["domineering", "random", "random", "--from", "nowhere.txt"], "cannot read --from file"),
        (["domineering", "random", ""],
         "BOT_B is an empty command '': a starter kit's \"$(build.sh | tail -1)\" is empty when its build"),
        (["domineering", "stdio:", "random"], "BOT_A is an empty command 'stdio:'"),
        (["domineering", "random", "random", "--name", "a b"], "--name 'a b' is not usable"),
        (["domineering", "random", "greedy", "--name", "x", "--name", "x"], "'x' is given to both bots"),
        (["domineering", "random", "greedy", "--name", "x", "--name", "y", "--name", "z"], "at most twice"),
    ],
)
def test_bad_input_is_one_line_naming_it_and_exit_code_2(tmp_path, args, message):
    result = arena("match", *args, "--out", "out", cwd=tmp_path)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1 and message in result.stderr
    assert not (tmp_path / "out" / "matches").exists() or not any((tmp_path / "out" / "matches").iterdir())


def test_arena_called_in_process_gives_the_callers_umask_back(tmp_path, capsys):
    """`arena` makes what it writes private (umask 077) while a command runs, and no longer: a
    caller's later files (a bot it builds for a sandboxed user to read) keep the caller's umask."""
    from arena.cli import main

    before = os.umask(0o022)
    try:
        assert main(["standings", str(tmp_path / "missing.toml")]) != 0
        assert os.umask(0o022) == 0o022
    finally:
        os.umask(before)
    assert "missing.toml" in capsys.readouterr().err


def test_a_crashed_bots_stack_trace_is_shown_by_match_watch_and_replay(tmp_path):
    """A bot dying of an uncaught exception mid-game: its last lines (the stack trace, ending in the
    exception) are printed under the result by `arena match`, `arena watch` and `arena replay`, not
    only kept in the JSON record."""
    raising = f"{sys.executable} {ROOT / 'tests' / 'bots' / 'broken.py'} raise"
    small = ("--time", "0.5", "--param", "rows=5", "--param", "cols=5")
    match = arena("match", "domineering", "random", raising, "--games", "1", *small, "--out", "m",
                  cwd=tmp_path)
    assert match.returncode == 0, match.stderr
    lines = match.stdout.splitlines()
    result = next(i for i, line in enumerate(lines) if line.startswith("game 1/1:"))
    assert "broken forfeits (crashed: exited with code 1" in lines[result]
    assert lines[result + 1].startswith("  broken's last output")
    shown = lines[result + 2:-1]
    assert shown[-1] == "  | RuntimeError: the search table is corrupt" and lines[-1].startswith("score: ")
    assert 2 <= len(shown) <= 12 and all(line.startswith("  | ") for line in shown)
    assert any("File " in line and "broken.py" in line for line in shown)
    [directory] = (tmp_path / "m" / "matches").iterdir()
    last = len(GameRecord.from_json((directory / "g0.json").read_text()).moves)
    replay = subprocess.run(arena_cmd("replay", str(directory / "g0.json")), input=f"{last}\nq\n", text=True,
                            capture_output=True, cwd=tmp_path, env=ENV, timeout=60)
    assert replay.returncode == 0, replay.stderr
    after = replay.stdout.split("end of the record: ")[1].splitlines()
    assert lines[result + 1:-1] == after[1:len(shown) + 2]
    watch = arena("watch", "domineering", "random", raising, *small, cwd=tmp_path)
    assert watch.returncode == 0, watch.stderr
    assert "game over: random wins, broken forfeits (crashed" in watch.stdout
    assert "  | RuntimeError: the search table is corrupt" in watch.stdout
    quiet = arena("match", "domineering", "random", "random", "--games", "1", *small, cwd=tmp_path)
    assert "last output" not in quiet.stdout  # nobody crashed: nothing more than the result


def test_name_gives_the_bots_their_names_in_the_output_and_the_records(tmp_path):
    """Two kit bots are both `bot` by their command; --name (BOT_A's, then BOT_B's) names them."""
    small = ("--games", "1", "--time", "0.5", "--param", "rows=4", "--param", "cols=4", "--out", "out")
    named = arena("match", "domineering", "random", "random", "--name", "cpp", "--name", "java", *small,
                  cwd=tmp_path)
    assert named.returncode == 0, named.stderr
    assert "random-1" not in named.stdout and "cpp vs java" in named.stdout
    assert named.stdout.splitlines()[-1].startswith("score: cpp ")
    [directory] = (tmp_path / "out" / "matches").iterdir()
    assert "-cpp-vs-java-" in directory.name
    assert GameRecord.from_json((directory / "g0.json").read_text()).players == ["cpp", "java"]
    one = arena("match", "domineering", "random", "random", "--name", "mine", *small, cwd=tmp_path)
    assert one.returncode == 0 and "mine vs random" in one.stdout  # one --name: BOT_A's
    watch = arena("watch", "domineering", "random", "greedy", "--name", "a", "--name", "b", *small[2:8],
                  cwd=tmp_path)
    assert watch.returncode == 0, watch.stderr
    assert watch.stdout.startswith("domineering (rows=4, cols=4, first=vertical): a (seat 0) vs b (seat 1)")


def test_move_files_name_their_game_and_parameters_and_from_refuses_another(tmp_path):
    """A move file starts with `// game: NAME (params)`; `--from` refuses it for another game or other
    parameters (saying which --param to add), takes it for the same, and takes a file without that
    line (as before) as it is. Files written before the line (`// domineering rows=5 ...` first) are
    checked alike. A double forfeit's move file says so, not "draw"."""
    small = ("--games", "1", "--time", "0.3", "--out", "out")
    played = arena("match", "domineering", "random", "greedy", "-p", "rows=5", "-p", "cols=5", *small,
                   cwd=tmp_path)
    assert played.returncode == 0, played.stderr
    [directory] = (tmp_path / "out" / "matches").iterdir()
    text = (directory / "g0.txt").read_text()
    assert text.startswith("// game: domineering (rows=5, cols=5, first=vertical)\n"
                           "// random (seat 0) vs greedy")
    lines = text.splitlines()
    (tmp_path / "start.txt").write_text("\n".join(lines[:4]) + "\n")  # the header and two moves
    refused = arena("match", "domineering", "random", "greedy", "--from", "start.txt", *small, cwd=tmp_path)
    assert refused.returncode == 2 and len(refused.stderr.splitlines()) == 1
    assert ("start.txt is a game of domineering (rows=5, cols=5, first=vertical), not of domineering "
            "(rows=8, cols=8, first=vertical); add --param rows=5 --param cols=5") in refused.stderr
    other = arena("match", "morris", "random", "greedy", "--from", "start.txt", *small, cwd=tmp_path)
    assert other.returncode == 2 and "not of morris" in other.stderr
    same = arena("match", "domineering", "random", "greedy", "-p", "cols=5", "-p", "rows=5",
                 "--from", "start.txt", *small, cwd=tmp_path)
    assert same.returncode == 0, same.stderr
    (tmp_path / "bare.txt").write_text("\n".join(lines[2:4]) + "\n")  # no header: read as it is
    bare = arena("match", "domineering", "random", "greedy", "--from", "bare.txt", *small, cwd=tmp_path)
    assert bare.returncode == 0, bare.stderr
    (tmp_path / "old.txt").write_text("// domineering rows=5 cols=5 first=vertical\n// a vs b: draw\n"
                                      + "\n".join(lines[2:4]) + "\n")
    old = arena("match", "domineering", "random", "greedy", "--from", "old.txt", *small, cwd=tmp_path)
    assert old.returncode == 2 and "add --param rows=5 --param cols=5" in old.stderr
    nohello = f"{sys.executable} {ROOT / 'tests' / 'bots' / 'broken.py'} nohello"
    both = arena("match", "domineering", nohello, nohello, "--out", "both", "--games", "1", cwd=tmp_path)
    assert both.returncode == 0, both.stderr
    [directory] = (tmp_path / "both" / "matches").iterdir()
    header = (directory / "g0.txt").read_text().splitlines()[1]
    assert header == ("// broken-1 (seat 0) vs broken-2 (seat 1): no winner, both bots forfeit "
                      "(double_forfeit)")
