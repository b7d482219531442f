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
    DOUBLE_FORFEIT = "double_forfeit"
    """Neither bot could play (both failed to start, say): both score 0, no winner."""


def _reason(value: Any) -> Forfeit | str:
    """A forfeit's reason as a member of Forfeit (a reason this arena does not know, from a newer
    one's record, stays the string it was)."""
    try:
        return Forfeit(value)
    except ValueError:
        return str(value)


@dataclass(frozen=True)
class Forfeiture:
    """A forfeit as a value: the `seat` that forfeited (None when neither bot could play), why
    (`reason`, a Forfeit), the `detail` a bot's author reads, whether it ran out of time while the
    machine's load kept it from a CPU (`under_load`), and for a double forfeit each seat's own
    (`both`). `to_dict`/`from_dict` are the record's JSON form, key for key (GameRecord.forfeit)."""

    seat: int | None
    reason: Forfeit | str
    detail: str = ""
    under_load: bool = False
    both: tuple[Forfeiture, ...] | None = None
    """Each seat's forfeit of a double forfeit (None: not one)."""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"seat": self.seat, "reason": str(self.reason), "detail": self.detail}
        if self.under_load:
            out["under_load"] = True
        if self.both is not None:
            out["both"] = [side.to_dict() for side in self.both]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Forfeiture:
        both = data.get("both")
        seat = data.get("seat")
        return cls(seat=seat if seat in (0, 1) else None, reason=_reason(data.get("reason", "")),
                   detail=str(data.get("detail") or ""), under_load=bool(data.get("under_load")),
                   both=tuple(cls.from_dict(b) for b in both if isinstance(b, dict))
                   if isinstance(both, list) else None)

    def sides(self) -> tuple[Forfeiture, ...]:
        """Each seat's forfeit: this one, or both of a double forfeit."""
        return self.both if self.both else (self,)


LOADED_WAIT_SHARE = 0.25
"""A move is marked as played under load when its bot waited for a CPU (runnable, not running) for at
least this share of the move's wall time..."""
LOADED_WAIT_MIN_S = 0.050
"""...and at least this long (seconds): less is no notable part of any clock of the assignments."""
ABORTED = "aborted"
"""The `reason` of a game that could not be played to its end through no fault a bot can be charged
with (the worker process playing it kept dying): no result, no points for anyone, left out of the
standings and ratings (arena.tournament.standings.scored_records), replayed only on request
(`arena tournament run --retry-aborted`)."""


@dataclass
class MoveRecord:
    """One ply: who played what, how long the referee's clock ran (`time_s`, wall seconds from turn to
    move), the CPU seconds the bot's processes used meanwhile (`cpu_s`) and the seconds they waited
    for a CPU (`wait_s`: the machine's load, time the host of a virtual machine took from its CPU
    and time the referee itself waited for one included: arena/cell/usage.py), None where unknown;
    what the bot said about it."""

    ply: int
    seat: int
    move: str
    time_s: float
    info: dict[str, Any] = field(default_factory=dict)
    cpu_s: float | None = None
    wait_s: float | None = None

    def under_load(self) -> bool:
        """The bot was kept from a CPU for a notable part of this move."""
        if self.wait_s is None:
            return False
        return self.wait_s >= max(LOADED_WAIT_MIN_S, LOADED_WAIT_SHARE * self.time_s)


@dataclass
class GameRecord:
    """A finished game. `players` are bot names by seat; `forfeit` is set when a bot broke the rules
    of the arena (timeout, crash...), the JSON form of a Forfeiture (read it as `forfeiture`, or
    `forfeit_of(seat)`): {"seat": int, "reason": Forfeit value, "detail": str}; when
    neither bot could play, a double forfeit: {"seat": None, "reason": "double_forfeit", "detail":
    str, "both": [{"seat", "reason", "detail"} for seats 0 and 1]}. `errors`: per seat, the number of
    moves whose info carried an `error` (the bot's own exception, answered by the SDK's fallback)."""

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
    errors: list[int] = field(default_factory=lambda: [0, 0])
    isolation: str = ""
    """"sandbox" when the bots ran sandboxed, "none: <why>" otherwise; "" in older records."""
    clock: str = "wall"
    """What each move was charged: "wall" time or "cpu" time (arena.match.clock.TimeControl.kind)."""
    loaded_moves: int = 0
    """Moves a bot played while kept from a CPU by the machine's load (MoveRecord.under_load): the
    game was played under load."""
    aborted: dict[str, Any] | None = None
    """For an aborted game (reason ABORTED): {"detail": str, "deaths": int, "ply": int, "seat": int}
    (the seat that was to move when the worker last died); None otherwise and in older records."""

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

    @property
    def forfeiture(self) -> Forfeiture | None:
        """The forfeit as a typed value (`forfeit` is its JSON form); None: nobody forfeited."""
        return Forfeiture.from_dict(self.forfeit) if self.forfeit else None

    def forfeit_of(self, seat: int) -> Forfeiture | None:
        """Which seat forfeited and why, asked of one seat: `seat`'s forfeit (alone, or its side of
        a double forfeit), None when it did not forfeit."""
        forfeit = self.forfeiture
        if forfeit is None:
            return None
        return next((side for side in (forfeit, *(forfeit.both or ())) if side.seat == seat), None)

    def is_double_forfeit(self) -> bool:
        """Neither bot could play: no winner and both score 0 (records before the reason existed
        said "both bots failed" in the forfeit detail)."""
        forfeit = self.forfeiture
        return forfeit is not None and (forfeit.reason == Forfeit.DOUBLE_FORFEIT
                                        or forfeit.detail.startswith("both bots failed"))

    def is_aborted(self) -> bool:
        """The game was aborted (see ABORTED): it has no result and counts for nobody."""
        return self.reason == ABORTED

    def lost_on_time_under_load(self) -> bool:
        """A bot lost it on time while the machine's load kept it from a CPU (Forfeiture.under_load):
        a verdict the course does not keep, playing the game again (course/season/jobs.py)."""
        forfeit = self.forfeiture
        return forfeit is not None and forfeit.under_load

    def winner_seat(self) -> int | None:
        """The seat that won, None for a draw or a double forfeit."""
        return self.winner if self.winner in (0, 1) else None

    def points(self, seat: int) -> float:
        """1 for a win, 0.5 for a draw, 0 for a loss, a double forfeit or an aborted game, from
        `seat`'s side."""
        if self.is_double_forfeit() or self.is_aborted():
            return 0.0
        winner = self.winner_seat()
        if winner is None:
            return 0.5
        return 1.0 if winner == seat else 0.0

    def result(self) -> str:
        """The result as "1-0", "0-1", "1/2-1/2", "0-0" for a double forfeit, or "*" for an aborted
        game: the one place that computes it (standings, screens and the command line call it)."""
        if self.is_aborted():
            return "*"
        if self.is_double_forfeit():
            return "0-0"
        return {0: "1-0", 1: "0-1"}.get(self.winner_seat(), "1/2-1/2")  # type: ignore[arg-type]

    def move_list(self) -> list[str]:
        """Every move from the initial position: the starting moves, then the ones played."""
        return self.start_moves + [m.move for m in self.moves]
