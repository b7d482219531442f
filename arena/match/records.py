"""Game records: every move with its time and the bot's info, the result and why, as plain JSON."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any


class Forfeit(StrEnum):
    """The closed set of reasons a bot loses a game outside the rules of the game."""

    TIMEOUT = "timeout"
    ILLEGAL_MOVE = "illegal_move"
    MALFORMED_MESSAGE = "malformed_message"
    CRASHED = "crashed"
    NO_HELLO = "no_hello"
    RESIGNED = "resigned"


@dataclass
class MoveRecord:
    """One ply: who played what, how long the referee's clock ran, what the bot said about it."""

    ply: int
    seat: int
    move: str
    time_s: float
    info: dict[str, Any] = field(default_factory=dict)


@dataclass
class GameRecord:
    """A finished game. `players` are bot names by seat; `forfeit` is set when a bot broke the rules
    of the arena (timeout, crash...): {"seat": int, "reason": Forfeit value, "detail": str}."""

    game_id: str
    game: str
    params: dict[str, Any]
    players: list[str]
    time_control: str
    moves: list[MoveRecord] = field(default_factory=list)
    start_moves: list[str] = field(default_factory=list)
    winner: int | None = None
    scores: list[int] | None = None
    reason: str = ""
    forfeit: dict[str, Any] | None = None
    started_at: str = ""
    duration_s: float = 0.0
    logs: dict[str, str] = field(default_factory=dict)
    isolation: str = ""
    """"sandbox" when the bots ran sandboxed, "none: <why>" otherwise; "" in older records."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GameRecord:
        fields = dict(data)
        fields["moves"] = [MoveRecord(**m) for m in data.get("moves", [])]
        return cls(**fields)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> GameRecord:
        return cls.from_dict(json.loads(text))

    def points(self, seat: int) -> float:
        """1 for a win, 0.5 for a draw, 0 for a loss, from `seat`'s side."""
        if self.winner is None:
            return 0.5
        return 1.0 if self.winner == seat else 0.0

    def move_list(self) -> list[str]:
        """Every move from the initial position: the starting moves, then the ones played."""
        return self.start_moves + [m.move for m in self.moves]
