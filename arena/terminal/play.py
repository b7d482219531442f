"""A person at the terminal as a player: a protocol client in the `arena play` process itself.

The referee (`run_match`) runs in a background thread and hands each external seat its endpoint
and token; the main thread connects a DEALER for each person, shows every move with the board, and
asks the person for a move when the referee sends `turn`. `?` lists the legal moves, a wrong or
illegal move is refused with the reason and asked again, `quit`, `resign` or end of input resigns.
"""
from __future__ import annotations

import os
import queue
import select
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TextIO

import rules
from arena.match.movefile import resolve_move
from arena.match.protocol import (
    BYE,
    GAME_OVER,
    HELLO,
    MOVE,
    NEW_GAME,
    PROTOCOL_VERSION,
    RESIGN,
    TURN,
    BotClient,
)
from arena.match.records import GameRecord
from arena.match.referee import run_match
from arena.match.spec import MatchSpec
from arena.terminal import screen

POLL_S = 0.05
"""How often the main thread looks at the referee's events and the people's sockets (seconds)."""
JOIN_S = 15.0
"""How long to wait for the referee thread to finish after the person left (seconds)."""
RESIGN_WORDS = ("quit", "resign", "exit")
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


class _Person:
    def __init__(self, name: str, endpoint: str, token: str) -> None:
        self.name = name
        self.client = BotClient(endpoint)
        self.client.send({"type": HELLO, "token": token, "name": name, "protocol": PROTOCOL_VERSION})
        self.seat = 0
        self.game: rules.Game | None = None


class TerminalPlay:
    """One `arena play` session: the referee in a thread, the people at this terminal."""

    def __init__(self, spec: MatchSpec, on_game: Callable[[GameRecord], None] | None = None,
                 out: TextIO = sys.stdout, fd: int = 0) -> None:
        self.spec = spec
        self.on_game = on_game
        self.out = out
        self.reader = LineReader(fd)
        self.events: queue.Queue = queue.Queue()
        self.people: dict[str, _Person] = {}
        self.here = True
        self.records: list[GameRecord] = []
        self.error: BaseException | None = None
        self.finished = False
        self.pending: tuple[_Person, dict[str, Any]] | None = None
        """The turn the person is answering, resigned if they interrupt."""
        self.game = rules.load(spec.game, **spec.params)

    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    # --- the referee's side (called in its thread) ---
    def _on_external(self, name: str, endpoint: str, token: str) -> Callable[[], str | None]:
        self.events.put(("connect", name, endpoint, token))
        return lambda: None if self.here else "the person left"

    def _on_move(self, record: GameRecord, move: Any, state: rules.State) -> None:
        self.events.put(("move", record, move, state))

    def _on_game(self, record: GameRecord) -> None:
        if self.on_game is not None:
            self.on_game(record)
        self.events.put(("game", record))

    def _referee(self) -> None:
        try:
            self.records = run_match(self.spec, on_game=self._on_game, on_move=self._on_move,
                                     on_external=self._on_external)
        except BaseException as exc:  # shown by the main thread
            self.error = exc
        finally:
            self.events.put(("done",))

    # --- the main thread ---
    def run(self) -> list[GameRecord]:
        """Play the match; returns the records. KeyboardInterrupt resigns and is raised again."""
        thread = threading.Thread(target=self._referee, name="arena-referee", daemon=True)
        thread.start()
        try:
            self._show_start()
            while not self.finished:
                self._drain_events()
                self._poll_people()
        except KeyboardInterrupt:
            self.say("\ninterrupted: resigning")
            if self.pending is not None:
                self._resign(*self.pending)
            self.here = False
            thread.join(JOIN_S)
            self._drain_events()
            raise
        finally:
            self.here = False
            thread.join(JOIN_S)
            for person in self.people.values():
                person.client.close()
        if self.error is not None:
            raise self.error
        return self.records

    def _show_start(self) -> None:
        state = self.game.replay(self.spec.start_moves)
        last = self.spec.start_moves[-1] if self.spec.start_moves else None
        if self.spec.start_moves:
            self.say(f"starting after {len(self.spec.start_moves)} moves: {' '.join(self.spec.start_moves)}")
        self.say(HELP)
        self.say()
        self.say(state.render(highlight=last))
        self.say()

    def _drain_events(self) -> None:
        while True:
            try:
                event = self.events.get_nowait()
            except queue.Empty:
                return
            kind = event[0]
            if kind == "connect":
                _, name, endpoint, token = event
                self.people[name] = _Person(name, endpoint, token)
            elif kind == "move":
                _, record, move, state = event
                self.say(screen.move_screen(record, move, state))
            elif kind == "game":
                record = event[1]
                self.say(f"game over: {screen.result_text(record)}")
            elif kind == "done":
                self.finished = True

    def _poll_people(self) -> None:
        if not self.people:
            time.sleep(POLL_S)
            return
        for person in list(self.people.values()):
            message = person.client.receive(POLL_S / len(self.people))
            if message is not None:
                self._drain_events()  # moves the referee reported before this message
                self._handle(person, message)

    def _handle(self, person: _Person, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind == NEW_GAME:
            person.seat = message["seat"]
        elif kind == TURN:
            self.pending = (person, message)
            self._turn(person, message)
            self.pending = None
        elif kind in (GAME_OVER, BYE):
            pass

    def _turn(self, person: _Person, message: dict[str, Any]) -> None:
        state = self.game.state_from_wire(message["state"])
        left = float(message["time_left_s"])
        clock = "" if left == float("inf") else f", {left:.1f} s left"
        prompt = f"{person.name} (seat {person.seat}{clock})> "
        while True:
            self.out.write(prompt)
            self.out.flush()
            try:
                line = self._read_line(person)
            except EOFError:
                self.say()
                line = "quit"
            if line is None:  # the game ended while the person was thinking (their clock ran out)
                return
            text = line.strip()
            if text.lower() in RESIGN_WORDS:
                self._resign(person, message)
                return
            if not text:
                continue
            if text == "?":
                self.say(screen.legal_list(state.legal_moves()))
                continue
            if text.lower() in ("board", "b"):
                self.say(state.render())
                continue
            if text.lower() in ("help", "h"):
                self.say(HELP)
                continue
            try:
                move = resolve_move(state, text)
            except ValueError as exc:
                self.say(f"refused: {exc}")
                continue
            person.client.send({"type": MOVE, "game_id": message["game_id"], "ply": message["ply"],
                                "move": move})
            return

    def _resign(self, person: _Person, turn: dict[str, Any]) -> None:
        person.client.send({"type": RESIGN, "game_id": turn["game_id"], "ply": turn["ply"]})

    def _read_line(self, person: _Person) -> str | None:
        """The person's next line; None if the referee ended the game meanwhile."""
        while True:
            line = self.reader.readline(POLL_S)
            if line is not None:
                return line
            message = person.client.receive(0)
            if not self.events.empty() or message is not None and message["type"] in (GAME_OVER, BYE):
                self.say()
                self._drain_events()
                return None
