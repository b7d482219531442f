"""The corpus of benchmarks/similarity.py (and of tests/test_course_similarity.py): twelve honest
Domineering bots, each written from the Python stdio kit (examples/kits/python-stdio/bot.py) with
its own choose() and helpers, and copies planted among them (renamed identifiers, reordered
functions, recommented and reformatted, split over two files, pasted from the shipped reference
bots in bots/). `corpus()` gives the sources and the pairs that ARE copies."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KIT = ROOT / "examples" / "kits" / "python-stdio" / "bot.py"
KIT_CHOOSE = '''def choose(game, params, seat, position, moves, legal, time_left_s):
    """Your search goes here: `position` is the current position (read_position's dict), `moves`
    every move so far, `legal` the legal moves (never empty); answer within `time_left_s` seconds."""
    return legal[0]
'''

HONEST = {
    "h01": '''
def play(board, move, vertical):
    r, c = int(move[:-1]) - 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZ".index(move[-1])
    rows = [list(row) for row in board]
    rows[r][c] = "X"
    if vertical:
        rows[r + 1][c] = "X"
    else:
        rows[r][c + 1] = "X"
    return ["".join(row) for row in rows]


def choose(game, params, seat, position, moves, legal, time_left_s):
    """Greedy: the move after which I keep the most moves and the opponent the fewest."""
    board = position["board"].split(",")
    vertical = (position["seat"] == "0") == (params.get("first", "vertical") == "vertical")
    best, best_score = legal[0], -1000
    for move in legal:
        after = play(board, move, vertical)
        mine = count(after, vertical)
        theirs = count(after, not vertical)
        if mine - theirs > best_score:
            best, best_score = move, mine - theirs
    return best


def count(board, vertical):
    n = 0
    for r in range(len(board)):
        for c in range(len(board[r])):
            if board[r][c] != ".":
                continue
            if vertical and r + 1 < len(board) and board[r + 1][c] == ".":
                n += 1
            if not vertical and c + 1 < len(board[r]) and board[r][c + 1] == ".":
                n += 1
    return n
''',
    "h02": '''
import random


def choose(game, params, seat, position, moves, legal, time_left_s):
    # pick the move nearest the middle of the board, ties at random
    board = position["board"].split(",")
    mid_r, mid_c = (len(board) - 1) / 2, (len(board[0]) - 1) / 2
    scored = []
    for m in legal:
        row = int(m[:-1]) - 1
        col = ord(m[-1]) - ord("A")
        scored.append((abs(row - mid_r) + abs(col - mid_c), random.random(), m))
    scored.sort()
    return scored[0][2]
''',
    "h03": '''
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def cells(move, vertical):
    r = int(move[:-1]) - 1
    c = LETTERS.index(move[-1])
    return [(r, c), (r + 1, c)] if vertical else [(r, c), (r, c + 1)]


def choose(game, params, seat, position, moves, legal, time_left_s):
    """Block: the move that takes away most of the opponent's places."""
    board = position["board"].split(",")
    me_vertical = (position["seat"] == "0") == (params.get("first", "vertical") == "vertical")
    theirs = legal_moves(game, {**params}, {**position, "seat": "1" if position["seat"] == "0" else "0"})
    taken = {}
    for m in theirs:
        for cell in cells(m, not me_vertical):
            taken[cell] = taken.get(cell, 0) + 1
    def blocked(m):
        return sum(taken.get(cell, 0) for cell in cells(m, me_vertical))
    return max(legal, key=blocked)
''',
    "h04": '''
import time

COLS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


class Board:
    def __init__(self, text):
        self.grid = [list(r) for r in text.split(",")]

    def copy(self):
        b = Board("x")
        b.grid = [r[:] for r in self.grid]
        return b

    def moves(self, vert):
        out = []
        for i, row in enumerate(self.grid):
            for j, cell in enumerate(row):
                if cell == "." and vert and i + 1 < len(self.grid) and self.grid[i + 1][j] == ".":
                    out.append((i, j))
                elif cell == "." and not vert and j + 1 < len(row) and row[j + 1] == ".":
                    out.append((i, j))
        return out

    def put(self, i, j, vert):
        self.grid[i][j] = "#"
        if vert:
            self.grid[i + 1][j] = "#"
        else:
            self.grid[i][j + 1] = "#"


def negamax(board, vert, depth):
    options = board.moves(vert)
    if not options:
        return -100
    if depth == 0:
        return len(options) - len(board.moves(not vert))
    best = -1000
    for i, j in options:
        child = board.copy()
        child.put(i, j, vert)
        best = max(best, -negamax(child, not vert, depth - 1))
    return best


def choose(game, params, seat, position, moves, legal, time_left_s):
    start = time.monotonic()
    board = Board(position["board"])
    vert = (position["seat"] == "0") == (params.get("first", "vertical") == "vertical")
    best, value = legal[0], -10000
    for i, j in board.moves(vert):
        if time.monotonic() - start > time_left_s / 4:
            break
        child = board.copy()
        child.put(i, j, vert)
        v = -negamax(child, not vert, 1)
        if v > value:
            best, value = f"{i + 1}{COLS[j]}", v
    return best
''',
    "h05": '''
def choose(game, params, seat, position, moves, legal, time_left_s):
    """Corners and edges first: they waste the fewest of my own squares."""
    board = position["board"].split(",")
    h, w = len(board), len(board[0])

    def edge_score(m):
        r, c = int(m[:-1]) - 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZ".find(m[-1])
        s = 0
        if r == 0 or r >= h - 2:
            s += 2
        if c == 0 or c >= w - 2:
            s += 2
        return s

    return sorted(legal, key=edge_score, reverse=True)[0]
''',
    "h06": '''
import random


def after(board, move, vertical):
    b = [list(x) for x in board]
    row, col = int(move[:-1]) - 1, ord(move[-1]) - 65
    b[row][col] = "o"
    if vertical:
        b[row + 1][col] = "o"
    else:
        b[row][col + 1] = "o"
    return b


def options(b, vertical):
    found = []
    for row in range(len(b)):
        for col in range(len(b[0])):
            if b[row][col] == "." and vertical and row + 1 < len(b) and b[row + 1][col] == ".":
                found.append(f"{row + 1}{chr(65 + col)}")
            if b[row][col] == "." and not vertical and col + 1 < len(b[0]) and b[row][col + 1] == ".":
                found.append(f"{row + 1}{chr(65 + col)}")
    return found


def rollout(b, vertical, rng):
    me = vertical
    while True:
        opts = options(b, vertical)
        if not opts:
            return vertical != me
        b = after(b, rng.choice(opts), vertical)
        vertical = not vertical


def choose(game, params, seat, position, moves, legal, time_left_s):
    """Monte Carlo: random playouts after each move, the move that wins most."""
    rng = random.Random(len(moves))
    board = position["board"].split(",")
    vertical = (position["seat"] == "0") == (params.get("first", "vertical") == "vertical")
    wins = {}
    for move in legal:
        wins[move] = sum(rollout(after(board, move, vertical), not vertical, rng) for _ in range(20))
    return max(legal, key=lambda m: wins[m])
''',
    "h07": '''
def safe_moves(board, vertical):
    """Moves of mine the opponent can never take away (the Domineering 'safe move')."""
    safe = 0
    for r in range(len(board)):
        for c in range(len(board[r])):
            if vertical:
                if r + 1 < len(board) and board[r][c] == "." and board[r + 1][c] == ".":
                    left = c == 0 or (board[r][c - 1] != "." and board[r + 1][c - 1] != ".")
                    if left:
                        safe += 1
            elif c + 1 < len(board[r]) and board[r][c] == "." and board[r][c + 1] == ".":
                below = r == 0 or (board[r - 1][c] != "." and board[r - 1][c + 1] != ".")
                if below:
                    safe += 1
    return safe


def choose(game, params, seat, position, moves, legal, time_left_s):
    board = position["board"].split(",")
    vertical = (position["seat"] == "0") == (params.get("first", "vertical") == "vertical")
    scores = []
    for m in legal:
        r, c = int(m[:-1]) - 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZ".index(m[-1])
        new = [list(line) for line in board]
        new[r][c] = "#"
        if vertical:
            new[r + 1][c] = "#"
        else:
            new[r][c + 1] = "#"
        scores.append((safe_moves(new, vertical) - safe_moves(new, not vertical), m))
    return max(scores)[1]
''',
    "h08": '''
def free_cells(board):
    return sum(row.count(".") for row in board)


def choose(game, params, seat, position, moves, legal, time_left_s):
    # early on take the middle rows, later just the first legal move
    board = position["board"].split(",")
    if free_cells(board) < len(board) * len(board[0]) // 3:
        return legal[0]
    middle = len(board) // 2
    by_row = sorted(legal, key=lambda m: abs(int(m[:-1]) - 1 - middle))
    return by_row[0]
''',
    "h09": '''
ALPHA = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def grid_of(position):
    return [list(row) for row in position["board"].split(",")]


def mine_first(position, params):
    return (position["seat"] == "0") == (params.get("first", "vertical") == "vertical")


def place(grid, move, down):
    r, c = int(move[:-1]) - 1, ALPHA.index(move[-1])
    g = [row[:] for row in grid]
    g[r][c] = g[r + 1][c] = "*" if down else g[r][c]
    if not down:
        g[r][c] = g[r][c + 1] = "*"
    return g


def count_moves(g, down):
    total = 0
    for r, row in enumerate(g):
        for c, cell in enumerate(row):
            if cell != ".":
                continue
            if down and r + 1 < len(g) and g[r + 1][c] == ".":
                total += 1
            elif not down and c + 1 < len(row) and row[c + 1] == ".":
                total += 1
    return total


def minimax(g, down, depth, maximizing):
    if depth == 0:
        side = down if maximizing else not down
        return count_moves(g, side) - count_moves(g, not side)
    return 0


def choose(game, params, seat, position, moves, legal, time_left_s):
    grid, down = grid_of(position), mine_first(position, params)
    return max(legal, key=lambda m: count_moves(place(grid, m, down), down) * 2
               - 3 * count_moves(place(grid, m, down), not down))
''',
    "h10": '''
import math


def choose(game, params, seat, position, moves, legal, time_left_s):
    """Pairs: answer the opponent's last move next to it, else spread out."""
    if moves:
        last = moves[-1]
        row = int(last[:-1])
        col = last[-1]
        near = [m for m in legal if m[-1] == col or abs(int(m[:-1]) - row) <= 1]
        if near:
            return near[len(near) // 2]
    step = max(1, int(math.sqrt(len(legal))))
    return legal[(len(moves) * step) % len(legal)]
''',
    "h11": '''
def choose(game, params, seat, position, moves, legal, time_left_s):
    """The move in the emptiest row."""
    board = position["board"].split(",")
    empty = []
    for r in range(len(board)):
        n = 0
        for c in range(len(board[r])):
            if board[r][c] == ".":
                n += 1
        empty.append(n)
    return max(legal, key=lambda m: empty[int(m[:-1]) - 1])
''',
    "h12": '''
def choose(game, params, seat, position, moves, legal, time_left_s):
    # the move in the fullest column, so that I fill the board from one side
    board = position["board"].split(",")
    full = {}
    for r in range(len(board)):
        for c in range(len(board[r])):
            if board[r][c] != ".":
                full[c] = full.get(c, 0) + 1
    return max(legal, key=lambda m: full.get(ord(m[-1]) - 65, 0))
''',
}


def with_kit(body: str) -> str:
    """The kit with its choose() replaced by `body` (a bot's own code)."""
    kit = KIT.read_text()
    assert KIT_CHOOSE in kit, "the kit's choose() changed: update benchmarks/similarity_corpus.py"
    return kit.replace(KIT_CHOOSE, body.strip("\n") + "\n")


def rename(text: str, names: dict[str, str]) -> str:
    """`text` with whole identifiers renamed."""
    return re.sub(r"\b(" + "|".join(map(re.escape, names)) + r")\b", lambda m: names[m.group(1)], text)


def reorder(body: str) -> str:
    """The top-level definitions of `body` in reverse order."""
    blocks = re.split(r"\n(?=def |class |[A-Z_]+ = |import )", body.strip("\n"))
    return "\n\n\n".join(reversed([b.strip("\n") for b in blocks])) + "\n"


def recomment(body: str) -> str:
    """`body` with its comments and docstrings changed, comments added and lines re-indented
    with more spaces around operators (a reformatted copy)."""
    out = []
    for line in body.splitlines():
        line = re.sub(r"#.*$", "", line).rstrip()
        line = re.sub(r'"""[^"]*"""', '"""My own idea."""', line)
        line = line.replace("=", " = ").replace("  =  =  ", " == ").replace(" =  = ", " == ")
        if line.strip().startswith("for "):
            out.append(re.match(r"\s*", line).group(0) + "# loop over the options")
        out.append(line)
    return "\n".join(out) + "\n"


def _published(path: str, names: list[str]) -> str:
    """The functions `names` of the shipped bots' file `path`, as a student pastes them."""
    text = (ROOT / path).read_text()
    found = []
    for name in names:
        match = re.search(rf"(?ms)^def {name}\(.*?(?=^\S)", text)
        assert match, f"{path} has no def {name}: update benchmarks/similarity_corpus.py"
        found.append(match.group(0).rstrip() + "\n")
    return "\n\n".join(found)


def corpus() -> tuple[dict[str, list[tuple[str, str]]], set[tuple[str, str]]]:
    """The sources (student -> [(path, text)]) and the pairs that are copies (sorted by name; a
    paste from the shipped bots pairs the student with `published:bots/`)."""
    sources = {sid: [("bot.py", with_kit(body))] for sid, body in HONEST.items()}
    copies: set[tuple[str, str]] = set()
    names = {"play": "apply_move", "board": "grid", "count": "mobility", "after": "nxt", "best": "top",
             "best_score": "top_value", "mine": "my_n", "theirs": "their_n", "vertical": "is_vert"}
    sources["c01"] = [("bot.py", with_kit(rename(HONEST["h01"], names)))]  # renamed
    copies.add(("c01", "h01"))
    sources["c02"] = [("bot.py", with_kit(reorder(HONEST["h04"])))]  # functions reordered
    copies.add(("c02", "h04"))
    sources["c03"] = [("bot.py", with_kit(recomment(HONEST["h06"])))]  # recommented, reformatted
    copies.add(("c03", "h06"))
    helpers, _, own = HONEST["h07"].partition("\ndef choose(")  # split over two files, renamed
    sources["c04"] = [("safety.py", rename(helpers, {"safe": "count", "board": "b"})),
                      ("bot.py", with_kit("from safety import safe_moves\n\n\ndef choose(" + own))]
    copies.add(("c04", "h07"))
    search = _published("bots/search.py", ["terminal_score", "is_decided", "alphabeta"])
    evaluation = _published("bots/evaluation.py", ["_domineering_masks", "_domineering_counts",
                                                   "_domineering_mine_vertical", "domineering_medium"])
    pasted = ("import math\nimport random\nimport time\n\n" + search + "\n\n" + evaluation +
              '\n\ndef choose(game, params, seat, position, moves, legal, time_left_s):\n'
              '    return alphabeta(position, 3, domineering_medium)[1][0]\n')
    sources["p01"] = [("bot.py", with_kit(pasted))]  # pasted from the shipped alphabeta bot
    copies.add(("p01", "published:bots/"))
    sources["p02"] = [("bot.py", with_kit(rename(pasted, {"alpha": "lo", "beta": "hi", "state": "pos",
                                                          "depth": "d", "evaluate": "score_fn"})))]
    copies.add(("p02", "published:bots/"))
    copies.add(("p01", "p02"))  # the two pastes are copies of each other too
    return sources, copies
