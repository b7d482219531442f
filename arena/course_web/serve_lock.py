"""One server a course directory (issue 33): `arena course serve` holds an flock on
DIR/serve.lock for its whole life, the file naming its pid and address, so that a second server
on the same directory (a second set of workers, ladder and season clock) refuses to start and
says which one runs."""
from __future__ import annotations

import fcntl
import os
from pathlib import Path

LOCK_NAME = "serve.lock"


class AlreadyServed(ValueError):
    """Another `arena course serve` holds the directory: one line naming it (pid, address)."""


def hold(directory: Path, address: str = "(binding its socket)") -> int:
    """Take DIR/serve.lock for this process (its descriptor: keep it open, closing drops the lock;
    not inherited by the bots' processes) and write this server's pid and address in it;
    AlreadyServed if another server holds it."""
    path = Path(directory) / LOCK_NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = os.pread(fd, 500, 0).decode("utf-8", "replace").strip() or "a server"
        os.close(fd)
        raise AlreadyServed(f"{directory} is served already by {holder}: stop it first "
                            f"(one server a course directory)") from None
    tell_address(fd, address)
    return fd


def tell_address(fd: int, address: str) -> None:
    """Write the address the server listens on into its lock file, once its socket is bound."""
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"pid {os.getpid()} at {address}\n".encode(), 0)
