"""Nine Men's Morris ("Mice"): 24 points, 9 stones a side, placement then movement, mills remove.

Points are numbered 0..23 in the order of POINTS (row by row from the bottom, left to right), and a
side's stones are a 24-bit int (bit i = POINTS[i]). "Which points close a mill" and "which stones
stand in one" are two table lookups per direction (one per 12-bit half of a side's stones, e.g.
H_MILLS_LO/HI for the horizontal mills) ANDed: all on ints below 2**30, which Python computes fastest.

Moves: `d6` (placement), `d6-d5` (movement, or a flight when flying), with the removal appended:
`a1xg7`, `d6-d5xg7`. A move that closes a mill must name its removal (one legal move per removable
stone); naming a removal on a move that closes none is illegal.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from operator import itemgetter
from typing import Any

from rules.core import Game, IllegalMoveError, InvalidMoveError, Outcome, State

Bitboard = int
WHITE, BLACK = 0, 1
COLOR_NAMES = ("White", "Black")
STONES = 9

POINTS: tuple[str, ...] = tuple(
    "a1 d1 g1 b2 d2 f2 c3 d3 e3 a4 b4 c4 e4 f4 g4 c5 d5 e5 b6 d6 f6 a7 d7 g7".split()
)
INDEX: dict[str, int] = {name: i for i, name in enumerate(POINTS)}
BIT: tuple[Bitboard, ...] = tuple(1 << i for i in range(24))
FULL: Bitboard = (1 << 24) - 1

# The 8 vertical mills, bottom to top; listed one after another they give the column order.
COLUMN_MILLS_NAMES = ("a1 a4 a7", "b2 b4 b6", "c3 c4 c5", "d1 d2 d3",
                      "d5 d6 d7", "e3 e4 e5", "f2 f4 f6", "g1 g4 g7")
COLUMN_ORDER: tuple[int, ...] = tuple(INDEX[n] for line in COLUMN_MILLS_NAMES for n in line.split())
ROW_MILLS: tuple[tuple[int, int, int], ...] = tuple((i, i + 1, i + 2) for i in range(0, 24, 3))
COL_MILLS: tuple[tuple[int, int, int], ...] = tuple(
    tuple(COLUMN_ORDER[i:i + 3]) for i in range(0, 24, 3)  # type: ignore[misc]
)
MILLS: tuple[Bitboard, ...] = tuple(
    BIT[a] | BIT[b] | BIT[c] for a, b, c in ROW_MILLS + COL_MILLS
)
ROW_MILL_OF = [0] * 24  # the horizontal mill through each point, as a mask
COL_MILL_OF = [0] * 24
H_NEIGH = [0] * 24  # neighbours along the row
V_NEIGH = [0] * 24  # neighbours along the column
for _lines, _mill_of, _neigh in ((ROW_MILLS, ROW_MILL_OF, H_NEIGH), (COL_MILLS, COL_MILL_OF, V_NEIGH)):
    for _a, _b, _c in _lines:
        _m = BIT[_a] | BIT[_b] | BIT[_c]
        for _p in (_a, _b, _c):
            _mill_of[_p] = _m
        _neigh[_a] |= BIT[_b]
        _neigh[_b] |= BIT[_a] | BIT[_c]
        _neigh[_c] |= BIT[_b]
NEIGH: tuple[Bitboard, ...] = tuple(h | v for h, v in zip(H_NEIGH, V_NEIGH, strict=True))

_LO_MID = 0o33333333  # the first two points of every row
_MID_HI = 0o66666666  # the last two


def _bits_of(mask: int) -> tuple[int, ...]:
    return tuple(i for i in range(24) if mask >> i & 1)


# The 12-bit tables: T_LO[v] and T_HI[v] describe the points of the low / high 12 bits of a board
# (two lookups per board on the hot paths). Entry v is built from entry v & (v - 1), v without its
# lowest point, and that point: a few ms at import for all of them.
def _half_tuples(items: Any, offset: int) -> tuple[tuple[Any, ...], ...]:
    """T[v] = the items of the points offset + i, for the set bits i of v, in point order."""
    table: list[tuple[Any, ...]] = [()]
    for v in range(1, 4096):
        rest = v & (v - 1)
        table.append((items[offset + (v ^ rest).bit_length() - 1],) + table[rest])
    return tuple(table)


def _half_unions(masks: Any, offset: int) -> tuple[int, ...]:
    """T[v] = the union of the masks of the points offset + i, for the set bits i of v."""
    table = [0]
    for v in range(1, 4096):
        rest = v & (v - 1)
        table.append(masks[offset + (v ^ rest).bit_length() - 1] | table[rest])
    return tuple(table)


# Mill tables: bit x of H_MILLS_LO[v] is set when the other two points of x's horizontal mill that
# lie in the low half are all in v (H_MILLS_HI for the high half; points of the other half do not
# constrain), V_MILLS_LO/HI the same for the vertical mills. ANDed for a side's stones they give the
# points whose two mill-mates all hold that side's stones: the empty ones close a mill when taken,
# the occupied ones stand in a complete mill. H_NEEDED[i]: the points x whose horizontal mill needs i.
H_NEEDED = tuple(sum(BIT[x] for x in range(24) if ROW_MILL_OF[x] & ~BIT[x] & BIT[i]) for i in range(24))
V_NEEDED = tuple(sum(BIT[x] for x in range(24) if COL_MILL_OF[x] & ~BIT[x] & BIT[i]) for i in range(24))
H_MILLS_LO, H_MILLS_HI, V_MILLS_LO, V_MILLS_HI = (
    tuple(FULL ^ missing for missing in reversed(_half_unions(needed, off)))
    for needed in (H_NEEDED, V_NEEDED) for off in (0, 12))

ONES: tuple[int, ...] = tuple(v.bit_count() for v in range(4096))
"""ONES[v]: the stones of a 12-bit half (a lookup costs less than int.bit_count's method call)."""
# IDX_LO[v], IDX_HI[v]: the points of the low / high 12 bits of v; PLACE_LO, PLACE_HI: their names.
IDX_LO, IDX_HI = (_half_tuples(range(24), off) for off in (0, 12))
PLACE_LO, PLACE_HI = (_half_tuples(POINTS, off) for off in (0, 12))


def _indices(mask: Bitboard) -> tuple[int, ...]:
    return IDX_LO[mask & 4095] + IDX_HI[mask >> 12]


def _in_mills(stones: Bitboard) -> Bitboard:
    """The stones of `stones` that stand in a complete mill."""
    lo, hi = stones & 4095, stones >> 12
    return stones & (H_MILLS_LO[lo] & H_MILLS_HI[hi] | V_MILLS_LO[lo] & V_MILLS_HI[hi])


def _picker(opp: Bitboard) -> Callable[[tuple[str, ...]], tuple[str, ...]]:
    """pick(table): the entries of `table` (24 moves by removed point) for the stones of `opp` that
    may be removed, in point order."""
    lo, hi = opp & 4095, opp >> 12
    rem = (opp & ~(H_MILLS_LO[lo] & H_MILLS_HI[hi] | V_MILLS_LO[lo] & V_MILLS_HI[hi])) or opp
    if rem & (rem - 1):
        return itemgetter(*(IDX_LO[rem & 4095] + IDX_HI[rem >> 12]))
    return _PICK_ONE[rem.bit_length() - 1]


def _removable(stones: Bitboard) -> Bitboard:
    """The stones that may be taken: those outside mills, or any when all stand in mills."""
    return (stones & ~_in_mills(stones)) or stones


_PICK_ONE = tuple(itemgetter(slice(r, r + 1)) for r in range(24))
"""_PICK_ONE[r](table) == (table[r],): `_picker` for a single removable stone."""


# Move strings, built once; what they do is MOVE_INFO's (below).
PLACE_REM = tuple(tuple(f"{POINTS[q]}x{POINTS[r]}" for r in range(24)) for q in range(24))
STEP = tuple(tuple(f"{POINTS[p]}-{POINTS[q]}" for q in range(24)) for p in range(24))
STEP_REM = tuple(tuple(tuple(f"{STEP[p][q]}x{POINTS[r]}" for r in range(24)) for q in range(24))
                 for p in range(24))
# STEPS[p][t]: the plain moves from p to the empty neighbours t (t a subset of NEIGH[p]).
STEPS: tuple[dict[Bitboard, tuple[str, ...]], ...] = tuple(
    {t: tuple(STEP[p][q] for q in _bits_of(t)) for t in (
        sum(BIT[q] for j, q in enumerate(_bits_of(NEIGH[p])) if s >> j & 1)
        for s in range(1 << NEIGH[p].bit_count()))}
    for p in range(24)
)

# V_REACH_LO[v], V_REACH_HI[v]: the points next, along a column, to the points of the low / high
# 12 bits of v.
V_REACH_LO, V_REACH_HI = (_half_unions(V_NEIGH, off) for off in (0, 12))

# STEPPERS_LO[v], STEPPERS_HI[v]: (NEIGH[p], STEPS[p]) for the points p of the low / high 12 bits
# of v, in order (the movement phase is most of a game); MOVERS_LO, MOVERS_HI: (BIT[p], p, NEIGH[p],
# STEPS[p]).
STEPPERS_LO, STEPPERS_HI = (_half_tuples([(NEIGH[p], STEPS[p]) for p in range(24)], off) for off in (0, 12))
MOVERS_LO, MOVERS_HI = (_half_tuples([(BIT[p], p, NEIGH[p], STEPS[p]) for p in range(24)], off)
                        for off in (0, 12))



def _flights(k: int) -> tuple[tuple[tuple[str, ...], ...], ...]:
    """FLY<k>[p][v]: the flights from p to the points of byte k of the empty mask v (p itself
    excluded), each entry built from entry v & (v - 1) as the 12-bit tables are."""
    out = []
    for p in range(24):
        steps, table = STEP[p], [()]
        for v in range(1, 256):
            rest = v & (v - 1)
            q = 8 * k + (v ^ rest).bit_length() - 1
            table.append(table[rest] if q == p else (steps[q],) + table[rest])
        out.append(tuple(table))
    return tuple(out)


FLY0, FLY1, FLY2 = (_flights(k) for k in range(3))


def _move_info() -> dict[str, tuple[int, int, bool, int, int, int]]:
    info = {}
    for q in range(24):
        bq = BIT[q]
        info[POINTS[q]] = (bq, 0, True, -1, q, -1)
        for r, text in enumerate(PLACE_REM[q]):
            if r != q:
                info[text] = (bq, BIT[r], True, -1, q, r)
        for p in range(24):
            if p == q:
                continue
            delta = BIT[p] | bq
            info[STEP[p][q]] = (delta, 0, False, p, q, -1)
            for r, text in enumerate(STEP_REM[p][q]):
                if r != p and r != q:
                    info[text] = (delta, BIT[r], False, p, q, r)
    return info


MOVE_INFO: dict[str, tuple[int, int, bool, int, int, int]] = _move_info()
"""text -> (own_delta, opp_delta, is_placement, from, to, removed) with -1 for no from / removal."""

_MOVE_RE = re.compile(r"([a-z]+\d+)(?:-([a-z]+\d+))?(?:x([a-z]+\d+))?")
_new = object.__new__
_SEAT1 = 1 << 48  # seat 1 in a history key
PLACING_PLIES = 2 * STONES
"""Plies of the placement phase: the side to move at ply p < 18 holds STONES - p // 2 in hand."""

# A state's `_bloom` has bit (key % BLOOM_MOD) set for every history key (w | b << 24 | seat << 48)
# of its history: play counts repetitions only when the bit of the new key was already set.
BLOOM_MOD = 269  # a prime of which 2 is a primitive root: the bits of a key spread over all residues
BLOOM_BITS: tuple[int, ...] = tuple(1 << z for z in range(BLOOM_MOD))

# PLAY_INFO[seat][text] = (own_delta, opp_delta, key_delta, resets) when `seat` moves: the stones
# and the history key of the next position are those of this one xor the deltas; `resets` (a
# placement or a removal) starts a new history.
PLAY_INFO: tuple[dict[str, tuple[int, int, int, bool]], ...] = tuple(
    {text: (od, xd, od << 24 * c | xd << 24 * (1 - c) | _SEAT1, pl or xd != 0)
     for text, (od, xd, pl, _, _, _) in MOVE_INFO.items()}
    for c in (0, 1)
)


class _Side:
    """What the hot paths need while `seat` is to move, one per seat and game (a state's `_side`):
    its PLAY_INFO, the other seat's _Side, and the game's parameters as plain slots, where
    Game.__getattr__ would make every attribute read of the game slow (unspecialised)."""

    __slots__ = ("seat", "info", "other", "rep", "flying", "rep_at", "quiet_at", "cap_at")

    def __init__(self, seat: int, rep: int, flying: bool, quiet: int, cap: int) -> None:
        never = 1 << 62  # the thresholds of the draws, "never" for a rule turned off
        self.seat, self.info, self.other = seat, PLAY_INFO[seat], self
        self.rep, self.flying = bool(rep), flying
        self.rep_at, self.quiet_at, self.cap_at = rep or never, quiet or never, cap or never


class Morris(Game):
    """Nine Men's Morris; `flying` lets a player with 3 stones jump, draws by repetition/quiet plies/cap."""

    name = "morris"
    PARAMS = {"flying": False, "repetition": 3, "quiet_plies": 100, "max_turns": 0}

    def _check_params(self) -> None:
        p = self._params
        rep = p["repetition"]
        if rep < 0 or rep == 1:
            raise ValueError(f"morris: repetition must be 0 (off) or at least 2, got {rep!r}")
        for key in ("quiet_plies", "max_turns"):
            if p[key] < 0:
                raise ValueError(f"morris: {key} must be 0 (off) or positive, got {p[key]!r}")
        # Plain attributes (Game.__getattr__ is slow), and the two seats' _Side for the hot paths.
        self._flying = p["flying"]
        self._rep = rep
        self._quiet = p["quiet_plies"]
        self._cap = p["max_turns"]
        self._sides = tuple(_Side(seat, rep, self._flying, self._quiet, self._cap) for seat in (0, 1))
        self._sides[0].other, self._sides[1].other = self._sides[1], self._sides[0]

    def __getstate__(self) -> dict[str, Any]:  # pickled (a game sent to a worker) as its parameters
        return {"_params": self._params}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._params = state["_params"]
        self._check_params()

    def start(self) -> MorrisState:
        return MorrisState(self, 0, 0, 0, STONES, STONES, 0, 0, (0,) if self._rep else ())

    def parse_move(self, text: str) -> str:
        if text in MOVE_INFO:
            return text
        if not isinstance(text, str):
            raise InvalidMoveError(f"morris: a move is a string, got {text!r}")
        canon = "".join(text.split()).lower()
        if canon in MOVE_INFO:
            return canon
        m = _MOVE_RE.fullmatch(canon)
        if not m:
            raise InvalidMoveError(
                f"morris: {text!r} is not a move (expected d6, d6-d5, a1xg7 or d6-d5xg7)")
        names = [n for n in m.groups() if n is not None]
        for n in names:
            if n not in INDEX:
                raise InvalidMoveError(f"morris: {text!r} is not a move: {n} is not a point of the board")
        raise InvalidMoveError(f"morris: {text!r} is not a move: it names the same point twice")

    def state_from_wire(self, data: dict[str, Any]) -> MorrisState:
        self._check_wire_header(data)

        def field(key: str, kind: type) -> Any:
            if key not in data:
                raise ValueError(f"morris: wire state lacks {key!r}")
            value = data[key]
            if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
                raise ValueError(f"morris: {key!r} must be a {kind.__name__}, got {value!r}")
            return value

        seat = field("seat", int)
        ply = field("ply", int)
        board = field("board", str)
        in_hand = field("in_hand", list)
        quiet = field("quiet", int)
        history = field("history", list)
        if ply < 0:
            raise ValueError(f"morris: 'ply' must be >= 0, got {ply}")
        if seat != ply % 2:
            raise ValueError(f"morris: 'seat' {seat} does not match 'ply' {ply} (seat 0 moves at even plies)")
        if len(board) != 24 or set(board) - set("WB."):
            raise ValueError(f"morris: 'board' must be 24 characters W, B or '.', got {board!r}")
        w = sum(BIT[i] for i, c in enumerate(board) if c == "W")
        b = sum(BIT[i] for i, c in enumerate(board) if c == "B")
        if len(in_hand) != 2 or not all(isinstance(h, int) and not isinstance(h, bool) for h in in_hand):
            raise ValueError(f"morris: 'in_hand' must be two whole numbers, got {in_hand!r}")
        expect = [max(0, STONES - (ply + 1) // 2), max(0, STONES - ply // 2)]
        if in_hand != expect:
            raise ValueError(f"morris: 'in_hand' {in_hand} is impossible at ply {ply} (expected {expect})")
        totals = [w.bit_count() + expect[0], b.bit_count() + expect[1]]
        if max(totals) > STONES:
            raise ValueError(f"morris: too many stones on 'board' for ply {ply}: {board!r}")
        if ply and totals[1 - seat] < 3:
            raise ValueError(f"morris: the side that just moved has {totals[1 - seat]} stones; "
                             f"the game would have ended before: 'board' {board!r}")
        if not 0 <= quiet <= ply:
            raise ValueError(f"morris: 'quiet' must be between 0 and 'ply' ({ply}), got {quiet}")
        key = w | b << 24 | seat << 48
        hist = tuple(history)
        if not all(isinstance(h, int) and not isinstance(h, bool) for h in hist):
            raise ValueError("morris: 'history' must hold whole numbers")
        if not self._rep:
            if hist:
                raise ValueError("morris: 'history' must be empty when repetition is off")
        else:
            if not hist or hist[-1] != key:
                raise ValueError("morris: 'history' must end with the current position "
                                 f"({key}), got {list(hist[-1:])}")
            if len(hist) > quiet + 1 or (ply <= 2 * STONES and len(hist) != 1):
                raise ValueError(f"morris: 'history' has {len(hist)} entries, more than the plies "
                                 "since the last placement or removal allow")
            counts = (w.bit_count(), b.bit_count())
            seen: dict[int, int] = {}
            for i, h in enumerate(hist):
                hw, hb, hs = h & FULL, h >> 24 & FULL, h >> 48
                if (h >> 49 or hw & hb or (hw.bit_count(), hb.bit_count()) != counts
                        or hs != (seat + len(hist) - 1 - i) % 2):
                    raise ValueError(f"morris: 'history' entry {i} ({h}) is not a position of this game")
                seen[h] = seen.get(h, 0) + 1
                if seen[h] >= self._rep and i != len(hist) - 1:
                    raise ValueError(f"morris: 'history' repeats entry {i} ({h}) after the game was drawn")
        if self._quiet and quiet > self._quiet or self._cap and ply > self._cap:
            raise ValueError(f"morris: 'quiet' {quiet} or 'ply' {ply} lies past the end of the game")
        state = MorrisState(self, w, b, seat, expect[0], expect[1], ply, quiet, hist)
        if "outcome" not in data:
            raise ValueError("morris: wire state lacks 'outcome'")
        outcome = state.outcome
        if data["outcome"] != (None if outcome is None else outcome.to_wire()):
            raise ValueError(f"morris: 'outcome' {data['outcome']!r} does not match the position "
                             f"({outcome!r})")
        return state


class MorrisState(State):
    """A position: both sides' stones (bitboards), counters and repetition history. The seat to move
    and the stones in hand follow from the ply (seat ply % 2; STONES - ply // 2 for the side to move
    during the placement phase): states do not hold them."""

    # The side to move's stones come first (own), the other side's second (opp): the hot paths need
    # no case on the seat. _w, _b give them by colour.
    __slots__ = ("_own", "_opp", "_side", "_quiet", "_hist", "_bloom", "_due", "_moves", "_outcome")

    def __init__(self, game: Morris, w: Bitboard, b: Bitboard, seat: int, hw: int, hb: int,
                 ply: int, quiet: int, hist: tuple[int, ...]) -> None:
        """`seat`, `hw` and `hb` are those of `ply` (state_from_wire checks them): not kept."""
        self.game = game
        self._own, self._opp = (b, w) if seat else (w, b)
        self._side: _Side = game._sides[seat]  # type: ignore[attr-defined]
        self._ply = ply
        self._quiet = quiet
        self._hist = hist  # positions (w | b<<24 | seat<<48) since the last placement or removal
        # A Bloom filter of the history (play counts repetitions only when it hits), and the ply
        # from which the position is a draw: 0 when repeated, else that of the quiet plies or of
        # the move limit (the same for the plies after it until a removal).
        self._bloom = 0
        for h in hist:
            self._bloom |= BLOOM_BITS[h % BLOOM_MOD]
        side = self._side
        repeated = hist and hist.count(hist[-1]) >= side.rep_at
        self._due = 0 if repeated else min(ply - quiet + side.quiet_at, side.cap_at)
        # Filled by _analyse on first use, _outcome only for a finished game (no moves).
        self._moves: list[str] | None = None

    @property
    def _hown(self) -> int:
        """The side to move's stones in hand."""
        return STONES - (self._ply >> 1) if self._ply < PLACING_PLIES else 0

    @property
    def _hopp(self) -> int:
        """The other side's stones in hand."""
        return STONES - ((self._ply + 1) >> 1) if self._ply < PLACING_PLIES else 0

    @property
    def _w(self) -> Bitboard:
        return self._opp if self._ply & 1 else self._own

    @property
    def _b(self) -> Bitboard:
        return self._own if self._ply & 1 else self._opp

    @property
    def _hw(self) -> int:
        return self._hopp if self._ply & 1 else self._hown

    @property
    def _hb(self) -> int:
        return self._hown if self._ply & 1 else self._hopp

    # --- API ---
    @property
    def seat(self) -> int:
        return self._ply & 1

    @property
    def outcome(self) -> Outcome | None:
        if self._moves is None:
            self._analyse()
        return None if self._moves else self._outcome

    def legal_moves(self) -> list[str]:
        try:
            return self._moves.copy()  # type: ignore[union-attr]
        except AttributeError:  # None: not analysed yet
            self._analyse()
            return self._moves.copy()  # type: ignore[union-attr]

    def stones(self, seat: int) -> list[str]:
        """The points holding `seat`'s stones."""
        return [POINTS[i] for i in _indices(self._b if seat else self._w)]

    @property
    def bitboards(self) -> tuple[Bitboard, Bitboard]:
        """(White's, Black's) stones as 24-bit boards, bit i being POINTS[i]."""
        return (self._opp, self._own) if self._ply & 1 else (self._own, self._opp)

    def in_hand(self, seat: int) -> int:
        return self._hown if seat == self._ply & 1 else self._hopp

    def play(self, move: str) -> MorrisState:
        try:
            illegal = move not in self._moves  # type: ignore[operator]
        except TypeError:  # None: not analysed yet
            self._analyse()
            illegal = move not in self._moves  # type: ignore[operator]
        if illegal:
            moves = self._moves
            info = MOVE_INFO.get(move)
            if info is None:
                move = self.game.parse_move(move)
                if move not in moves:  # type: ignore[operator]
                    raise self._illegal(move)
            else:
                raise self._illegal(move)
        side = self._side
        own_delta, opp_delta, key_delta, resets = side.info[move]
        # The new state is filled in directly (no __init__ call): play is the hot path of searches.
        new = _new(MorrisState)
        new.game = self.game
        new._side = side.other
        new._ply = self._ply + 1
        new._own = self._opp ^ opp_delta  # the opponent moves next
        new._opp = self._own ^ own_delta
        if opp_delta:
            new._quiet = 0
            due = self._ply + 1 + side.quiet_at
            if due > side.cap_at:
                due = side.cap_at
        else:
            new._quiet = self._quiet + 1
            due = self._due
        if side.rep:
            key = self._hist[-1] ^ key_delta  # w | b << 24 | seat << 48
            bit = BLOOM_BITS[key % BLOOM_MOD]
            if resets:
                new._hist = (key,)
                new._bloom = bit
            else:
                new._hist = hist = self._hist + (key,)
                bloom = self._bloom
                new._bloom = bloom | bit
                if bloom & bit and hist.count(key) >= side.rep_at:
                    due = 0
        else:
            new._hist = ()
            new._bloom = 0
        new._due = due
        new._moves = None
        return new

    # --- the one place that decides moves and outcome ---
    def is_over(self) -> bool:
        """Whether the game is over; the first call decides the legal moves and the outcome (it is
        also `_analyse`, so that the first question of a playout costs one call)."""
        if self._moves is not None:
            return not self._moves
        own, opp, ply = self._own, self._opp, self._ply
        lo, hi = own & 4095, own >> 12
        count = ONES[lo] + ONES[hi]
        if count <= 2 and (ply >= PLACING_PLIES or count + STONES - (ply >> 1) <= 2):
            self._moves = []
            self._outcome = Outcome(1 - (ply & 1), "two stones")
            return True
        empty = FULL ^ own ^ opp
        # The empty points that would complete a horizontal (hc) or vertical (vc) mill of own stones.
        hc = H_MILLS_LO[lo] & H_MILLS_HI[hi] & empty
        vc = V_MILLS_LO[lo] & V_MILLS_HI[hi] & empty
        if ply < PLACING_PLIES:
            closing = hc | vc
            plain = empty ^ closing
            if closing and opp:
                moves = [*PLACE_LO[plain & 4095], *PLACE_HI[plain >> 12]]
                pick = _picker(opp)
                for q in IDX_LO[closing & 4095] + IDX_HI[closing >> 12]:
                    moves += pick(PLACE_REM[q])
            else:  # closing points (only when the opponent has no stone on the board) come last
                moves = [*PLACE_LO[plain & 4095], *PLACE_HI[plain >> 12],
                         *PLACE_LO[closing & 4095], *PLACE_HI[closing >> 12]]
        elif count == 3 and self._side.flying:
            moves = []
            e0, e1, e2 = empty & 255, empty >> 8 & 255, empty >> 16
            pick = _picker(opp) if (hc or vc) and opp else None
            for p in IDX_LO[lo] + IDX_HI[hi]:
                cl = ((hc & ~ROW_MILL_OF[p]) | (vc & ~COL_MILL_OF[p])) if pick else 0
                if cl:
                    plain = empty & ~cl
                    moves += FLY0[p][plain & 255] + FLY1[p][plain >> 8 & 255] + FLY2[p][plain >> 16]
                    table = STEP_REM[p]
                    for q in IDX_LO[cl & 4095] + IDX_HI[cl >> 12]:
                        moves += pick(table[q])
                else:
                    moves += FLY0[p][e0] + FLY1[p][e1] + FLY2[p][e2]
        else:
            moves = []
            # The stones that can close a mill: next to a closing point along the other line (a step
            # along a column closes a row mill, a step along a row a column mill).
            closers = own & (V_REACH_LO[hc & 4095] | V_REACH_HI[hc >> 12]
                             | (vc >> 1 & _LO_MID) | (vc << 1 & _MID_HI)) if (hc or vc) and opp else 0
            if not closers:
                for neigh, steps in STEPPERS_LO[lo] + STEPPERS_HI[hi]:
                    moves += steps[neigh & empty]
            else:
                pick = _picker(opp)
                for bit, p, neigh, steps in MOVERS_LO[lo] + MOVERS_HI[hi]:
                    if closers & bit:
                        cl = (V_NEIGH[p] & hc) | (H_NEIGH[p] & vc)
                        moves += steps[neigh & empty ^ cl]
                        table = STEP_REM[p]
                        for q in IDX_LO[cl & 4095] + IDX_HI[cl >> 12]:
                            moves += pick(table[q])
                    else:
                        moves += steps[neigh & empty]
        self._moves = moves
        if not moves:
            self._outcome = Outcome(1 - (ply & 1), "no legal move")
            return True
        if ply < self._due:
            return False
        side, hist = self._side, self._hist
        if hist and hist.count(hist[-1]) >= side.rep_at:
            self._outcome = Outcome(None, "repetition")
        elif self._quiet >= side.quiet_at:
            self._outcome = Outcome(None, "quiet plies")
        else:
            self._outcome = Outcome(None, "move limit")
        self._moves = []
        return True

    _analyse = is_over

    def _illegal(self, move: str) -> IllegalMoveError:
        """Why the well-formed canonical `move` is not legal here."""
        if self.is_over():
            return self._over_error(move)
        _, _, placing, frm, to, rem = MOVE_INFO[move]
        seat = self.seat
        me, them = COLOR_NAMES[seat], COLOR_NAMES[1 - seat]
        own, opp, hand = self._own, self._opp, self._hown

        def err(why: str) -> IllegalMoveError:
            return IllegalMoveError(f"{move!r} is illegal: {why}")

        if placing and not hand:
            return err(f"{me} has no stones left in hand and must move a stone along a line")
        if not placing and hand:
            return err(f"{me} still has {hand} stone(s) in hand to place first")
        if not placing and not own & BIT[frm]:
            return err(f"{POINTS[frm]} holds no {me} stone")
        if (own | opp) & BIT[to]:
            return err(f"{POINTS[to]} is occupied")
        flying = self.game._flying and own.bit_count() == 3  # type: ignore[attr-defined]
        if not placing and not flying and not NEIGH[frm] & BIT[to]:
            return err(f"{POINTS[frm]} and {POINTS[to]} are not adjacent"
                       + ("" if self.game._flying else " (flying is off)"))  # type: ignore[attr-defined]
        after = own ^ BIT[to] ^ (BIT[frm] if frm >= 0 else 0)
        closes = any(after & m == m for m in (ROW_MILL_OF[to], COL_MILL_OF[to]))
        if rem < 0:
            if closes:
                return err(f"it closes a mill, so it must name the {them} stone to remove "
                           f"(e.g. {move}x{POINTS[_indices(_removable(opp))[0]]})")
            return err("not a legal move here")
        if not closes:
            return err(f"it closes no mill, so no stone may be removed ({POINTS[rem]})")
        if not opp & BIT[rem]:
            return err(f"{POINTS[rem]} holds no {them} stone")
        if not _removable(opp) & BIT[rem]:
            return err(f"{POINTS[rem]} stands in a mill and {them} has stones outside mills")
        return err("not a legal move here")

    # --- display and wire ---
    def _board_string(self) -> str:
        w, b = self._w, self._b
        return "".join("W" if w >> i & 1 else "B" if b >> i & 1 else "." for i in range(24))

    def render(self, highlight: str | None = None) -> str:
        marks: set[int] = set()
        if highlight:
            info = MOVE_INFO.get(highlight)
            if info is None:
                try:
                    info = MOVE_INFO[self.game.parse_move(highlight)]
                except InvalidMoveError:
                    info = None
            if info is not None:
                marks = {i for i in info[3:] if i >= 0}
        grid = [list(line.ljust(30)) for line in _BOARD_ART]
        cells = self._board_string()
        for i, name in enumerate(POINTS):
            x, y = 4 * (ord(name[0]) - 97) + 4, 2 * (7 - int(name[1]))
            grid[y][x] = cells[i]
            if i in marks:
                grid[y][x - 1], grid[y][x + 1] = "[", "]"
        lines = ["".join(row).rstrip() for row in grid]
        lines.append("    a   b   c   d   e   f   g")
        for s in (0, 1):
            n = (self._b if s else self._w).bit_count()
            lines.append(f"{COLOR_NAMES[s]} ({'WB'[s]}): {n} on board, "
                         f"{self._hb if s else self._hw} in hand")
        outcome = self.outcome
        if outcome is None:
            lines.append(f"{COLOR_NAMES[self.seat]} (seat {self.seat}) to move, ply {self._ply}, "
                         f"{self._quiet} plies without removal")
        elif outcome.winner is None:
            lines.append(f"Game over: draw ({outcome.reason})")
        else:
            lines.append(f"Game over: {COLOR_NAMES[outcome.winner]} (seat {outcome.winner}) wins "
                         f"({outcome.reason})")
        return "\n".join(lines)

    def to_wire(self) -> dict[str, Any]:
        return {
            "game": "morris",
            "params": self.game.params,
            "seat": self.seat,
            "ply": self._ply,
            "board": self._board_string(),
            "in_hand": [self._hw, self._hb],
            "quiet": self._quiet,
            "history": list(self._hist),
            "outcome": None if self.outcome is None else self.outcome.to_wire(),
        }

    def __reduce__(self) -> tuple:  # pickled as its fields, without the move tables of its _side
        return MorrisState, (self.game, self._w, self._b, self._ply & 1, self._hw, self._hb, self._ply,
                             self._quiet, self._hist)

    def _key(self) -> tuple:  # the seat and the stones in hand follow from the ply
        return (self._own, self._opp, self._ply, self._quiet, self._hist)


_BOARD_ART = (
    "7   .-----------.-----------.",
    "    |           |           |",
    "6   |   .-------.-------.   |",
    "    |   |       |       |   |",
    "5   |   |   .---.---.   |   |",
    "    |   |   |       |   |   |",
    "4   .---.---.       .---.---.",
    "    |   |   |       |   |   |",
    "3   |   |   .---.---.   |   |",
    "    |   |       |       |   |",
    "2   |   .-------.-------.   |",
    "    |           |           |",
    "1   .-----------.-----------.",
)
