"""A match's progress at the terminal (`arena match`): a header, each game's result with the running
score, the ply being played (on a terminal only), and the final score."""
from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from arena.match.recorder import MatchRecorder
from arena.match.records import GameRecord, MoveRecord
from arena.match.spec import params_text
from arena.terminal.screen import describe_clock, escape_controls, result_block


class MatchProgress:
    """Prints what `recorder`'s match does on `out` (nothing but the score when `quiet`); the ply
    line goes to `live` (stderr) when it is a terminal. `warn` gets the recorder's warnings."""

    def __init__(self, recorder: MatchRecorder, quiet: bool = False, out: TextIO | None = None,
                 live: TextIO | None = None, warn: Callable[[str], None] | None = None) -> None:
        self.recorder = recorder
        self.quiet = quiet
        self.out = out if out is not None else sys.stdout
        self.live = live if live is not None else sys.stderr
        self.is_live = self.live.isatty() and not quiet
        self.warn = warn if warn is not None else (lambda text: print(text, file=sys.stderr))

    def say(self, text: str) -> None:
        """Print `text`, control characters from the bots (their names) escaped."""
        if not self.quiet:
            print(escape_controls(text), file=self.out, flush=True)

    def header(self, directory: Path, params: dict[str, Any]) -> None:
        spec = self.recorder.spec
        names = [b.name for b in spec.bots]
        total = len(spec.game_numbers)
        shown = params_text(spec.game, params)
        self.say(f"{spec.game}{f' ({shown})' if shown else ''}: {names[0]} vs {names[1]}, "
                 f"{total} game{'s' * (total > 1)}, "
                 f"{describe_clock(spec.time_control, margin=True)}, seed {spec.seed}")
        self.say(f"records: {directory}")

    def on_move(self, record: GameRecord, move: MoveRecord, state: Any) -> None:
        total = len(self.recorder.spec.game_numbers)
        number = len(self.recorder.records) + 1
        self.live.write(f"\r  game {number}/{total}: ply {move.ply + 1} {move.move:<12}")
        self.live.flush()

    def on_game(self, record: GameRecord) -> None:
        """Record the game, then print its result and the score so far."""
        warning = self.recorder.add(record)
        if warning is not None:
            self.warn(warning)
        if self.is_live:
            self.live.write("\r\033[K")
        done, total = len(self.recorder.records), len(self.recorder.spec.game_numbers)
        block = result_block(record, f"game {done}/{total}: {record.players[0]} vs {record.players[1]}: ",
                             f", {len(record.moves)} plies, {record.duration_s:.2f} s   [{self.score()}]")
        for line in block.splitlines():  # each escaped already
            self.say(line)

    def score(self) -> str:
        """"A 1.5 - 0.5 B" (bot names in the match's order, control characters escaped)."""
        points = self.recorder.points
        a, b = (bot.name for bot in self.recorder.spec.bots)
        return escape_controls(f"{a} {points[a]:g} - {points[b]:g} {b}")
