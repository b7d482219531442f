"""Per-bot limits and process containment: what a bot may use, and how all of its processes go.

`Limits` is data: memory, CPU seconds, file size, processes, log size, and the two fairness options
(pin each bot to its own CPU; suspend a bot while its opponent thinks). The launcher applies it in
the child between fork and exec (`Limits.apply_in_child`): resource limits, the parent-death signal
(the bot is killed with SIGKILL when the referee's thread that started it dies, even by kill -9),
and optionally a CPU.

A bot may leave its process group (setsid) and so escape a group kill. Every bot process carries a
unique `ARENA_BOT_MARKER` environment value, inherited by its children; `kill_marked` finds them
through /proc (arena/cell/watchdog.py). A `Watchdog` process (that file run as a script), started
by the referee in its own session, holds a pipe from the referee: when the pipe closes (the
referee ended, however it ended) it kills the process groups, the marked processes and the cgroups
it was told about and not told to forget, then exits.

Not covered without cgroups: a child that leaves the process group *and* execs with a cleared
environment; RLIMIT_NPROC counts every process of the user and is ignored for root (docs/limits.md).
"""
from __future__ import annotations

import ctypes
import os
import resource
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, fields
from typing import Any

from arena.cell import watchdog
from arena.cell.usage import stat_fields
from arena.cell.watchdog import marked_pids

MIB = 1 << 20
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36

try:
    _libc: Any = ctypes.CDLL(None, use_errno=True)
    _prctl = _libc.prctl
    _prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    _prctl.restype = ctypes.c_int
except (OSError, AttributeError):  # pragma: no cover - not Linux
    _prctl = None


@dataclass(frozen=True)
class Limits:
    """What one bot process (and its children) may use. None means no limit.

    Defaults suit the assignments: a search bot with a large transposition table fits in 2 GiB, a
    whole match at 5 s a move fits in an hour of CPU, nothing needs to write more than 64 MiB.
    """

    memory_mb: int | None = 2048
    """Private writable memory (RLIMIT_DATA): heap and anonymous mappings. A JVM's reserved but
    unused heap does not count, so Java bots start; see `memory_kind`."""
    memory_kind: str = "data"
    """"data" (RLIMIT_DATA) or "address_space" (RLIMIT_AS: stricter, but a JVM needs about 4 GiB
    of address space just to start)."""
    cpu_s: int | None = 3600
    """CPU seconds of each bot process (RLIMIT_CPU): SIGXCPU at the limit, SIGKILL 5 s later."""
    file_mb: int | None = 64
    """Largest file a bot may write (RLIMIT_FSIZE), its log included (the referee keeps the log
    under `log_mb` as long as it runs); over it the bot gets SIGXFSZ."""
    processes: int | None = 64
    """Processes and threads a bot may start beyond those its user runs already (RLIMIT_NPROC is per
    user; it is not enforced for root)."""
    log_mb: float = 1.0
    """A bot's log is cut to its last half when it grows past this."""
    pin_cpus: bool = False
    """Pin a match's bots to CPUs of their own (MATCH_CPUS: in a tournament, one core a match when
    the bot not to move is frozen, two otherwise): by a cpuset on its cgroup where it has one (the
    bot cannot undo that), else sched_setaffinity."""
    suspend: bool | None = None
    """Freeze a bot while its opponent thinks, thaw it when its turn is sent. None (the default):
    wherever the bot has a cgroup with a freezer, else not at all (the run says so once); True:
    also without one (SIGSTOP to its process group, which a bot can escape); False: never (the
    bots may think on their opponent's time)."""
    restart_on_forfeit: bool = True
    """Kill a bot that forfeited (it may still be computing) and start it afresh for the next game."""
    sandbox: str = "auto"
    """Isolate each bot (arena/cell/sandbox.py): "auto" where the machine can (else say why bots
    are NOT isolated), "on" (refuse to run without isolation), "off" (trusted bots only)."""
    read: tuple[str, ...] = ()
    """Extra host paths every sandboxed bot may read (read-only), e.g. a shared opening book."""
    hide: tuple[str, ...] = ()
    """Host paths no sandboxed bot may see even inside a directory it may read; the tournament
    runner adds its tournament file and results directory."""
    bot_uids: str = "1100000000-1100004095"
    """The user ids ("FIRST-LAST") sandboxed bots run as when arena runs as root, one of its own
    for each running bot (arena/cell/uids.py); the range must hold no real user."""

    def __post_init__(self) -> None:
        for name in ("memory_mb", "cpu_s", "file_mb", "processes"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"limit {name} must be a whole number >= 1 (or none), got {value!r}")
        if self.memory_kind not in ("data", "address_space"):
            raise ValueError(f"limit memory_kind must be 'data' or 'address_space', got {self.memory_kind!r}")
        if isinstance(self.log_mb, bool) or not isinstance(self.log_mb, (int, float)) or not self.log_mb > 0:
            raise ValueError(f"limit log_mb must be a positive number, got {self.log_mb!r}")
        for name in ("pin_cpus", "suspend", "restart_on_forfeit"):
            if not isinstance(getattr(self, name), bool) and not (name == "suspend" and self.suspend is None):
                raise ValueError(f"limit {name} must be true or false, got {getattr(self, name)!r}")
        if self.sandbox not in ("auto", "on", "off"):
            raise ValueError(f"limit sandbox must be 'auto', 'on' or 'off', got {self.sandbox!r}")
        from arena.cell.uids import parse_range
        parse_range(self.bot_uids)
        for name in ("read", "hide"):
            paths = getattr(self, name)
            if isinstance(paths, str) or not all(isinstance(p, str) and p for p in paths):
                raise ValueError(f"limit {name} must be a list of paths, got {paths!r}")
            object.__setattr__(self, name, tuple(paths))

    @classmethod
    def from_dict(cls, table: dict[str, Any]) -> Limits:
        """Limits from a TOML `[limits]` table; ValueError names an unknown key or a bad value.
        A limit set to 0 or false (for the numeric ones) means none."""
        known = {f.name for f in fields(cls)} - {"hide"}  # hide: set by the runner, not the file
        unknown = sorted(set(table) - known)
        if unknown:
            raise ValueError(f"unknown key {unknown[0]!r} (known: {', '.join(sorted(known))})")
        values = dict(table)
        for name in ("memory_mb", "cpu_s", "file_mb", "processes"):
            if name in values and values[name] is not True and values[name] == 0:
                values[name] = None
        return cls(**values)

    @property
    def log_bytes(self) -> int:
        return int(self.log_mb * MIB)

    def rlimits(self, nproc: bool = True, own_user: bool = False) -> list[tuple[int, int, int]]:
        """(resource, soft, hard) for the child; the process count is relative to the user's
        (left out with `nproc=False`, when a cgroup counts the bot's processes instead; exact with
        `own_user`, for a bot that is a user of its own)."""
        out = [(resource.RLIMIT_CORE, 0, 0)]
        if self.memory_mb is not None:
            kind = resource.RLIMIT_DATA if self.memory_kind == "data" else resource.RLIMIT_AS
            out.append((kind, self.memory_mb * MIB, self.memory_mb * MIB))
        if self.cpu_s is not None:
            out.append((resource.RLIMIT_CPU, self.cpu_s, self.cpu_s + 5))
        if self.file_mb is not None:
            out.append((resource.RLIMIT_FSIZE, self.file_mb * MIB, self.file_mb * MIB))
        if self.processes is not None and nproc:
            n = self.processes + (0 if own_user else user_tasks())
            out.append((resource.RLIMIT_NPROC, n, n))
        return out

    def preexec(self, cpu: int | None = None, join: Any = None, own_user: bool = False) -> Any:
        """A function for subprocess.Popen(preexec_fn=...): everything computed before the fork,
        the child only makes system calls. `join()`, when given, runs first (e.g. entering the
        bot's cgroup, which then counts its processes instead of RLIMIT_NPROC). `own_user`: the bot
        runs as a user of its own (arena/cell/uids.py), so RLIMIT_NPROC counts its processes alone."""
        limits = self.rlimits(nproc=join is None, own_user=own_user)
        parent = os.getpid()
        prctl = _prctl

        def in_child() -> None:
            if join is not None:
                join()
            if prctl is not None:
                prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
                if os.getppid() != parent:  # the referee died before the prctl
                    os._exit(1)
            for kind, soft, hard in limits:
                try:
                    resource.setrlimit(kind, (soft, hard))
                except (ValueError, OSError):  # a hard limit already lower: keep it
                    pass
            if cpu is not None:
                try:
                    os.sched_setaffinity(0, {cpu})
                except OSError:  # a CPU taken away meanwhile: run unpinned rather than not at all
                    pass

        return in_child


MATCH_CPUS = [0, 2]
"""The CPUs this process's matches pin their bots to (`set_match_cpus`): from the FIRST allowed
CPU, COUNT of them, bot k on the (k mod COUNT)-th. A tournament worker in match slot s takes CPUs
s*COUNT on, so concurrent matches never share a core."""


def cores_per_match(suspend: bool | None) -> int:
    """Cores a pinned match needs: one when its bots take turns (the bot not to move is frozen,
    `suspend` not false), two when both may run at once (pondering allowed)."""
    return 2 if suspend is False else 1


def set_match_cpus(first: int, count: int) -> None:
    """Pin this process's bots to `count` CPUs from the `first`-th allowed one (see MATCH_CPUS)."""
    MATCH_CPUS[:] = [first, count]


def match_cpus(pause_s: float = 0.0) -> tuple[int, int]:
    """(first, count) of this process's match CPUs (after `pause_s`, so that a pool's tasks spread
    over its workers)."""
    time.sleep(pause_s)
    return MATCH_CPUS[0], MATCH_CPUS[1]


CPU_OFFSET_ENV = "ARENA_CPU_OFFSET"
"""Environment: how many of the allowed CPUs a process's pinned bots skip before their first (0
by default). Two runs on one machine given offsets 0 and 1 (the test suite's xdist workers, two
`arena` commands) never pin a bot to the same core while their matches fit."""


def cpu_offset() -> int:
    """The offset in ARENA_CPU_OFFSET (0 when unset); ValueError naming it if not a count."""
    raw = os.environ.get(CPU_OFFSET_ENV, "").strip()
    if not raw:
        return 0
    if not raw.isdigit():
        raise ValueError(f"{CPU_OFFSET_ENV}={raw!r}: must be a whole number of CPUs, 0 or more")
    return int(raw)


def cpu_for(index: int) -> int:
    """The CPU bot number `index` of a match is pinned to: the allowed CPUs taken in turn, within
    this process's match CPUs, shifted by ARENA_CPU_OFFSET."""
    allowed = sorted(os.sched_getaffinity(0))
    first, count = MATCH_CPUS
    return allowed[(cpu_offset() + first + index % count) % len(allowed)]


def user_tasks() -> int:
    """Processes and threads of this user (what RLIMIT_NPROC counts)."""
    uid = os.getuid()
    count = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                st = os.stat(f"/proc/{name}/task")
                if st.st_uid == uid:
                    count += st.st_nlink - 2
            except OSError:
                continue
    return count


def set_child_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (so none ends up under init while
    it runs); False where prctl is not available."""
    return _prctl is not None and _prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0


# --- finding and killing a bot's processes ---

def process_exists(pid: int) -> bool:
    """True if `pid` is a live (not zombie) process."""
    fields = stat_fields(f"/proc/{pid}/stat")
    return bool(fields) and fields[0] not in (b"Z", b"X")


def connection_owner(peer: tuple[str, int], server_port: int, markers: dict[str, Any]) -> Any:
    """Which bot opened the loopback TCP connection from `peer` to our `server_port`: the value in
    `markers` (marker -> bot) of the process holding its socket; None if none of them does."""
    inode = _tcp_inode(peer, server_port)
    if inode is None:
        return None
    link = f"socket:[{inode}]"
    for marker, owner in markers.items():
        for pid in marked_pids(marker):
            try:
                fds = os.listdir(f"/proc/{pid}/fd")
            except OSError:
                continue
            for fd in fds:
                try:
                    if os.readlink(f"/proc/{pid}/fd/{fd}") == link:
                        return owner
                except OSError:
                    continue
    return None


def _tcp_inode(peer: tuple[str, int], server_port: int) -> int | None:
    """The inode of the client side of the IPv4 connection peer -> server_port (/proc/net/tcp)."""
    host, port = peer
    try:
        packed = bytes(int(p) for p in host.split("."))
    except ValueError:
        return None
    local = f"{int.from_bytes(packed, 'little'):08X}:{port:04X}"
    remote_port = f":{server_port:04X}"
    try:
        with open("/proc/net/tcp") as f:
            next(f, None)
            for line in f:
                cols = line.split()
                if len(cols) > 9 and cols[1] == local and cols[2].endswith(remote_port):
                    return int(cols[9])
    except OSError:
        return None
    return None


# --- the watchdog ---

class Watchdog:
    """A process in its own session that kills the bots it was told about when the referee ends.

    `register(pgid, marker)` for each bot started; `close()` (or the referee's death) makes it kill
    them all and exit. Starting it costs one interpreter start-up (tens of milliseconds)."""

    def __init__(self) -> None:
        self._process: subprocess.Popen | None = None
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-S", os.path.abspath(watchdog.__file__)],
                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True, close_fds=True,
            )
        except OSError:  # pragma: no cover - no interpreter: the referee still kills on close
            self._process = None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    def register(self, pgid: int | None, marker: str) -> None:
        self._write(f"pgid {pgid}\nmarker {marker}\n" if pgid else f"marker {marker}\n")

    def register_cgroup(self, directories: list[str]) -> None:
        """A sandboxed bot's cgroup: if the referee dies, its processes are killed and its
        directories removed (a cgroup the referee removed itself is simply gone by then)."""
        self._write("".join(f"cgroup {d}\n" for d in directories))

    def forget(self, pgid: int | None, marker: str | None = None,
               cgroup_dirs: list[str] | None = None) -> None:
        """The group `pgid` was killed and its leader reaped: its number may be reused, drop it; and
        the bot's `marker` and cgroup directories, nothing of it being left (the watchdog's last
        sweep then reads no process's environment for it)."""
        lines = [f"forget {pgid}\n"] if pgid else []
        lines += [f"forget-marker {marker}\n"] if marker else []
        lines += [f"forget-cgroup {d}\n" for d in cgroup_dirs or ()]
        if lines:
            self._write("".join(lines))

    def _write(self, text: str) -> None:
        if self._process is None or self._process.stdin is None:
            return
        try:
            self._process.stdin.write(text.encode())
            self._process.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            pass

    def close(self, wait_s: float = 0.0) -> None:
        """Close the pipe: the watchdog sweeps once more and exits (wait up to `wait_s` for it)."""
        if self._process is None:
            return
        try:
            if self._process.stdin is not None:
                self._process.stdin.close()
        except OSError:
            pass
        try:
            self._process.wait(timeout=wait_s if wait_s > 0 else 0.001)
        except subprocess.TimeoutExpired:
            # not waited for: it ends by itself after the sweep; Popen reaps it later
            pass


