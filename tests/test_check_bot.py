"""`arena check-bot GAME COMMAND` (arena/match/selfcheck.py): real bots, the real referee and sandbox;
it says what is fine and what to fix, and exits 1 when something needs fixing."""
from __future__ import annotations

import sys
from pathlib import Path

from conftest import run_arena

HERE = Path(__file__).resolve().parent
BROKEN = HERE / "bots" / "broken.py"
BUGGY = HERE / "bots" / "buggy_legal.py"
SMALL = ("-p", "rows=5", "-p", "cols=5")
SLOW_START = '''import sys, time
loaded = False
if "--ready" in sys.argv:
    time.sleep(0.7)  # a big engine loading, then saying so
    loaded = True
    print("ready", flush=True)
for line in sys.stdin:
    words = line.split()
    if not loaded:  # loading once told of its first game, as an engine sizing its tables to it
        time.sleep(0.7)
        loaded = True
    if words and words[0] == "turn":
        print("move", words[words.index("legal") + 1], flush=True)
    elif words and words[0] == "bye":
        break
'''


def check_bot(*args: str, cwd: Path):
    return run_arena("check-bot", "domineering", *args, *SMALL, "--time", "1", cwd=cwd)


def test_a_good_bot_has_nothing_to_fix(tmp_path):
    done = check_bot("alphabeta", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("ok   4 games against random from random openings:")
    assert "every one legal" in lines[0]
    assert lines[1].startswith("ok   its first move took ")
    assert lines[2] == "ok   move generation agreed with the rules on 30 of 30 positions"
    assert "nothing to fix" in done.stderr


def test_a_wrong_move_generator_is_shown_with_the_position_and_what_it_misses(tmp_path):
    done = check_bot(f"{sys.executable} {BUGGY}", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FIX  move generation agreed with the rules on " in done.stdout
    assert "  the position: {" in done.stdout and "  fix: its move generator misses " in done.stdout


def test_an_illegal_move_is_a_fix_naming_the_notation(tmp_path):
    done = check_bot(f"{sys.executable} {BROKEN} illegal", cwd=tmp_path)
    assert done.returncode == 1
    assert "FIX  game 1 of 4 (seat 0), ply 0: illegal move:" in done.stdout
    assert "lower cell" in done.stdout  # the notation trap, named
    assert "note it does not answer the `legal` request" in done.stdout


def test_a_slow_start_is_a_fix_until_the_bot_says_ready(tmp_path):
    (tmp_path / "slow.py").write_text(SLOW_START)
    slow = check_bot(f"stdio:{sys.executable} slow.py", cwd=tmp_path)
    assert slow.returncode == 1, slow.stdout
    assert "FIX  its first move took 0." in slow.stdout and "`ready`" in slow.stdout
    warm = check_bot(f"stdio+ready:{sys.executable} slow.py --ready", cwd=tmp_path)
    assert "ok   its first move took 0.0" in warm.stdout, warm.stdout


def test_a_bad_game_is_one_line(tmp_path):
    done = run_arena("check-bot", "chess", "random", cwd=tmp_path)
    assert done.returncode == 2
    known = "domineering, fanorona, freedom, morris, santorini"
    assert done.stderr.strip() == f"arena check-bot: error: unknown game 'chess' (known: {known})"
