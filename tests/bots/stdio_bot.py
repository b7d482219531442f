"""A bot for the stdio text protocol that misbehaves on purpose (tests/test_stdio.py).

    python stdio_bot.py MODE [ARG]

Modes: `first` (plays the first legal move with info), `garbage` (prints a line that is not a
move), `illegal` (`move zz99`), `late SECONDS` (answers the first turn that late, then plays),
`exit CODE` (exits at its first turn), `echo` (writes every line it gets to stderr, then plays).
Every mode writes "stdio-bot MODE: ..." to stderr at its first turn.
"""
import sys
import time

mode = sys.argv[1]
arg = sys.argv[2] if len(sys.argv) > 2 else None
turns = 0
for line in sys.stdin:
    words = line.split()
    if mode == "echo":
        print(f"got: {line.rstrip()}", file=sys.stderr, flush=True)
    if not words or words[0] != "turn":
        if words and words[0] == "bye":
            break
        continue
    turns += 1
    legal = words[words.index("legal") + 1:]
    if turns == 1:
        print(f"stdio-bot {mode}: first turn", file=sys.stderr, flush=True)
        if mode == "garbage":
            print("I think the best move is", legal[0], flush=True)
            continue
        if mode == "illegal":
            print("move zz99", flush=True)
            continue
        if mode == "exit":
            sys.exit(int(arg))
        if mode == "late":
            time.sleep(float(arg))
    print(f"move {legal[0]} depth 1 score 0.5 nodes {len(legal)} pv {legal[0]} comment first of {len(legal)}",
          flush=True)
