"""Domineering: two players take turns placing dominoes, one vertically (X), one horizontally (O).

A move names the lower-left cell of the domino, canonically as row number then column letter:
`4C`. X (vertical) at `4C` covers 4C and 5C; O (horizontal) at `4C` covers 4C and 4D. Rows are
numbered 1.. from the bottom, columns lettered A.. from the left. The player who cannot place a
domino on his turn loses.

The board is two ints used as bitboards (X cells and O cells); cell (row r, column c), both
counted from 0, is bit `r * cols + c`. The legal starting cells of each orientation come from a
few shifts of the free-cell bitboard, and the per-size tables (cell names, masks, a byte-wise
decoding of bitboards into move lists) are built once per board size.

    >>> import rules
    >>> game = rules.load("domineering")
    >>> state = game.start().play("[4 C]")
    >>> state.legal_moves()[:3]
    ['1A', '1B', '1C']
"""
from __future__ import annotations

import re
from typing import Any, ClassVar

from rules.core import Game, IllegalMoveError, InvalidMoveError, Outcome, State, board_text

Bitboard = int

VERTICAL = "vertical"
HORIZONTAL = "horizontal"
ORIENTATIONS = (VERTICAL, HORIZONTAL)
SYMBOL = {VERTICAL: "X", HORIZONTAL: "O"}

MAX_SIDE = 26  # columns are the letters A..Z; rows are limited the same way
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
EMPTY = "."  # the empty cell in to_wire()'s board strings
NO_LEGAL_MOVE = "no legal move"

# Row number then column letter, optionally in brackets, optionally separated by a comma or
# spaces: 4C, 4c, 4 C, 4,C, [4 C], [4,C]. Row 1..26 and column A..Z are well-formed on any board.
_MOVE_RE = re.compile(
    r"\s*(?:\[\s*([0-9]{1,2})\s*,?\s*([A-Za-z])\s*\]|([0-9]{1,2})\s*,?\s*([A-Za-z]))\s*",
    re.ASCII,
)
_FORMS = "a row number then a column letter, e.g. '4C', '4 C', '4,C' or '[4 C]'"
_new = object.__new__
_COVERS, _OTHER, _VERTICAL, _CHUNKS, _SEAT = range(5)
"""The fields of a seat's list in Domineering._turns."""


class _Board:
    """The precomputed tables of one board size (shared by every game of that size)."""

    __slots__ = ("rows", "cols", "full", "vstart", "hstart", "names", "bit", "chunks")

    def __init__(self, rows: int, cols: int) -> None:
        self.rows = rows
        self.cols = cols
        n = rows * cols
        self.full: Bitboard = (1 << n) - 1
        # Cells where a vertical domino may start (not the top row) / horizontal (not the last column).
        self.vstart: Bitboard = (1 << (n - cols)) - 1 if rows > 1 else 0
        row_mask = ((1 << (cols - 1)) - 1) if cols > 1 else 0
        self.hstart: Bitboard = sum(row_mask << (r * cols) for r in range(rows))
        self.names: tuple[str, ...] = tuple(
            f"{i // cols + 1}{LETTERS[i % cols]}" for i in range(n)
        )
        self.bit: dict[str, Bitboard] = {name: 1 << i for i, name in enumerate(self.names)}
        # chunks[k][v]: the names of the set bits of the byte value v at bits 8k..8k+7. Boards of up
        # to 64 cells have eight chunks (the ones past the board hold only 0), which states decode
        # without a loop.
        chunks = []
        for k in range(max(8, -(-n // 8))):
            width = max(0, min(8, n - 8 * k))  # cells of this byte on the board
            table: list[tuple[str, ...]] = [()] * (1 << width)
            for v in range(1, 1 << width):
                table[v] = tuple(self.names[8 * k + j] for j in range(width) if v >> j & 1)
            chunks.append(tuple(table))
        self.chunks: tuple[tuple[tuple[str, ...], ...], ...] = tuple(chunks)

    def __reduce__(self) -> tuple:  # pickled (a game sent to a worker) as its size, not its tables
        return _board, (self.rows, self.cols)

    def starts(self, occupied: Bitboard, vertical: bool) -> Bitboard:
        """The cells where a domino of that orientation can be placed now."""
        free = self.full ^ occupied
        if vertical:
            return free & (free >> self.cols) & self.vstart
        return free & (free >> 1) & self.hstart

    def decode(self, bits: Bitboard) -> list[str]:
        """The names of the set bits, in ascending order (row 1 A..., row 2 A..., ...). States
        decode boards of up to 64 cells inline (DomineeringState.legal_moves)."""
        out: list[str] = []
        for table, v in zip(self.chunks, bits.to_bytes(len(self.chunks), "little"), strict=True):
            if v:
                out += table[v]
        return out


_BOARDS: dict[tuple[int, int], _Board] = {}


def _board(rows: int, cols: int) -> _Board:
    board = _BOARDS.get((rows, cols))
    if board is None:
        board = _BOARDS[rows, cols] = _Board(rows, cols)
    return board


_board(8, 8)  # the default size is ready at import


def _cell_name(row: int, col: int) -> str:
    """`row` counted from 1, `col` from 0 -> '4C' (also for cells off a given board)."""
    return f"{row}{LETTERS[col]}" if 0 <= col < len(LETTERS) else f"{row}?"


class Domineering(Game):
    """Domineering on a rows x cols board; `first` is the orientation of seat 0."""

    name: ClassVar[str] = "domineering"
    PARAMS: ClassVar[dict[str, Any]] = {"rows": 8, "cols": 8, "first": VERTICAL}

    def _check_params(self) -> None:
        for key in ("rows", "cols"):
            value = self._params[key]
            if not 1 <= value <= MAX_SIDE:
                raise ValueError(
                    f"domineering: parameter {key!r} must be between 1 and {MAX_SIDE}, got {value!r}"
                )
        if self._params["rows"] * self._params["cols"] < 2:
            raise ValueError(
                f"domineering: parameters 'rows' and 'cols' give a "
                f"{self._params['rows']}x{self._params['cols']} board with no room for a domino"
            )
        first = self._params["first"].strip().lower()
        if first not in ORIENTATIONS:
            raise ValueError(
                f"domineering: parameter 'first' must be 'vertical' or 'horizontal', "
                f"got {self._params['first']!r}"
            )
        self._params["first"] = first
        self._board = _board(self._params["rows"], self._params["cols"])
        self._board_text = board_text(self._params["rows"], self._params["cols"], "X", "O", EMPTY)
        # _vertical[seat]: does that seat place vertical dominoes?
        self._vertical = (first == VERTICAL, first != VERTICAL)
        # What the hot paths need, per seat to move (states hold their seat's list, `_turn`): [cell
        # name -> (bit, the domino's two cells, the starts of this seat and of the other that
        # remain), the other seat's list, places vertical dominoes, the first eight decode tables,
        # the seat]. A start s of dominoes of shift k (cols for vertical ones, else 1) is lost when
        # a domino covers s or s + k.
        board = self._board
        turns = []
        for seat, v in enumerate(self._vertical):
            second, other = (board.cols, 1) if v else (1, board.cols)
            covers = {}
            for name, bit in board.bit.items():
                both = bit | bit << second
                covers[name] = (bit, both, board.full ^ (both | both >> second),
                                board.full ^ (both | both >> other))
            turns.append([covers, None, v, board.chunks[:8], seat])
        turns[0][_OTHER] = turns[1]
        turns[1][_OTHER] = turns[0]
        self._turns = turns
        self._decode = board.decode

    def __getstate__(self) -> dict[str, Any]:  # pickled (a game sent to a worker) as its parameters
        return {"_params": self._params}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._params = state["_params"]
        self._check_params()

    # --- seats and symbols ---
    def orientation(self, seat: int) -> str:
        """'vertical' or 'horizontal': how `seat` places its dominoes."""
        return VERTICAL if self._vertical[seat] else HORIZONTAL

    def symbol(self, seat: int) -> str:
        """'X' (vertical) or 'O' (horizontal) for `seat`."""
        return "X" if self._vertical[seat] else "O"

    # --- the Game API ---
    def start(self) -> DomineeringState:
        return DomineeringState._make(self, 0, 0, 0, 0)

    def parse_move(self, text: str) -> str:
        return _parse(text)[0]

    def state_from_wire(self, data: dict[str, Any]) -> DomineeringState:
        self._check_wire_header(data)
        for key in ("seat", "ply", "board", "outcome"):
            if key not in data:
                raise ValueError(f"domineering: wire state lacks the key {key!r}")
        seat, ply, rows = data["seat"], data["ply"], data["board"]
        if type(seat) is not int or seat not in (0, 1):
            raise ValueError(f"domineering: wire 'seat' must be 0 or 1, got {seat!r}")
        if type(ply) is not int or ply < 0:
            raise ValueError(f"domineering: wire 'ply' must be a whole number >= 0, got {ply!r}")
        x, o = self._board_from_wire(rows)
        state = DomineeringState._make(self, x, o, seat, ply)
        outcome = state.outcome
        expected = None if outcome is None else outcome.to_wire()
        if data["outcome"] != expected:
            raise ValueError(
                f"domineering: wire 'outcome' is {data['outcome']!r} but the position gives {expected!r}"
            )
        return state

    def _board_from_wire(self, rows: Any) -> tuple[Bitboard, Bitboard]:
        nrows, ncols = self._board.rows, self._board.cols
        if not isinstance(rows, list) or len(rows) != nrows:
            raise ValueError(
                f"domineering: wire 'board' must be a list of {nrows} strings (row 1 first), got {rows!r}"
            )
        x = o = 0
        for r, line in enumerate(rows):
            if not isinstance(line, str) or len(line) != ncols:
                raise ValueError(
                    f"domineering: wire 'board' row {r + 1} must be a string of {ncols} characters, "
                    f"got {line!r}"
                )
            for c, ch in enumerate(line):
                if ch == "X":
                    x |= 1 << (r * ncols + c)
                elif ch == "O":
                    o |= 1 << (r * ncols + c)
                elif ch != EMPTY:
                    raise ValueError(
                        f"domineering: wire 'board' row {r + 1} holds {ch!r} at {_cell_name(r + 1, c)}; "
                        f"cells are '{EMPTY}', 'X' or 'O'"
                    )
        # X cells must split into vertical dominoes, O cells into horizontal ones: every maximal
        # run of X in a column and of O in a row has even length (the split is then unique).
        for c in range(ncols):
            run = 0
            for r in range(nrows + 1):
                if r < nrows and x >> (r * ncols + c) & 1:
                    run += 1
                    continue
                if run % 2:
                    raise ValueError(
                        f"domineering: wire 'board' has a run of {run} X cells ending at "
                        f"{_cell_name(r, c)}, which vertical dominoes cannot cover"
                    )
                run = 0
        for r in range(nrows):
            run = 0
            for c in range(ncols + 1):
                if c < ncols and o >> (r * ncols + c) & 1:
                    run += 1
                    continue
                if run % 2:
                    raise ValueError(
                        f"domineering: wire 'board' has a run of {run} O cells ending at "
                        f"{_cell_name(r + 1, c - 1)}, which horizontal dominoes cannot cover"
                    )
                run = 0
        return x, o


def _parse(text: Any) -> tuple[str, int, int]:
    """(canonical move, row counted from 1, column counted from 0) or InvalidMoveError."""
    if not isinstance(text, str):
        raise InvalidMoveError(f"{text!r} is not a domineering move: expected {_FORMS}")
    m = _MOVE_RE.fullmatch(text)
    if m is None:
        raise InvalidMoveError(f"{text!r} is not a domineering move: expected {_FORMS}")
    digits, letter = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
    row = int(digits)
    if not 1 <= row <= MAX_SIDE:
        raise InvalidMoveError(
            f"{text!r} is not a domineering move: row {row} does not exist (rows are 1 to {MAX_SIDE})"
        )
    col = LETTERS.index(letter.upper())
    return f"{row}{LETTERS[col]}", row, col


_LOSS = (Outcome(1, NO_LEGAL_MOVE), Outcome(0, NO_LEGAL_MOVE))  # by the seat that cannot move


def _quote(text: str, canon: str) -> str:
    return repr(canon) if text == canon else f"{text!r} ({canon})"


class DomineeringState(State):
    """A Domineering position: X's cells, O's cells, the seat to move, the ply count."""

    __slots__ = ("_x", "_o", "_starts", "_later", "_turn")

    _x: Bitboard
    _o: Bitboard
    _starts: Bitboard  # legal starting cells of the side to move
    _later: Bitboard  # those of the other side (play updates both, fewer operations on long ints)
    _turn: list  # game._turns[seat], which also holds the seat

    @classmethod
    def _make(cls, game: Domineering, x: Bitboard, o: Bitboard, seat: int, ply: int) -> DomineeringState:
        self = _new(cls)
        self.game = game
        self._x = x
        self._o = o
        self._ply = ply
        self._starts = game._board.starts(x | o, game._vertical[seat])
        self._later = game._board.starts(x | o, game._vertical[1 - seat])
        self._turn = game._turns[seat]
        return self

    # --- the State API ---
    @property
    def seat(self) -> int:
        return self._turn[_SEAT]

    @property
    def outcome(self) -> Outcome | None:
        if self._starts:
            return None
        return _LOSS[self._turn[_SEAT]]

    def is_over(self) -> bool:
        return not self._starts

    @property
    def x(self) -> Bitboard:
        """The cells covered by vertical dominoes (bit r * cols + c)."""
        return self._x

    @property
    def o(self) -> Bitboard:
        """The cells covered by horizontal dominoes (bit r * cols + c)."""
        return self._o

    def legal_moves(self) -> list[str]:
        # The decode of boards of up to 64 cells, inline (the hot path of playouts); larger boards
        # have bits past the eighth byte and take the board's general decode.
        c0, c1, c2, c3, c4, c5, c6, c7 = self._turn[_CHUNKS]
        try:
            v0, v1, v2, v3, v4, v5, v6, v7 = self._starts.to_bytes(8, "little")
        except OverflowError:
            return self.game._decode(self._starts)
        return [*c0[v0], *c1[v1], *c2[v2], *c3[v3], *c4[v4], *c5[v5], *c6[v6], *c7[v7]]

    def play(self, move: str) -> DomineeringState:
        if type(move) is str:
            covers, other, vertical, _, _ = self._turn
            try:
                bit, both, keep_own, keep_other = covers[move]
            except KeyError:
                bit = 0
            if self._starts & bit:
                child = _new(DomineeringState)
                child.game = self.game
                if vertical:
                    child._x = self._x | both
                    child._o = self._o
                else:
                    child._x = self._x
                    child._o = self._o | both
                child._ply = self._ply + 1
                child._starts = self._later & keep_other
                child._later = self._starts & keep_own
                child._turn = other
                return child
        canon, row, col = _parse(move)
        if canon != move:
            bit = self.game._board.bit.get(canon)
            if bit is not None and self._starts & bit:
                return self.play(canon)
        raise self._illegal(move, canon, row, col)

    def __reduce__(self) -> tuple:  # pickled as its fields, without the game's tables its _turn holds
        return DomineeringState._make, (self.game, self._x, self._o, self._turn[_SEAT], self._ply)

    def __eq__(self, other: object) -> bool:  # the search's table compares states: games first by identity
        return (
            other.__class__ is DomineeringState
            and other._x == self._x  # type: ignore[attr-defined]
            and other._o == self._o  # type: ignore[attr-defined]
            and other._turn[_SEAT] == self._turn[_SEAT]  # type: ignore[attr-defined]
            and (other.game is self.game or other.game == self.game)  # type: ignore[attr-defined]
        )

    def __hash__(self) -> int:
        return hash((self._x, self._o, self._turn[_SEAT]))

    def _illegal(self, text: str, canon: str, row: int, col: int) -> IllegalMoveError:
        if not self._starts:
            return self._over_error(canon)
        board = self.game._board
        vertical = self.game._vertical[self.seat]
        who = f"{self.game.symbol(self.seat)} ({'vertical' if vertical else 'horizontal'})"
        head = f"{_quote(text, canon)} is illegal for {who}"
        extent = f"rows 1-{board.rows}, columns A-{LETTERS[board.cols - 1]}"
        if row > board.rows or col >= board.cols:
            return IllegalMoveError(
                f"{head}: the domino would leave the board, {canon} is not on it ({extent})"
            )
        row2, col2 = (row + 1, col) if vertical else (row, col + 1)
        if row2 > board.rows or col2 >= board.cols:
            return IllegalMoveError(
                f"{head}: the domino would leave the board, {_cell_name(row2, col2)} is not on it ({extent})"
            )
        for r, c in ((row, col), (row2, col2)):
            i = (r - 1) * board.cols + c
            for bits, sym in ((self._x, "X"), (self._o, "O")):
                if bits >> i & 1:
                    return IllegalMoveError(f"{head}: {_cell_name(r, c)} is already covered by {sym}")
        return IllegalMoveError(f"{head}")  # not reached: a free, on-board domino is legal

    def render(self, highlight: str | None = None) -> str:
        game = self.game
        board = game._board
        rows, cols = board.rows, board.cols
        marked: set[int] = set()
        if highlight is not None:
            marked = self._highlight_cells(highlight)
        x, o = self._x, self._o

        def rule(ch: str) -> str:
            return ("   " + f"  {ch} " * cols).rstrip()

        letters = ("   " + "".join(f"  {LETTERS[c]} " for c in range(cols))).rstrip()
        lines = [letters, rule("=")]
        for r in range(rows - 1, -1, -1):
            cells = []
            for c in range(cols):
                i = r * cols + c
                sym = "X" if x >> i & 1 else "O" if o >> i & 1 else " "
                cells.append(f" [{sym}]" if i in marked else f"  {sym} ")
            lines.append(f"{r + 1:>2} " + "".join(cells) + f" {r + 1}")
            if r:
                lines.append(rule("-"))
        lines += [rule("="), letters, ""]
        lines.append(self._status())
        return "\n".join(lines)

    def _status(self) -> str:
        game = self.game
        seat = self.seat
        if self._starts:
            return f"{game.symbol(seat)} (seat {seat}, {game.orientation(seat)}) to move"
        winner = 1 - seat
        return (
            f"Game over: {game.symbol(winner)} (seat {winner}, {game.orientation(winner)}) wins, "
            f"{NO_LEGAL_MOVE} for {game.symbol(seat)} (seat {seat}, {game.orientation(seat)})"
        )

    def _highlight_cells(self, highlight: str) -> set[int]:
        """The on-board cells of the domino `highlight` names: the last mover's if it lies there,
        else the one the side to move would place."""
        _, row, col = _parse(highlight)
        board = self.game._board
        options = []
        for seat in (1 - self.seat, self.seat):
            vertical = self.game._vertical[seat]
            cells = [(row - 1, col), (row, col) if vertical else (row - 1, col + 1)]
            idx = [r * board.cols + c for r, c in cells if r < board.rows and c < board.cols]
            options.append(idx)
            own = self._x if vertical else self._o
            if len(idx) == 2 and all(own >> i & 1 for i in idx):
                return set(idx)
        return set(options[1])

    def to_wire(self) -> dict[str, Any]:
        rows = self.game._board_text.rows_of(self._x, self._o)
        return {
            "game": self.game.name,
            "params": self.game.params,
            "seat": self.seat,
            "ply": self._ply,
            "board": rows,
            "outcome": None if self._starts else self.outcome.to_wire(),  # type: ignore[union-attr]
        }

    def _key(self) -> tuple:
        # The ply count does not change future play; positions reached by different orders are equal.
        return (self._x, self._o, self.seat)
