"""Simplified Fanorona (UFRGS INF01048 2010/2) and, by parameters, standard 5x9 Fanorona.

Points are named like `D3`: columns A.. from the left, rows 1.. from the bottom; point index
`row * cols + col` (A1 = 0). A side's stones are one int (bit i = point i). Lines join orthogonal
neighbours everywhere and diagonal neighbours through points whose col + row is even.

A turn is one string, the path of the moving stone: `D2-D3` (one step) or `E3-D3-C4` (a capture
continued by further captures). With `withdrawal=True` a step where both an approach and a
withdrawal capture are possible says which with a suffix on its destination: `D2-D3A`, `D2-D3W`.

    >>> import rules
    >>> state = rules.load("fanorona").start()
    >>> sorted(state.legal_moves())
    ['D2-D3', 'E3-D3']
"""
from __future__ import annotations

import re
from functools import cache
from typing import Any

from rules.core import Game, IllegalMoveError, InvalidMoveError, Outcome, State, board_text

Bitboard = int
Color = int
WHITE: Color = 0
BLACK: Color = 1
COLOR_NAMES = ("White", "Black")
SYMBOLS = ("W", "B")
EMPTY = "."

# Directions (dcol, drow) clockwise from north; the opposite of direction d is d ^ 4.
DIRECTIONS = ((0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1))
APPROACH, WITHDRAWAL = "A", "W"

_SEPARATORS = re.compile(r"[\s,\-]+")
_TOKEN = re.compile(r"([A-Z])([0-9]{1,3})([AW]?)")


class Geometry:
    """Precomputed tables of one board size: names, neighbours, capture rays."""

    __slots__ = ("rows", "cols", "size", "full", "names", "index", "steps", "links")

    def __init__(self, rows: int, cols: int) -> None:
        self.rows, self.cols, self.size = rows, cols, rows * cols
        self.full: Bitboard = (1 << self.size) - 1
        self.names = [f"{chr(65 + i % cols)}{i // cols + 1}" for i in range(self.size)]
        self.index = {name: i for i, name in enumerate(self.names)}
        neighbour = [[-1] * 8 for _ in range(self.size)]
        for i in range(self.size):
            col, row = i % cols, i // cols
            for d, (dc, dr) in enumerate(DIRECTIONS):
                if dc and dr and (col + row) % 2:
                    continue  # no diagonal line through an odd point
                c2, r2 = col + dc, row + dr
                if 0 <= c2 < cols and 0 <= r2 < rows:
                    neighbour[i][d] = r2 * cols + c2

        def ray(i: int, d: int) -> tuple[Bitboard, ...]:
            bits = []
            while (i := neighbour[i][d]) >= 0:
                bits.append(1 << i)
            return tuple(bits)

        # steps[p] = ((d, q, bit of q, approach ray beyond q, withdrawal ray behind p), ...): the
        # steps from p along a line, each with the points a capture by approach / withdrawal takes.
        self.steps = [
            tuple((d, q, 1 << q, ray(q, d), ray(p, d ^ 4)) for d, q in enumerate(neighbour[p]) if q >= 0)
            for p in range(self.size)
        ]
        # links[(p, q)] = the step from p to its neighbour q, as in steps[p].
        self.links = {(p, s[1]): s for p in range(self.size) for s in self.steps[p]}


@cache
def geometry(rows: int, cols: int) -> Geometry:
    return Geometry(rows, cols)


geometry(5, 7)  # the default board, built at import
geometry(5, 9)


def _bits(board: Bitboard):
    while board:
        low = board & -board
        yield low.bit_length() - 1
        board ^= low


def _generate(geo: Geometry, own: Bitboard, opp: Bitboard, withdrawal: bool, same_direction: bool
              ) -> tuple[dict[str, tuple[Bitboard, Bitboard]], bool]:
    """Every legal turn -> (own, opp) after it, and whether the turns are captures."""
    names, steps = geo.names, geo.steps
    moves: dict[str, tuple[Bitboard, Bitboard]] = {}

    def extend(p: int, pbit: Bitboard, own: Bitboard, opp: Bitboard, visited: Bitboard, last: int,
               path: str) -> None:
        occupied = own | opp
        for d, q, qbit, approach, behind in steps[p]:
            if occupied & qbit or visited & qbit or (same_direction and d == last):
                continue
            a = 0
            if approach and opp & approach[0]:
                for b in approach:
                    if not opp & b:
                        break
                    a |= b
            w = 0
            if withdrawal and behind and opp & behind[0]:
                for b in behind:
                    if not opp & b:
                        break
                    w |= b
            if not (a or w):
                continue
            nown = own ^ pbit ^ qbit
            if a and w:
                options = ((a, APPROACH), (w, WITHDRAWAL))
            else:
                options = ((a or w, ""),)
            for captured, suffix in options:
                npath = f"{path}-{names[q]}{suffix}"
                nopp = opp ^ captured
                moves[npath] = (nown, nopp)
                if nopp:
                    extend(q, qbit, nown, nopp, visited | qbit, d, npath)

    for p in _bits(own):
        extend(p, 1 << p, own, opp, 1 << p, -1, names[p])
    if moves:
        return moves, True
    occupied = own | opp
    for p in _bits(own):
        pbit = 1 << p
        for _d, q, qbit, _a, _w in steps[p]:
            if not occupied & qbit:
                moves[f"{names[p]}-{names[q]}"] = (own ^ pbit ^ qbit, opp)
    return moves, False


class Fanorona(Game):
    """Simplified Fanorona: approach captures, compulsory capture, 50-ply limit."""

    name = "fanorona"
    PARAMS = {"rows": 5, "cols": 7, "withdrawal": False, "same_direction": False,
              "move_limit": 50, "repetition": 3}

    def _check_params(self) -> None:
        p = self._params
        for key, most in (("rows", 99), ("cols", 26)):
            value = p[key]
            if value < 3 or value % 2 == 0 or value > most:
                raise ValueError(f"fanorona: parameter {key!r} must be odd, from 3 to {most}, got {value!r}")
        if p["move_limit"] < 0:
            raise ValueError(f"fanorona: parameter 'move_limit' must be 0 (off) or positive, "
                             f"got {p['move_limit']!r}")
        if p["repetition"] < 0 or p["repetition"] == 1:
            raise ValueError(f"fanorona: parameter 'repetition' must be 0 (off) or at least 2, "
                             f"got {p['repetition']!r}")
        self._geo = geometry(p["rows"], p["cols"])
        self._board_text = board_text(p["rows"], p["cols"], "W", "B", EMPTY)

    def start(self) -> FanoronaState:
        geo, rows, cols = self._geo, self.rows, self.cols
        middle, centre = rows // 2, cols // 2
        white = (1 << (middle * cols)) - 1
        black = geo.full ^ ((1 << ((middle + 1) * cols)) - 1)
        for col in range(cols):
            if col == centre:
                continue
            black_here = (col % 2 == 0) == (col < centre)
            bit = 1 << (middle * cols + col)
            if black_here:
                black |= bit
            else:
                white |= bit
        return FanoronaState(self, white, black, 0, ())

    # --- notation ---
    def _tokens(self, text: Any) -> list[tuple[int, str]]:
        """[(point, suffix), ...] of a path; InvalidMoveError quoting `text` if it is not one."""
        if not isinstance(text, str):
            raise InvalidMoveError(f"{text!r} is not a fanorona move (a path such as 'D2-D3')")
        parts = _SEPARATORS.split(text.strip().upper())
        if len(parts) < 2:
            raise InvalidMoveError(f"{text!r} is not a fanorona move: "
                                   "a path of two or more points such as 'D2-D3'")
        geo = self._geo
        tokens = []
        for part in parts:
            m = _TOKEN.fullmatch(part)
            if m is None or f"{m[1]}{m[2]}" not in geo.index:
                raise InvalidMoveError(f"{text!r} is not a fanorona move: {part!r} is not a point of the "
                                       f"{self.rows}x{self.cols} board (A1..{geo.names[-1]})")
            tokens.append((geo.index[f"{m[1]}{m[2]}"], m[3]))
        if tokens[0][1]:
            raise InvalidMoveError(f"{text!r} is not a fanorona move: the start point takes no A/W suffix")
        if not self.withdrawal and any(s for _, s in tokens):
            raise InvalidMoveError(f"{text!r} is not a fanorona move: "
                                   "A/W suffixes exist only with withdrawal=True")
        for (p, _), (q, _) in zip(tokens, tokens[1:], strict=False):
            if (p, q) not in geo.links:
                raise InvalidMoveError(f"{text!r} is not a fanorona move: {geo.names[p]} and {geo.names[q]} "
                                       "are not neighbours on a line")
        return tokens

    def _text(self, tokens: list[tuple[int, str]]) -> str:
        names = self._geo.names
        return "-".join(names[p] + s for p, s in tokens)

    def parse_move(self, text: str) -> str:
        return self._text(self._tokens(text))

    # --- wire ---
    def _board_from_wire(self, rows: Any, what: str) -> tuple[Bitboard, Bitboard]:
        if not isinstance(rows, list) or len(rows) != self.rows:
            raise ValueError(f"fanorona: {what} must be a list of {self.rows} strings, got {rows!r}")
        white = black = 0
        for r, line in enumerate(rows):
            if not isinstance(line, str) or len(line) != self.cols or line.strip("WB.") != "":
                raise ValueError(f"fanorona: {what} row {r + 1} must be {self.cols} characters of W, B, '.', "
                                 f"got {line!r}")
            for c, ch in enumerate(line):
                if ch == "W":
                    white |= 1 << (r * self.cols + c)
                elif ch == "B":
                    black |= 1 << (r * self.cols + c)
        most = self._geo.size // 2
        for color, stones in ((WHITE, white), (BLACK, black)):
            if stones.bit_count() > most:
                raise ValueError(f"fanorona: {what} has {stones.bit_count()} {COLOR_NAMES[color]} stones, "
                                 f"more than the {most} a side starts with")
        return white, black

    def state_from_wire(self, data: dict[str, Any]) -> FanoronaState:
        self._check_wire_header(data)
        for key in ("seat", "ply", "board", "history"):
            if key not in data:
                raise ValueError(f"fanorona: wire state lacks the key {key!r}")
        seat, ply = data["seat"], data["ply"]
        if not isinstance(ply, int) or isinstance(ply, bool) or ply < 0:
            raise ValueError(f"fanorona: 'ply' must be a whole number >= 0, got {ply!r}")
        if seat not in (0, 1) or isinstance(seat, bool) or seat != ply % 2:
            raise ValueError(f"fanorona: 'seat' must be ply % 2 = {ply % 2} (White moves first), "
                             f"got {seat!r}")
        if self.move_limit and ply > self.move_limit:
            raise ValueError(f"fanorona: 'ply' {ply} is past the move limit {self.move_limit}")
        white, black = self._board_from_wire(data["board"], "'board'")
        if not (black, white)[seat]:
            raise ValueError(f"fanorona: 'board' has no {COLOR_NAMES[1 - seat]} stones, yet "
                             f"{COLOR_NAMES[1 - seat]} has just moved")
        history = data["history"]
        if not isinstance(history, list):
            raise ValueError(f"fanorona: 'history' must be a list of boards, got {history!r}")
        if not self.repetition and history:
            raise ValueError("fanorona: 'history' must be empty when repetition=0")
        if len(history) > ply:
            raise ValueError(f"fanorona: 'history' holds {len(history)} positions, "
                             f"more than the {ply} plies played")
        shift = self._geo.size
        codes = []
        for i, rows in enumerate(history):
            w, b = self._board_from_wire(rows, f"'history' entry {i}")
            if w.bit_count() != white.bit_count() or b.bit_count() != black.bit_count():
                raise ValueError(f"fanorona: 'history' entry {i} has other stone counts than 'board': "
                                 "history holds only positions since the last capture")
            codes.append(w | b << shift)
        after = codes[1:] + [white | black << shift]
        for i, (before, now) in enumerate(zip(codes, after, strict=False)):
            if (before ^ now).bit_count() != 2:
                raise ValueError(f"fanorona: 'history' entry {i} is not one plain move "
                                 "before the next position")
        for i, code in enumerate(codes):
            if self.repetition and codes[i::-2].count(code) >= self.repetition:
                raise ValueError(f"fanorona: 'history' entry {i} is a repetition "
                                 "the game would have ended on")
        return FanoronaState(self, white, black, ply, tuple(codes))


_UNSET: Any = object()


class FanoronaState(State):
    """A position at the start of a turn: the stones, the ply, the positions since the last capture."""

    __slots__ = ("_white", "_black", "_history", "_moves", "_capturing", "_outcome")

    def __init__(self, game: Fanorona, white: Bitboard, black: Bitboard, ply: int,
                 history: tuple[int, ...]) -> None:
        self.game = game
        self._white = white
        self._black = black
        self._ply = ply
        self._history = history  # white | black << size of each earlier position, oldest first
        self._moves: dict[str, tuple[Bitboard, Bitboard]] | None = None
        self._capturing = False
        self._outcome = _UNSET

    @property
    def white(self) -> Bitboard:
        return self._white

    @property
    def black(self) -> Bitboard:
        return self._black

    @property
    def must_capture(self) -> bool:
        """True when the side to move has a capture, so (captures being compulsory) must take one."""
        self._turns()
        return self._capturing

    def _key(self) -> tuple:
        return (self._white, self._black, self._ply, self._history)

    def _turns(self) -> dict[str, tuple[Bitboard, Bitboard]]:
        if self._moves is None:
            g = self.game
            own, opp = (self._white, self._black) if not self._ply & 1 else (self._black, self._white)
            self._moves, self._capturing = _generate(g._geo, own, opp, g.withdrawal, g.same_direction)
        return self._moves

    @property
    def outcome(self) -> Outcome | None:
        if self._outcome is _UNSET:
            self._outcome = self._decide()
        return self._outcome

    def _decide(self) -> Outcome | None:
        g, seat = self.game, self._ply & 1
        if not (self._white, self._black)[seat]:
            return Outcome(1 - seat, "no stones")
        if not self._turns():
            return Outcome(1 - seat, "no legal move")
        if g.move_limit and self._ply >= g.move_limit:
            lead = self._white.bit_count() - self._black.bit_count()
            return Outcome(WHITE if lead >= 3 else BLACK if lead <= -3 else None, "move limit")
        if g.repetition:
            code = self._white | self._black << g._geo.size
            if self._history[-2::-2].count(code) + 1 >= g.repetition:
                return Outcome(None, "repetition")
        return None

    def legal_moves(self) -> list[str]:
        moves = self._turns()
        if self.outcome is not None:
            return []
        return list(moves)

    def play(self, move: str) -> FanoronaState:
        after = self._turns().get(move)
        if after is None or self.outcome is not None:
            text = self.game.parse_move(move)
            if self.outcome is not None:
                raise self._over_error(text)
            after = self._moves.get(text)  # type: ignore[union-attr]
            if after is None:
                text = self._resolve(text)
                after = self._moves[text]  # type: ignore[index]
        own, opp = after
        g = self.game
        if self._ply & 1:
            white, black, captured = opp, own, opp != self._white
        else:
            white, black, captured = own, opp, opp != self._black
        if not g.repetition or captured:
            history: tuple[int, ...] = ()
        else:
            history = self._history + (self._white | self._black << g._geo.size,)
        return FanoronaState(g, white, black, self._ply + 1, history)

    def _resolve(self, text: str) -> str:
        """The listed move `text` (well-formed) stands for, or IllegalMoveError saying why it is illegal."""
        g = self.game
        geo, names, seat = g._geo, g._geo.names, self._ply & 1
        tokens = g._tokens(text)

        def illegal(why: str) -> IllegalMoveError:
            return IllegalMoveError(f"{text!r} is illegal: {why}")

        own, opp = (self._white, self._black) if not seat else (self._black, self._white)
        start = tokens[0][0]
        if not own & (1 << start):
            what = "is empty" if not opp & (1 << start) else f"holds a {COLOR_NAMES[1 - seat]} stone"
            raise illegal(f"{names[start]} {what}, not a {COLOR_NAMES[seat]} stone")
        canon, p, visited, last, captured_before = [(start, "")], start, 1 << start, -1, True
        for q, suffix in tokens[1:]:
            d, _, qbit, approach, behind = geo.links[(p, q)]
            step = f"{names[p]}-{names[q]}"
            if visited & qbit:
                raise illegal(f"the path returns to {names[q]}, already visited this turn")
            if (own | opp) & qbit:
                raise illegal(f"{names[q]} is occupied")
            if not captured_before:
                raise illegal("a turn continues only after a capture")
            if g.same_direction and d == last:
                raise illegal(f"step {step} goes in the same direction as the step before "
                              "(same_direction rule)")
            a = _run(approach, opp)
            w = _run(behind, opp) if g.withdrawal else 0
            if suffix == APPROACH and not a:
                raise illegal(f"step {step} captures nothing by approach")
            if suffix == WITHDRAWAL and not w:
                raise illegal(f"step {step} captures nothing by withdrawal")
            if suffix and not (a and w):
                raise illegal(f"step {step} has only one way to capture: write {names[q]} without A/W "
                              "(the suffix is for steps that can capture both ways)")
            if not suffix and a and w:
                raise illegal(f"step {step} can capture by approach or by withdrawal: "
                              f"write {names[q]}A or {names[q]}W")
            captured = a if suffix == APPROACH else w if suffix == WITHDRAWAL else (a or w)
            if not captured:
                if len(canon) > 1:
                    raise illegal(f"step {step} captures nothing; a turn continues only with captures")
                if self._capturing:
                    raise illegal("a capture is available, plain moves are illegal")
            canon.append((q, suffix if a and w else ""))
            own, opp = own ^ (1 << p) ^ qbit, opp ^ captured
            p, visited, last, captured_before = q, visited | qbit, d, bool(captured)
        listed = g._text(canon)
        if listed not in self._turns():
            raise illegal("it is not a legal move here")
        return listed

    # --- display and wire ---
    def _rows(self, code_white: Bitboard, code_black: Bitboard) -> list[str]:
        return self.game._board_text.board(code_white, code_black)

    def to_wire(self) -> dict[str, Any]:
        g = self.game
        shift, mask = g._geo.size, g._geo.full
        return {
            "game": g.name,
            "params": g.params,
            "seat": self._ply & 1,
            "ply": self._ply,
            "board": self._rows(self._white, self._black),
            "history": [self._rows(code & mask, code >> shift) for code in self._history],
        }

    def render(self, highlight: str | None = None) -> str:
        g = self.game
        rows, cols = g.rows, g.cols
        marked = {p for p, _ in g._tokens(highlight)} if highlight else set()
        board = self._rows(self._white, self._black)
        width = len(str(rows))
        pad = " " * (width + 2)
        lines = []
        for r in range(rows - 1, -1, -1):
            text = []
            for c in range(cols):
                sym = board[r][c]
                if r * cols + c in marked:
                    text.append(f"[{sym}]")
                else:
                    text.append(f"{'-' if c else ' '}{sym}{'-' if c < cols - 1 else ' '}")
            lines.append(f"{r + 1:>{width}}  " + "-".join(text).rstrip())
            if r:
                link = [" "] * (4 * cols - 1)
                for c in range(cols):
                    link[1 + 4 * c] = "|"
                    if c < cols - 1:
                        link[3 + 4 * c] = "/" if (c + r - 1) % 2 == 0 else "\\"
                lines.append((pad + "".join(link)).rstrip())
        lines.append(pad + " " + "   ".join(chr(65 + c) for c in range(cols)))
        counts = ", ".join(f"{name} {n} stone{'' if n == 1 else 's'}" for name, n in
                           zip(COLOR_NAMES, (self._white.bit_count(), self._black.bit_count()), strict=True))
        counts += f", ply {self._ply}"
        outcome = self.outcome
        if outcome is None:
            seat = self._ply & 1
            lines.append(f"{COLOR_NAMES[seat]} (seat {seat}) to move; {counts}")
        else:
            result = "draw" if outcome.winner is None else f"{COLOR_NAMES[outcome.winner]} wins"
            lines.append(f"Game over: {result} ({outcome.reason}); {counts}")
        return "\n".join(lines)


def _run(ray: tuple[Bitboard, ...], opp: Bitboard) -> Bitboard:
    """The unbroken line of `opp` stones at the start of `ray`."""
    captured = 0
    for b in ray:
        if not opp & b:
            break
        captured |= b
    return captured
