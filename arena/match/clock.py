"""Time controls as data: a per-move limit, or chess-style base + increment, plus a grace margin."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

DEFAULT_MARGIN_S = 0.05
"""Grace added to every deadline for scheduling and transport jitter (seconds)."""

DEFAULT_MOVE_TIME_S = {
    "freedom": 5.0,  # the assignment sets "X seconds" per game; 5 s is our default
    "domineering": 3.0,  # the assignment is silent; same as Morris
    "morris": 3.0,  # "within 3 seconds"
    "santorini": 5.0,  # the assignment is silent; same as Fanorona
    "fanorona": 5.0,  # "max. 5s"
}
"""Per-move limits taken from the assignments (docs/rules.md), used when a match sets none."""

_BASE_INC = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*\+\s*(\d+(?:\.\d+)?)\s*$")


CLOCK_KINDS = ("wall", "cpu")
"""What a move is charged: the wall time from its turn to its move (the assignments' rule), or the
CPU time the bot's processes used for it (under a wall-time ceiling)."""
DEFAULT_WALL_FACTOR = 3.0


@dataclass(frozen=True)
class TimeControl:
    """Either `per_move` seconds for every move, or `base` seconds per game plus `increment` a move.

    `kind`: "wall" charges each move the time from its turn to its move; "cpu" charges the CPU
    time the bot's processes used meanwhile (read from its cgroup), so a busy machine does not
    cost it the game, while a move may still take at most `wall_factor` times its time in wall
    time (a bot that sleeps or blocks still loses on time)."""

    per_move: float | None = None
    base: float | None = None
    increment: float = 0.0
    margin: float = DEFAULT_MARGIN_S
    kind: str = "wall"
    wall_factor: float = DEFAULT_WALL_FACTOR

    def __post_init__(self) -> None:
        if (self.per_move is None) == (self.base is None):
            raise ValueError("a time control needs exactly one of per_move or base")
        for label, value in (("per_move", self.per_move), ("base", self.base)):
            if value is not None and not value > 0:
                raise ValueError(f"time control {label} must be positive, got {value!r}")
        if self.increment < 0 or self.margin < 0:
            raise ValueError("time control increment and margin must not be negative")
        if self.kind not in CLOCK_KINDS:
            raise ValueError(f"clock must be one of {', '.join(CLOCK_KINDS)}, got {self.kind!r}")
        if isinstance(self.wall_factor, bool) or not isinstance(self.wall_factor, (int, float)) \
                or not 1 <= self.wall_factor < math.inf:
            raise ValueError(f"wall_factor must be a number >= 1, got {self.wall_factor!r}")

    @classmethod
    def parse(cls, text: str, margin: float = DEFAULT_MARGIN_S) -> TimeControl:
        """`0.5` (seconds per move) or `60+1` (base + increment); ValueError names the bad text.

        What people write must be finite: "inf", "nan" and "1e999" are refused (an unlimited clock
        is made in code, `TimeControl(per_move=math.inf)`, never parsed)."""
        match = _BASE_INC.match(str(text))
        words = [match[1], match[2]] if match else str(text).split("+")
        try:
            if len(words) > 2:
                raise ValueError(text)
            numbers = [float(w) for w in words]
        except ValueError:
            raise ValueError(f"bad time control {text!r}: use SECONDS (0.5) or BASE+INC (60+1)") from None
        increment_ok = len(numbers) == 1 or numbers[1] >= 0
        if not all(math.isfinite(n) for n in numbers) or numbers[0] <= 0 or not increment_ok:
            raise ValueError(f"bad time control {text!r}: the seconds must be finite and positive (an "
                             "increment may be 0), e.g. 0.5 or 60+1")
        try:
            if len(numbers) == 2:
                return cls(base=numbers[0], increment=numbers[1], margin=margin)
            return cls(per_move=numbers[0], margin=margin)
        except ValueError as exc:
            raise ValueError(f"bad time control {text!r}: {exc}") from None

    @classmethod
    def for_game(cls, game: str) -> TimeControl:
        """The assignment's per-move limit for `game`."""
        return cls(per_move=DEFAULT_MOVE_TIME_S.get(game, 5.0))

    def __str__(self) -> str:
        if self.per_move is not None:
            return f"{self.per_move:g}"
        return f"{self.base:g}+{self.increment:g}"

    def wall_allowed(self, left: float) -> float:
        """Wall seconds a move may take when `left` seconds are charged to it (the margin aside)."""
        return left if self.kind == "wall" else left * self.wall_factor

    def initial_bank(self) -> float:
        """Seconds a seat has before its first move (the whole budget for per-move limits)."""
        return self.per_move if self.per_move is not None else self.base  # type: ignore[return-value]

    def bank_after(self, bank: float, used: float) -> float:
        """Seconds left for the next move after a move that took `used` seconds from `bank`."""
        if self.per_move is not None:
            return self.per_move
        return bank - used + self.increment
