"""Bots over stdin/stdout: the text protocol's lines, and the adapter with real processes under the
real referee (every way a stdio bot can fail, and its stderr in the record)."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from conftest import run_arena

from arena.cell.launcher import LaunchError, check_command, display_name, resolve_command
from arena.match.clock import TimeControl
from arena.match.records import Forfeit
from arena.match.referee import run_match
from arena.match.spec import BotSpec, MatchSpec
from arena.match.stdio import BadLine, parse_line, to_line
from arena.tournament import runner

HERE = Path(__file__).resolve().parent
STDIO_BOT = HERE / "bots" / "stdio_bot.py"
RANDOM = BotSpec("random", resolve_command("random"))
FAST = TimeControl(per_move=0.5, margin=0.05)


def stdio_bot(mode: str, *args: object) -> BotSpec:
    return BotSpec(f"stdio-{mode}", resolve_command(f"stdio:{sys.executable} {STDIO_BOT} {mode} "
                                                    + " ".join(map(str, args))))


def play(bot: BotSpec, game: str = "domineering", games: int = 2, **params) -> list:
    params = params or ({"rows": 5, "cols": 5} if game == "domineering" else {})
    spec = MatchSpec(match_id="s", game=game, bots=(bot, RANDOM), time_control=FAST,
                     game_numbers=tuple(range(games)), params=params)
    return run_match(spec)


# --- lines ---

def test_referee_messages_become_one_line_each_with_spaces_in_moves_as_commas():
    new_game = {"type": "new_game", "game_id": "m-g0", "game": "santorini",
                "params": {"limited_supply": False}, "seat": 1, "opponent": "random", "seed": 7,
                "protocol": 1,
                "time": {"control": "increment", "per_move_s": 0.0, "base_s": 60.0, "increment_s": 1.0,
                         "margin_s": 0.05}}
    assert to_line(new_game) == "new_game santorini 1 60+1 7 limited_supply=false"
    turn = {"type": "turn", "game_id": "m-g0", "ply": 2, "state": {}, "moves": ["A1 B2", "C3 D4"],
            "legal": ["A1 A2 A3", "B2 C3"], "time_left_s": 2.5}
    assert to_line(turn) == "turn 2 2.500 moves A1,B2 C3,D4 legal A1,A2,A3 B2,C3"
    assert to_line({**turn, "ply": 0, "moves": []}) == "turn 0 2.500 moves legal A1,A2,A3 B2,C3"
    over = {"type": "game_over", "game_id": "m-g0", "winner": None, "scores": None, "reason": "move limit"}
    assert to_line(over) == "game_over draw move limit"
    assert to_line({**over, "winner": 0}) == "game_over 0 move limit"
    assert to_line({"type": "bye"}) == "bye"


def test_a_move_line_gives_the_move_and_its_info():
    kind, move, info = parse_line(b"move C3,B3,A3 depth 4 score -1.5 nodes 900 pv C3,B3,A3 D1,D2 "
                                  b"comment deep and sure\n")
    assert (kind, move) == ("move", "C3 B3 A3")
    assert info == {"depth": 4, "score": -1.5, "nodes": 900, "pv": ["C3 B3 A3", "D1 D2"],
                    "comment": "deep and sure"}
    assert parse_line(b"move 4C\r\n") == ("move", "4C", {})
    assert parse_line(b"resign\n") == ("resign", None, {})
    assert parse_line(b"   \n") is None


@pytest.mark.parametrize("line", [b"4C", b"move", b"thinking...", b"MOVE 4C", b"\xff\xfe"])
def test_any_other_line_is_refused_quoting_it(line):
    with pytest.raises(BadLine, match="not UTF-8|not 'move MOVE'"):
        parse_line(line)


# --- choosing the adapter ---

def test_stdio_prefix_and_protocol_run_the_command_through_the_adapter(tmp_path):
    bot = tmp_path / "bot.py"
    bot.write_text("")
    argv = resolve_command("stdio:python3 bot.py", tmp_path)
    assert argv == (sys.executable, "-m", "arena.match.stdio", argv[3], str(bot))
    assert resolve_command(["python3", "bot.py"], tmp_path, protocol="stdio") == argv
    assert display_name("stdio:python3 bot.py") == "bot"
    with pytest.raises(LaunchError, match="no file"):
        resolve_command("stdio:python3 missing.py", tmp_path)
    bot.unlink()  # a worker of a cluster checks the bot's own command behind the adapter
    with pytest.raises(LaunchError, match="no file"):
        check_command(argv)
    with pytest.raises(LaunchError, match="unknown bot protocol 'uci'"):
        resolve_command("random", protocol="uci")


def test_a_tournament_bot_with_protocol_stdio_runs_through_the_adapter(tmp_path):
    (tmp_path / "bot.py").write_text("")
    path = tmp_path / "t.toml"
    path.write_text('game = "domineering"\n[[bots]]\nname = "a"\ncommand = "random"\n'
                    '[[bots]]\nname = "b"\ncommand = "python3 bot.py"\nprotocol = "stdio"\n')
    tour = runner.load(path)
    assert tour.bots[1].argv[1:3] == ("-m", "arena.match.stdio")
    assert tour.bots[1].argv[-1] == str(tmp_path / "bot.py")
    assert tour.fingerprint()["bots"][1]["protocol"] == "stdio"
    assert "protocol" not in tour.fingerprint()["bots"][0]  # unchanged for existing tournaments
    path.write_text(path.read_text().replace('"stdio"', '"morse"'))
    with pytest.raises(runner.TournamentError, match=r"bots\[2\]\.protocol: must be one of 'v1', 'stdio'"):
        runner.load(path)


# --- the adapter under the referee ---

def test_a_stdio_bot_plays_whole_games_and_its_info_and_stderr_are_recorded():
    records = play(stdio_bot("first"), games=2)
    assert [r.forfeit for r in records] == [None, None]
    seat = records[0].players.index("stdio-first")
    mine = [m for m in records[0].moves if m.seat == seat]
    assert mine and mine[0].info["depth"] == 1 and mine[0].info["comment"].startswith("first of")
    assert "stdio-bot first: first turn" in records[0].logs[str(seat)]


def test_santorini_moves_with_spaces_cross_the_text_protocol():
    records = play(stdio_bot("first"), game="santorini", games=2)
    assert [r.forfeit for r in records] == [None, None]
    assert all(r.winner is not None for r in records)


@pytest.mark.parametrize("mode, args, reason, detail", [
    ("garbage", (), Forfeit.MALFORMED_MESSAGE, "the bot printed 'I think the best move is"),
    ("illegal", (), Forfeit.ILLEGAL_MOVE, "zz99"),
    ("late", (1.0,), Forfeit.TIMEOUT, "no move for ply"),
    ("exit", (3,), Forfeit.CRASHED, "exited with code 3"),
])
def test_a_misbehaving_stdio_bot_is_forfeited_with_the_right_reason_and_its_stderr_kept(mode, args, reason,
                                                                                         detail):
    record = play(stdio_bot(mode, *args), games=1)[0]
    assert record.forfeit is not None
    assert (record.forfeit["seat"], record.forfeit["reason"]) == (0, reason)
    assert detail in record.forfeit["detail"]
    assert "message type" not in record.forfeit["detail"]  # what the bot did, not how the adapter said it
    assert f"stdio-bot {mode}: first turn" in record.logs["0"]


def test_a_bot_that_cannot_start_is_crashed_with_the_reason_in_its_log():
    spec = BotSpec("nothing", (sys.executable, "-m", "arena.match.stdio", "/nonexistent/bot"))
    record = play(spec, games=1)[0]
    assert record.forfeit["seat"] == 0 and record.forfeit["reason"] == Forfeit.CRASHED
    assert "arena stdio: cannot start '/nonexistent/bot'" in record.logs["0"]  # printed before hello


# --- stdio:COMMAND on arena's command lines ---

arena = run_arena


def test_match_and_watch_take_stdio_commands(tmp_path):
    shutil.copy(STDIO_BOT, tmp_path / "mine.py")
    bot = f"stdio:{sys.executable} mine.py first"  # a relative path, made absolute as for any bot
    match = arena("match", "domineering", bot, "random", "--games", "2", "--time", "0.5", "-p", "rows=4",
                  "-p", "cols=4", "--out", "out", cwd=tmp_path)
    assert match.returncode == 0, match.stderr
    assert "forfeit" not in match.stdout and match.stdout.splitlines()[-1].startswith("score: mine ")
    watch = arena("watch", "domineering", bot, "random", "--time", "0.5", "-p", "rows=4", "-p", "cols=4",
                  "--out", "out", cwd=tmp_path)
    assert watch.returncode == 0, watch.stderr
    assert "comment: first of" in watch.stdout  # the stdio bot's info, shown move by move


def test_submit_writes_protocol_stdio_into_the_tournament_file(tmp_path):
    shutil.copy(STDIO_BOT, tmp_path / "mine.py")
    path = tmp_path / "t.toml"
    path.write_text('game = "domineering"\ntime = 0.5\n[params]\nrows = 4\ncols = 4\n'
                    '[[bots]]\nname = "a"\ncommand = "random"\n[[bots]]\nname = "b"\ncommand = "random"\n')
    done = arena("submit", "t.toml", "mine", f"stdio:{sys.executable} mine.py first", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert 'protocol = "stdio"' in path.read_text()
    bots = runner.load(path).bots
    assert bots[-1].protocol == "stdio"
    assert bots[-1].argv == (sys.executable, "-m", "arena.match.stdio",
                             sys.executable, str(tmp_path / "mine.py"), "first")
    garbage = arena("submit", "t.toml", "noisy", f"stdio:{sys.executable} mine.py garbage", cwd=tmp_path)
    assert garbage.returncode == 2 and "malformed_message" in garbage.stderr
