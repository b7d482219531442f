"""A control group per bot: memory, process count and CPU time over its whole process tree.

Resource limits (rlimits) count per process, or per user; a bot that forks, or runs as the same
user as fifty others, slips past them. A cgroup counts every process the bot starts, whatever it
does (setsid, cleared environment, fork bombs), and can freeze or kill all of them at once.

Three ways, chosen by `detect()`:
- cgroup v2 where /sys/fs/cgroup (or /sys/fs/cgroup/unified) is cgroup2, writable, and offers the
  memory and pids controllers to our cgroup's children. Not root, that is a *delegated* cgroup
  (systemd `Delegate=yes`, docs/limits.md): our own cgroup, or the parent of our own when it was
  delegated with a subgroup for us (systemd's `DelegateSubgroup=`). A process alone in a
  delegated cgroup moves into a leaf of it (`LEAF`) first: cgroup v2 hands controllers down only
  from a cgroup that holds no process itself;
- the v1 hierarchies memory, pids, cpuacct and freezer where those are mounted and writable (the
  "hybrid" layout of many machines; a v1 subtree chowned to the user works the same way);
- none: the caller falls back to rlimits only (`Limits.rlimits`), and says so (`sandbox = "on"`
  refuses to run: arena/cell/sandbox.py).

A bot pinned to a CPU (`Limits.pin_cpus`) also gets a cpuset (the v1 cpuset hierarchy, or the v2
cpuset controller where it is delegated): its whole tree is held to that CPU, and its own
`sched_setaffinity` cannot widen that.

A bot's cgroup is created under the referee's own cgroup in each hierarchy (so the limits of the
machine's service manager still apply above it), joined by the bot's first process between fork
and exec (`Cgroup.join_in_child`), and removed when the bot is stopped: by the watchdog if the
referee dies, and by the next referee's first `Cgroup.create` if the watchdog died too
(`reap_stale`, which first thaws and kills what a dead referee's cgroup still holds).
"""
from __future__ import annotations

import os
import secrets
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from arena.cell.scratch import pid_running
from arena.cell.usage import CgroupUsage, Usage
from arena.cell.watchdog import kill_in_cgroups

CGROUP_ROOT = Path("/sys/fs/cgroup")
V1_CONTROLLERS = ("memory", "pids", "cpuacct", "freezer")
"""The v1 hierarchies a bot's cgroup lives in (cpuacct may share a mount with cpu)."""
V2_CONTROLLERS = ("memory", "pids")
"""What cgroup v2 must offer to be used (cpu time and freezing are in the core of v2)."""
LEAF = "arena-referee"
"""The leaf a referee alone in a delegated v2 cgroup moves into (so that the cgroup may hand its
controllers down to the bots' cgroups, its other children)."""
FIX = ("run arena as root, or in a cgroup delegated to its user (systemd Delegate=yes: "
       "docs/limits.md, \"A course server\")")
"""What to do where bot cgroups cannot be made."""
UNENFORCED = "memory over each bot's process tree (tmpfs included), its process count, freezing (suspend)"
"""What goes unenforced for a sandboxed bot without a cgroup (rlimits count per process or per user)."""
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
    cpuset: Path | None = None
    """Where a pinned bot's cpuset is made (v1: the parent in the cpuset hierarchy; v2: the unified
    parent, when it hands the cpuset controller down); None: pinning by sched_setaffinity only."""


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
    mine = _under(v2[0][0], own.get(""))
    try:
        offered = set((mine / "cgroup.controllers").read_text().split())
    except OSError as exc:
        return f"cgroup2 at {v2[0][0]} unreadable ({exc.strerror})"
    missing = [c for c in V2_CONTROLLERS if c not in offered]
    if missing:
        return f"cgroup2 at {v2[0][0]} lacks the {', '.join(missing)} controller"
    why = _hands_down(mine)
    if why is None:
        return _v2_parent(mine)
    if mine.name == LEAF or _delegated(mine.parent):  # our subgroup of a delegated cgroup
        if _hands_down(mine.parent) is None:
            return _v2_parent(mine.parent)
    if _delegated(mine) and _alone_in(mine):  # a delegated cgroup of our own: into a leaf of it
        try:
            (mine / LEAF).mkdir(exist_ok=True)
            _write(mine / LEAF / "cgroup.procs", os.getpid())
        except OSError as exc:
            return f"cgroup2 at {mine}: cannot move into a leaf ({exc.strerror})"
        if _hands_down(mine) is None:
            return _v2_parent(mine)
    return f"cgroup2 at {mine}: not delegated to this process (memory and pids: {why})"


def _hands_down(parent: Path) -> str | None:
    """None if `parent` gives its children the memory and pids controllers (enabling them when
    it may, and cpuset when it can), else why not."""
    try:
        enabled = set((parent / "cgroup.subtree_control").read_text().split())
        if not set(V2_CONTROLLERS) <= enabled:
            (parent / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in V2_CONTROLLERS))
    except OSError as exc:
        return exc.strerror or str(exc)
    if "cpuset" not in enabled:
        _write(parent / "cgroup.subtree_control", "+cpuset", optional=True)
    return None


def _v2_parent(parent: Path) -> Layout | str:
    if not _probe_dir(parent):
        return f"cgroup2 at {parent} is not writable"
    try:
        cpuset = "cpuset" in (parent / "cgroup.subtree_control").read_text().split()
    except OSError:
        cpuset = False
    return Layout("v2", {"unified": parent}, cpuset=parent if cpuset else None)


def _delegated(path: Path) -> bool:
    """True if `path` is a cgroup delegated to this process: systemd marks it (an extended
    attribute), or it belongs to our (non-root) user. A cgroup that is not (a root service's, a
    login session's) is the service manager's to arrange: arena never moves processes in it."""
    for name in ("trusted.delegate", "user.delegate"):
        try:
            if os.getxattr(path, name) == b"1":
                return True
        except OSError:
            continue
    try:
        return os.geteuid() != 0 and path.stat().st_uid == os.geteuid()
    except OSError:
        return False


def _alone_in(path: Path) -> bool:
    """True if this process is the only one in cgroup `path`."""
    try:
        return (path / "cgroup.procs").read_text().split() == [str(os.getpid())]
    except OSError:
        return False


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
    cpuset = next((m for m in mounts if m[1] == "cgroup" and "cpuset" in m[2]), None)
    pinning = _under(cpuset[0], own.get("cpuset")) if cpuset is not None else None
    return Layout("v1", parents, cpuset=pinning if pinning is not None and _probe_dir(pinning) else None)


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
            who = "" if os.geteuid() == 0 else f"not root and no cgroup delegated to uid {os.geteuid()}: "
            _layout = v1 if isinstance(v1, Layout) else Layout("none", {}, f"{who}{v2}; {v1}")
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
               name: str | None = None, cpus: set[int] | None = None) -> Cgroup:
        """A new cgroup limited to `memory_bytes` (no swap beyond it) and `pids_max` processes and
        threads (None: no limit), and to the CPUs `cpus` where the machine has cpusets (None: any);
        CgroupError if the machine has no usable cgroups."""
        layout = layout or detect()
        if layout.kind == "none":
            raise CgroupError(f"no usable cgroups: {layout.reason}")
        if name is None:
            reap_stale(layout)
            name = f"arena-{os.getpid()}-{secrets.token_hex(6)}"
        dirs: dict[str, Path] = {}
        group = cls(layout, dirs)
        parents = dict(layout.parents)
        if cpus and layout.kind == "v1" and layout.cpuset is not None:
            parents["cpuset"] = layout.cpuset
        try:
            for controller, parent in parents.items():
                path = parent / name
                path.mkdir(mode=0o755)
                dirs[controller] = path
                if controller == "cpuset":  # empty until set: nothing could join it
                    group._set_cpus(cpus, parent)  # type: ignore[arg-type]
            if cpus and layout.kind == "v2" and layout.cpuset is not None:
                group._set_cpus(cpus, layout.cpuset)
            group._set_limits(memory_bytes, pids_max)
        except OSError as exc:
            group.remove()
            raise CgroupError(f"cannot set up the bot's cgroup: {exc}") from None
        return group

    def _set_cpus(self, cpus: set[int], parent: Path) -> None:
        """Hold the cgroup to `cpus` (and, v1, to the memory nodes of its parent)."""
        listed = ",".join(str(c) for c in sorted(cpus))
        if self.kind == "v2":
            _write(self.dirs["unified"] / "cpuset.cpus", listed)
            return
        mems = (parent / "cpuset.effective_mems").read_text().strip() \
            if (parent / "cpuset.effective_mems").exists() else (parent / "cpuset.mems").read_text().strip()
        _write(self.dirs["cpuset"] / "cpuset.cpus", listed)
        _write(self.dirs["cpuset"] / "cpuset.mems", mems)

    def cpus(self) -> str | None:
        """The CPUs the cgroup's processes may run on (e.g. "1"), None without a cpuset."""
        if self.kind == "v2":
            where = self.dirs["unified"] / "cpuset.cpus.effective"
        elif "cpuset" in self.dirs:
            where = self.dirs["cpuset"] / "cpuset.effective_cpus"
        else:
            return None
        try:
            return where.read_text().strip() or None
        except OSError:
            return None

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
        return self._read_pids() or []

    def _read_pids(self) -> list[int] | None:
        """The processes in the cgroup now; None where its list cannot be read."""
        d = self.dirs.get("unified") or self.dirs.get("pids") or next(iter(self.dirs.values()), None)
        if d is None:
            return None
        try:
            return [int(x) for x in (d / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return None

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
    def freeze(self, wait: bool = True) -> None:
        """Stop every process of the cgroup (none can escape by leaving a process group); `wait`:
        until the kernel says all are stopped (without it, the freezing goes on on its own, within
        milliseconds; see `wait_frozen`)."""
        self._set_frozen(True, wait)

    def thaw(self) -> None:
        self._set_frozen(False)

    def frozen(self) -> bool:
        try:
            if self.kind == "v2":
                return "frozen 1" in (self.dirs["unified"] / "cgroup.events").read_text()
            return (self.dirs["freezer"] / "freezer.state").read_text().strip() == "FROZEN"
        except (OSError, KeyError):
            return False

    def _set_frozen(self, frozen: bool, wait: bool = True) -> None:
        try:
            if self.kind == "v2":
                _write(self.dirs["unified"] / "cgroup.freeze", 1 if frozen else 0)
            else:
                _write(self.dirs["freezer"] / "freezer.state", "FROZEN" if frozen else "THAWED")
        except (OSError, KeyError):
            return
        if frozen and wait:
            self.wait_frozen()

    def wait_frozen(self) -> None:
        """Return once the kernel reports every task frozen (a freeze takes milliseconds on a busy
        machine: tasks stop at their next interrupt), or after FREEZE_WAIT_S."""
        deadline = time.monotonic() + FREEZE_WAIT_S
        while not self.frozen() and time.monotonic() < deadline:
            time.sleep(0.0002)

    def kill(self) -> bool:
        """SIGKILL every process of the cgroup, until none is left (a fork bomb included); whether
        none is."""
        if self.kind == "v2" and (self.dirs["unified"] / "cgroup.kill").exists():
            try:
                _write(self.dirs["unified"] / "cgroup.kill", 1)
            except OSError:
                pass
        for _ in range(_KILL_ROUNDS):
            pids = self._read_pids()
            if pids is None:
                return False
            if not pids:
                return True
            self.freeze()  # nothing forks while it is being killed
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            self.thaw()  # killed tasks die only once thawed
            time.sleep(0.001)
        return self._read_pids() == []

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


def reap_stale(layout: Layout, timeout_s: float = 2.0) -> list[Path]:
    """Remove the bot cgroups left by referees that are gone (named `arena-PID-...`, PID no longer
    running): a referee killed together with its watchdog leaves them behind, and a course machine
    runs tournaments for months. What such a cgroup still holds is a dead referee's bot: it is
    thawed and killed first (a bot frozen while its opponent moved, under the v1 freezer, holds
    its SIGKILL, and --die-with-parent's, until thawed: its sandbox would stay for good, frozen
    under init). Once per process; returns what it removed."""
    if os.getpid() in _reaped:
        return []
    _reaped.add(os.getpid())
    stale: dict[str, list[Path]] = {}
    for parent in {*layout.parents.values(), *([layout.cpuset] if layout.cpuset else [])}:
        try:
            children = list(parent.glob("arena-*-*"))
        except OSError:
            continue
        for path in children:
            owner = path.name.split("-")[1]
            if owner.isdigit() and not pid_running(int(owner)):
                stale.setdefault(path.name, []).append(path)
    removed = []
    for paths in stale.values():
        if any(_pids(path) for path in paths):
            kill_in_cgroups([str(path) for path in paths], timeout_s)
        for path in paths:
            try:
                path.rmdir()  # EBUSY if a process would not die in time: tried again next time
            except OSError:
                continue
            removed.append(path)
    return removed


def _pids(path: Path) -> list[int]:
    try:
        return [int(p) for p in (path / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


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
