"""A match's directory: each game's record written as soon as the game ends, and match.json.

What `arena match` leaves under DIR/matches/<match id>/: games.jsonl and g<N>.json
(`movefile.save_record`), g<N>.txt (the move file), and match.json (what was asked, how many games
were played, the score), written by `finish()` even after an interrupt.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from arena.match.movefile import save_record, write_move_file
from arena.match.records import GameRecord
from arena.match.spec import MatchSpec


class MatchRecorder:
    """Writes the records of `spec`'s games into `directory` and keeps the score by bot name."""

    def __init__(self, spec: MatchSpec, directory: Path) -> None:
        self.spec = spec
        self.directory = directory
        self.records: list[GameRecord] = []
        self.points = dict.fromkeys((b.name for b in spec.bots), 0.0)

    def add(self, record: GameRecord) -> str | None:
        """Write the next game's record and move file and count its points; a warning when the
        move file could not be written (the record is kept)."""
        number = self.spec.game_numbers[len(self.records)]
        self.records.append(record)
        save_record(self.directory, number, record)
        warning = None
        try:
            write_move_file(self.directory / f"g{number}.txt", record)
        except Exception as exc:  # a rules bug must not lose the other records
            warning = f"no move file for game {number}: {exc}"
        for seat, name in enumerate(record.players):
            self.points[name] += record.points(seat)
        return warning

    def summary(self) -> dict[str, Any]:
        """match.json: the match as asked, the games played and the score."""
        spec = self.spec
        return {
            "match_id": spec.match_id, "game": spec.game, "params": spec.params,
            "bots": [{"name": b.name, "command": list(b.command)} for b in spec.bots],
            "time_control": str(spec.time_control), "margin_s": spec.time_control.margin,
            "seed": spec.seed, "games": len(spec.game_numbers), "start_moves": list(spec.start_moves),
            "played": len(self.records), "score": self.points,
        }

    def finish(self) -> None:
        (self.directory / "match.json").write_text(json.dumps(self.summary(), indent=1))
