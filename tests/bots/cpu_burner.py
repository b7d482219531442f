"""A bot that thinks on the CPU: `python cpu_burner.py SECONDS`. At each turn it spins until its
own process has used SECONDS more of CPU time (time.process_time), then plays legal[0], saying in
its info how much CPU it measured itself for the move: {"cpu_s": ...}. Written on the raw protocol,
so nothing but the spinning costs CPU.
"""
import os
import sys
import time

import msgpack
import zmq

burn = float(sys.argv[1])
context = zmq.Context()
socket = context.socket(zmq.DEALER)
socket.setsockopt(zmq.LINGER, 0)
socket.connect(os.environ["ARENA_ENDPOINT"])
socket.send(msgpack.packb({"type": "hello", "token": os.environ["ARENA_TOKEN"], "name": "burner",
                           "protocol": 1}))
while True:
    message = msgpack.unpackb(socket.recv())
    if message["type"] == "turn":
        start = time.process_time()
        while time.process_time() - start < burn:
            pass
        socket.send(msgpack.packb({"type": "move", "game_id": message["game_id"], "ply": message["ply"],
                                   "move": message["legal"][0],
                                   "info": {"cpu_s": time.process_time() - start}}))
    elif message["type"] == "bye":
        break
socket.close()
context.term()
