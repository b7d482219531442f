"""What a match is: two bots, a game with its parameters, a clock, and which games of it to play."""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

from arena.cell.limits import Limits
from arena.match.clock import TimeControl

SAFE_NAME_MAX_CHARS = 40
"""How much of a name `safe_name` keeps (characters)."""


def safe_name(text: str, max_chars: int | None = SAFE_NAME_MAX_CHARS) -> str:
    """`text` fit for a file or directory name: every run of characters other than letters, digits,
    `_`, `.` and `-` becomes one `_`; cut to `max_chars` (None: not cut)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)[:max_chars]


@dataclass(frozen=True)
class BotSpec:
    """A bot: its display name and the command line that starts it (argv list).

    `external`: the referee starts no process; the player (e.g. a person at the terminal) connects
    itself with the endpoint and token given to `run_match`'s `on_external`. `time_control`: this
    seat's clock when it differs from the match's (None: the match's).
    """

    name: str
    command: tuple[str, ...]
    external: bool = False
    time_control: TimeControl | None = None


@dataclass(frozen=True)
class MatchSpec:
    """A series of games between `bots[0]` and `bots[1]`.

    `game_numbers` says which games of the pairing to play (so a resumed tournament plays only the
    missing ones); in an even-numbered game bots[0] takes seat 0, in an odd one bots[1] does.
    Every game starts after `start_moves`, or with `openings` after its pair's opening (`start_for`).
    """

    match_id: str
    game: str
    bots: tuple[BotSpec, BotSpec]
    time_control: TimeControl
    game_numbers: tuple[int, ...] = (0, 1)
    params: dict[str, Any] = field(default_factory=dict)
    seed: int = 0
    start_moves: tuple[str, ...] = ()
    limits: Limits | None = None
    """What each bot process may use, and the fairness options (None: `Limits()`)."""
    openings: tuple[tuple[str, ...], ...] = ()
    """Balanced openings (arena.match.openings), each as moves from the start: games 2k and 2k+1
    (seats swapped) both start after opening k, from the first again past the last."""

    def start_for(self, number: int) -> tuple[str, ...]:
        """The moves game `number` starts after: its pair's opening, else `start_moves`."""
        if self.openings:
            return self.openings[number // 2 % len(self.openings)]
        return self.start_moves

    def seats(self, number: int) -> tuple[BotSpec, BotSpec]:
        """The bots in seat order for game `number`."""
        a, b = self.bots
        return (a, b) if number % 2 == 0 else (b, a)

    def game_id(self, number: int) -> str:
        return f"{self.match_id}-g{number}"

    def game_seed(self, number: int) -> int:
        """A per-game seed sent to the bots, derived from the match seed: same seed, same games."""
        digest = hashlib.sha256(f"{self.seed}:{self.match_id}:{number}".encode()).digest()
        return int.from_bytes(digest[:4], "big")

    def __hash__(self) -> int:  # params is a dict; identity of a match is its id
        return hash(self.match_id)


def params_text(game: str, params: dict[str, Any]) -> str:
    """A game's parameters as people read them, in the game's own order: "rows=6, cols=6, first=vertical".

    The order is the game's (its PARAMS), whatever order `params` comes in (a stored fingerprint
    comes back sorted); unknown keys follow in their own order. Empty parameters give "".
    """
    import rules

    try:
        order = list(rules.load(game).params)
    except ValueError:  # an unknown game: keep the order given
        order = []
    keys = [k for k in order if k in params] + [k for k in params if k not in order]
    return ", ".join(f"{k}={_param_value(params[k])}" for k in keys)


def _param_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
