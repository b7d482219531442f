"""One server a course directory (issue 33): `arena course serve` holds an flock on
DIR/serve.lock for its whole life, the file naming its pid and address, so that a second server
on the same directory (a second set of workers, ladder and season clock) refuses to start and
says which one runs. `arena course phases DIR --wait` takes it too while it runs the phase checks
itself (no server runs them), and otherwise waits for the holder's (`holder_alive`)."""
from __future__ import annotations

import fcntl
import os
import re
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


def holder_alive(directory: Path) -> bool:
    """Whether the process DIR/serve.lock names (a server, or `arena course phases --wait` running
    the phase checks) still runs: read without taking the lock, so a server starting is never kept
    from it."""
    try:
        text = (Path(directory) / LOCK_NAME).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    match = re.match(r"pid (\d+)", text)
    if match is None:
        return False
    try:
        os.kill(int(match.group(1)), 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a service user's server
        return True
    return True
