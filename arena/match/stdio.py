"""The stdio adapter: runs a bot that speaks the text protocol on its stdin/stdout, and speaks
protocol v1 to the referee on its behalf (docs/PROTOCOL.md, "Bots over stdin/stdout").

    python -m arena.match.stdio COMMAND...

The referee starts this module like any bot (same environment, working directory, limits and log
file); the module starts COMMAND as its child with pipes for stdin and stdout and lets the child's
stderr go to the same log, so the referee, its clocks and records do not change. Each referee
message becomes one line for the bot; each line the bot prints becomes one message for the
referee. What the bot does wrong is left for the referee to judge:
- a `move` line with a word that is no move: sent as that move (the referee: `illegal_move`);
- any other line: sent as a message the referee cannot read (`malformed_message`, the detail
  quoting the line);
- no answer in time: nothing is sent (`timeout`); a late answer goes out for the turn it answers,
  which the referee drops;
- the bot exits: the adapter exits with the bot's code (`crashed`).
The adapter's own hop (a pipe each way) is inside the bot's clock; benchmarks/stdio_overhead.py
measures it.

Extensions, each opt-in with a word `--arena-options=OPTION,...` anywhere after the program in the
bot's command (the adapter removes it before starting the bot; without it the lines are today's):
`position` (every `turn` line carries the position as one word, `position_word`), `legal` (the
`legal` request of protocol v1 as a line, answered by `legal_moves MOVE...`), `fd3` (the bot
prints its lines on file descriptor 3; its stdout goes to the log) and `ready` (the adapter says
hello only once the bot has printed `ready`, so its warm-up is on no move's clock).
"""
from __future__ import annotations

import json
import math
import os
import select
import signal
import subprocess
import sys
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from arena.cell.launcher import STDIO_OPTIONS, STDIO_OPTIONS_WORD
from arena.match.protocol import (
    BYE,
    ENDPOINT_ENV,
    GAME_OVER,
    HELLO,
    LEGAL,
    LEGAL_MOVES,
    MOVE,
    NEW_GAME,
    PROTOCOL_VERSION,
    RESIGN,
    STDIO_BAD_LINE,
    TOKEN_ENV,
    TURN,
    BotClient,
)

MAX_LINE_BYTES = 256 * 1024
"""A longer line from the bot is a malformed message (bytes)."""

BYE_GRACE_S = 0.3
"""After `bye` the bot has this long to exit before the adapter leaves (the referee kills the
whole process group 0.5 s after `bye`)."""

SPACE_IN_MOVE = ","
"""A move is one word on a line: its spaces (Santorini: `C3 B3 A3`) are written as commas."""

_INFO_KEYS = ("depth", "score", "nodes", "pv", "comment")

OPTIONS_WORD = STDIO_OPTIONS_WORD
"""A word of the bot's command starting with this names the extensions it speaks (comma-separated);
the adapter takes it out of the command (`stdio+OPTS:COMMAND` puts it there: arena.cell.launcher)."""
OPTION_NAMES = STDIO_OPTIONS
PROTOCOL_FD = 3
"""With `fd3`, the bot prints its lines on this file descriptor (it still reads them on stdin)."""
READY = "ready"
MAX_EARLY_NOTES = 5
"""Lines printed before `ready` that the log notes (the rest are ignored silently)."""
LEGAL_ERROR = "legal_error"
"""The bot's line for a `legal` request it cannot answer: `legal_error WHY...`."""
POSITION_SKIPPED = ("game", "params", "outcome")
"""Wire fields the position word leaves out: `new_game` gave the first two, and a position still to
be played has no outcome."""


@dataclass(frozen=True)
class Options:
    """The text-protocol extensions a bot asked for with `--arena-options=` (all off: today's lines)."""

    position: bool = False
    legal: bool = False
    fd3: bool = False
    ready: bool = False


def split_options(command: Sequence[str]) -> tuple[Options, list[str]]:
    """The extensions named by `--arena-options=` words of `command` (after its program), and the
    command without them; ValueError naming an unknown option."""
    chosen: set[str] = set()
    kept = list(command[:1])
    for word in command[1:]:
        if not word.startswith(OPTIONS_WORD):
            kept.append(word)
            continue
        for name in filter(None, word[len(OPTIONS_WORD):].split(",")):
            if name not in OPTION_NAMES:
                raise ValueError(f"unknown option {name!r} in {word!r} (known: {', '.join(OPTION_NAMES)})")
            chosen.add(name)
    return Options(**{name: True for name in chosen}), kept


class BadLine(ValueError):
    """A line from the bot that is neither `move ...` nor `resign`; the message quotes it."""


# --- referee message -> line ---

def move_words(moves: list[str]) -> str:
    """Moves as words separated by spaces (two C-level replaces, not a call a move: every turn)."""
    return "\0".join(moves).replace(" ", SPACE_IN_MOVE).replace("\0", " ")


def _value_word(value: Any) -> str:
    if value is True or value is False:
        return "true" if value else "false"
    if value is None:
        return "none"
    return "_".join(str(value).split()) or "_"


def clock_word(time_map: dict[str, Any]) -> str:
    """The clock as a record writes it: `3` (seconds per move) or `60+1` (base + increment)."""
    if time_map.get("control") == "increment":
        return f"{float(time_map.get('base_s', 0)):g}+{float(time_map.get('increment_s', 0)):g}"
    return f"{float(time_map.get('per_move_s', 0)):g}"


def seconds_word(seconds: float) -> str:
    """Seconds with millisecond precision; `inf` for no limit."""
    return "inf" if math.isinf(seconds) else f"{seconds:.3f}"


def _position_value(value: Any) -> str:
    if isinstance(value, list):
        inner = "/" if any(isinstance(item, list) for item in value) else ","
        return inner.join(_position_value(item) for item in value)
    if value is None:
        return ""
    if isinstance(value, dict):  # no game has one beyond those left out: kept readable all the same
        return json.dumps(value, separators=(",", ":"), sort_keys=True).replace(";", "_")
    return _value_word(value).replace(";", "_")


def position_word(wire: dict[str, Any]) -> str:
    """A position (a game's `to_wire()` dict) as one word: `key=value` for each field but `game`,
    `params` and `outcome`, in the wire's order, joined by `;`; a list's items joined by `,`, a list
    of lists' by `/` (its lists' by `,`); null and an empty list are empty, booleans `true`/`false`
    (docs/games.md, "Position word"). E.g. `seat=0;ply=2;board=X...,X...,.OO.`."""
    return ";".join(f"{key}={_position_value(value)}" for key, value in wire.items()
                    if key not in POSITION_SKIPPED)


def to_line(message: dict[str, Any], options: Options = Options()) -> str | None:
    """The text-protocol line for a referee message (without the newline); None for a message a
    bot does not get (a `legal` request unless the bot speaks `legal`)."""
    kind = message["type"]
    if kind == NEW_GAME:
        params = " ".join(f"{key}={_value_word(value)}" for key, value in sorted(message["params"].items()))
        words = [NEW_GAME, message["game"], str(message["seat"]), clock_word(message["time"]),
                 str(message["seed"])]
        return " ".join(words) + (f" {params}" if params else "")
    if kind == TURN:
        moves, legal = move_words(message["moves"]), move_words(message["legal"])
        position = f" position {position_word(message['state'])}" if options.position else ""
        return (f"{TURN} {message['ply']} {seconds_word(float(message['time_left_s']))}{position} moves"
                f"{' ' if moves else ''}{moves} legal {legal}")
    if kind == LEGAL:
        return f"{LEGAL} {position_word(message['position'])}" if options.legal else None
    if kind == GAME_OVER:
        winner = "draw" if message["winner"] is None else str(message["winner"])
        return f"{GAME_OVER} {winner} {' '.join(message['reason'].split())}".rstrip()
    if kind == BYE:
        return BYE
    return None


# --- line -> bot message ---

def _number(word: str) -> int | float | str:
    for kind in (int, float):
        try:
            value = kind(word)
        except ValueError:
            continue
        return value if not (isinstance(value, float) and not math.isfinite(value)) else word
    return word


def parse_info(words: list[str]) -> dict[str, Any]:
    """The info after a move: `depth N`, `score X`, `nodes N`, `pv MOVE...` (up to the next key),
    `comment TEXT...` (the rest of the line), any other `KEY VALUE` as a number or a word."""
    info: dict[str, Any] = {}
    i = 0
    while i < len(words):
        key = words[i]
        if key == "comment":
            info["comment"] = " ".join(words[i + 1:])
            break
        if key == "pv":
            j = i + 1
            while j < len(words) and words[j] not in _INFO_KEYS:
                j += 1
            info["pv"] = [word.replace(SPACE_IN_MOVE, " ") for word in words[i + 1:j]]
            i = j
            continue
        if i + 1 < len(words):
            info[key] = _number(words[i + 1])
        i += 2
    return info


def parse_line(raw: bytes, options: Options = Options()) -> tuple[str, Any, dict[str, Any]] | None:
    """What a line from the bot says: (`"move"`, move, info) or (`"resign"`, None, {}); with the
    `legal` option also (`"legal_moves"`, moves, {}) and (`"legal_error"`, why, {}), with `ready`
    (`"ready"`, None, {}); None for a blank line; BadLine for anything else."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BadLine(f"a line that is not UTF-8: {raw[:60]!r}") from None
    words = line.split()
    if not words:
        return None
    if words[0] == MOVE and len(words) >= 2:
        return MOVE, words[1].replace(SPACE_IN_MOVE, " "), parse_info(words[2:])
    if words == [RESIGN]:
        return RESIGN, None, {}
    if options.legal and words[0] == LEGAL_MOVES:
        return LEGAL_MOVES, [word.replace(SPACE_IN_MOVE, " ") for word in words[1:]], {}
    if options.legal and words[0] == LEGAL_ERROR:
        return LEGAL_ERROR, " ".join(words[1:]) or "no reason given", {}
    if options.ready and words == [READY]:
        return READY, None, {}
    shown = line.strip()
    shown = shown if len(shown) <= 100 else shown[:100] + "..."
    where = f"on fd {PROTOCOL_FD}" if options.fd3 else "on stdout"
    raise BadLine(f"the bot printed {shown!r} {where}, which is not 'move MOVE' "
                  "(debug output goes to stderr)")


# --- the adapter ---

def _note(text: str) -> None:
    """A line in the bot's log (our stderr is the log file), so it is in the game record."""
    print(f"arena stdio: {text}", file=sys.stderr, flush=True)


class Adapter:
    """One bot child process and the referee connection: lines one way, messages the other."""

    def __init__(self, client: BotClient, child: subprocess.Popen, options: Options = Options(),
                 lines_fd: int | None = None) -> None:
        self.client = client
        self.child = child
        self.options = options
        self.turns: deque[tuple[str, int]] = deque()
        """Turns written to the bot and not answered yet (game_id, ply), oldest first."""
        self.requests: deque[int] = deque()
        """`legal` requests written to the bot and not answered yet, oldest first."""
        self.game_id = ""
        self._buffer = b""
        self._out = child.stdout.fileno() if lines_fd is None else lines_fd  # type: ignore[union-attr]
        self._in = child.stdin.fileno()  # type: ignore[union-attr]

    def start(self, name: str, token: str) -> int | None:
        """Say hello (with `ready`: once the bot has printed `ready`); None when all is well, else
        the exit code for this process (the bot left before it was ready)."""
        waiting, noted = self.options.ready, 0
        while waiting:
            select.select([self._out], [], [])  # the referee's hello limit bounds this wait
            data = os.read(self._out, 65536)
            if not data:
                return self._bot_gone()
            *lines, self._buffer = (self._buffer + data).split(b"\n")
            for i, raw in enumerate(lines):
                if raw.split() == [READY.encode()]:
                    self._buffer = b"\n".join([*lines[i + 1:], self._buffer])
                    waiting = False
                    break
                if raw.strip() and noted < MAX_EARLY_NOTES:  # no game yet: nothing to forfeit
                    noted += 1
                    _note(f"before 'ready' the bot printed {raw[:100]!r}: ignored")
            if waiting and len(self._buffer) > MAX_LINE_BYTES:
                self._buffer = b""
        self.client.send({"type": HELLO, "token": token, "name": name, "protocol": PROTOCOL_VERSION})
        if self._buffer:
            self._on_output(b"")
        return None

    def run(self) -> int:
        """Relay until `bye` or the bot's exit; the exit code for this process."""
        while True:
            message_ready, line_ready = self.client.wait(None, self._out)
            if line_ready:
                data = os.read(self._out, 65536)
                if not data:
                    return self._bot_gone()
                self._on_output(data)
            while message_ready:
                message = self.client.receive_ready()
                if message is None:
                    break
                if message["type"] == BYE:
                    return self._bye()
                self._on_message(message)

    def _write(self, line: str) -> None:
        data = (line + "\n").encode("utf-8")
        try:
            while data:
                data = data[os.write(self._in, data):]
        except OSError:
            pass  # the bot is gone: its stdout ends next, and run() reports it

    def _on_message(self, message: dict[str, Any]) -> None:
        if message["type"] == NEW_GAME:
            self.game_id = message["game_id"]
        elif message["type"] == TURN:
            self.turns.append((message["game_id"], message["ply"]))
        line = to_line(message, self.options)
        if line is None:
            return
        if message["type"] == LEGAL:
            self.requests.append(message["request"])
        self._write(line)

    def _on_output(self, data: bytes) -> None:
        self._buffer += data
        *lines, self._buffer = self._buffer.split(b"\n")
        for raw in lines:
            self._on_line(raw)
        if len(self._buffer) > MAX_LINE_BYTES:
            self._buffer = b""
            self._malformed(f"a line longer than {MAX_LINE_BYTES} bytes")

    def _on_line(self, raw: bytes) -> None:
        try:
            parsed = parse_line(raw, self.options)
        except BadLine as exc:
            self._malformed(str(exc))
            return
        if parsed is None:
            return
        kind, value, info = parsed
        if kind == READY:
            _note("a second 'ready' line: dropped")
            return
        if kind in (LEGAL_MOVES, LEGAL_ERROR):
            if not self.requests:
                _note(f"a {kind!r} line when no `legal` request was asked: dropped")
                return
            answer = {"moves": value} if kind == LEGAL_MOVES else {"error": value}
            self.client.send({"type": LEGAL_MOVES, "request": self.requests.popleft(), **answer})
            return
        if not self.turns:
            _note(f"a {kind!r} line when no turn was asked: dropped")
            return
        game_id, ply = self.turns.popleft()
        message: dict[str, Any] = {"type": kind, "game_id": game_id, "ply": ply}
        if kind == MOVE:
            message["move"] = value
            if info:
                message["info"] = info
        self.client.send(message)

    def _malformed(self, why: str) -> None:
        """Send the referee a message it refuses, naming `why`: a malformed-message forfeit."""
        _note(why)
        self.turns.clear()
        self.client.send({"type": STDIO_BAD_LINE + why, "game_id": self.game_id})

    def _bot_gone(self) -> int:
        try:
            code = self.child.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            _note(f"the bot closed its {'fd 3' if self.options.fd3 else 'stdout'}")
            return 1
        if code < 0:
            _note(f"the bot was killed by {signal.Signals(-code).name}")
            return 128 - code
        _note(f"the bot exited with code {code}")
        return code if code else 1  # a bot leaving mid-match has crashed, whatever its code

    def _bye(self) -> int:
        self._write(BYE)
        try:
            self.child.stdin.close()  # type: ignore[union-attr]
        except (BrokenPipeError, OSError):
            pass
        deadline = time.monotonic() + BYE_GRACE_S
        while self.child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        return 0


def _start(command: list[str], options: Options) -> tuple[subprocess.Popen, int | None]:
    """Start the bot: stdin a pipe from us; its lines on a pipe to us, its stdout (with `fd3`: a
    pipe on its fd 3, and its stdout to our stderr, the log). The child and our end of fd 3."""
    if not options.fd3:
        return subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0), None
    ours, theirs = os.pipe()

    def to_fd3() -> None:  # in the child, before exec: its end of the pipe becomes fd 3
        if theirs != PROTOCOL_FD:
            os.dup2(theirs, PROTOCOL_FD)
        os.set_inheritable(PROTOCOL_FD, True)

    try:
        child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=sys.stderr.fileno(), bufsize=0,
                                 pass_fds=(PROTOCOL_FD,), preexec_fn=to_fd3)
    except BaseException:
        os.close(ours)
        raise
    finally:
        os.close(theirs)
    return child, ours


def main(argv: list[str] | None = None) -> int:
    """`python -m arena.match.stdio COMMAND...`: run COMMAND as a stdio bot for the referee."""
    command = list(sys.argv[1:] if argv is None else argv)
    if not command:
        print("usage: python -m arena.match.stdio COMMAND... [--arena-options=position,legal,fd3,ready]",
              file=sys.stderr)
        return 2
    try:
        options, command = split_options(command)
    except ValueError as exc:
        _note(f"bad command {' '.join(command)!r}: {exc}")
        return 2
    endpoint, token = os.environ.get(ENDPOINT_ENV), os.environ.get(TOKEN_ENV)
    if not endpoint or token is None:
        print(f"arena stdio: {ENDPOINT_ENV} and {TOKEN_ENV} must be set (the referee starts this)",
              file=sys.stderr)
        return 2
    try:  # stderr is inherited: the bot's own messages go to the log with ours
        child, lines_fd = _start(command, options)
    except OSError as exc:
        _note(f"cannot start {' '.join(command)!r}: {exc}")
        return 127
    name = os.path.basename(command[-1] if len(command) > 1 else command[0])
    with BotClient(endpoint) as client:
        adapter = Adapter(client, child, options, lines_fd)
        try:
            code = adapter.start(f"stdio {name}", token)
            return adapter.run() if code is None else code
        finally:
            if child.poll() is None:
                child.kill()
            child.wait()


if __name__ == "__main__":
    sys.exit(main())
