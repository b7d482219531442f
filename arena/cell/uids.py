"""A user id of its own for each running sandboxed bot, when arena runs as root: no two bots share
a user's keyrings, its per-user limits (processes, inotify watches, message queues) or its files.

Ids are leased from a configured range (`Limits.bot_uids`, "FIRST-LAST"; the group id is the same
number) with a lock file per id in a directory only root may write: a lease is an exclusive `flock`
held while the bot runs, so referees in other processes (a tournament's workers) never hand out the
same id at once, and a referee that dies frees its ids with its descriptors.
"""
from __future__ import annotations

import fcntl
import os
import secrets
import stat
import tempfile

DEFAULT_RANGE = "1100000000-1100004095"
"""4096 ids well above any distribution's users and the usual subordinate ranges (/etc/subuid)."""
LOCK_DIRS = ("/run/arena-uids", os.path.join(tempfile.gettempdir(), "arena-uids"))
"""Where the lock files live: the first whose parent exists (/run is root's on every systemd machine)."""


class UidsExhausted(RuntimeError):
    """Every id of the range is leased to a running bot."""


def parse_range(text: str) -> tuple[int, int]:
    """(first, last) of "FIRST-LAST"; ValueError naming `text` unless 0 < FIRST <= LAST < 2**31-1."""
    first, sep, last = str(text).partition("-")
    try:
        low, high = int(first), int(last)
    except ValueError:
        low = high = -1
    if not sep or not 0 < low <= high < 2**31 - 1:
        raise ValueError(f"limit bot_uids must be 'FIRST-LAST' (user ids, 0 < FIRST <= LAST < 2147483647), "
                         f"got {text!r}")
    return low, high


class UidLease:
    """One leased id, held until `release()` (again: nothing)."""

    def __init__(self, uid: int, fd: int) -> None:
        self.uid = uid
        self._fd: int | None = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # drops the flock
            self._fd = None


def _lock_dir() -> str:
    for path in LOCK_DIRS:
        if os.path.isdir(os.path.dirname(path)):
            break
    os.makedirs(path, mode=0o700, exist_ok=True)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
        raise PermissionError(f"{path} must be a directory of user {os.geteuid()} that only it can write")
    return path


def lease(text: str = DEFAULT_RANGE) -> UidLease:
    """Lease a free id of the range "FIRST-LAST", starting at a random one (so an id is seldom
    reused soon); UidsExhausted when all are taken."""
    first, last = parse_range(text)
    count = last - first + 1
    directory = _lock_dir()
    start = secrets.randbelow(count)
    for k in range(count):
        uid = first + (start + k) % count
        fd = os.open(os.path.join(directory, str(uid)), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW,
                     0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return UidLease(uid, fd)
    raise UidsExhausted(f"all {count} bot user ids ({text}) are in use by running bots")
