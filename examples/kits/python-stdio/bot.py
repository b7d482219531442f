"""A bot for the arena's text protocol (docs/PROTOCOL.md, "Bots over stdin/stdout").

Reads one line at a time from stdin, answers each `turn` with one `move` line on stdout.
Plays the first legal move: replace choose() with your search. Debug output goes to stderr.
"""
import sys


def choose(game, params, seat, moves, legal, time_left_s):
    """Your search goes here: replay `moves` from the initial position of `game` (with `params`),
    search within `time_left_s` seconds, return one of `legal`."""
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
        elif words[0] == "turn":  # turn PLY TIME_LEFT_S moves MOVE... legal MOVE...
            time_left_s = float(words[2])
            split = words.index("legal")
            moves, legal = words[4:split], words[split + 1:]
            move = choose(game, params, seat, moves, legal, time_left_s)
            print(f"move {move} comment first legal move", flush=True)
        elif words[0] == "bye":
            break
        # game_over WINNER REASON...: nothing to do here


if __name__ == "__main__":
    main()
