"""The shared vocabulary of every game: Game, State, Outcome and the two move errors.

A Game is a factory holding fixed facts (name, variant parameters); a State is an immutable
position that answers whose turn it is, what is legal, what a move leads to, and how it ended.
Each game module subclasses both; `rules.load` builds a Game by name.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any, ClassVar

SEATS = (0, 1)
BOARD_TEXT_MEMO_MAX = 1 << 15
"""Boards (and rows) a BoardText remembers before it forgets them all (about 2 MB at most)."""


class InvalidMoveError(ValueError):
    """A string that is not a move of this game at all (bad syntax, unknown cell)."""


class IllegalMoveError(ValueError):
    """A well-formed move that the rules forbid in this position."""


@dataclass(frozen=True)
class Outcome:
    """How a game ended: `winner` is 0, 1 or None (a draw); `scores` per seat where the game scores."""

    winner: int | None
    reason: str
    scores: tuple[int, int] | None = None

    def to_wire(self) -> dict[str, Any]:
        return {
            "winner": self.winner,
            "reason": self.reason,
            "scores": list(self.scores) if self.scores is not None else None,
        }


class Game:
    """A game with fixed variant parameters. Subclasses set `name` and `PARAMS` (name -> default)."""

    name: ClassVar[str] = ""
    PARAMS: ClassVar[dict[str, Any]] = {}

    def __init__(self, **params: Any) -> None:
        values = dict(self.PARAMS)
        for key, value in params.items():
            if key not in self.PARAMS:
                known = ", ".join(sorted(self.PARAMS)) or "none"
                raise ValueError(f"{self.name}: unknown parameter {key!r} (known: {known})")
            values[key] = _coerce(self.name, key, value, self.PARAMS[key])
        self._params = values
        self._check_params()

    def _check_params(self) -> None:
        """Raise ValueError naming a parameter whose value makes no playable game."""

    @property
    def params(self) -> dict[str, Any]:
        """The full parameter set, defaults included (a fresh dict)."""
        return dict(self._params)

    def __getattr__(self, key: str) -> Any:
        params = self.__dict__.get("_params")
        if params is not None and key in params:
            return params[key]
        raise AttributeError(key)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._params == self._params  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((self.name, tuple(sorted(self._params.items()))))

    def __repr__(self) -> str:
        args = "".join(f", {k}={v!r}" for k, v in self._params.items())
        return f"rules.load({self.name!r}{args})"

    # --- to be provided by each game ---
    def start(self) -> State:
        """The initial position."""
        raise NotImplementedError

    def parse_move(self, text: str) -> str:
        """The canonical move string for `text`; raises InvalidMoveError naming it."""
        raise NotImplementedError

    def state_from_wire(self, data: dict[str, Any]) -> State:
        """A State from `State.to_wire()`'s dict; raises ValueError saying what is wrong."""
        raise NotImplementedError

    # --- derived ---
    def replay(self, moves: list[str] | tuple[str, ...]) -> State:
        """The state after playing `moves` from the start. IllegalMoveError (InvalidMoveError for a
        non-move) names the first bad move and its ply, counted from 1; the error's `ply`, `move`
        and `reason` attributes hold them apart."""
        return self.positions(moves)[-1]

    def positions(self, moves: list[str] | tuple[str, ...]) -> list[State]:
        """Every state from the start through `moves` (index = plies played); errors as `replay`."""
        state = self.start()
        states = [state]
        for ply, move in enumerate(moves, 1):
            try:
                state = state.play(move)
            except ValueError as exc:
                kind = InvalidMoveError if isinstance(exc, InvalidMoveError) else IllegalMoveError
                error = kind(f"move {ply} {move!r}: {exc}")
                error.ply, error.move, error.reason = ply, move, str(exc)  # type: ignore[attr-defined]
                raise error from None
            states.append(state)
        return states

    # --- shared helpers for state_from_wire ---
    def _check_wire_header(self, data: Any) -> None:
        if not isinstance(data, dict):
            raise ValueError(f"{self.name}: a wire state must be a dict, got {type(data).__name__}")
        if data.get("game") != self.name:
            raise ValueError(f"{self.name}: wire state is for game {data.get('game')!r}")
        if "params" in data and data["params"] != self._params:
            raise ValueError(
                f"{self.name}: wire state has params {data['params']!r}, this game has {self._params!r}"
            )


class State:
    """An immutable position. Subclasses define `_key()`, the tuple that makes two states equal."""

    __slots__ = ("game", "_ply")
    game: Game
    _ply: int

    # --- to be provided by each game ---
    @property
    def seat(self) -> int:
        """The seat to move (0 moves first); seats alternate unless a game says otherwise."""
        return self._ply & 1

    @property
    def ply(self) -> int:
        """How many plies have been played to reach this state."""
        return self._ply

    @property
    def outcome(self) -> Outcome | None:
        """None while the game runs, else how it ended."""
        raise NotImplementedError

    def legal_moves(self) -> list[str]:
        """Every legal move in canonical notation (empty once the game is over)."""
        raise NotImplementedError

    def play(self, move: str) -> State:
        """The state after `move`; InvalidMoveError for a non-move, IllegalMoveError for an illegal one."""
        raise NotImplementedError

    def render(self, highlight: str | None = None) -> str:
        """The board as text for a terminal, with whose turn it is; cells of `highlight` marked."""
        raise NotImplementedError

    def to_wire(self) -> dict[str, Any]:
        """A plain dict (str, int, bool, None, list, dict) describing the position completely."""
        raise NotImplementedError

    def _key(self) -> tuple:
        raise NotImplementedError

    # --- derived ---
    def is_over(self) -> bool:
        return self.outcome is not None

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is type(self)
            and other.game == self.game  # type: ignore[attr-defined]
            and other._key() == self._key()  # type: ignore[attr-defined]
        )

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.game.name} ply={self.ply} seat={self.seat}>"

    def _over_error(self, move: str) -> IllegalMoveError:
        reason = self.outcome.reason if self.outcome else ""
        return IllegalMoveError(f"{move!r} is illegal: the game is over ({reason})")


def _coerce(game: str, key: str, value: Any, default: Any) -> Any:
    """Check a parameter value against its default's type; accept the string forms of --param k=v."""
    kind = type(default)
    if kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false", "1", "0", "yes", "no"):
            return value.lower() in ("true", "1", "yes")
        raise ValueError(f"{game}: parameter {key!r} must be true or false, got {value!r}")
    if kind is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str):
            try:
                return int(value.strip())
            except ValueError:
                pass
        raise ValueError(f"{game}: parameter {key!r} must be a whole number, got {value!r}")
    if kind is str:
        if isinstance(value, str):
            return value
        raise ValueError(f"{game}: parameter {key!r} must be a string, got {value!r}")
    return value


class BoardText:
    """A board of two bitboards as rows of text (cell r*cols + c is row r, column c; row 1 first),
    for to_wire, which the referee calls every turn: whole boards and single rows are remembered,
    since a move changes few rows and Fanorona's history repeats the boards before it."""

    def __init__(self, rows: int, cols: int, first: str, second: str, empty: str) -> None:
        self.rows, self.cols = rows, cols
        self._cells = rows * cols
        self.symbols = (first, second, empty)
        self._row_mask = (1 << cols) - 1
        self._boards: dict[int, tuple[str, ...]] = {}
        self._rows: dict[int, str] = {}

    def __reduce__(self) -> tuple:  # pickled (a game sent to a worker) without what it remembers
        return board_text, (self.rows, self.cols, *self.symbols)

    def board(self, first: int, second: int) -> list[str]:
        """The rows (a fresh list) of the board with `first`'s and `second`'s pieces on those bits,
        remembered for a board seen again (Fanorona's history)."""
        key = first | second << self._cells
        rows = self._boards.get(key)
        if rows is None:
            rows = self._board(first, second)
            if len(self._boards) >= BOARD_TEXT_MEMO_MAX:
                self._boards.clear()
            self._boards[key] = rows
        return list(rows)

    def rows_of(self, first: int, second: int) -> list[str]:
        """The same rows, not remembering the board (for games whose boards do not come back)."""
        return list(self._board(first, second))

    def _board(self, first: int, second: int) -> tuple[str, ...]:
        cols, mask, memo = self.cols, self._row_mask, self._rows
        out = []
        for shift in range(0, self.rows * cols, cols):
            key = (first >> shift & mask) | (second >> shift & mask) << cols
            text = memo.get(key)
            if text is None:
                text = self._row(key & mask, key >> cols)
                if len(memo) >= BOARD_TEXT_MEMO_MAX:
                    memo.clear()
                memo[key] = text
            out.append(text)
        return tuple(out)

    def _row(self, first: int, second: int) -> str:
        one, two, empty = self.symbols
        return "".join(one if first >> c & 1 else two if second >> c & 1 else empty for c in range(self.cols))


@cache
def board_text(rows: int, cols: int, first: str, second: str, empty: str) -> BoardText:
    """The BoardText of that size and symbols, shared by every game that uses it."""
    return BoardText(rows, cols, first, second, empty)
