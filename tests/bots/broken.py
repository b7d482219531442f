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
"""
from __future__ import annotations

import os
import sys
import time

from arena.protocol import BotClient


def main() -> int:
    mode = sys.argv[1]
    arg = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
    if mode == "silent":
        time.sleep(3600)
        return 0
    turns = 0
    with BotClient(os.environ["ARENA_ENDPOINT"]) as client:
        client.send({"type": "hello", "token": os.environ["ARENA_TOKEN"], "name": f"broken-{mode}",
                     "protocol": 99 if mode == "badproto" else 1})
        while True:
            message = client.receive(5.0)
            if message is None or message["type"] == "bye":
                return 0
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
            client.send(reply)


if __name__ == "__main__":
    sys.exit(main())
