"""The watchdog process, and the killing of a bot's processes that the referee shares with it.

The referee starts it (`limits.Watchdog`) as `python -I -S arena/cell/watchdog.py`, in its own
session, and tells it on its standard input about each bot: `pgid N`, `marker M`, `cgroup DIR`, and
`forget N`, `forget-marker M`, `forget-cgroup DIR` once that bot was stopped. When the pipe closes
(the referee ended, however it ended) it kills what it still knows of and exits.

Every bot process carries a unique MARKER_ENV value in its environment, inherited by its children:
`kill_marked` finds those that left the bot's process group through /proc.

One of these starts with every match: so this file imports the standard library's lightest modules
only (os, signal, sys, time), 20 ms of CPU to start where limits.py's imports took 80.
"""
from __future__ import annotations

import os
import signal
import sys
import time

MARKER_ENV = "ARENA_BOT_MARKER"
"""Environment variable carrying a bot's unique marker; its children inherit it."""


def marked_pids(marker: str) -> list[int]:
    """Live processes whose environment holds MARKER_ENV=marker (zombies excluded)."""
    return pids_with_env(MARKER_ENV, marker)


def pids_with_env(key: str, value: str) -> list[int]:
    """Processes other than this one whose environment holds key=value (read from /proc)."""
    needle = f"\0{key}={value}\0".encode()
    me = os.getpid()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                env = b"\0" + f.read() + b"\0"
        except OSError:
            continue
        if needle in env:
            found.append(int(name))
    return found


def signal_group(pgid: int | None, sig: int) -> None:
    """Send `sig` to a process group, ignoring a group that is gone."""
    if pgid is None:
        return
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def kill_marked(marker: str, pgid: int | None = None, timeout_s: float = 2.0) -> bool:
    """SIGKILL the process group `pgid` and every process carrying `marker`, again until none is
    left (a process may fork while it is being killed, and on a busy machine a killed process may
    wait a while for a CPU to die on), for up to `timeout_s`. Whether none is left."""
    signal_group(pgid, signal.SIGKILL)
    deadline = time.monotonic() + timeout_s
    pause = 0.002
    while True:
        pids = marked_pids(marker)
        if not pids:
            return True
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        _reap(pids)
        if time.monotonic() > deadline:
            return False
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def _reap(pids: list[int]) -> None:
    """Collect the exit status of those of `pids` that are our children (a subreaper's orphans)."""
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except (ChildProcessError, OSError):
            pass


def main() -> int:
    """The watchdog's main: remember groups, markers and cgroups until stdin closes, then kill
    them all (those forgotten meanwhile, their bots stopped by the referee, are left alone)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    groups: list[int] = []
    markers: list[str] = []
    cgroups: list[str] = []
    for line in sys.stdin.buffer:
        kind, _, value = line.decode("utf-8", "replace").strip().partition(" ")
        if kind == "pgid" and value.isdigit():
            groups.append(int(value))
        elif kind == "forget" and value.isdigit() and int(value) in groups:
            groups.remove(int(value))
        elif kind == "marker" and value:
            markers.append(value)
        elif kind == "forget-marker" and value in markers:
            markers.remove(value)
        elif kind == "cgroup" and value.startswith("/sys/fs/cgroup/"):
            cgroups.append(value)
        elif kind == "forget-cgroup" and value in cgroups:
            cgroups.remove(value)
    for pgid in groups:
        signal_group(pgid, signal.SIGKILL)
    for marker in markers:
        kill_marked(marker, timeout_s=5.0)
    _sweep_cgroups(cgroups)
    return 0


def _sweep_cgroups(directories: list[str], timeout_s: float = 5.0) -> None:
    """Kill every process left in `directories` (bot cgroups) and remove them."""
    kill_in_cgroups(directories, timeout_s)
    for directory in directories:
        for _ in range(100):
            try:
                os.rmdir(directory)
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.01)


def kill_in_cgroups(directories: list[str], timeout_s: float) -> None:
    """Thaw the cgroup `directories` (a frozen task dies only once thawed, v1 and v2) and SIGKILL
    what they hold until they are empty or `timeout_s` is up: this watchdog's sweep, and the
    referee's of a dead referee's cgroups (arena.cell.cgroup.reap_stale)."""
    for directory in directories:
        for name, value in (("freezer.state", "THAWED"), ("cgroup.freeze", "0")):
            try:
                with open(os.path.join(directory, name), "w") as f:
                    f.write(value)
            except OSError:
                pass
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        alive = False
        for directory in directories:
            try:
                with open(os.path.join(directory, "cgroup.procs")) as f:
                    pids = [int(p) for p in f.read().split()]
            except (OSError, ValueError):
                continue
            for pid in pids:
                alive = True
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        if not alive:
            return
        time.sleep(0.01)


if __name__ == "__main__":
    sys.exit(main())
