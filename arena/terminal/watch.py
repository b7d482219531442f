"""`arena watch`: a bot game shown move by move (the board, the time used, each bot's info),
optionally one Enter at a time; stopped early, the moves so far go to the move file."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import rules
from arena.match.movefile import format_moves, game_line, save_record, write_move_file
from arena.match.records import GameRecord
from arena.match.referee import run_match
from arena.match.spec import MatchSpec
from arena.terminal import screen

STEP_PROMPT = "Enter: next move, c: play to the end, q: quit> "

Ask = Callable[[str], "str | None"]
"""Asks the watcher: a stripped, lower-case answer, None at the end of input."""


class _Stop(Exception):
    """The watcher typed q: stop the match."""


def save_game(directory: Path, record: GameRecord) -> None:
    """Write a single game's record and move file (g0.json, games.jsonl, g0.txt) under `directory`."""
    save_record(directory, 0, record)
    write_move_file(directory / "g0.txt", record)


class Watch:
    """Plays `spec`'s one game, printing each move; records it under `directory`. With `step`,
    `ask` is asked after every move: Enter goes on, c plays to the end, q stops."""

    def __init__(self, spec: MatchSpec, game: rules.Game, directory: Path, step: bool, ask: Ask) -> None:
        self.spec = spec
        self.game = game
        self.directory = directory
        self.stepping = step
        self.ask = ask
        self.seen: GameRecord | None = None
        """The game so far (the record of its last move)."""

    def run(self) -> GameRecord | None:
        """The finished game's record, or None when the watcher stopped it (the moves so far are
        in the move file). KeyboardInterrupt is raised again after writing them; ValueError if
        the referee refused the match."""
        start = self.spec.start_moves
        state = self.game.replay(start)
        print(state.render(highlight=start[-1] if start else None) + "\n", flush=True)
        try:
            run_match(self.spec, on_game=lambda record: save_game(self.directory, record),
                      on_move=self._on_move)
        except (_Stop, KeyboardInterrupt) as exc:
            self._save_unfinished()
            if isinstance(exc, KeyboardInterrupt):
                raise
            return None
        record = GameRecord.from_json((self.directory / "g0.json").read_text())
        print(screen.result_block(record, "game over: "))
        return record

    def _on_move(self, record: GameRecord, move: Any, state: rules.State) -> None:
        self.seen = record
        print(screen.move_screen(record, move, state), flush=True)
        if self.stepping and state.outcome is None:
            answer = self.ask(STEP_PROMPT)
            if answer is None or answer == "c":
                self.stepping = False
            elif answer == "q":
                raise _Stop

    def _save_unfinished(self) -> None:
        if self.seen is None:
            return
        path = self.directory / "g0.txt"
        header = f"{game_line(self.seen.game, self.seen.params)}\nunfinished"
        path.write_text(format_moves(self.seen.game, self.seen.move_list(), header), encoding="utf-8")
        print(f"stopped; the moves so far: {path}")
