"""Deliberately broken bots for the referee's tests: `python tests/bots/broken.py MODE [ARG]`.

Written on the raw protocol (arena.protocol.BotClient), not the SDK, so they can send anything.
Modes:
  sleep S      sleep S seconds before every answer (then a legal move, time_left_s in info)
  late S       first turn of the match: sleep S, then answer legal[0] (too late); later turns:
               answer legal[-1] at once
  illegal      a legal move while there is no history, then the opponent's last move (occupied)
  garbage      bytes that are not msgpack instead of a move
  nomove       a map without `move`
  crash        two legal moves, then exit with code 3 at the third turn
  silent       never says hello (sleeps)
  badproto     says hello for protocol 99
  info         legal[0] with a rich `info` (nested, bytes, a float NaN in a second field)
  flood        on every turn, first 50 moves for a wrong ply, then legal[0]
  chatty       on every turn, print 1.5 MB, wait 0.1 s, then legal[0]
Hostile modes (tests/test_hostile.py):
  wrongtoken   first a hello with a wrong token from a second socket, then plays legal[0]
  onlywrong    only hellos with a wrong token, ten a second
  flood10k     from new_game on, moves for a wrong ply at 10,000 a second; never a real move
  huge         one 100 MB frame instead of its first move
  wrongply     answers every turn for another ply or another game
  hog          allocates memory without end at its first turn
  busy         spins in a busy loop at its first turn
  forker       at its first turn forks children that leave its session, ignore SIGTERM and sleep
               (their pids in children.txt), then exits with code 5; with ARG 1 it waits instead
  spew         at its first turn writes 16 MB to stdout and 16 MB to stderr, then never answers
  abort        one legal move, then abort() (SIGABRT) at its second turn
  raise        two legal moves, then an uncaught exception at its third turn (a Python stack trace of
               a dozen lines on stderr, exit code 1)
  afterover    plays legal[0]; after each game_over sends a move for the finished game
  deepinfo N   legal[0] with an info map nested N deep (default 900: a frame of about 2.7 KB)
  syntax       dies of a real SyntaxError (a traceback on stderr, exit code 1) before hello
  nohello      prints two lines and exits with code 2 before hello
  mob N        plays legal[0]; meanwhile N other connections (never a hello) send 440 KB messages
               without pause
  killparent [S]  at its first turn (S seconds into it, default 0) kills its parent (the referee's
               worker process) with SIGKILL, unless the parent is the process named by ARENA_TEST_KEEP_PID
"""
from __future__ import annotations

import os
import signal
import sys
import threading
import time

from arena.match.protocol import BotClient, encode


def descend(depth: int) -> None:
    """Raise an exception `depth` calls deep (a stack trace of a dozen lines)."""
    if depth == 0:
        raise RuntimeError("the search table is corrupt")
    descend(depth - 1)


def main() -> int:
    mode = sys.argv[1]
    arg = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
    if mode == "silent":
        time.sleep(3600)
        return 0
    if mode == "syntax":
        exec(compile("def choose(self, state\n    return state.legal_moves()[0]\n", "mybot.py", "exec"))
    if mode == "nohello":
        print("loading weights from weights.bin", flush=True)
        print("mybot: no such file: weights.bin", file=sys.stderr, flush=True)
        return 2
    if mode == "mob":
        threading.Thread(target=mob, args=(os.environ["ARENA_ENDPOINT"], int(arg or 10)), daemon=True).start()
    if mode in ("wrongtoken", "onlywrong"):
        with BotClient(os.environ["ARENA_ENDPOINT"]) as intruder:
            for _ in range(1 if mode == "wrongtoken" else 100):
                intruder.send({"type": "hello", "token": "0" * 32, "name": "intruder", "protocol": 1})
                time.sleep(0.1 if mode == "onlywrong" else 0.05)
    turns = 0
    with BotClient(os.environ["ARENA_ENDPOINT"]) as client:
        client.send({"type": "hello", "token": os.environ["ARENA_TOKEN"], "name": f"broken-{mode}",
                     "protocol": 99 if mode == "badproto" else 1})
        while True:
            message = client.receive_while_parent_lives(1.0)
            if message is None or message["type"] == "bye":
                return 0
            if mode == "flood10k" and message["type"] == "new_game":
                flood(client, message["game_id"])
                continue
            if mode == "afterover" and message["type"] == "game_over":
                client.send({"type": "move", "game_id": message["game_id"], "ply": 0, "move": "1A"})
                continue
            if message["type"] != "turn":
                continue
            turns += 1
            legal = message["legal"]
            reply = {"type": "move", "game_id": message["game_id"], "ply": message["ply"], "move": legal[0]}
            if mode == "sleep":
                time.sleep(arg)
                reply["info"] = {"comment": f"time_left_s={message['time_left_s']}"}
            elif mode == "late":
                if turns == 1:
                    time.sleep(arg)
                else:
                    reply["move"] = legal[-1]
            elif mode == "illegal":
                if message["moves"]:
                    reply["move"] = message["moves"][-1]
            elif mode == "garbage":
                client.send_raw(b"\xc1\xc1 this is not msgpack")
                continue
            elif mode == "nomove":
                del reply["move"]
            elif mode == "crash":
                if turns == 3:
                    print("crash bot: exiting on purpose", flush=True)
                    os._exit(3)
            elif mode == "info":
                reply["info"] = {"depth": 3, "score": -12, "pv": legal[:2], "raw": b"\x00\x01",
                                 "nested": {"a": [1, 2, {"b": None}]}}
            elif mode == "chatty":
                sys.stdout.write(("x" * 99 + "\n") * 15000)
                sys.stdout.flush()
                time.sleep(0.1)
            elif mode == "flood":
                for _ in range(50):
                    client.send(dict(reply, ply=reply["ply"] + 1000))
            elif mode == "huge":
                client.send_raw(b"\x00" * (100 << 20))
                time.sleep(3600)
            elif mode == "wrongply":
                reply = dict(reply, ply=reply["ply"] + 1) if turns % 2 else dict(reply, game_id="other-game")
            elif mode == "hog":
                hoard = []
                while True:
                    hoard.append(bytearray(8 << 20))
            elif mode == "busy":
                while True:
                    pass
            elif mode == "forker":
                fork_children(3)
                if arg:
                    time.sleep(3600)
                os._exit(5)
            elif mode == "spew":
                chunk = b"y" * (1 << 20)
                for _ in range(16):
                    os.write(1, chunk)
                    os.write(2, chunk)
                time.sleep(3600)
            elif mode == "raise" and turns == 3:
                descend(10)
            elif mode == "abort" and turns == 2:
                os.abort()
            elif mode == "deepinfo":
                info: dict = {}
                for _ in range(int(arg or 900)):
                    info = {"a": info}
                reply["info"] = info
            elif mode == "killparent" and str(os.getppid()) != os.environ.get("ARENA_TEST_KEEP_PID"):
                time.sleep(float(sys.argv[2]) if len(sys.argv) > 2 else 0.0)  # "killparent S"
                os.kill(os.getppid(), signal.SIGKILL)
                time.sleep(3600)
            client.send(reply)


def flood(client: BotClient, game_id: str) -> None:
    """Moves for a wrong ply, 100 every 10 ms (10,000 a second), until the referee kills us."""
    bogus = {"type": "move", "game_id": game_id, "ply": 10_000, "move": "flood"}
    start = time.monotonic()
    for batch in range(1_000_000):
        for _ in range(100):
            client.send(bogus)
        pause = start + (batch + 1) * 0.01 - time.monotonic()
        if pause > 0:
            time.sleep(pause)


def mob(endpoint: str, count: int) -> None:
    """`count` connections that never say hello, each sending 440 KB frames (a valid message with a
    list of 440,000 small integers, slow to decode) as fast as it can."""
    frame = encode({"type": "move", "game_id": "g", "ply": 0, "move": "m", "pad": [0] * 440_000})
    clients = [BotClient(endpoint) for _ in range(count)]
    while True:
        for client in clients:
            client.send_raw(frame)


def fork_children(count: int) -> None:
    """Children that try to outlive us: each leaves the session, forks again, ignores SIGTERM."""
    pids = []
    for _ in range(count):
        read, write = os.pipe()
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                signal.signal(signal.SIGHUP, signal.SIG_IGN)
                os.write(write, f"{os.getpid()}\n".encode())
                while True:
                    time.sleep(1)
            os._exit(0)
        os.close(write)
        pids.append(os.read(read, 32).decode().strip())
        os.close(read)
    with open("children.txt", "w") as f:
        f.write("\n".join(pids) + "\n")


if __name__ == "__main__":
    sys.exit(main())
