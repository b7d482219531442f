"""A person at the terminal as a player: a protocol client in the `arena play` process itself.

The referee runs in a background thread (`referee_thread.RefereeThread`) and hands each external
seat its endpoint and token; the main thread connects a DEALER for each person, draws every move
with the board, and asks the person for a move (`prompt.MovePrompt`) when the referee sends `turn`.
`?` lists the legal moves, a wrong or illegal move is refused with the reason and asked again,
`quit`, `resign` or end of input resigns.
"""
from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

import rules
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
from arena.match.spec import MatchSpec
from arena.terminal import prompt, screen
from arena.terminal.prompt import HELP, LineReader, MovePrompt
from arena.terminal.referee_thread import JOIN_S, RefereeThread

__all__ = ["HELP", "JOIN_S", "POLL_S", "LineReader", "TerminalPlay"]

POLL_S = prompt.POLL_S
"""How often the main thread looks at the referee's events and the people's sockets (seconds)."""


class _Person:
    """One person at this terminal: their connection to the referee and their seat."""

    def __init__(self, name: str, endpoint: str, token: str) -> None:
        self.name = name
        self.client = BotClient(endpoint)
        self.client.send({"type": HELLO, "token": token, "name": name, "protocol": PROTOCOL_VERSION})
        self.seat = 0


class TerminalPlay:
    """One `arena play` session: draws what the referee reports and hands each turn to the person
    whose seat it is."""

    def __init__(self, spec: MatchSpec, on_game: Callable[[GameRecord], None] | None = None,
                 out: TextIO = sys.stdout, fd: int = 0) -> None:
        self.spec = spec
        self.out = out
        self.referee = RefereeThread(spec, on_game)
        self.prompt = MovePrompt(LineReader(fd), out)
        self.people: dict[str, _Person] = {}
        self.finished = False
        self.pending: tuple[_Person, dict[str, Any]] | None = None
        """The turn the person is answering, resigned if they interrupt."""
        self.game = rules.load(spec.game, **spec.params)

    @property
    def records(self) -> list[GameRecord]:
        return self.referee.records

    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def run(self) -> list[GameRecord]:
        """Play the match; returns the records. KeyboardInterrupt resigns and is raised again."""
        self.referee.start()
        try:
            self._show_start()
            while not self.finished:
                self._drain_events()
                self._poll_people()
        except KeyboardInterrupt:
            self.say("\ninterrupted: resigning")
            if self.pending is not None:
                self._resign(*self.pending)
            self.referee.leave()
            self.referee.join(JOIN_S)
            self._drain_events()
            raise
        finally:
            self.referee.leave()
            self.referee.join(JOIN_S)
            for person in self.people.values():
                person.client.close()
        if self.referee.error is not None:
            raise self.referee.error
        return self.records

    # --- drawing what the referee reports ---
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
        while (event := self.referee.next_event()) is not None:
            kind = event[0]
            if kind == "connect":
                _, name, endpoint, token = event
                self.people[name] = _Person(name, endpoint, token)
            elif kind == "move":
                _, record, move, state = event
                self.say(screen.move_screen(record, move, state))
            elif kind == "game":
                record = event[1]
                self.say(screen.result_block(record, "game over: "))
            elif kind == "done":
                self.finished = True

    # --- the people's connections ---
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
        answer = self.prompt.ask(f"{person.name} (seat {person.seat}{clock})> ", state,
                                 lambda: self._game_ended(person))
        if answer is None:  # the game ended while the person was thinking (their clock ran out)
            self._drain_events()
        elif answer == prompt.RESIGN:
            self._resign(person, message)
        else:
            person.client.send({"type": MOVE, "game_id": message["game_id"], "ply": message["ply"],
                                "move": answer})

    def _game_ended(self, person: _Person) -> bool:
        """True if the referee reported something or ended the game while the person thinks."""
        message = person.client.receive(0)
        return not self.referee.events.empty() or message is not None and message["type"] in (GAME_OVER, BYE)

    def _resign(self, person: _Person, turn: dict[str, Any]) -> None:
        person.client.send({"type": RESIGN, "game_id": turn["game_id"], "ply": turn["ply"]})
