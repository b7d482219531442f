"""A person's prompt at the terminal: lines read with a timeout, and one move asked for.

`MovePrompt.ask` shows the prompt and reads lines until the person types a move the rules accept
(it answers `?`, `board` and `help` itself, refuses a wrong or illegal move with the reason), types
`quit` (or the input ends), or the game ends while they think.
"""
from __future__ import annotations

import os
import select
from collections.abc import Callable
from typing import TextIO

import rules
from arena.match.movefile import resolve_move
from arena.terminal import screen

POLL_S = 0.05
"""How long one wait for a line lasts before the prompt checks whether the game went on (seconds)."""
RESIGN_WORDS = ("quit", "resign", "exit")
RESIGN = "resign"
"""What `MovePrompt.ask` returns when the person resigns."""
HELP = ("Type a move in the game's notation; ? lists the legal moves, 'board' shows the board again, "
        "'quit' (or end of input) resigns.")


class LineReader:
    """Lines from a file descriptor, waiting with a timeout (select, then os.read)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = b""
        self.ended = False

    def readline(self, timeout_s: float | None) -> str | None:
        """The next line without its newline, None after `timeout_s`; EOFError at the end of input."""
        while b"\n" not in self.buffer:
            if self.ended:
                if self.buffer:
                    line, self.buffer = self.buffer, b""
                    return line.decode("utf-8", "replace")
                raise EOFError
            ready, _, _ = select.select([self.fd], [], [], timeout_s)
            if not ready:
                return None
            data = os.read(self.fd, 4096)
            if not data:
                self.ended = True
            self.buffer += data
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode("utf-8", "replace").rstrip("\r")


class MovePrompt:
    """Asks the person at `reader` for moves, writing to `out`."""

    def __init__(self, reader: LineReader, out: TextIO) -> None:
        self.reader = reader
        self.out = out

    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def ask(self, prompt: str, state: rules.State, game_ended: Callable[[], bool]) -> str | None:
        """The legal move the person typed at `prompt`, RESIGN, or None when `game_ended()` turned
        true while they were thinking (their clock ran out)."""
        while True:
            self.out.write(prompt)
            self.out.flush()
            try:
                line = self._read_line(game_ended)
            except EOFError:
                self.say()
                line = "quit"
            if line is None:
                return None
            text = line.strip()
            if text.lower() in RESIGN_WORDS:
                return RESIGN
            if not text:
                continue
            if text == "?":
                self.say(screen.legal_list(state.legal_moves()))
            elif text.lower() in ("board", "b"):
                self.say(state.render())
            elif text.lower() in ("help", "h"):
                self.say(HELP)
            else:
                try:
                    return resolve_move(state, text)
                except ValueError as exc:
                    self.say(f"refused: {exc}")

    def _read_line(self, game_ended: Callable[[], bool]) -> str | None:
        """The person's next line; None if the game ended meanwhile."""
        while True:
            line = self.reader.readline(POLL_S)
            if line is not None:
                return line
            if game_ended():
                self.say()
                return None
