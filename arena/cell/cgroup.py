"""A control group per bot: memory, process count and CPU time over its whole process tree.

Resource limits (rlimits) count per process, or per user; a bot that forks, or runs as the same
user as fifty others, slips past them. A cgroup counts every process the bot starts, whatever it
does (setsid, cleared environment, fork bombs), and can freeze or kill all of them at once.

Three ways, chosen by `detect()`:
- cgroup v2 where /sys/fs/cgroup (or /sys/fs/cgroup/unified) is cgroup2, writable, and offers the
  memory and pids controllers to our cgroup's children;
- the v1 hierarchies memory, pids, cpuacct and freezer where those are mounted and writable (the
  "hybrid" layout of many machines);
- none: the caller falls back to rlimits only (`Limits.rlimits`), and says so.

A bot's cgroup is created under the referee's own cgroup in each hierarchy (so the limits of the
machine's service manager still apply above it), joined by the bot's first process between fork
and exec (`Cgroup.join_in_child`), and removed when the bot is stopped: by the watchdog if the
referee dies, and by the next referee's first `Cgroup.create` if the watchdog died too
(`reap_stale`).
"""
from __future__ import annotations

import os
import secrets
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from arena.cell.usage import CgroupUsage, Usage

CGROUP_ROOT = Path("/sys/fs/cgroup")
V1_CONTROLLERS = ("memory", "pids", "cpuacct", "freezer")
"""The v1 hierarchies a bot's cgroup lives in (cpuacct may share a mount with cpu)."""
V2_CONTROLLERS = ("memory", "pids")
"""What cgroup v2 must offer to be used (cpu time and freezing are in the core of v2)."""
FREEZE_WAIT_S = 1.0
"""How long `freeze()` waits for the kernel to report every task frozen (seconds)."""
REMOVE_WAIT_S = 2.0
"""How long `remove()` retries while the last processes are being reaped (seconds)."""
_KILL_ROUNDS = 100


@dataclass(frozen=True)
class Layout:
    """Where bot cgroups can be made: `kind` "v2", "v1" or "none", the parent directory per
    controller (v2: one, under the key "unified"), and why when none."""

    kind: str
    parents: dict[str, Path]
    reason: str = ""


def _own_paths() -> dict[str, str]:
    """This process's cgroup path per v1 controller, and under "" its v2 path (/proc/self/cgroup)."""
    paths: dict[str, str] = {}
    try:
        text = Path("/proc/self/cgroup").read_text()
    except OSError:
        return paths
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            for name in parts[1].split(",") if parts[1] else [""]:
                paths[name] = parts[2]
    return paths


def _mounts() -> list[tuple[str, str, set[str]]]:
    """(mount point, filesystem type, super options) of every cgroup mount (/proc/self/mountinfo)."""
    found = []
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, rest = left.split(), right.split()
        if len(fields) >= 5 and len(rest) >= 3 and rest[0] in ("cgroup", "cgroup2"):
            found.append((fields[4].replace("\\040", " "), rest[0], set(rest[2].split(","))))
    return found


def _probe_dir(parent: Path) -> bool:
    """True if a child cgroup can be made (and removed) under `parent`."""
    probe = parent / f"arena-probe-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        probe.mkdir()
    except OSError:
        return False
    try:
        probe.rmdir()
    except OSError:
        pass
    return True


def _under(mount: str, own: str | None) -> Path:
    """Our own cgroup inside `mount` when it is visible there, else the mount's root."""
    if own:
        candidate = Path(mount) / own.lstrip("/")
        if candidate.is_dir():
            return candidate
    return Path(mount)


def _v2_layout(mounts: list[tuple[str, str, set[str]]], own: dict[str, str]) -> Layout | str:
    v2 = [m for m in mounts if m[1] == "cgroup2"]
    if not v2:
        return "no cgroup2 mount"
    parent = _under(v2[0][0], own.get(""))
    try:
        offered = set((parent / "cgroup.controllers").read_text().split())
    except OSError as exc:
        return f"cgroup2 at {v2[0][0]} unreadable ({exc.strerror})"
    missing = [c for c in V2_CONTROLLERS if c not in offered]
    if missing:
        return f"cgroup2 at {v2[0][0]} lacks the {', '.join(missing)} controller"
    try:  # children get memory and pids only if the parent delegates them
        enabled = set((parent / "cgroup.subtree_control").read_text().split())
        if not set(V2_CONTROLLERS) <= enabled:
            (parent / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in V2_CONTROLLERS))
    except OSError as exc:
        return f"cgroup2 at {parent}: cannot delegate memory and pids ({exc.strerror})"
    if not _probe_dir(parent):
        return f"cgroup2 at {parent} is not writable"
    return Layout("v2", {"unified": parent})


def _v1_layout(mounts: list[tuple[str, str, set[str]]], own: dict[str, str]) -> Layout | str:
    parents: dict[str, Path] = {}
    for controller in V1_CONTROLLERS:
        mount = next((m for m in mounts if m[1] == "cgroup" and controller in m[2]), None)
        if mount is None:
            return f"no cgroup v1 {controller} hierarchy"
        parent = _under(mount[0], own.get(controller))
        if not _probe_dir(parent):
            return f"cgroup v1 {controller} hierarchy ({parent}) is not writable"
        parents[controller] = parent
    return Layout("v1", parents)


_layout: Layout | None = None


def detect(refresh: bool = False) -> Layout:
    """How bot cgroups can be made on this machine (probed once per process)."""
    global _layout
    if _layout is None or refresh:
        mounts, own = _mounts(), _own_paths()
        v2 = _v2_layout(mounts, own)
        if isinstance(v2, Layout):
            _layout = v2
        else:
            v1 = _v1_layout(mounts, own)
            _layout = v1 if isinstance(v1, Layout) else Layout("none", {}, f"{v2}; {v1}")
    return _layout


class CgroupError(OSError):
    """A bot cgroup could not be made or set up; the message says which file and why."""


class Cgroup:
    """One bot's cgroup (in one v2 directory, or in the four v1 hierarchies).

    `Cgroup.create(...)` makes it with its limits; the bot's first process joins it between fork and
    exec (`join_in_child()`), and all of its descendants are in it for good (moving out needs write
    access to another cgroup, which a bot never has)."""

    def __init__(self, layout: Layout, dirs: dict[str, Path]) -> None:
        self.kind = layout.kind
        self.dirs = dirs
        self._usage: CgroupUsage | None = None

    @classmethod
    def create(cls, memory_bytes: int | None, pids_max: int | None, layout: Layout | None = None,
               name: str | None = None) -> Cgroup:
        """A new cgroup limited to `memory_bytes` (no swap beyond it) and `pids_max` processes and
        threads (None: no limit); CgroupError if the machine has no usable cgroups."""
        layout = layout or detect()
        if layout.kind == "none":
            raise CgroupError(f"no usable cgroups: {layout.reason}")
        if name is None:
            reap_stale(layout)
            name = f"arena-{os.getpid()}-{secrets.token_hex(6)}"
        dirs: dict[str, Path] = {}
        group = cls(layout, dirs)
        try:
            for controller, parent in layout.parents.items():
                path = parent / name
                path.mkdir(mode=0o755)
                dirs[controller] = path
            group._set_limits(memory_bytes, pids_max)
        except OSError as exc:
            group.remove()
            raise CgroupError(f"cannot set up the bot's cgroup: {exc}") from None
        return group

    def _set_limits(self, memory_bytes: int | None, pids_max: int | None) -> None:
        if self.kind == "v2":
            d = self.dirs["unified"]
            if memory_bytes is not None:
                _write(d / "memory.max", memory_bytes)
                _write(d / "memory.swap.max", 0, optional=True)
            if pids_max is not None:
                _write(d / "pids.max", pids_max)
            return
        if memory_bytes is not None:
            _write(self.dirs["memory"] / "memory.limit_in_bytes", memory_bytes)
            _write(self.dirs["memory"] / "memory.memsw.limit_in_bytes", memory_bytes, optional=True)
        if pids_max is not None:
            _write(self.dirs["pids"] / "pids.max", pids_max)

    # --- joining ---
    def procs_files(self) -> list[str]:
        """The cgroup.procs files a process writes its pid into to join this cgroup."""
        return [str(d / "cgroup.procs") for d in self.dirs.values()]

    def join_in_child(self) -> None:
        """Move the calling process into this cgroup (called between fork and exec; only system
        calls). OSError if a hierarchy refuses it: the bot must not run unconfined."""
        pid = str(os.getpid()).encode()
        for path in self.procs_files():
            fd = os.open(path, os.O_WRONLY)
            try:
                os.write(fd, pid)
            finally:
                os.close(fd)

    def add(self, pid: int) -> None:
        """Move process `pid` into this cgroup (for tests and for processes started elsewhere)."""
        for path in self.procs_files():
            Path(path).write_text(str(pid))

    # --- reading ---
    def pids(self) -> list[int]:
        """The processes in the cgroup now."""
        d = self.dirs.get("unified") or self.dirs.get("pids") or next(iter(self.dirs.values()), None)
        if d is None:
            return []
        try:
            return [int(x) for x in (d / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    def cpu_seconds(self) -> float:
        """CPU time used by every process of the cgroup so far (user + system, seconds)."""
        try:
            if self.kind == "v2":
                for line in (self.dirs["unified"] / "cpu.stat").read_text().splitlines():
                    key, _, value = line.partition(" ")
                    if key == "usage_usec":
                        return int(value) / 1e6
                return 0.0
            return int((self.dirs["cpuacct"] / "cpuacct.usage").read_text()) / 1e9
        except (OSError, ValueError, KeyError):
            return 0.0

    def usage(self) -> Usage | None:
        """CPU time of the whole tree and its threads' wait for a CPU (arena/cell/usage.py)."""
        if self._usage is None:
            if self.kind == "v2" and "unified" in self.dirs:
                files = (self.dirs["unified"] / "cpu.stat", self.dirs["unified"] / "cgroup.threads")
            elif "cpuacct" in self.dirs:
                files = (self.dirs["cpuacct"] / "cpuacct.usage", self.dirs["cpuacct"] / "tasks")
            else:
                return None
            try:
                self._usage = CgroupUsage(*files)
            except OSError:
                return None
        return self._usage.usage()

    def memory_bytes(self) -> int:
        """Memory charged to the cgroup now (bytes; tmpfs and shared memory included)."""
        name = ("unified", "memory.current") if self.kind == "v2" else ("memory", "memory.usage_in_bytes")
        try:
            return int((self.dirs[name[0]] / name[1]).read_text())
        except (OSError, ValueError, KeyError):
            return 0

    def oom_kills(self) -> int:
        """How many processes the kernel killed for going over the memory limit."""
        name = ("unified", "memory.events") if self.kind == "v2" else ("memory", "memory.oom_control")
        try:
            for line in (self.dirs[name[0]] / name[1]).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except (OSError, ValueError, KeyError):
            pass
        return 0

    # --- freezing and killing ---
    def freeze(self) -> None:
        """Stop every process of the cgroup (none can escape by leaving a process group)."""
        self._set_frozen(True)

    def thaw(self) -> None:
        self._set_frozen(False)

    def frozen(self) -> bool:
        try:
            if self.kind == "v2":
                return "frozen 1" in (self.dirs["unified"] / "cgroup.events").read_text()
            return (self.dirs["freezer"] / "freezer.state").read_text().strip() == "FROZEN"
        except (OSError, KeyError):
            return False

    def _set_frozen(self, frozen: bool) -> None:
        try:
            if self.kind == "v2":
                _write(self.dirs["unified"] / "cgroup.freeze", 1 if frozen else 0)
            else:
                _write(self.dirs["freezer"] / "freezer.state", "FROZEN" if frozen else "THAWED")
        except (OSError, KeyError):
            return
        if frozen:
            deadline = time.monotonic() + FREEZE_WAIT_S
            while not self.frozen() and time.monotonic() < deadline:
                time.sleep(0.001)

    def kill(self) -> None:
        """SIGKILL every process of the cgroup, until none is left (a fork bomb included)."""
        if self.kind == "v2" and (self.dirs["unified"] / "cgroup.kill").exists():
            try:
                _write(self.dirs["unified"] / "cgroup.kill", 1)
            except OSError:
                pass
        for _ in range(_KILL_ROUNDS):
            pids = self.pids()
            if not pids:
                return
            self.freeze()  # nothing forks while it is being killed
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            self.thaw()  # killed tasks die only once thawed
            time.sleep(0.001)

    def remove(self) -> None:
        """Kill what is left and remove the cgroup's directories."""
        if self._usage is not None:
            self._usage.close()
            self._usage = None
        if self.pids():
            self.kill()
        deadline = time.monotonic() + REMOVE_WAIT_S
        for controller in list(self.dirs):
            path = self.dirs[controller]
            while True:
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:  # EBUSY while the last tasks are reaped
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.005)
            del self.dirs[controller]


_reaped: set[int] = set()
"""The processes (by pid) that have looked for stale cgroups already: once each is enough."""


def reap_stale(layout: Layout) -> list[Path]:
    """Remove the empty bot cgroups left by referees that are gone (named `arena-PID-...`, PID no
    longer running): a referee killed together with its watchdog leaves them behind, and a course
    machine runs tournaments for months. Once per process; returns what it removed."""
    if os.getpid() in _reaped:
        return []
    _reaped.add(os.getpid())
    removed = []
    for parent in layout.parents.values():
        try:
            children = list(parent.glob("arena-*-*"))
        except OSError:
            continue
        for path in children:
            owner = path.name.split("-")[1]
            if not owner.isdigit() or _running(int(owner)):
                continue
            try:
                path.rmdir()  # EBUSY while it holds a process: that one is left alone
            except OSError:
                continue
            removed.append(path)
    return removed


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _write(path: Path, value: object, optional: bool = False) -> None:
    try:
        with open(path, "w") as f:
            f.write(str(value))
    except FileNotFoundError:
        if not optional:
            raise
    except OSError:
        if not optional:
            raise
