"""Static evaluations per game: simple (greedy), medium (minimax, where it has one) and strong (champion).

Every function has the search's signature `evaluate(state, move) -> score`: the score of a running
game for the side to move (`state.seat`), where `move` is the move that led to `state`. Finished
games never reach an evaluation (the search scores them with `search.terminal_score`). Scores stay
below a few thousand, far from `search.WIN`.

The medium evaluation exists where the simple one makes minimax's extra depth worthless (MEDIUM:
Domineering, whose bare mobility scored minimax 50% against greedy; Santorini, whose f of the last
move left minimax at depth 2 judging its move by the reply alone: 60%); elsewhere it is the simple one.

Some evaluations read the rules' bitboards (`FreedomState.bitboards`, `MorrisState.bitboards`): they
are the fast path of a hot loop, and the tests run every evaluation over random positions of every game.
"""
from __future__ import annotations

from collections.abc import Callable
from functools import cache
from types import ModuleType

from rules import State

Evaluate = Callable[[State, "str | None"], float]


# --- Freedom --------------------------------------------------------------------------------------
def freedom_simple(state: State, move: str | None = None) -> float:
    """Alive stones (stones in runs of exactly four) of the side to move minus the opponent's."""
    alive = state.alive_stones()  # type: ignore[attr-defined]
    return alive[state.seat] - alive[1 - state.seat]


@cache
def _freedom_windows(size: int) -> tuple[tuple[int, int], ...]:
    """Per direction: (shift, start cells of four-in-a-line windows that stay on the board)."""
    out = []
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
        starts = 0
        for r in range(size):
            for c in range(size):
                if 0 <= r + 3 * dr < size and 0 <= c + 3 * dc < size:
                    starts |= 1 << (r * size + c)
        out.append((dr * size + dc, starts))
    return tuple(out)


def _freedom_potential(own: int, opp: int, windows: tuple[tuple[int, int], ...]) -> int:
    """Windows of four free of `opp`, weighted by how many of `own`'s stones they already hold."""
    score = 0
    for shift, starts in windows:
        free = ~opp
        f = free & (free >> shift) & (free >> 2 * shift) & (free >> 3 * shift) & starts
        if not f:
            continue
        a, b, c, d = own, own >> shift, own >> 2 * shift, own >> 3 * shift
        two = ((a & (b | c | d)) | (b & (c | d)) | (c & d)) & f
        three = ((a & b & (c | d)) | (c & d & (a | b))) & f
        score += two.bit_count() + 2 * three.bit_count()
    return score


def freedom_strong(state: State, move: str | None = None) -> float:
    """10 per alive-stone lead, plus the lead in open windows of four holding two or three own stones."""
    seat = state.seat
    alive = state.alive_stones()  # type: ignore[attr-defined]
    stones = state.bitboards  # type: ignore[attr-defined]
    windows = _freedom_windows(state.game.size)  # type: ignore[attr-defined]
    own, opp = stones[seat], stones[1 - seat]
    potential = _freedom_potential(own, opp, windows) - _freedom_potential(opp, own, windows)
    return 10 * (alive[seat] - alive[1 - seat]) + potential


# --- Domineering ----------------------------------------------------------------------------------
@cache
def _domineering_masks(rows: int, cols: int) -> tuple[int, int, int, int, int]:
    """(full board, vertical starts, horizontal starts, cells with a left neighbour, with a right one)."""
    n = rows * cols
    full = (1 << n) - 1
    vstart = (1 << (n - cols)) - 1 if rows > 1 else 0
    row = (1 << (cols - 1)) - 1
    hstart = sum(row << (r * cols) for r in range(rows))
    has_left = sum((row << 1) << (r * cols) for r in range(rows))
    return full, vstart, hstart, has_left, hstart


def _domineering_counts(state: State) -> tuple[int, int, int, int]:
    """(vertical moves, horizontal moves, safe vertical moves, safe horizontal moves).

    A safe move is one the opponent can never take away: both its cells are walled in across the
    opponent's orientation (by dominoes or the edge).
    """
    game = state.game
    cols = game.cols  # type: ignore[attr-defined]
    full, vstart, hstart, has_left, has_right = _domineering_masks(game.rows, cols)  # type: ignore[attr-defined]
    free = full & ~(state.x | state.o)  # type: ignore[attr-defined]
    vert = free & (free >> cols) & vstart
    horiz = free & (free >> 1) & hstart
    # cells no horizontal domino can cover: left and right neighbours occupied or off the board
    h_blocked = free & ~((free << 1) & has_left) & ~((free >> 1) & has_right)
    v_blocked = free & ~(free << cols) & ~(free >> cols)
    safe_v = vert & h_blocked & (h_blocked >> cols)
    safe_h = horiz & v_blocked & (v_blocked >> 1)
    return vert.bit_count(), horiz.bit_count(), safe_v.bit_count(), safe_h.bit_count()


def _domineering_mine_vertical(state: State) -> bool:
    return state.game.orientation(state.seat) == "vertical"  # type: ignore[attr-defined]


def domineering_simple(state: State, move: str | None = None) -> float:
    """Mobility: the side to move's legal placements minus the opponent's."""
    vert, horiz, _, _ = _domineering_counts(state)
    return vert - horiz if _domineering_mine_vertical(state) else horiz - vert


def domineering_medium(state: State, move: str | None = None) -> float:
    """Mobility plus the lead in safe moves (moves the opponent cannot block)."""
    vert, horiz, safe_v, safe_h = _domineering_counts(state)
    score = (vert - horiz) + (safe_v - safe_h)
    return score if _domineering_mine_vertical(state) else -score


def _disjoint(starts: int, shift: int) -> int:
    """The most placements that fit at once among `starts` (start cells; a placement covers start and
    start + shift): along each line, the first start of every chain of overlapping ones, then on."""
    count = 0
    while starts:
        first = starts & ~(starts << shift)  # starts whose predecessor is not a start
        count += first.bit_count()
        starts &= ~(first | (first << shift))  # the next start overlaps the one taken
    return count


def domineering_strong(state: State, move: str | None = None) -> float:
    """Mobility, twice the lead in safe moves (moves the opponent cannot block), and twice the lead in
    room: the most placements each side could still fit at once."""
    game = state.game
    cols = game.cols  # type: ignore[attr-defined]
    full, vstart, hstart, _, _ = _domineering_masks(game.rows, cols)  # type: ignore[attr-defined]
    vert, horiz, safe_v, safe_h = _domineering_counts(state)
    free = full & ~(state.x | state.o)  # type: ignore[attr-defined]
    room = _disjoint(free & (free >> cols) & vstart, cols) - _disjoint(free & (free >> 1) & hstart, 1)
    score = (vert - horiz) + 2 * (safe_v - safe_h) + 2 * room
    return score if _domineering_mine_vertical(state) else -score


# --- Nine Men's Morris ----------------------------------------------------------------------------
@cache
def _morris() -> ModuleType:
    """rules.morris, imported on first use: its tables cost every bot process ~0.1-0.2 s at start,
    and most play another game."""
    from rules import morris

    return morris


def _morris_boards(state: State) -> tuple[int, int]:
    """(side to move's stones, opponent's stones) as 24-bit boards."""
    w, b = state.bitboards  # type: ignore[attr-defined]
    return (b, w) if state.seat else (w, b)


def morris_simple(state: State, move: str | None = None) -> float:
    """Material: stones on the board and in hand of the side to move minus the opponent's."""
    own, opp = _morris_boards(state)
    seat = state.seat
    return (own.bit_count() + state.in_hand(seat)) - (opp.bit_count() + state.in_hand(1 - seat))  # type: ignore[attr-defined]


def _morris_features(own: int, opp: int) -> tuple[int, int]:
    """(mills of `own`, open twos: lines with two own stones and an empty third point)."""
    mills = twos = 0
    for mill in _morris().MILLS:
        mine = own & mill
        if mine == mill:
            mills += 1
        elif not opp & mill and mine.bit_count() == 2:
            twos += 1
    return mills, twos


def _morris_blocked(own: int, opp: int) -> int:
    """Stones of `own` with no empty neighbour (they cannot move)."""
    morris = _morris()
    empty = morris.FULL & ~(own | opp)
    return sum(1 for i in range(24) if own >> i & 1 and not morris.NEIGH[i] & empty)


def morris_strong(state: State, move: str | None = None) -> float:
    """Material (x100), mills (x10), open twos (x5) and, once placing is over, blocked stones (x4)."""
    own, opp = _morris_boards(state)
    seat = state.seat
    hand_own, hand_opp = state.in_hand(seat), state.in_hand(1 - seat)  # type: ignore[attr-defined]
    score = 100 * ((own.bit_count() + hand_own) - (opp.bit_count() + hand_opp))
    mills_own, twos_own = _morris_features(own, opp)
    mills_opp, twos_opp = _morris_features(opp, own)
    score += 10 * (mills_own - mills_opp) + 5 * (twos_own - twos_opp)
    if not hand_own and not hand_opp:
        score += 4 * (_morris_blocked(opp, own) - _morris_blocked(own, opp))
    return score


# --- Santorini ------------------------------------------------------------------------------------
class _Board:
    """rules.santorini's tables, imported on first use (as rules.morris: most bots play another game)."""

    def __init__(self) -> None:
        from rules import santorini

        self.index: dict[str, int] = santorini.SQUARE_INDEX
        self.size: int = santorini.SIZE
        self.neighbours: tuple[tuple[int, ...], ...] = santorini.NEIGHBOURS
        centre = (self.size * self.size) // 2
        self.centre = tuple(2 - self.distance(s, centre) for s in range(self.size * self.size))
        """2 on the centre square, 1 on the ring around it, 0 on the edge."""

    def distance(self, a: int, b: int) -> int:
        """King-move distance between two squares."""
        size = self.size
        return max(abs(a // size - b // size), abs(a % size - b % size))


@cache
def _board() -> _Board:
    return _Board()


def santorini_f(state: State, move: str) -> int:
    """The assignment's f = m + l for `move`, which led to `state`, from the mover's point of view.

    m: the level of the square moved to. l: the level of the built square after the build (a dome
    counts 4) times (sum of the opponent workers' distances to it - sum of the mover's workers'
    distances to it), king-move distance, the mover's workers where they stand after the move.
    A setup move (placing workers) has no move or build: f = 0.
    """
    squares = move.split()
    if state.ply <= 2 or len(squares) != 3:
        return 0
    board = _board()
    index, distance = board.index, board.distance
    to, built = index[squares[1]], index[squares[2]]
    mover = 1 - state.seat
    m = state.level(to)  # type: ignore[attr-defined]
    own = sum(distance(index[w], built) for w in state.workers(mover))  # type: ignore[attr-defined]
    opp = sum(distance(index[w], built) for w in state.workers(1 - mover))  # type: ignore[attr-defined]
    return m + state.level(built) * (opp - own)  # type: ignore[attr-defined]


def santorini_simple(state: State, move: str | None = None) -> float:
    """The assignment's f = m + l of the last move, negated: it was the opponent of the side to move."""
    return -santorini_f(state, move) if move is not None else 0


_HEIGHT = (0, 10, 30, 0, 0)  # a worker's worth by the level it stands on (never 3 or 4 in a running game)


def _santorini_side(levels: tuple[int, ...], workers: tuple[int, ...], blocked: set[int]) -> int:
    """One side's worth: worker heights, centrality, and squares one step up or level within reach."""
    score = 0
    board = _board()
    neighbours, centre = board.neighbours, board.centre
    for w in workers:
        h = levels[w]
        score += _HEIGHT[h] + 2 * centre[w]
        for t in neighbours[w]:
            lt = levels[t]
            if t in blocked or lt > h + 1 or lt == 4:
                continue
            score += 4 if lt == h + 1 else 1
            if h == 2 and lt == 3:
                score += 25  # a winning step is open
    return score


def santorini_strong(state: State, move: str | None = None) -> float:
    """Own minus opponent's: worker heights (10, 30), reachable up-steps, open level-3 steps, centrality."""
    if state.ply < 2:
        return 0
    seat = state.seat
    levels = tuple(state.level(s) for s in range(25))  # type: ignore[attr-defined]
    index = _board().index
    own = tuple(index[w] for w in state.workers(seat))  # type: ignore[attr-defined]
    opp = tuple(index[w] for w in state.workers(1 - seat))  # type: ignore[attr-defined]
    blocked = set(own + opp)
    return _santorini_side(levels, own, blocked) - _santorini_side(levels, opp, blocked)


def santorini_medium(state: State, move: str | None = None) -> float:
    """The assignment's f of the last move (as santorini_simple) plus the lead in worker heights (10, 30).

    The heights keep the side's own climbs in view at even depths, where the last move is the reply."""
    score = santorini_simple(state, move)
    if state.ply < 2:
        return score
    levels, workers = state._levels, state._workers  # type: ignore[attr-defined]
    seat = state.seat
    own = sum(_HEIGHT[levels[w]] for w in workers[2 * seat:2 * seat + 2])
    opp = sum(_HEIGHT[levels[w]] for w in workers[2 - 2 * seat:4 - 2 * seat])
    return score + own - opp


# --- Fanorona -------------------------------------------------------------------------------------
def _fanorona_boards(state: State) -> tuple[int, int]:
    """(side to move's stones, opponent's stones) as bitboards."""
    white, black = state.white, state.black  # type: ignore[attr-defined]
    return (black, white) if state.seat else (white, black)


def fanorona_simple(state: State, move: str | None = None) -> float:
    """Material: the side to move's stones minus the opponent's."""
    own, opp = _fanorona_boards(state)
    return own.bit_count() - opp.bit_count()


@cache
def _fanorona_strong_points(rows: int, cols: int) -> int:
    """The points with diagonal lines (even column + row), which reach eight neighbours."""
    return sum(1 << (r * cols + c) for r in range(rows) for c in range(cols) if (r + c) % 2 == 0)


def fanorona_strong(state: State, move: str | None = None) -> float:
    """Material (x100, with the move limit's three-stone lead in mind) plus stones on strong points."""
    own, opp = _fanorona_boards(state)
    game = state.game
    strong = _fanorona_strong_points(game.rows, game.cols)  # type: ignore[attr-defined]
    lead = own.bit_count() - opp.bit_count()
    score = 100 * lead + 3 * ((own & strong).bit_count() - (opp & strong).bit_count())
    limit = game.move_limit  # type: ignore[attr-defined]
    if limit and limit - state.ply <= 4:  # near the move limit a lead of three decides the game
        score += 200 if lead >= 3 else -200 if lead <= -3 else 0
    return score


def fanorona_capture(state: State, move: str | None = None) -> float:
    """Material (x100) plus half a stone for each stone of the biggest capture the side to move has.

    Alphabeta's: its depth-3 leaves leave the opponent to move, and material alone misses the
    capture that side must make there (the horizon minimax's even depth does not have)."""
    own, opp = _fanorona_boards(state)
    return 100 * (own.bit_count() - opp.bit_count()) + 50 * state.most_captured()  # type: ignore[attr-defined]


def fanorona_noisy(state: State) -> bool:
    """True when the side to move must capture (captures are compulsory): material is about to change."""
    return state.must_capture  # type: ignore[attr-defined]


NOISY: dict[str, Callable[[State], bool]] = {
    "fanorona": fanorona_noisy,
}
"""Per game, a test for positions the champion searches past its horizon (see search.Searcher)."""

NOISY_ORDER: dict[str, Callable[[str], int]] = {
    "fanorona": len,
}
"""Per game, a key ordering a noisy position's moves, largest first: Fanorona's longer paths capture more."""

SIMPLE: dict[str, Evaluate] = {
    "freedom": freedom_simple,
    "domineering": domineering_simple,
    "morris": morris_simple,
    "santorini": santorini_simple,
    "fanorona": fanorona_simple,
}
"""The simple evaluation of each game: greedy's, and minimax's and alphabeta's where they have no other."""

MEDIUM: dict[str, Evaluate] = {
    "domineering": domineering_medium,
    "santorini": santorini_medium,
}
"""Minimax's evaluation where the simple one makes its depth worthless (see the module doc); alphabeta
uses Santorini's too (bots.players.AlphaBeta)."""

STRONG: dict[str, Evaluate] = {
    "freedom": freedom_strong,
    "domineering": domineering_strong,
    "morris": morris_strong,
    "santorini": santorini_strong,
    "fanorona": fanorona_strong,
}
"""The champion's evaluation of each game."""


def simple(game: str) -> Evaluate:
    """The simple evaluation for `game` (a rules name); ValueError for a game without one."""
    return _pick(SIMPLE, game)


def medium(game: str) -> Evaluate:
    """Minimax's evaluation for `game`: MEDIUM's, else the simple one; ValueError for an unknown game."""
    return MEDIUM.get(game) or _pick(SIMPLE, game)


def strong(game: str) -> Evaluate:
    """The champion's evaluation for `game`; ValueError for a game without one."""
    return _pick(STRONG, game)


def _pick(table: dict[str, Evaluate], game: str) -> Evaluate:
    try:
        return table[game]
    except KeyError:
        raise ValueError(f"no evaluation for game {game!r} (known: {', '.join(sorted(table))})") from None
