"""The referee of a terminal session, run in a background thread that reports through a queue.

`RefereeThread` runs `run_match` and puts its events on `events`: ("connect", name, endpoint,
token) for each external seat, ("move", record, move, state), ("game", record) and, last, ("done",).
While `here` is true the external players count as present; `leave()` makes the referee treat them
as gone.
"""
from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any

import rules
from arena.match.records import GameRecord
from arena.match.referee import run_match
from arena.match.spec import MatchSpec

JOIN_S = 15.0
"""How long to wait for the referee thread to finish after the person left (seconds)."""


class RefereeThread:
    """Plays `spec` in a daemon thread; `on_game(record)` is called in that thread as each game ends."""

    def __init__(self, spec: MatchSpec, on_game: Callable[[GameRecord], None] | None = None) -> None:
        self.spec = spec
        self.on_game = on_game
        self.events: queue.Queue = queue.Queue()
        self.here = True
        self.records: list[GameRecord] = []
        self.error: BaseException | None = None
        """What run_match raised, for the main thread to raise again."""
        self._thread = threading.Thread(target=self._run, name="arena-referee", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def leave(self) -> None:
        """The people left: the referee treats their seats as crashed."""
        self.here = False

    def join(self, timeout_s: float = JOIN_S) -> None:
        self._thread.join(timeout_s)

    def next_event(self) -> tuple[Any, ...] | None:
        """The next event, None if there is none now."""
        try:
            return self.events.get_nowait()
        except queue.Empty:
            return None

    # --- in the referee's thread ---
    def _on_external(self, name: str, endpoint: str, token: str) -> Callable[[], str | None]:
        self.events.put(("connect", name, endpoint, token))
        return lambda: None if self.here else "the person left"

    def _on_move(self, record: GameRecord, move: Any, state: rules.State) -> None:
        self.events.put(("move", record, move, state))

    def _on_game(self, record: GameRecord) -> None:
        if self.on_game is not None:
            self.on_game(record)
        self.events.put(("game", record))

    def _run(self) -> None:
        try:
            self.records = run_match(self.spec, on_game=self._on_game, on_move=self._on_move,
                                     on_external=self._on_external)
        except BaseException as exc:  # raised again by the main thread
            self.error = exc
        finally:
            self.events.put(("done",))
