"""A bot that thinks on the CPU: `python cpu_burner.py SECONDS [thread|asleep]`. At each turn it spins until
its own process has used SECONDS more of CPU time (time.process_time), then plays legal[0], saying
in its info how much CPU it measured itself for the move: {"cpu_s": ...}. With `thread` it spins in
a new thread each move, joined by the main one (as a bot whose search runs in a thread of its own);
with `asleep` it falls asleep after its first spin, never to answer.
Written on the raw protocol, so nothing but the spinning costs CPU.
"""
import os
import sys
import threading
import time

import msgpack
import zmq

burn = float(sys.argv[1])
in_thread = sys.argv[2:] == ["thread"]
asleep = sys.argv[2:] == ["asleep"]


def spin():
    start = time.process_time()
    while time.process_time() - start < burn:
        pass


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
        if in_thread:
            searcher = threading.Thread(target=spin)
            searcher.start()
            searcher.join()
        else:
            spin()
        if asleep:
            time.sleep(3600)
        socket.send(msgpack.packb({"type": "move", "game_id": message["game_id"], "ply": message["ply"],
                                   "move": message["legal"][0],
                                   "info": {"cpu_s": time.process_time() - start}}))
    elif message["type"] == "bye":
        break
socket.close()
context.term()
