"""`arena play`, `watch` and `replay` driven in a pseudo-terminal as a person would, and the pieces
under them: external players in the referee, per-seat clocks, resigning, move files."""
from __future__ import annotations

import json
import math
import os
import re
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import rules
from arena.cell.launcher import resolve_command
from arena.match.clock import TimeControl
from arena.match.movefile import MoveFileError, format_moves, parse_moves, read_move_file, resolve_move
from arena.match.protocol import HELLO, MOVE, NEW_GAME, RESIGN, TURN, BotClient
from arena.match.records import GameRecord
from arena.match.referee import run_match
from arena.match.spec import BotSpec, MatchSpec

ROOT = Path(__file__).resolve().parents[1]
TINY = ["-p", "rows=3", "-p", "cols=3"]
PROMPT = re.compile(r"(\S+) \(seat (\d)[^)]*\)> $")
WAIT_S = 30.0


class Terminal:
    """`python -m arena ARGS` on a pseudo-terminal: type lines, read until a pattern shows up."""

    def __init__(self, *args: str, cwd: Path) -> None:
        self.master, slave = os.openpty()
        path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
        env = dict(os.environ, PYTHONPATH=path, COLUMNS="100")
        self.process = subprocess.Popen([sys.executable, "-m", "arena", *args], cwd=cwd, env=env,
                                        stdin=slave, stdout=slave, stderr=slave, close_fds=True,
                                        start_new_session=True)
        os.close(slave)
        self.screen = ""
        self.seen = 0
        """How much of `screen` earlier `expect` calls consumed."""

    def expect(self, pattern: str | re.Pattern, timeout_s: float = WAIT_S) -> re.Match:
        """Read until `pattern` matches the output after the last match; fail after `timeout_s`."""
        regex = re.compile(pattern) if isinstance(pattern, str) else pattern
        deadline = time.monotonic() + timeout_s
        while True:
            found = regex.search(self.screen, self.seen)
            if found:
                self.seen = found.end()
                return found
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"no {regex.pattern!r} within {timeout_s} s; the screen ends with:\n"
                                     + self.screen[-2000:])
            ready, _, _ = select.select([self.master], [], [], remaining)
            if ready:
                try:
                    data = os.read(self.master, 65536)
                except OSError:  # the program ended and closed the terminal
                    data = b""
                if not data:
                    raise AssertionError(f"the program ended before {regex.pattern!r}; its screen:\n"
                                         + self.screen[-2000:])
                self.screen += data.decode("utf-8", "replace").replace("\r\n", "\n")

    def type(self, line: str) -> None:
        os.write(self.master, line.encode() + b"\n")

    def eof(self) -> None:
        os.write(self.master, b"\x04")

    def wait(self, timeout_s: float = WAIT_S) -> int:
        """The exit code, reading the rest of the output meanwhile."""
        deadline = time.monotonic() + timeout_s
        while self.process.poll() is None and time.monotonic() < deadline:
            ready, _, _ = select.select([self.master], [], [], 0.1)
            if ready:
                try:
                    data = os.read(self.master, 65536)
                    self.screen += data.decode("utf-8", "replace").replace("\r\n", "\n")
                except OSError:
                    time.sleep(0.05)
        if self.process.poll() is None:
            self.close()
            raise AssertionError("the program did not end; its screen:\n" + self.screen[-2000:])
        return self.process.returncode

    def close(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, 9)
            self.process.wait(5)
        os.close(self.master)


@pytest.fixture
def terminal(tmp_path):
    opened: list[Terminal] = []

    def start(*args: str) -> Terminal:
        opened.append(Terminal(*args, cwd=tmp_path))
        return opened[-1]

    yield start
    for t in opened:
        t.close()


def legal_listing(term: Terminal) -> list[str]:
    """Type ? and read the listed legal moves."""
    term.type("?")
    found = term.expect(r"(\d+) legal moves?: ([\s\S]*?)\n(?=\S)")
    moves = found[2].split()
    assert len(moves) == int(found[1])
    return moves


def the_record(tmp_path: Path, mode: str = "play") -> tuple[GameRecord, Path]:
    [directory] = (tmp_path / "results" / mode).iterdir()
    return GameRecord.from_json((directory / "g0.json").read_text()), directory


def test_a_whole_game_typed_move_by_move_against_the_random_bot(terminal, tmp_path):
    term = terminal("play", "domineering", "--bot", "random", *TINY)
    term.expect("human unlimited, random 3 s a move")
    typed = []
    while True:
        found = term.expect(re.compile(r"human \(seat 0\)> $|game over: (.*)\n"))
        if found[1] is not None:
            result = found[1]
            break
        move = legal_listing(term)[0]
        term.expect(PROMPT)
        term.type(move)
        typed.append(move)
        term.expect(rf"ply \d+: human \(seat 0\) played {move} in ")
    assert term.wait() == 0
    record, directory = the_record(tmp_path)
    assert record.players == ["human", "random"] and record.forfeit is None
    assert [m.move for m in record.moves if m.seat == 0] == typed
    final = rules.load("domineering", rows=3, cols=3).start()
    for move in record.move_list():
        final = final.play(move)
    assert final.outcome is not None and (record.winner, record.reason) == (final.outcome.winner,
                                                                           final.outcome.reason)
    assert result.startswith(f"{record.players[record.winner]} wins")
    assert parse_moves((directory / "g0.txt").read_text(), final.game) == tuple(record.move_list())
    # every bot move was shown with the board, the move marked
    bot_moves = [m.move for m in record.moves if m.seat == 1]
    for move in bot_moves:
        assert f"random (seat 1) played {move}" in term.screen
    assert term.screen.count("[O]") >= 2 * len(bot_moves)


def test_a_wrong_move_is_refused_with_the_reason_and_asked_again(terminal, tmp_path):
    term = terminal("play", "domineering", "--bot", "random", "--seat", "1", *TINY)
    term.expect(r"random \(seat 0\) played (\w+)")
    term.expect(r"human \(seat 1\)> $")
    term.type("banana")
    term.expect(r"refused: 'banana' is not a domineering move.*\nhuman \(seat 1\)> $")
    taken = re.search(r"random \(seat 0\) played (\d)([ABC])", term.screen)
    overlapping = taken[1] + ("B" if taken[2] == "C" else "A")  # a horizontal domino on a covered cell
    term.type(overlapping)
    term.expect(rf"refused: '{overlapping}' is illegal .*already covered.*\nhuman \(seat 1\)> $")
    term.type("quit")
    term.expect(r"game over: random wins, human resigned")
    assert term.wait() == 0
    record, _ = the_record(tmp_path)
    assert record.forfeit == {"seat": 1, "reason": "resigned", "detail": "resigned at ply 1"}
    assert record.winner == 0 and [m.seat for m in record.moves] == [0]


def test_question_mark_lists_exactly_the_legal_moves(terminal):
    term = terminal("play", "morris", "--bot", "random")
    term.expect(r"human \(seat 0\)> $")
    assert legal_listing(term) == rules.load("morris").start().legal_moves()
    term.eof()
    term.expect("game over: random wins, human resigned")
    assert term.wait() == 0


def test_a_game_started_from_a_move_file(terminal, tmp_path):
    (tmp_path / "start.txt").write_text("// two moves in\n1a\n  3B  // the reply\n")
    term = terminal("play", "domineering", "-p", "rows=4", "-p", "cols=4", "--from", "start.txt")
    term.expect("starting after 2 moves: 1A 3B")
    game = rules.load("domineering", rows=4, cols=4)
    assert legal_listing(term) == game.start().play("1A").play("3B").legal_moves()
    term.expect(r"human-1 \(seat 0\)> $")
    term.type("1c")
    term.expect(r"human-1 \(seat 0\) played 1C")
    term.expect(r"human-2 \(seat 1\)> $")  # two people at one terminal
    term.type("resign")
    term.expect("game over: human-1 wins, human-2 resigned")
    assert term.wait() == 0
    record, directory = the_record(tmp_path)
    assert record.start_moves == ["1A", "3B"] and [m.move for m in record.moves] == ["1C"]
    assert (directory / "g0.txt").read_text().splitlines()[-3:] == ["1A", "3B", "1C"]


def test_bad_input_is_one_line_and_exit_code_2(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for args, message in [
        (["play", "chess"], "unknown game 'chess'"),
        (["play", "domineering", "--bot", "nobot"], "'nobot'"),
        (["play", "domineering", "--time", "soon"], "bad time control 'soon'"),
        (["play", "domineering", "--time", "inf"], "bad time control 'inf': the seconds must be finite"),
        (["play", "domineering", "--bot", "random", "--bot-time", "nan"], "bad time control 'nan'"),
        (["watch", "domineering", "random", "random", "--time", "0"], "bad time control '0'"),
        (["watch", "domineering", "random", "random", "--time=-2"], "bad time control '-2'"),
        (["watch", "domineering", "random", "random", "--from", "none.txt"], "cannot read --from file"),
        (["replay", "none.json"], "cannot read record"),
    ]:
        result = subprocess.run([sys.executable, "-m", "arena", *args], cwd=tmp_path, env=env,
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        assert result.stderr.count("\n") == 1 and message in result.stderr


def test_watch_step_advances_by_enter_and_shows_the_bots_info(terminal, tmp_path):
    term = terminal("watch", "domineering", "alphabeta", "greedy", "-p", "rows=4", "-p", "cols=4",
                    "--step", "--time", "0.5")
    first = term.expect(r"ply 1: alphabeta \(seat 0\) played (\w+) in [\d.]+ s\n"
                        r"    depth \d+, score (-?\d+|(win|loss) in \d+ pl(y|ies)), nodes \d+\n    pv \1.*\n"
                        r"    candidates: .*\n")
    term.expect(r"Enter: next move, c: play to the end, q: quit> $")
    time.sleep(1.0)  # the person waits: no bot's clock runs meanwhile
    assert "ply 2:" not in term.screen
    term.type("")
    term.expect(r"ply 2: greedy \(seat 1\) played \w+ in [\d.]+ s\n    depth 1, score ")
    term.expect(r"quit> $")
    term.type("c")
    term.expect("game over: ")
    assert term.wait() == 0
    record, directory = the_record(tmp_path, "watch")
    assert record.forfeit is None and record.moves[0].move == first[1]
    assert record.moves[1].time_s < 0.5  # the waiting for Enter did not count
    assert parse_moves((directory / "g0.txt").read_text(), rules.load("domineering", rows=4, cols=4))


def test_replay_goes_forwards_and_backwards(terminal, tmp_path):
    game = rules.load("domineering", rows=3, cols=3)
    record = GameRecord("r-g0", "domineering", game.params, ["a", "b"], "1", start_moves=["1A"],
                        winner=1, reason="no legal move")
    from arena.match.records import MoveRecord

    record.moves = [MoveRecord(1, 1, "3A", 0.25, {"depth": 2, "score": 7, "pv": ["3A", "1C"]}),
                    MoveRecord(2, 0, "1C", 0.5, {})]
    (tmp_path / "g0.json").write_text(json.dumps(record.to_dict()))
    term = terminal("replay", "g0.json")
    term.expect(r"ply 0/3 .*\nthe start position")
    term.type("")
    term.expect(r"ply 1/3 .*\nply 1: start move 1A")
    term.type("n")
    term.expect(r"ply 2/3 .*\nply 2: b \(seat 1\) played 3A in 0.250 s\n    depth 2, score 7\n    pv 3A 1C\n")
    term.expect(r"\[O\] \[O\]")
    term.type("p")
    term.expect(r"ply 1/3 ")
    term.type("3")
    term.expect(r"ply 3/3 .*\n.*\n[\s\S]*end of the record: b wins \(no legal move\)")
    term.type("9")
    term.expect(r"no ply 9: the record has plies 0-3")
    term.type("q")
    assert term.wait() == 0


# --- the pieces under the modes ---
def test_an_external_player_under_the_referee_with_its_own_clock_can_resign():
    """The person's seat: no process, its own (unlimited) clock, a resign message."""
    unlimited = TimeControl(per_move=math.inf)
    person = BotSpec("person", (), external=True, time_control=unlimited)
    spec = MatchSpec("x", "domineering", (person, BotSpec("random", resolve_command("random"))),
                     TimeControl(per_move=0.5), game_numbers=(0, 1), params={"rows": 4, "cols": 4})
    seen: dict[str, object] = {}

    def person_plays(endpoint: str, token: str) -> None:
        with BotClient(endpoint) as client:
            client.send({"type": HELLO, "token": token, "name": "person", "protocol": 1})
            turns = 0
            while (message := client.receive(20)) is not None and message["type"] != "bye":
                if message["type"] == NEW_GAME:
                    seen.setdefault("time", message["time"])
                if message["type"] == TURN:
                    turns += 1
                    if turns == 1:
                        time.sleep(0.8)  # longer than the bot's limit: the person's clock is unlimited
                        client.send({"type": MOVE, "game_id": message["game_id"], "ply": message["ply"],
                                     "move": message["legal"][0]})
                    else:
                        client.send({"type": RESIGN, "game_id": message["game_id"], "ply": message["ply"]})

    threads = []

    def on_external(name: str, endpoint: str, token: str):
        threads.append(threading.Thread(target=person_plays, args=(endpoint, token), daemon=True))
        threads[-1].start()
        return None

    records = run_match(spec, on_external=on_external)
    assert len(threads) == 1  # one connection for the whole match
    assert seen["time"]["per_move_s"] == math.inf
    first, second = records
    assert first.moves[0].time_s > 0.5 and first.time_control == "inf / 0.5"
    assert {r.forfeit["reason"] for r in records} == {"resigned"}
    assert [r.winner for r in records] == [1, 0] and second.time_control == "0.5 / inf"
    with pytest.raises(ValueError, match="on_external"):
        run_match(spec)


def test_move_files_accept_the_human_forms_and_santorini_placements_in_any_order(tmp_path):
    santorini = rules.load("santorini")
    assert parse_moves("C3 B2 // seat 0\nA1 E5\n", santorini) == ("B2 C3", "A1 E5")
    from rules.santorini import read_game_file

    moves = ["B2 C3", "A1 E5"]
    state = read_game_file(format_moves("santorini", moves))
    assert state == santorini.start().play("B2 C3").play("A1 E5")
    small = rules.load("domineering", rows=3, cols=3)
    assert resolve_move(small.start(), " 2,b ") == "2B"
    with pytest.raises(MoveFileError, match=r"f.txt, line 3: '1A': .*already covered"):
        parse_moves("1A\n\n1A\n", small, "f.txt")
    (tmp_path / "over.txt").write_text("1A\n2B\n3A\n")
    with pytest.raises(MoveFileError, match="already over|line 3"):
        read_move_file(tmp_path / "over.txt", small)


def test_the_persons_clock_runs_only_when_set_and_an_interrupt_resigns(terminal, tmp_path):
    term = terminal("play", "domineering", "--bot", "random", *TINY, "--time", "0.5")
    term.expect(r"human \(seat 0, 0.5 s left\)> $")
    term.expect(r"game over: random wins, human forfeits \(timeout: no move for ply 0 within 0.500 s")
    assert term.wait() == 0
    record, _ = the_record(tmp_path)
    assert record.forfeit["reason"] == "timeout" and record.time_control == "0.5 / 3"

    term = terminal("play", "domineering", "--bot", "random", *TINY, "--out", "other")
    term.expect(r"human \(seat 0\)> $")
    term.process.send_signal(signal.SIGINT)
    term.expect("interrupted: resigning\ngame over: random wins, human resigned")
    assert term.wait() == 130
    [directory] = (tmp_path / "other" / "play").iterdir()
    assert GameRecord.from_json((directory / "g0.json").read_text()).forfeit["reason"] == "resigned"


def test_arena_match_reads_from_files_with_the_same_reader_and_writes_move_files(tmp_path):
    (tmp_path / "start.txt").write_text("C3 B2  // the assignment writes placements in any order\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    args = ["match", "santorini", "random", "random", "-n", "1", "--time", "0.5", "--from", "start.txt", "-q"]
    result = subprocess.run([sys.executable, "-m", "arena", *args], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    [directory] = (tmp_path / "results" / "matches").iterdir()
    record = GameRecord.from_json((directory / "g0.json").read_text())
    assert record.start_moves == ["B2 C3"]
    from rules.santorini import read_game_file

    assert read_game_file((directory / "g0.txt").read_text()).outcome.winner == record.winner


HOSTILE_TEXT_BOT = '''
from bots.sdk import Bot

class Hostile(Bot):
    def choose(self, state, time_left):
        return state.legal_moves()[0], {
            "comment": "\\x1b[2J\\x1b[Hgame over: you lose\\u202e",
            "pv": ["\\x1b[31mred"],
            "\\x1b]0;title\\x07": "\\x9b" + "x" * 10,
        }

Hostile().run()
'''


def test_control_characters_from_a_bot_are_shown_escaped_in_watch_replay_and_match(terminal, tmp_path):
    """A bot's info and name cannot clear the screen or fake a line: every control character shows
    as an escape (\\x1b), in `arena watch`, `arena replay` and `arena match` alike."""
    script = "evil\x1b[2J.py"  # the name shown for the bot is the script's stem
    (tmp_path / script).write_text(HOSTILE_TEXT_BOT)
    command = f"{sys.executable} '{script}'"
    term = terminal("watch", "domineering", command, "random", *TINY, "--time", "1")
    term.expect("game over: ")
    assert term.wait() == 0
    for screen_text in (term.screen,):
        assert "\x1b" not in screen_text and "\x9b" not in screen_text and "\u202e" not in screen_text
    assert r"evil\x1b[2J (seat 0) played" in term.screen
    assert r"comment: \x1b[2J\x1b[Hgame over: you lose\u202e" in term.screen
    assert r"pv \x1b[31mred" in term.screen and r"\x1b]0;title\x07: \x9bxxx" in term.screen
    record, directory = the_record(tmp_path, "watch")
    assert record.moves[0].info["comment"].startswith("\x1b[2J")  # the record keeps what was sent

    term = terminal("replay", str(directory / "g0.json"))
    term.expect(r"ply 0/\d+ +evil\\x1b\[2J \(seat 0\) vs random")
    term.type("1")
    term.expect(r"comment: \\x1b\[2J\\x1b\[Hgame over: you lose\\u202e")
    term.type("q")
    assert term.wait() == 0
    assert "\x1b" not in term.screen

    env = dict(os.environ, PYTHONPATH=str(ROOT))
    result = subprocess.run([sys.executable, "-m", "arena", "match", "domineering", command, "random", *TINY,
                             "-n", "1", "--time", "1"], cwd=tmp_path, env=env, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stdout and r"evil\x1b[2J vs random" in result.stdout


def test_escape_controls_and_the_result_of_a_forfeit_detail():
    from arena.terminal.screen import escape_controls, result_text

    assert escape_controls("a\x1b[2Jb\x07\x7f\u2066") == r"a\x1b[2Jb\x07\x7f\u2066"
    assert escape_controls("line\nnext\r", keep_newlines=True) == "line\nnext\\x0d"
    assert escape_controls("é ü 日本 ♟") == "é ü 日本 ♟"  # printable text is left alone
    record = GameRecord("g", "domineering", {}, ["ann", "bob"], "1", winner=0, reason="forfeit",
                        forfeit={"seat": 1, "reason": "crashed", "detail": "Traceback\n\x1b[2Jboom"})
    assert result_text(record) == r"ann wins, bob forfeits (crashed: Traceback\x0a\x1b[2Jboom)"
    double = GameRecord("h", "domineering", {}, ["ann", "bob"], "1", reason="double_forfeit",
                        forfeit={"seat": None, "reason": "double_forfeit",
                                 "detail": "seat 0 no_hello: x; seat 1 crashed: y"})
    assert result_text(double) == ("no winner, both bots forfeit (double_forfeit: "
                                   "seat 0 no_hello: x; seat 1 crashed: y)")
    assert double.result() == "0-0" and double.points(0) == double.points(1) == 0


def test_watch_shows_a_proven_win_in_plies_not_the_bots_raw_score(terminal, tmp_path):
    """alphabeta solves 3x3 Domineering at once: `watch` says "win in N plies" (its info's `mate`),
    never the search's internal 999999... score."""
    term = terminal("watch", "domineering", "alphabeta", "random", "-p", "rows=3", "-p", "cols=3",
                    "--time", "1")
    term.expect("game over: ")
    assert term.wait() == 0
    assert re.search(r"ply 1: alphabeta .*\n    depth \d+, score win in \d+ pl(y|ies), nodes", term.screen), \
        term.screen
    assert "99999" not in term.screen
