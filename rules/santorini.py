"""Santorini on a 5x5 board, without god powers (docs/rules.md, "Santorini").

Squares are named `C3`: the row letter A-E (row A is drawn on top) then the column 1-5, as the
assignment numbers them. Internally a square is an index 0..24, `row * 5 + column` (A1 = 0,
A5 = 4, E5 = 24); a level is 0-3 blocks, 4 meaning a dome.

Moves are strings:
- setup (plies 0 and 1): both workers of the side to move, squares sorted: `B2 C3` (`play` also
  takes `C3 B2`, as the rule book writes placements in either order; `legal_moves` and records
  keep the sorted form);
- a turn: from, to, build: `C3 B3 A3`;
- a move up onto level 3 wins at once and has no build: `C3 B3`.

The module also reads and writes the assignment's game files (`read_game_file`,
`write_game_file`): one move per line, `//` starts a comment.
"""
from __future__ import annotations

import re
from typing import Any

from rules.core import Game, IllegalMoveError, InvalidMoveError, Outcome, State

Square = int  # 0..24, row * 5 + column

SIZE = 5
ROW_NAMES = "ABCDE"
SQUARES = range(SIZE * SIZE)
SQUARE_NAMES: tuple[str, ...] = tuple(f"{ROW_NAMES[s // SIZE]}{s % SIZE + 1}" for s in SQUARES)
SQUARE_INDEX: dict[str, Square] = {name: s for s, name in enumerate(SQUARE_NAMES)}

DOME = 4
#: pieces in the box, for `limited_supply`: blocks of level 1, 2, 3 and domes.
SUPPLY = (22, 18, 14, 18)
PIECE_NAMES = ("level-1 block", "level-2 block", "level-3 block", "dome")

REASON_LEVEL3 = "reached level 3"
REASON_NO_MOVE = "no legal move"
MARKS = ("X", "O")  # worker marks of seat 0 and seat 1 in render()

NOBODY = -1  # a worker not placed yet


def _neighbours(s: Square) -> tuple[Square, ...]:
    r, c = divmod(s, SIZE)
    return tuple(
        (r + dr) * SIZE + c + dc
        for dr in (-1, 0, 1)
        for dc in (-1, 0, 1)
        if (dr or dc) and 0 <= r + dr < SIZE and 0 <= c + dc < SIZE
    )


#: the 8-neighbourhood of each square, in index order.
NEIGHBOURS: tuple[tuple[Square, ...], ...] = tuple(_neighbours(s) for s in SQUARES)
ADJACENT: tuple[frozenset[Square], ...] = tuple(frozenset(n) for n in NEIGHBOURS)

#: canonical strings, built once: placements, winning moves, turns.
PLACEMENTS: tuple[tuple[Square, Square, str], ...] = tuple(
    (a, b, f"{SQUARE_NAMES[a]} {SQUARE_NAMES[b]}") for a in SQUARES for b in SQUARES if a < b
)
WIN_MOVE: dict[tuple[Square, Square], str] = {
    (f, t): f"{SQUARE_NAMES[f]} {SQUARE_NAMES[t]}" for f in SQUARES for t in NEIGHBOURS[f]
}
#: STEPS[f] = ((t, winning move string, ((b, turn string), ...)), ...) for every t next to f.
STEPS: tuple[tuple[tuple[Square, str, tuple[tuple[Square, str], ...]], ...], ...] = tuple(
    tuple(
        (
            t,
            WIN_MOVE[f, t],
            tuple((b, f"{SQUARE_NAMES[f]} {SQUARE_NAMES[t]} {SQUARE_NAMES[b]}") for b in NEIGHBOURS[t]),
        )
        for t in NEIGHBOURS[f]
    )
    for f in SQUARES
)
#: canonical move text -> its squares, the fast path of State.play.
_FAST: dict[str, tuple[Square, ...]] = {}
for _f in SQUARES:
    for _t, _win, _builds in STEPS[_f]:
        for _b, _text in _builds:
            _FAST[_text] = (_f, _t, _b)
for _a in SQUARES:
    for _b in SQUARES:
        if _a != _b:
            _FAST[f"{SQUARE_NAMES[_a]} {SQUARE_NAMES[_b]}"] = (_a, _b)
del _f, _t, _win, _builds, _b, _text, _a

# The assignment's sample file was typed with Cyrillic look-alikes (С3 В2, З for 3): accept them.
_HOMOGLYPHS = str.maketrans("АВСЕЗавсез", "ABCE3abce3")
_SEPARATORS = re.compile(r"[\s,;\-]+")
_SQUARE_RE = re.compile(r"[A-E][1-5]")
_PAIRS_RE = re.compile(r"(?:[A-E][1-5]){2,3}")

_UNLIMITED = (True, True, True, True, False)  # may a piece go on a square of level 0..4?

# Bitboards for move generation: bit s is square s. A position's levels are also kept as one int
# `_g` of four 25-bit fields, field k-1 holding the squares of level >= k (k = 1..4, 4 the domes),
# so that a build sets one bit and "not higher than h + 1" is one shift.
_ALL = (1 << 25) - 1
BIT: tuple[int, ...] = tuple(1 << s for s in SQUARES)
NEIGHBOUR_MASK: tuple[int, ...] = tuple(sum(BIT[t] for t in NEIGHBOURS[s]) for s in SQUARES)
_TOO_HIGH_SHIFT = (25, 50, 75, 75, 75)
"""By a worker's level h: `_g >> shift` masks the squares it cannot step onto (level > h + 1, domes)."""


def _subsets(mask: int) -> list[int]:
    """Every subset of `mask`."""
    out, sub = [], mask
    while True:
        out.append(sub)
        if not sub:
            return out
        sub = (sub - 1) & mask


#: TARGETS[f][m]: the squares of m (a subset of f's neighbourhood) in index order.
TARGETS: tuple[dict[int, tuple[Square, ...]], ...] = tuple(
    {m: tuple(t for t in NEIGHBOURS[f] if m >> t & 1) for m in _subsets(NEIGHBOUR_MASK[f])}
    for f in SQUARES
)


class _Turns(dict):
    """_Turns(f, t)[m]: the turns from f to t that build on the squares of m (a subset of t's
    neighbourhood), in index order; filled on first use, each from the one without m's lowest square."""

    def __init__(self, f: Square, t: Square) -> None:
        super().__init__()
        self[0] = ()
        self.text = {b: text for b, text in next(builds for to, _, builds in STEPS[f] if to == t)}

    def __missing__(self, m: int) -> tuple[str, ...]:
        low = m & -m
        turns = self[m] = (self.text[low.bit_length() - 1],) + self[m ^ low]
        return turns


#: TURNS[f][t]: the _Turns of f to t (None where t is not next to f).
TURNS: tuple[tuple[_Turns | None, ...], ...] = tuple(
    tuple(_Turns(f, t) if t in NEIGHBOURS[f] else None for t in SQUARES) for f in SQUARES
)
#: STEPPERS[f][m]: (TURNS[f][t], NEIGHBOUR_MASK[t]) for the squares t of m, as TARGETS.
STEPPERS: tuple[dict[int, tuple[tuple[_Turns, int], ...]], ...] = tuple(
    {m: tuple((TURNS[f][t], NEIGHBOUR_MASK[t]) for t in ts) for m, ts in TARGETS[f].items()}  # type: ignore[misc]
    for f in SQUARES
)
#: WINS[f][t]: the winning move f to t (None where t is not next to f).
WINS: tuple[tuple[str | None, ...], ...] = tuple(
    tuple(f"{SQUARE_NAMES[f]} {SQUARE_NAMES[t]}" if t in NEIGHBOURS[f] else None for t in SQUARES)
    for f in SQUARES
)
_SETUPS: dict[tuple[Square, Square], tuple[str, ...]] = {}
"""The placements left once squares (a, b) are taken (-1, -1 for none), filled on first use."""


class Santorini(Game):
    """Santorini, 5x5, two workers each, no god powers. `limited_supply`: 22/18/14 blocks, 18 domes."""

    name = "santorini"
    PARAMS = {"limited_supply": False}

    def _check_params(self) -> None:
        self._limited = self._params["limited_supply"]  # a plain attribute for the hot path

    def start(self) -> SantoriniState:
        return SantoriniState(self, (0,) * 25, (NOBODY,) * 4, 0, None)

    def parse_move(self, text: str) -> str:
        return " ".join(SQUARE_NAMES[s] for s in self._parse_squares(text))

    def _parse_squares(self, text: Any) -> tuple[Square, ...]:
        """The squares a move names, in the order written (the phase decides what they mean)."""
        if not isinstance(text, str):
            raise InvalidMoveError(f"{text!r} is not a Santorini move: not a string")
        norm = _SEPARATORS.sub(" ", text.translate(_HOMOGLYPHS).upper()).strip()
        tokens = norm.split(" ") if norm else []
        if len(tokens) == 1 and _PAIRS_RE.fullmatch(tokens[0]):
            tokens = [tokens[0][i:i + 2] for i in range(0, len(tokens[0]), 2)]
        if len(tokens) not in (2, 3) or not all(_SQUARE_RE.fullmatch(tok) for tok in tokens):
            raise InvalidMoveError(
                f"{text!r} is not a Santorini move: expected two or three squares A1-E5 "
                "such as 'B2 C3' (placement), 'C3 B3 A3' (move and build) or 'C3 B3' (winning move)"
            )
        return tuple(SQUARE_INDEX[tok] for tok in tokens)

    def state_from_wire(self, data: dict[str, Any]) -> SantoriniState:
        self._check_wire_header(data)
        for key in ("seat", "ply", "levels", "workers", "outcome"):
            if key not in data:
                raise ValueError(f"santorini: wire state lacks the key {key!r}")
        seat, ply = data["seat"], data["ply"]
        for key, value in (("seat", seat), ("ply", ply)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"santorini: wire {key!r} must be a whole number >= 0, got {value!r}")
        if seat not in (0, 1) or seat != ply % 2:
            raise ValueError(f"santorini: wire 'seat' {seat!r} does not fit 'ply' {ply} (seat = ply % 2)")

        rows = data["levels"]
        if (
            not isinstance(rows, list)
            or len(rows) != SIZE
            or not all(isinstance(row, list) and len(row) == SIZE for row in rows)
        ):
            raise ValueError(f"santorini: wire 'levels' must be 5 lists of 5 levels, got {rows!r}")
        levels = tuple(v for row in rows for v in row)
        for s, v in enumerate(levels):
            if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= DOME:
                raise ValueError(f"santorini: wire 'levels' at {SQUARE_NAMES[s]} must be 0-4, got {v!r}")

        pairs = data["workers"]
        if not isinstance(pairs, list) or len(pairs) != 2 or not all(isinstance(p, list) for p in pairs):
            raise ValueError(f"santorini: wire 'workers' must be two lists of squares, got {pairs!r}")
        workers: list[Square] = []
        for owner, pair in enumerate(pairs):
            placed = ply > owner
            if len(pair) != (2 if placed else 0):
                raise ValueError(
                    f"santorini: wire 'workers' of seat {owner} must hold {2 if placed else 0} squares "
                    f"at ply {ply}, got {pair!r}"
                )
            for name in pair:
                if not isinstance(name, str) or name.upper() not in SQUARE_INDEX:
                    raise ValueError(f"santorini: wire 'workers' holds {name!r}, not a square A1-E5")
            workers.extend(sorted(SQUARE_INDEX[n.upper()] for n in pair) if placed else (NOBODY, NOBODY))
        on_board = [w for w in workers if w != NOBODY]
        if len(set(on_board)) != len(on_board):
            raise ValueError(f"santorini: wire 'workers' puts two workers on one square: {pairs!r}")
        for w in on_board:
            if levels[w] == DOME:
                raise ValueError(f"santorini: wire 'workers' puts a worker on the dome at {SQUARE_NAMES[w]}")

        if self._params["limited_supply"]:
            used = _pieces_used(levels)
            for piece, count in enumerate(used):
                if count > SUPPLY[piece]:
                    raise ValueError(
                        f"santorini: wire 'levels' uses {count} pieces of {PIECE_NAMES[piece]}, "
                        f"the box holds {SUPPLY[piece]}"
                    )
        winners = [i // 2 for i, w in enumerate(workers) if w != NOBODY and levels[w] == 3]
        if len(winners) > 1 or (winners and winners[0] == seat):
            raise ValueError(
                "santorini: wire 'workers' stand on level 3 where the game could not have gone on: "
                f"{pairs!r} with seat {seat} to move"
            )
        pieces = sum(levels)
        expected = max(0, ply - 2 - len(winners))
        if pieces != expected:
            raise ValueError(
                f"santorini: wire 'levels' hold {pieces} pieces but 'ply' {ply} means {expected} builds"
            )
        state = SantoriniState(
            self, levels, tuple(workers), ply, Outcome(winners[0], REASON_LEVEL3) if winners else None
        )
        derived = state.outcome.to_wire() if state.outcome is not None else None
        if data["outcome"] != derived:
            raise ValueError(
                f"santorini: wire 'outcome' {data['outcome']!r} does not match the position ({derived!r})"
            )
        return state


def _pieces_used(levels: tuple[int, ...]) -> tuple[int, int, int, int]:
    """Pieces on the board: level-1, level-2, level-3 blocks, domes."""
    count = levels.count
    level0, domes = count(0), count(DOME)
    return (25 - level0, 25 - level0 - count(1), count(3) + domes, domes)


_UNKNOWN = object()  # outcome not computed yet
_new = object.__new__


class SantoriniState(State):
    """A Santorini position. `_levels`: 25 ints (0-3 blocks, 4 dome); `_workers`: seat 0's two
    squares then seat 1's, each pair sorted, -1 before placement. `_g` holds the levels again as
    bitboards (see _TOO_HIGH_SHIFT) and `_occ` the workers' squares, for move generation."""

    __slots__ = ("_levels", "_workers", "_outcome", "_moves", "_g", "_occ")

    def __init__(
        self,
        game: Santorini,
        levels: tuple[int, ...],
        workers: tuple[Square, ...],
        ply: int,
        outcome: Any,
    ) -> None:
        self.game = game
        self._levels = levels
        self._workers = workers
        self._ply = ply
        self._outcome = _UNKNOWN if outcome is None else outcome
        self._moves: list[str] | None = None
        self._g = sum(1 << (s + 25 * k) for s, v in enumerate(levels) for k in range(v)) if any(levels) else 0
        self._occ = sum(BIT[w] for w in workers if w != NOBODY)

    # --- the State API ---
    @property
    def outcome(self) -> Outcome | None:
        outcome = self._outcome
        if outcome is _UNKNOWN:
            outcome = self._outcome = None if self._generate() else self._stuck()
        return outcome

    def is_over(self) -> bool:
        outcome = self._outcome
        if outcome is _UNKNOWN:
            outcome = self._outcome = None if self._generate() else self._stuck()
        return outcome is not None

    def _stuck(self) -> Outcome:
        """The outcome when the side to move has no legal move: it loses."""
        return Outcome(1 - (self._ply & 1), REASON_NO_MOVE)

    def legal_moves(self) -> list[str]:
        outcome = self._outcome
        if outcome is _UNKNOWN:
            outcome = self._outcome = None if self._generate() else self._stuck()
        if outcome is not None:
            return []
        return self._moves[:]  # type: ignore[index]  # generated when the outcome was decided

    def _key(self) -> tuple:
        return (self._g, self._workers, self._ply)  # _g determines the levels

    # --- accessors for bots ---
    def level(self, square: str | int) -> int:
        """The level of `square` (a name like 'C3' or an index 0-24): 0-3 blocks, 4 a dome."""
        return self._levels[_square(square)]

    def workers(self, seat: int) -> tuple[str, ...]:
        """The squares of `seat`'s workers, sorted; () before that seat has placed them."""
        pair = self._workers[2 * seat:2 * seat + 2]
        return tuple(SQUARE_NAMES[w] for w in pair if w != NOBODY)

    def supply_left(self) -> tuple[int, int, int, int] | None:
        """Pieces left in the box (level-1, level-2, level-3 blocks, domes); None when unlimited."""
        if not self.game._params["limited_supply"]:
            return None
        used = _pieces_used(self._levels)
        return tuple(SUPPLY[i] - used[i] for i in range(4))  # type: ignore[return-value]

    # --- move generation ---
    def _can_build(self) -> tuple[bool, ...]:
        """By current level 0-4: may a piece still go on a square of that level?"""
        if not self.game._params["limited_supply"]:
            return _UNLIMITED
        u1, u2, u3, domes = _pieces_used(self._levels)
        return (u1 < SUPPLY[0], u2 < SUPPLY[1], u3 < SUPPLY[2], domes < SUPPLY[3], False)

    def _generate(self) -> list[str]:
        moves = self._moves
        if moves is not None:
            return moves
        workers = self._workers
        ply = self._ply
        if ply < 2:
            taken = (workers[0], workers[1])
            setups = _SETUPS.get(taken)
            if setups is None:
                setups = _SETUPS[taken] = tuple(
                    text for a, b, text in PLACEMENTS if a not in taken and b not in taken)
            moves = self._moves = list(setups)
            return moves
        g = self._g
        occ = self._occ
        free = _ALL & ~(g >> 75 | occ)  # squares that can take a piece: no dome, no worker
        if self.game._limited:  # type: ignore[attr-defined]
            full = self._exhausted(g)
            free &= ~full
        else:
            full = 0
        levels = self._levels
        moves = []
        for f in workers[2:] if ply & 1 else workers[:2]:
            h = levels[f]
            targets = NEIGHBOUR_MASK[f] & ~(occ | g >> _TOO_HIGH_SHIFT[h])
            if not targets:
                continue
            builds = free | (BIT[f] & ~full)  # the square just left may be built on
            wins = targets & g >> 50  # level 3 (domes are too high)
            if wins:
                turns = TURNS[f]
                for t in TARGETS[f][targets]:
                    if wins >> t & 1:
                        moves.append(WINS[f][t])
                    else:
                        moves += turns[t][builds & NEIGHBOUR_MASK[t]]  # type: ignore[index]
            else:
                for to, near in STEPPERS[f][targets]:
                    moves += to[builds & near]
        self._moves = moves
        return moves

    @staticmethod
    def _exhausted(g: int) -> int:
        """With limited supply: the squares whose next piece is used up (by their level)."""
        g1, g2, g3, g4 = g & _ALL, g >> 25 & _ALL, g >> 50 & _ALL, g >> 75
        full = 0
        if g1.bit_count() >= SUPPLY[0]:  # a square of level >= 1 took a level-1 block
            full |= _ALL ^ g1
        if g2.bit_count() >= SUPPLY[1]:
            full |= g1 ^ g2
        if g3.bit_count() >= SUPPLY[2]:  # level-3 blocks: on level 3 and under the domes
            full |= g2 ^ g3
        if g4.bit_count() >= SUPPLY[3]:
            full |= g3 ^ g4
        return full

    # --- playing ---
    def play(self, move: str) -> SantoriniState:
        squares = _FAST.get(move)
        if squares is None:
            squares = self.game._parse_squares(move)
        ply = self._ply
        if ply < 2:
            return self._place(squares)
        moves = self._moves
        if moves is not None and move in moves:
            # A move from legal_moves: the new state is filled in directly (the hot path of searches).
            w0, w1, w2, w3 = self._workers
            f, t = squares[0], squares[1]
            new = _new(SantoriniState)
            new.game = self.game
            new._ply = ply + 1
            new._moves = None
            new._occ = self._occ ^ BIT[f] ^ BIT[t]
            if ply & 1:
                other = w3 if f == w2 else w2
                new._workers = (w0, w1, t, other) if t < other else (w0, w1, other, t)
            else:
                other = w1 if f == w0 else w0
                new._workers = (t, other, w2, w3) if t < other else (other, t, w2, w3)
            if len(squares) == 2:
                new._levels = self._levels
                new._g = self._g
                new._outcome = Outcome(ply & 1, REASON_LEVEL3)
            else:
                b = squares[2]
                built = list(self._levels)
                lb = built[b]
                built[b] = lb + 1
                new._levels = tuple(built)
                new._g = self._g | 1 << (b + 25 * lb)
                new._outcome = _UNKNOWN
            return new
        text = " ".join(SQUARE_NAMES[s] for s in squares)
        if self.outcome is not None:
            raise self._over_error(text)
        seat = ply & 1
        workers = self._workers
        levels = self._levels
        f, t = squares[0], squares[1]
        if f not in workers:
            raise _illegal(text, f"there is no worker on {SQUARE_NAMES[f]}")
        mine = workers.index(f) // 2 == seat
        if not mine:
            raise _illegal(text, f"the worker on {SQUARE_NAMES[f]} is not seat {seat}'s")
        if t not in ADJACENT[f]:
            raise _illegal(text, f"{SQUARE_NAMES[t]} is not next to {SQUARE_NAMES[f]}")
        if t in workers:
            raise _illegal(text, f"{SQUARE_NAMES[t]} is occupied by a worker")
        lt = levels[t]
        if lt == DOME:
            raise _illegal(text, f"{SQUARE_NAMES[t]} has a dome")
        if lt > levels[f] + 1:
            raise _illegal(
                text,
                f"{SQUARE_NAMES[t]} is level {lt} and {SQUARE_NAMES[f]} level {levels[f]}: "
                "a worker climbs at most one level",
            )
        moved = tuple(w if w != f else t for w in workers)
        moved = (
            (moved[0], moved[1]) if moved[0] < moved[1] else (moved[1], moved[0])
        ) + (
            (moved[2], moved[3]) if moved[2] < moved[3] else (moved[3], moved[2])
        )
        if lt == 3:
            if len(squares) == 3:
                raise _illegal(
                    text,
                    f"moving up onto level 3 wins at once, with no build: "
                    f"write {WIN_MOVE[f, t]!r}",
                )
            return SantoriniState(self.game, levels, moved, ply + 1, Outcome(seat, REASON_LEVEL3))
        if len(squares) == 2:
            raise _illegal(
                text,
                f"a turn names a build square too (only a move up onto level 3 has none; "
                f"{SQUARE_NAMES[t]} is level {lt})",
            )
        b = squares[2]
        if b == t:
            raise _illegal(text, f"the worker stands on {SQUARE_NAMES[b]}: a build goes next to it")
        if b not in ADJACENT[t]:
            raise _illegal(text, f"{SQUARE_NAMES[b]} is not next to {SQUARE_NAMES[t]}, where the worker went")
        if b != f and b in workers:
            raise _illegal(text, f"{SQUARE_NAMES[b]} is occupied by a worker")
        lb = levels[b]
        if lb == DOME:
            raise _illegal(text, f"{SQUARE_NAMES[b]} has a dome")
        if not self._can_build()[lb]:
            raise _illegal(
                text, f"no {PIECE_NAMES[lb]} is left (all {SUPPLY[lb]} are on the board)"
            )
        built = list(levels)
        built[b] = lb + 1
        return SantoriniState(self.game, tuple(built), moved, ply + 1, None)

    def _place(self, squares: tuple[Square, ...]) -> SantoriniState:
        seat = self._ply
        text = " ".join(SQUARE_NAMES[s] for s in (sorted(squares) if len(squares) == 2 else squares))
        if len(squares) != 2:
            raise _illegal(text, f"seat {seat} places its workers now: name two squares, such as 'B2 C3'")
        a, b = sorted(squares)  # the rule book writes placements in either order; ours are sorted
        if a == b:
            raise _illegal(text, "the two workers need two different squares")
        workers = self._workers
        for s in (a, b):
            if s in workers:
                raise _illegal(text, f"{SQUARE_NAMES[s]} is occupied by a worker")
        placed = (a, b, NOBODY, NOBODY) if seat == 0 else (workers[0], workers[1], a, b)
        return SantoriniState(self.game, self._levels, placed, self._ply + 1, None)

    # --- output ---
    def render(self, highlight: str | None = None) -> str:
        marked: set[Square] = set()
        if highlight:
            try:
                marked = set(self.game._parse_squares(highlight))
            except InvalidMoveError:
                pass
        owner = {w: i // 2 for i, w in enumerate(self._workers) if w != NOBODY}
        lines = [("      " + "".join(f"{c}    " for c in range(1, SIZE + 1))).rstrip()]
        for r in range(SIZE):
            cells = []
            for c in range(SIZE):
                s = r * SIZE + c
                v = self._levels[s]
                body = ("D" if v == DOME else str(v)) + (MARKS[owner[s]] if s in owner else " ")
                cells.append(f"[{body}] " if s in marked else f" {body}  ")
            lines.append(f"  {ROW_NAMES[r]}  " + "".join(cells) + f" {ROW_NAMES[r]}")
        lines.append(lines[0])
        lines.append("levels 0-3, D = dome; X = seat 0's workers, O = seat 1's")
        outcome = self.outcome
        if outcome is not None:
            who = outcome.winner
            lines.append(
                f"Game over after {self._ply} plies: seat {who} ({MARKS[who]}) wins, {outcome.reason}"
            )
        elif self._ply < 2:
            lines.append(f"Seat {self.seat} ({MARKS[self.seat]}) to move: place both workers")
        else:
            lines.append(f"Seat {self.seat} ({MARKS[self.seat]}) to move")
        return "\n".join(lines)

    def to_wire(self) -> dict[str, Any]:
        levels = self._levels
        return {
            "game": "santorini",
            "params": self.game.params,
            "seat": self.seat,
            "ply": self._ply,
            "levels": [list(levels[r * SIZE:(r + 1) * SIZE]) for r in range(SIZE)],
            "workers": [list(self.workers(0)), list(self.workers(1))],
            "outcome": self.outcome.to_wire() if self.outcome is not None else None,
        }


def _illegal(text: str, reason: str) -> IllegalMoveError:
    return IllegalMoveError(f"{text!r} is illegal: {reason}")


def _square(square: str | int) -> Square:
    if isinstance(square, int) and not isinstance(square, bool) and 0 <= square < 25:
        return square
    if isinstance(square, str):
        name = square.strip().translate(_HOMOGLYPHS).upper()
        if name in SQUARE_INDEX:
            return SQUARE_INDEX[name]
    raise ValueError(f"{square!r} is not a square: expected A1-E5 or an index 0-24")


# --- game files ---
def read_game_file(text: str, game: Santorini | None = None) -> SantoriniState:
    """Play a game file (the assignment's format) from the start and return the final state.

    Line 1 is seat 0's placement, line 2 seat 1's, then one turn per line; `//` starts a comment
    and blank lines are skipped. A bad move raises InvalidMoveError / IllegalMoveError whose
    message starts with `line N:` and quotes the move.
    """
    state = (game or Santorini()).start()
    for number, line in enumerate(text.splitlines(), 1):
        move = line.split("//", 1)[0].strip()
        if not move:
            continue
        try:
            if state.ply < 2:  # the assignment writes placements in any order
                move = " ".join(sorted(state.game.parse_move(move).split()))
            state = state.play(move)
        except (InvalidMoveError, IllegalMoveError) as exc:
            raise type(exc)(f"line {number}: {exc}") from None
    return state


def write_game_file(moves: list[str]) -> str:
    """The game file of `moves` (played from the start): one move per line, in canonical spelling.

    Placements are written with their squares sorted. InvalidMoveError names a string that is not a
    move. The moves are not replayed: `read_game_file` checks them.
    """
    game = Santorini()
    out = []
    for i, move in enumerate(moves):
        squares = game._parse_squares(move)
        if i < 2:
            squares = tuple(sorted(squares))
        out.append(" ".join(SQUARE_NAMES[s] for s in squares))
    return "".join(line + "\n" for line in out)
