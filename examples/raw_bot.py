"""A complete arena bot without the SDK: protocol v1 with pyzmq and msgpack only (docs/PROTOCOL.md).

It answers every turn at once with a random legal move. Run it in a match with
    arena match domineering "python examples/raw_bot.py" random
"""
import os
import random

import msgpack
import zmq

context = zmq.Context()
socket = context.socket(zmq.DEALER)
socket.setsockopt(zmq.LINGER, 0)
socket.connect(os.environ["ARENA_ENDPOINT"])
socket.send(msgpack.packb({"type": "hello", "token": os.environ["ARENA_TOKEN"],
                           "name": "raw-random", "protocol": 1}))
rng = random.Random()
while True:
    message = msgpack.unpackb(socket.recv())
    if message["type"] == "new_game":
        rng.seed(message["seed"])
    elif message["type"] == "turn":
        move = rng.choice(message["legal"])
        socket.send(msgpack.packb({"type": "move", "game_id": message["game_id"],
                                   "ply": message["ply"], "move": move}))
    elif message["type"] == "bye":
        break
socket.close()
context.term()
