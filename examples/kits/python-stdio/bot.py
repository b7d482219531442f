"""A bot for the arena's text protocol (docs/PROTOCOL.md, "Bots over stdin/stdout").

Reads one line at a time from stdin, answers each `turn` with one `move` line on stdout.
Plays the first legal move: replace choose() with your search. It also answers the `legal`
request (a course's move-generation check) from legal_moves(): write your game's there.
build.sh runs it with `--arena-options=position,legal`: every `turn` line then carries the
position (docs/games.md, "Position word") and `legal` requests reach the bot.
Debug output goes to stderr; so does anything else printed (sys.stdout is redirected below).
"""
import sys

PROTOCOL = sys.stdout  # the real stdout: protocol lines only
sys.stdout = sys.stderr  # a stray print() (yours, a library's) goes to the log, not to the arena


def send(line):
    PROTOCOL.write(line + "\n")
    PROTOCOL.flush()


def read_position(word):
    """The position word as a dict of strings: `seat=0;ply=2;board=X...,X...,.OO.` ->
    {"seat": "0", "ply": "2", "board": "X...,X...,.OO."} (docs/games.md, "Position word")."""
    return dict(field.split("=", 1) for field in word.split(";"))


def legal_moves(game, params, position):
    """YOUR move generator: the legal moves of `position` (read_position's dict).

    The sample below covers Domineering ONLY, so that the kit runs as shipped; it is not yours.
    Write your own game's generator here (a course's move-generation phase checks it against the
    rules). For any other game it raises, and the kit answers `legal_error`."""
    if game != "domineering":
        raise ValueError(f"this bot has no move generator for {game}")
    board = position["board"].split(",")  # board[0] is row 1, the BOTTOM row
    vertical = (position["seat"] == "0") == (params.get("first", "vertical") == "vertical")
    rows, moves = len(board), []
    for r in range(rows):
        cols = len(board[r])
        for c in range(cols):
            if board[r][c] != ".":
                continue
            if vertical:
                room = r + 1 < rows and board[r + 1][c] == "."  # a vertical domino: named by its LOWER cell
            else:
                room = c + 1 < cols and board[r][c + 1] == "."
            if room:
                moves.append(f"{r + 1}{'ABCDEFGHIJKLMNOPQRSTUVWXYZ'[c]}")
    return moves


def choose(game, params, seat, position, moves, legal, time_left_s):
    """Your search goes here: `position` is the current position (read_position's dict), `moves`
    every move so far, `legal` the legal moves (never empty); answer within `time_left_s` seconds."""
    return legal[0]


def main():
    game, params, seat = None, {}, 0
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "new_game":  # new_game GAME SEAT CLOCK SEED KEY=VALUE...
            game, seat = words[1], int(words[2])
            params = dict(word.split("=", 1) for word in words[5:])
        elif words[0] == "turn":  # turn PLY TIME_LEFT_S [position POSITION] moves MOVE... legal MOVE...
            time_left_s = float(words[2])
            position = read_position(words[4]) if words[3] == "position" else None
            start, split = words.index("moves") + 1, words.index("legal")
            moves, legal = words[start:split], words[split + 1:]
            move = choose(game, params, seat, position, moves, legal, time_left_s)
            send(f"move {move} comment first legal move")
        elif words[0] == "legal":  # legal POSITION: the moves of your own generator
            try:
                send(" ".join(["legal_moves", *legal_moves(game, params, read_position(words[1]))]))
            except Exception as exc:  # any error of the generator is the answer
                send(f"legal_error {exc}")
        elif words[0] == "bye":
            break
        # game_over WINNER REASON...: nothing to do here


if __name__ == "__main__":
    main()
