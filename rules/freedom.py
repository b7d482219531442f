"""Freedom ("Sloboda"): place stones next to the previous one; stones in runs of exactly four live.

    >>> import rules
    >>> game = rules.load("freedom", size=8)
    >>> state = game.start().play("e5").play("D4")
    >>> state.legal_moves()[:3]
    ['C3', 'D3', 'E3']

Cells are named like `E5`: column letter A.. from the left, row number 1.. from the bottom. Internally
a cell is the index `(row - 1) * size + column` and a set of cells is an int bitboard (bit i = cell i).
"""
from __future__ import annotations

import re
from typing import Any

from rules.core import Game, IllegalMoveError, InvalidMoveError, Outcome, State, board_text

Bitboard = int
Cell = int

WHITE, BLACK = 0, 1
COLOR_NAMES = ("White", "Black")
STONE_CHARS = ("W", "B")
EMPTY_CHAR = "."
PASS = "pass"
RUN_LENGTH = 4
MIN_SIZE, MAX_SIZE = 4, 26

REASON_FULL = "board full"
REASON_PASS = "last move passed"

LISTS_MAX = 1 << 16  # move lists a board size remembers before it forgets them all

_MOVE_RE = re.compile(r"([a-z])\s*(\d{1,3})")


class _Tables:
    """Everything about a board size that never changes, built once per size."""

    __slots__ = ("size", "cells", "full", "names", "index", "bits", "neighbours", "directions", "lists",
                 "chunks")

    def __init__(self, size: int) -> None:
        n = size
        self.size = n
        self.full: Bitboard = (1 << (n * n)) - 1
        self.names: tuple[str, ...] = tuple(f"{chr(65 + i % n)}{i // n + 1}" for i in range(n * n))
        self.index: dict[str, Cell] = {name: i for i, name in enumerate(self.names)}
        self.cells = n * n
        self.bits: tuple[Bitboard, ...] = tuple(1 << i for i in range(n * n))
        # lists[targets] = the names of the cells of `targets`, for the boards of cells next to a
        # stone (a few hundred per stone's cell) and the empty board; filled as they come up.
        self.lists: dict[Bitboard, tuple[str, ...]] = {}
        # chunks[k][v]: the names of the cells of the byte value v at bits 8k..8k+7.
        chunks = []
        for k in range(-(-n * n // 8)):
            table: list[tuple[str, ...]] = [()]
            for v in range(1, 1 << min(8, n * n - 8 * k)):
                high = v.bit_length() - 1  # v's names: those of v without its highest bit, then that one
                table.append(table[v ^ 1 << high] + (self.names[8 * k + high],))
            chunks.append(tuple(table))
        self.chunks: tuple[tuple[tuple[str, ...], ...], ...] = tuple(chunks)

        def on_board(r: int, c: int) -> bool:
            return 0 <= r < n and 0 <= c < n

        neighbours = []
        for i in range(n * n):
            r, c = divmod(i, n)
            mask = 0
            for dr in (-1, 0, 1):
                for dc in (-1, 0, 1):
                    if (dr or dc) and on_board(r + dr, c + dc):
                        mask |= 1 << ((r + dr) * n + c + dc)
            neighbours.append(mask)
        self.neighbours: tuple[Bitboard, ...] = tuple(neighbours)

        # Per direction: (shift, cells whose next cell in that direction is on the board).
        directions = []
        for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
            mask = 0
            for i in range(n * n):
                r, c = divmod(i, n)
                if on_board(r + dr, c + dc):
                    mask |= 1 << i
            directions.append((dr * n + dc, mask))
        self.directions: tuple[tuple[int, Bitboard], ...] = tuple(directions)


    def __reduce__(self) -> tuple:  # pickled (a game sent to a worker) as its size, not its tables
        return _tables, (self.size,)

    def names_of(self, cells: Bitboard, remember: bool) -> tuple[str, ...]:
        """The names of `cells` from A1 on, remembered in `lists` if `remember`."""
        out: list[str] = []
        for table, v in zip(self.chunks, cells.to_bytes(len(self.chunks), "little"), strict=True):
            if v:
                out += table[v]
        result = tuple(out)
        if remember:
            if len(self.lists) >= LISTS_MAX:
                self.lists.clear()
            self.lists[cells] = result
        return result


_TABLES: dict[int, _Tables] = {}


def _tables(size: int) -> _Tables:
    tables = _TABLES.get(size)
    if tables is None:
        tables = _TABLES[size] = _Tables(size)
    return tables


def alive_mask(stones: Bitboard, size: int) -> Bitboard:
    """The stones of `stones` (one colour, size x size bitboard) in a maximal run of exactly four."""
    alive = 0
    for shift, step in _tables(size).directions:
        b1 = (stones >> shift) & step  # cells whose next cell holds a stone
        b2 = (b1 >> shift) & step  # ... whose second next cell does
        b3 = (b2 >> shift) & step
        b4 = (b3 >> shift) & step
        first = stones & ~((stones & step) << shift)  # stones with no stone just before them
        starts = first & b1 & b2 & b3 & ~b4
        if starts:
            alive |= starts | (starts << shift) | (starts << 2 * shift) | (starts << 3 * shift)
    return alive


def alive_stones(state: FreedomState) -> tuple[int, int]:
    """(White's, Black's) alive stones in any position, finished or not: the score if it ended now."""
    size = state._tables.size
    return (
        alive_mask(state._white, size).bit_count(),
        alive_mask(state._black, size).bit_count(),
    )


def _final(stones: tuple[Bitboard, Bitboard], size: int, passed: bool) -> Outcome:
    """How a game ends with these stones: more alive stones wins."""
    white, black = alive_mask(stones[WHITE], size).bit_count(), alive_mask(stones[BLACK], size).bit_count()
    winner = WHITE if white > black else BLACK if black > white else None
    return Outcome(winner, REASON_PASS if passed else REASON_FULL, (white, black))


class Freedom(Game):
    """Freedom on a size x size board; White (seat 0) places first."""

    name = "freedom"
    PARAMS = {"size": 10}

    def _check_params(self) -> None:
        size = self._params["size"]
        if not MIN_SIZE <= size <= MAX_SIZE:
            raise ValueError(f"freedom: size must be between {MIN_SIZE} and {MAX_SIZE}, got size={size!r}")
        self._tables = _tables(size)
        self._board_text = board_text(size, size, STONE_CHARS[WHITE], STONE_CHARS[BLACK], EMPTY_CHAR)

    def start(self) -> FreedomState:
        return FreedomState._make(self, (0, 0), None, False)

    def parse_move(self, text: str) -> str:
        if not isinstance(text, str):
            raise InvalidMoveError(f"{text!r} is not a Freedom move (expected a cell like 'E5' or 'pass')")
        if text in self._tables.index or text == PASS:
            return text
        low = text.strip().lower()
        if low == PASS:
            return PASS
        match = _MOVE_RE.fullmatch(low)
        if match is None:
            raise InvalidMoveError(f"{text!r} is not a Freedom move (expected a cell like 'E5' or 'pass')")
        n = self._tables.size
        col = ord(match.group(1)) - ord("a")
        row = int(match.group(2))
        if col >= n or not 1 <= row <= n:
            last = chr(ord("A") + n - 1)
            raise InvalidMoveError(f"{text!r} is off the {n}x{n} board (columns A-{last}, rows 1-{n})")
        return self._tables.names[(row - 1) * n + col]

    def state_from_wire(self, data: dict[str, Any]) -> FreedomState:
        self._check_wire_header(data)
        for key in ("seat", "ply", "board", "last", "passed", "outcome"):
            if key not in data:
                raise ValueError(f"freedom: wire state lacks {key!r}")
        tables = self._tables
        n = tables.size
        board = data["board"]
        if not isinstance(board, list) or len(board) != n or not all(isinstance(r, str) for r in board):
            raise ValueError(f"freedom: 'board' must be a list of {n} strings, got {board!r}")
        stones = [0, 0]
        for r, row in enumerate(board):
            if len(row) != n:
                raise ValueError(f"freedom: 'board' row {r + 1} must have {n} cells, got {row!r}")
            for c, ch in enumerate(row):
                if ch in STONE_CHARS:
                    stones[STONE_CHARS.index(ch)] |= 1 << (r * n + c)
                elif ch != EMPTY_CHAR:
                    raise ValueError(f"freedom: 'board' row {r + 1} has {ch!r}; cells are W, B or .")
        white, black = (s.bit_count() for s in stones)
        placed = white + black
        if white != black and white != black + 1:
            raise ValueError(f"freedom: 'board' has {white} white and {black} black stones; "
                             "White places first, so White has as many or one more")
        passed = data["passed"]
        if not isinstance(passed, bool):
            raise ValueError(f"freedom: 'passed' must be true or false, got {passed!r}")
        if passed and placed != n * n - 1:
            raise ValueError(f"freedom: 'passed' is true but {n * n - placed} cells are empty "
                             "(pass needs exactly 1)")
        last = data["last"]
        if placed == 0:
            if last is not None:
                raise ValueError(f"freedom: 'last' must be null on an empty board, got {last!r}")
            last_cell = None
        else:
            last_cell = tables.index.get(last) if isinstance(last, str) else None
            if last_cell is None:
                raise ValueError(f"freedom: 'last' must name the previous stone's cell, got {last!r}")
            mover = (placed - 1) % 2  # who placed the most recent stone
            if not stones[mover] >> last_cell & 1:
                raise ValueError(f"freedom: 'last' {last} must hold a {COLOR_NAMES[mover]} stone "
                                 "(the most recent stone)")
        state = FreedomState._make(self, (stones[0], stones[1]), last_cell, passed)
        for key, want in (("ply", state.ply), ("seat", state.seat)):
            value = data[key]
            if type(value) is not int or value != want:
                raise ValueError(f"freedom: {key!r} is {value!r}, the board says {want}")
        outcome = state.outcome
        want_outcome = outcome.to_wire() if outcome is not None else None
        if data["outcome"] != want_outcome:
            raise ValueError(f"freedom: 'outcome' is {data['outcome']!r}, the board says {want_outcome!r}")
        return state


class FreedomState(State):
    """A Freedom position: the stones of both colours, the previous stone, whether the last move passed."""

    __slots__ = ("_tables", "_white", "_black", "_last", "_passed", "_outcome", "_targets")

    _tables: _Tables
    _white: Bitboard
    _black: Bitboard
    _last: Cell | None
    _passed: bool
    _outcome: Outcome | None
    _targets: Bitboard | None

    @classmethod
    def _make(cls, game: Freedom, stones: tuple[Bitboard, Bitboard], last: Cell | None,
              passed: bool) -> FreedomState:
        self = object.__new__(cls)
        self.game = game
        tables = self._tables = game._tables
        self._white, self._black = stones
        self._last = last
        self._passed = passed
        occupied = stones[0] | stones[1]
        self._ply = occupied.bit_count() + passed
        self._targets = None
        if passed or occupied == tables.full:
            self._outcome = _final(stones, tables.size, passed)
        else:
            self._outcome = None
        return self

    # --- the State API ---
    @property
    def outcome(self) -> Outcome | None:
        return self._outcome

    def is_over(self) -> bool:
        return self._outcome is not None

    @property
    def last(self) -> str | None:
        """The cell of the previous stone (the one the next stone must touch), None on an empty board."""
        return None if self._last is None else self._tables.names[self._last]

    def alive_stones(self) -> tuple[int, int]:
        """(White's, Black's) alive stones now; see the module function `alive_stones`."""
        return alive_stones(self)

    @property
    def bitboards(self) -> tuple[Bitboard, Bitboard]:
        """(White's, Black's) stones as bitboards: bit r * size + c is row r + 1, column c."""
        return (self._white, self._black)

    def empty_cells(self) -> int:
        return self._tables.cells - self._ply + self._passed  # ply counts the stones and a pass

    def targets(self) -> Bitboard:
        """The cells a stone may go on now (a bitboard); 0 once the game is over."""
        targets = self._targets
        if targets is None:
            if self._outcome is not None:
                targets = 0
            else:
                empty = self._tables.full ^ (self._white | self._black)
                targets = empty
                if self._last is not None:
                    targets = self._tables.neighbours[self._last] & empty or empty
            self._targets = targets
        return targets

    def legal_moves(self) -> list[str]:
        if self._outcome is not None:
            return []
        tables = self._tables
        targets = self._targets
        if targets is None:
            targets = tables.full ^ (self._white | self._black)
            if self._last is not None:
                targets = tables.neighbours[self._last] & targets or targets
            self._targets = targets
        names = tables.lists.get(targets)
        if names is None:
            last = self._last
            names = tables.names_of(targets, last is None or not targets & ~tables.neighbours[last])
        moves = list(names)
        if tables.cells - self._ply == 1:  # one empty cell left (no pass yet: the game would be over)
            moves.append(PASS)
        return moves

    def play(self, move: str) -> FreedomState:
        tables = self._tables
        cell = tables.index.get(move)
        if cell is None:
            move = self.game.parse_move(move)
            cell = tables.index.get(move)
        if self._outcome is not None:
            raise self._over_error(move)
        if cell is None:  # pass
            empty = self.empty_cells()
            if empty != 1:
                raise IllegalMoveError(f"'pass' is illegal: pass is allowed only when exactly one empty "
                                       f"cell is left ({empty} are empty)")
            return FreedomState._make(self.game, (self._white, self._black), self._last, True)
        bit = tables.bits[cell]
        targets = self._targets
        if targets is None:
            targets = self.targets()
        if not targets & bit:
            raise IllegalMoveError(f"{move!r} is illegal: {self._why_illegal(cell)}")
        child = object.__new__(FreedomState)
        child.game = self.game
        child._tables = tables
        ply = self._ply
        if ply & 1:
            child._white = white = self._white
            child._black = black = self._black | bit
        else:
            child._white = white = self._white | bit
            child._black = black = self._black
        child._last = cell
        child._passed = False
        child._ply = ply = ply + 1
        child._targets = None
        child._outcome = None if ply != tables.cells else _final((white, black), tables.size, False)
        return child

    def _why_illegal(self, cell: Cell) -> str:
        names = self._tables.names
        if (self._white | self._black) >> cell & 1:
            return f"{names[cell]} is occupied"
        return (f"{names[cell]} is not next to {names[self._last]}, the previous stone "  # type: ignore[index]
                f"(legal: {' '.join(self.legal_moves())})")

    def render(self, highlight: str | None = None) -> str:
        tables = self._tables
        n = tables.size
        mark = None
        if highlight:
            try:
                mark = tables.index.get(self.game.parse_move(highlight))
            except InvalidMoveError:
                mark = None
        letters = "    " + " ".join(chr(65 + c) for c in range(n))
        lines = [letters]
        for r in range(n - 1, -1, -1):
            seps = [" "] * (n + 1)
            if mark is not None and mark // n == r:
                seps[mark % n] = "["
                seps[mark % n + 1] = "]"
            row = self._row_chars(r)
            cells = [seps[c] + row[c] for c in range(n)]
            lines.append(f"{r + 1:>2} " + "".join(cells) + seps[n] + f"{r + 1:<2}")
        lines.append(letters)
        white_alive, black_alive = alive_stones(self)
        outcome = self._outcome
        if outcome is None:
            seat = self.seat
            who = f"{COLOR_NAMES[seat]} ({STONE_CHARS[seat]}, seat {seat}) to move"
            if self._last is None:
                where = "anywhere"
            elif self.targets() & tables.neighbours[self._last]:
                where = f"next to {tables.names[self._last]}"
            else:
                where = f"freedom: any empty cell (every neighbour of {tables.names[self._last]} is full)"
            if self.empty_cells() == 1:
                where += ", or pass"
            lines.append(f"{who}, {where}. Alive: White {white_alive}, Black {black_alive}")
        else:
            result = "draw" if outcome.winner is None else f"{COLOR_NAMES[outcome.winner]} wins"
            lines.append(f"Game over ({outcome.reason}): "
                         f"White {white_alive}, Black {black_alive} alive: {result}")
        return "\n".join(lines)

    def _row_chars(self, r: int) -> str:
        """Row r + 1 as W, B and '.' from column A."""
        n = self._tables.size
        white, black = self._white, self._black
        return "".join(
            STONE_CHARS[WHITE] if white >> i & 1 else STONE_CHARS[BLACK] if black >> i & 1 else EMPTY_CHAR
            for i in range(r * n, r * n + n)
        )

    def to_wire(self) -> dict[str, Any]:
        board = self.game._board_text.rows_of(self._white, self._black)
        return {
            "game": self.game.name,
            "params": self.game.params,
            "seat": self.seat,
            "ply": self._ply,
            "board": board,
            "last": self.last,
            "passed": self._passed,
            "outcome": self._outcome.to_wire() if self._outcome is not None else None,
        }

    def _key(self) -> tuple:
        return ((self._white, self._black), self._last, self._passed)

    def __eq__(self, other: object) -> bool:  # the search's table compares states: games first by identity
        return (
            other.__class__ is FreedomState
            and other._white == self._white  # type: ignore[attr-defined]
            and other._black == self._black  # type: ignore[attr-defined]
            and other._last == self._last  # type: ignore[attr-defined]
            and other._passed == self._passed  # type: ignore[attr-defined]
            and (other.game is self.game or other.game == self.game)  # type: ignore[attr-defined]
        )

    def __hash__(self) -> int:
        return hash((self._white, self._black, self._last, self._passed))
