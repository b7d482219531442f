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

CAPTURE_MEMO_MAX = 1 << 12
"""Capture patterns a point remembers before it forgets them all (a few hundred come up in practice)."""

_SEPARATORS = re.compile(r"[\s,\-]+")
_TOKEN = re.compile(r"([A-Z])([0-9]{1,3})([AW]?)")


class Geometry:
    """Precomputed tables of one board size: names, neighbours, capture rays."""

    __slots__ = ("rows", "cols", "size", "full", "names", "index", "steps", "links", "fast", "around",
                 "pairs", "plain", "reach", "captures")

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

        # The move generator's tables. A ray is also one mask; `up` says whether it runs towards
        # higher bits, so the unbroken run of stones at its start is found with a few int operations.
        def ray_mask(i: int, d: int) -> tuple[Bitboard, Bitboard, bool]:
            bits = ray(i, d)
            dc, dr = DIRECTIONS[d]
            return (bits[0] if bits else 0), sum(bits), dr * cols + dc > 0

        # fast[p] = ((d, q, bit of q, approach ray beyond q, withdrawal ray behind p, "-" + name of q),
        # ...) in the order of steps[p]; each ray as (first bit, mask, up).
        self.fast = [
            tuple((d, q, 1 << q, *ray_mask(q, d), *ray_mask(p, d ^ 4), "-" + self.names[q])
                  for d, q in enumerate(neighbour[p]) if q >= 0)
            for p in range(self.size)
        ]
        self.around = [sum(1 << q for q in neighbour[p] if q >= 0) for p in range(self.size)]
        # Per line direction pair (shift, twice the shift, approach sources up, approach sources
        # down, withdrawal sources up, withdrawal sources down): the points from which a first step
        # along the direction (up: towards higher bits) can capture, so captures are found for all
        # stones at once.
        pairs = []
        for d in range(4):
            dc, dr = DIRECTIONS[d]
            shift = dr * cols + dc
            up, down = (d, d ^ 4) if shift > 0 else (d ^ 4, d)
            shift = abs(shift)

            def sources(d: int, approach: bool) -> Bitboard:
                mask = 0
                for p in range(self.size):
                    q = neighbour[p][d]
                    if q >= 0 and (neighbour[q][d] if approach else neighbour[p][d ^ 4]) >= 0:
                        mask |= 1 << p
                return mask

            pairs.append((shift, 2 * shift, sources(up, True), sources(down, True), sources(up, False),
                          sources(down, False)))
        self.pairs = tuple(pairs)
        # plain[p][free neighbours of p] = {turn: own stones' change} of the plain moves from p, filled
        # as patterns come up.
        self.plain: list[dict[Bitboard, dict[str, Bitboard]]] = [{} for _ in range(self.size)]
        # reach[withdrawal][p]: the points whose stones decide whether a step from p captures (two
        # steps away along a line, and with withdrawal the neighbours); captures[withdrawal][p] maps
        # free neighbours | those points' opponent stones << size to the capturing steps (see
        # capture_steps), filled as patterns come up.
        two = [sum(a1 for *_, a1, _m, _u, _w1, _wm, _wu, _n in self.fast[p]) for p in range(self.size)]
        self.reach = (two, [t | a for t, a in zip(two, self.around, strict=True)])
        self.captures: tuple[list[dict[Bitboard, tuple]], ...] = (
            [{} for _ in range(self.size)], [{} for _ in range(self.size)])

    def __reduce__(self) -> tuple:  # pickled (a game sent to a worker) as its size, not its tables
        return geometry, (self.rows, self.cols)

    def capture_steps(self, p: int, key: Bitboard, withdrawal: bool) -> tuple:
        """The steps from p that capture, for key = free neighbours of p | opponent stones on
        reach[withdrawal][p] << size: ((d, q, bit of q, kind, approach ray mask, up, withdrawal ray
        mask, up, "-" + name of q), ...) in the order of steps[p]; kind 1 approach, 2 withdrawal, 3 both."""
        free, opp = key & self.full, key >> self.size
        steps = []
        for d, q, qbit, a1, aray, aup, w1, wray, wup, dash in self.fast[p]:
            if free & qbit:
                kind = (1 if opp & a1 else 0) | (2 if withdrawal and opp & w1 else 0)
                if kind:
                    steps.append((d, q, qbit, kind, aray, aup, wray, wup, dash))
        memo = self.captures[withdrawal][p]
        if len(memo) >= CAPTURE_MEMO_MAX:
            memo.clear()
        memo[key] = result = tuple(steps)
        return result

    def plain_moves(self, p: int, free: Bitboard) -> dict[str, Bitboard]:
        """The plain moves of a stone on p whose free neighbours are `free`, remembered."""
        moves = {f"{self.names[p]}-{self.names[q]}": (1 << p) | qbit
                 for _d, q, qbit, *_ in self.steps[p] if free & qbit}
        self.plain[p][free] = moves
        return moves


@cache
def geometry(rows: int, cols: int) -> Geometry:
    return Geometry(rows, cols)


geometry(5, 7)  # the default board, built at import
geometry(5, 9)


def _generate(geo: Geometry, own: Bitboard, opp: Bitboard, withdrawal: bool, same_direction: bool
              ) -> tuple[dict[str, Bitboard], bool]:
    """Every legal turn -> its change (own stones' change | captured stones << size), and whether
    the turns are captures. Turns come in a fixed order: by start point, then depth first along
    the lines in DIRECTIONS order, approach before withdrawal."""
    empty = geo.full ^ (own | opp)
    # The stones with a capturing first step, found for all stones at once by shifting bitboards.
    first = 0
    for shift, double, a_up, a_down, _w_up, _w_down in geo.pairs:
        first |= a_up & (empty >> shift) & (opp >> double) | a_down & (empty << shift) & (opp << double)
    if withdrawal:
        for shift, _double, _a_up, _a_down, w_up, w_down in geo.pairs:
            first |= w_up & (empty >> shift) & (opp << shift) | w_down & (empty << shift) & (opp >> shift)
    first &= own
    moves: dict[str, Bitboard] = {}
    if not first:
        plain, around = geo.plain, geo.around
        while own:
            low = own & -own
            own ^= low
            p = low.bit_length() - 1
            free = around[p] & empty
            if free:
                turns = plain[p].get(free)
                moves.update(turns if turns is not None else geo.plain_moves(p, free))
        return moves, False

    size = geo.size
    reach, memo, around = geo.reach[withdrawal], geo.captures[withdrawal], geo.around
    capture_steps = geo.capture_steps

    def extend(steps: tuple, opp: Bitboard, free: Bitboard, last: int, path: str, taken: Bitboard) -> None:
        """Add the turns that continue `path` (ending on a point with capturing `steps`); `free`: the
        points the stone may still step on (empty, not visited this turn)."""
        for d, q, qbit, kind, aray, aup, wray, wup, dash in steps:
            if same_direction and d == last:
                continue
            if kind & 1:
                x = aray & ~opp
                if aup:
                    captured = aray & ((x & -x) - 1)
                else:
                    n = x.bit_length()
                    captured = aray >> n << n
                if kind == 3:
                    x = wray & ~opp
                    if wup:
                        w = wray & ((x & -x) - 1)
                    else:
                        n = x.bit_length()
                        w = wray >> n << n
                    options = ((captured, f"{path}{dash}{APPROACH}"), (w, f"{path}{dash}{WITHDRAWAL}"))
                else:
                    options = ((captured, path + dash),)
            else:
                x = wray & ~opp
                if wup:
                    captured = wray & ((x & -x) - 1)
                else:
                    n = x.bit_length()
                    captured = wray >> n << n
                options = ((captured, path + dash),)
            for taking, npath in options:
                nopp = opp ^ taking
                now = taken | taking
                moves[npath] = start ^ qbit | now << size
                if nopp:
                    nfree = free ^ qbit | taking
                    key = around[q] & nfree | (nopp & reach[q]) << size
                    more = memo[q].get(key)
                    if more is None:
                        more = capture_steps(q, key, withdrawal)
                    if more:
                        extend(more, nopp, nfree, d, npath, now)

    names = geo.names
    while first:
        start = first & -first
        first ^= start
        p = start.bit_length() - 1
        key = around[p] & empty | (opp & reach[p]) << size
        steps = memo[p].get(key)
        extend(steps if steps is not None else capture_steps(p, key, withdrawal), opp, empty, -1, names[p], 0)
    return moves, True


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
        # the parameters the hot paths read, as plain attributes (Game.__getattr__ is slow)
        self._withdrawal, self._same_direction = p["withdrawal"], p["same_direction"]
        self._move_limit, self._repetition = p["move_limit"], p["repetition"]
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


class _Unset:
    """The outcome of a state not asked for yet; pickled as the one instance (a plain object() was not)."""

    def __reduce__(self) -> str:
        return "_UNSET"


_UNSET: Any = _Unset()
_NO_STONES = (Outcome(1, "no stones"), Outcome(0, "no stones"))  # by the seat that has none
_NO_MOVE = (Outcome(1, "no legal move"), Outcome(0, "no legal move"))
_MOVE_LIMIT = {winner: Outcome(winner, "move limit") for winner in (WHITE, BLACK, None)}
_REPETITION = Outcome(None, "repetition")


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
        # turn -> own stones' change | captured stones << size (see _generate), once asked for
        self._moves: dict[str, Bitboard] | None = None
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
        if self._moves is None:
            self._turns()
        return self._capturing

    def most_captured(self) -> int:
        """The most stones one turn of the side to move takes: 0 without a capture. For a search's
        evaluation, which sees the compulsory capture coming without playing the turns."""
        if not self.must_capture:
            return 0
        size = self.game._geo.size
        return max((change >> size).bit_count() for change in self._turns().values())

    def _key(self) -> tuple:
        return (self._white, self._black, self._ply, self._history)

    def __eq__(self, other: object) -> bool:  # the search's table compares states: games first by identity
        return (
            other.__class__ is FanoronaState
            and other._white == self._white  # type: ignore[attr-defined]
            and other._black == self._black  # type: ignore[attr-defined]
            and other._ply == self._ply  # type: ignore[attr-defined]
            and other._history == self._history  # type: ignore[attr-defined]
            and (other.game is self.game or other.game == self.game)  # type: ignore[attr-defined]
        )

    def __hash__(self) -> int:
        return hash((self._white, self._black, self._ply, self._history))

    def _turns(self) -> dict[str, Bitboard]:
        moves = self._moves
        if moves is None:
            g = self.game
            own, opp = (self._white, self._black) if not self._ply & 1 else (self._black, self._white)
            moves, self._capturing = _generate(g._geo, own, opp, g._withdrawal, g._same_direction)
            self._moves = moves
        return moves

    @property
    def outcome(self) -> Outcome | None:
        outcome = self._outcome
        if outcome is _UNSET:
            outcome = self._outcome = self._decide()
        return outcome

    def is_over(self) -> bool:
        outcome = self._outcome
        if outcome is _UNSET:
            outcome = self._outcome = self._decide()
        return outcome is not None

    def _decide(self) -> Outcome | None:
        g, seat = self.game, self._ply & 1
        if not (self._white if not seat else self._black):
            return _NO_STONES[seat]
        if not (self._moves if self._moves is not None else self._turns()):
            return _NO_MOVE[seat]
        limit = g._move_limit
        if limit and self._ply >= limit:
            lead = self._white.bit_count() - self._black.bit_count()
            return _MOVE_LIMIT[WHITE if lead >= 3 else BLACK if lead <= -3 else None]
        repetition = g._repetition
        if repetition and self._history:
            code = self._white | self._black << g._geo.size
            if self._history[-2::-2].count(code) + 1 >= repetition:
                return _REPETITION
        return None

    def legal_moves(self) -> list[str]:
        outcome = self._outcome
        if outcome is _UNSET:
            outcome = self._outcome = self._decide()
        if outcome is not None:
            return []
        return list(self._moves)  # type: ignore[arg-type]

    def play(self, move: str) -> FanoronaState:
        moves = self._moves
        if moves is None:
            moves = self._turns()
        change = moves.get(move)
        outcome = self._outcome
        if outcome is _UNSET:
            outcome = self._outcome = self._decide()
        if change is None or outcome is not None:
            text = self.game.parse_move(move)
            if outcome is not None:
                raise self._over_error(text)
            change = moves.get(text)
            if change is None:
                change = moves[self._resolve(text)]
        g = self.game
        geo = g._geo
        size = geo.size
        captured = change >> size
        if self._ply & 1:
            white, black = self._white ^ captured, self._black ^ (change & geo.full)
        else:
            white, black = self._white ^ (change & geo.full), self._black ^ captured
        if captured or not g._repetition:
            history: tuple[int, ...] = ()
        else:
            history = self._history + (self._white | self._black << size,)
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
