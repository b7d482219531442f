"""The referee's directories in the temporary directory, and those of dead referees removed.

A referee keeps its bots' working directories, a hub's directory and the directories of its
private sockets under /tmp, and removes them when it ends. A referee that is killed (kill -9, an
abort) cannot: its directories stay. So each is made by `make(kind)` and named
`arena-PID-KIND-...`, PID being the process that made it (as bot cgroups are named `arena-PID-...`,
arena/cell/cgroup.py), and the first `make` of every process removes the directories whose
process is gone (`reap_stale`): only directories of this user, of a known KIND, whose PID runs no
more; never a live referee's.
"""
from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

KINDS = ("work", "hub", "ipc", "check", "notes")
"""What a directory holds: bots' working directories (a match's), a hub's, private sockets, the
bots of a tournament's start-up check, a tournament run's progress notes."""

_reaped: set[int] = set()
"""The processes (by pid) that have looked for stale directories already: once each is enough."""


def make(kind: str, label: str = "") -> Path:
    """A new private (0700) directory `arena-PID-KIND-LABEL...` in the temporary directory; the
    first call of a process removes those of dead referees first."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind of directory {kind!r} (known: {', '.join(KINDS)})")
    reap_stale()
    return Path(tempfile.mkdtemp(prefix=f"arena-{os.getpid()}-{kind}-{label}"))


def owner(name: str) -> int | None:
    """The pid of the process that made directory `name`, None if `name` is not one of ours."""
    parts = name.split("-", 3)
    if len(parts) < 4 or parts[0] != "arena" or not parts[1].isdigit() or parts[2] not in KINDS:
        return None
    return int(parts[1])


def reap_stale(directory: str | Path | None = None, force: bool = False) -> list[Path]:
    """Remove the directories (in `directory`, default the temporary directory) that referees which
    are gone left behind. Once per process unless `force`; returns what it removed."""
    if os.getpid() in _reaped and not force:
        return []
    _reaped.add(os.getpid())
    where = Path(directory) if directory is not None else Path(tempfile.gettempdir())
    removed = []
    try:
        names = os.listdir(where)
    except OSError:
        return removed
    me = os.geteuid()
    for name in names:
        pid = owner(name)
        if pid is None or pid_running(pid):
            continue
        path = where / name
        try:
            info = path.lstat()
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != me:  # no link, nobody else's
            continue
        shutil.rmtree(path, ignore_errors=True)
        if not path.exists():
            removed.append(path)
    return removed


def pid_running(pid: int) -> bool:
    """True while process `pid` exists (another user's included): how a referee's leftovers are
    told from a live referee's, here and for cgroups (cgroup.reap_stale)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
