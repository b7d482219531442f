"""A Domineering bot for the stdio text protocol's extensions (tests/test_stdio_extensions.py).

    python stdio_ext_bot.py [--junk] [--fd3] [--warm SECONDS] [--ready] [--arena-options=...]

It reads only the `position` word of each `turn` (never the move list), generates the moves of
that position itself and plays the LAST of them, so every move it plays shows that it read the
position right. It answers `legal POSITION` with `legal_moves MOVE...` from the same generator.
`--junk`: prints junk on stdout before and after every line (a chatty engine); `--banner`: only
before its first line; `--fd3`: its lines
go to file descriptor 3; `--warm S`: sleeps S seconds first (a slow start-up), then prints `ready`
when `--ready` is given.
"""
import os
import sys
import time


def parse_position(word):
    """The position word as a dict of strings (docs/games.md, "Position word")."""
    return dict(field.split("=", 1) for field in word.split(";"))


def domineering_moves(fields, first):
    board = fields["board"].split(",")  # board[0] is row 1, the BOTTOM row
    vertical = (fields["seat"] == "0") == (first == "vertical")
    rows, moves = len(board), []
    for r, row in enumerate(board):
        for c, cell in enumerate(row):
            if cell != ".":
                continue
            if vertical and r + 1 < rows and board[r + 1][c] == ".":
                moves.append(f"{r + 1}{chr(65 + c)}")  # a vertical domino is named by its LOWER cell
            if not vertical and c + 1 < len(row) and row[c + 1] == ".":
                moves.append(f"{r + 1}{chr(65 + c)}")
    return moves


def main():
    args = sys.argv[1:]
    junk = "--junk" in args
    warm = float(args[args.index("--warm") + 1]) if "--warm" in args else 0.0
    out = os.fdopen(3, "w") if "--fd3" in args else sys.stdout
    if junk or "--banner" in args:
        print("engine v1.0 booting (junk on stdout)", flush=True)
    time.sleep(warm)
    if "--ready" in args:
        print("ready", file=out, flush=True)
    first = "vertical"
    for line in sys.stdin:
        words = line.split()
        if junk:
            print(f"junk: got {len(words)} words", flush=True)
        if not words:
            continue
        if words[0] == "new_game":
            first = dict(w.split("=", 1) for w in words[5:]).get("first", "vertical")
        elif words[0] == "turn":
            assert words[3] == "position", line  # the word is there: this bot needs it
            moves = domineering_moves(parse_position(words[4]), first)
            print(f"move {moves[-1]} comment from the position", file=out, flush=True)
        elif words[0] == "legal":
            fields = parse_position(words[1])
            print(" ".join(["legal_moves", *domineering_moves(fields, first)]), file=out, flush=True)
        elif words[0] == "bye":
            break


if __name__ == "__main__":
    main()
