"""An honest bot that uses what docs/limits.md promises a sandboxed bot: `python honest.py`.

Before its hello it writes a file in its working directory and in /tmp, makes a `tempfile`
directory, runs a `multiprocessing.Pool` (which needs /dev/shm), reads `book.txt` next to it (its
folder holds a build.sh: it is a kit, so it sees the folder) and makes an inotify instance (again
on every turn, so an opponent that hoards its user's instances shows). It
reports each in the `info` of every move, {"uses": {what: "ok" | "FAILED: ..."}}, and plays legal[0].
"""
from __future__ import annotations

import ctypes
import multiprocessing
import os
import sys
import tempfile

from arena.match.protocol import BotClient


def _square(x: int) -> int:
    return x * x


def _check(action) -> str:
    try:
        action()
    except Exception as exc:
        return f"FAILED: {type(exc).__name__}: {exc}"[:300]
    return "ok"


def _write(path: str) -> None:
    with open(path, "w") as f:
        f.write("scratch\n")
    with open(path) as f:
        assert f.read() == "scratch\n"
    os.unlink(path)


def _tempfile() -> None:
    with tempfile.TemporaryDirectory() as directory:
        _write(os.path.join(directory, "x"))


def _pool() -> None:
    with multiprocessing.Pool(2) as pool:
        assert pool.map(_square, range(4)) == [0, 1, 4, 9]


def _book() -> None:
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "book.txt")) as f:
        assert f.read().strip()


def _inotify() -> None:
    fd = ctypes.CDLL(None, use_errno=True).inotify_init1(os.O_CLOEXEC)
    if fd < 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    os.close(fd)


def main() -> int:
    uses = {"working directory": _check(lambda: _write("here.txt")), "/tmp": _check(lambda: _write("/tmp/x")),
            "tempfile": _check(_tempfile), "multiprocessing": _check(_pool), "book": _check(_book),
            "inotify": _check(_inotify)}
    with BotClient(os.environ["ARENA_ENDPOINT"]) as client:
        client.send({"type": "hello", "token": os.environ["ARENA_TOKEN"], "name": "honest", "protocol": 1})
        while True:
            message = client.receive_while_parent_lives(1.0)
            if message is None or message["type"] == "bye":
                return 0
            if message["type"] == "turn":
                uses["inotify"] = _check(_inotify)  # again each turn: after the opponent's moves too
                client.send({"type": "move", "game_id": message["game_id"], "ply": message["ply"],
                             "move": message["legal"][0], "info": {"uses": uses}})


if __name__ == "__main__":
    sys.exit(main())
