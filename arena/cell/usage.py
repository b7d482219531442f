"""What a bot's processes used of the machine: CPU time, and time spent runnable but waiting for a
CPU (the machine's load, not the bot's doing).

Read from the bot's cgroup where it has one (`cpuacct.usage` or `cpu.stat`: the whole process tree,
in nanoseconds), else from the kernel's per-thread scheduler figures of its main process
(`/proc/PID/task/*/schedstat`: time on a CPU, time waiting in the run queue, in nanoseconds) plus
the children it has reaped (`/proc/PID/stat`). The wait time is always the scheduler's, kept per
thread: what a move waited is the most any one thread waited meanwhile (`waited`), never more than
the move's wall time, however many threads (a JVM's JIT and GC threads) wait beside the main one.
Reading is a few small files; benchmarks/fair_clock.py measures it.

On a virtual machine the host may run others on a virtual CPU while a bot's thread is on it: that
time ("steal", /proc/stat) is neither the bot's CPU time nor a wait the scheduler sees, yet it is
the machine's load just as much (a 0.2 s move lost 0.19 s so: issue 35). `cpu_steal` reads it
per CPU, `stolen` gives what any one CPU lost between two readings, and `running` says whether a
bot was on a CPU (or ready to be) when its time ran out, so that steal counts for it only then.
The referee's own thread may wait for a CPU too, and read a move late (`referee_wait`, `lagged`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

_TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Usage:
    """A bot's totals so far: `cpu_s` (user + system, seconds, its whole tree where a cgroup counts
    it), `wait_s` (seconds its threads were runnable but not running, summed; None where unknown)
    and `waits` (each thread's own wait so far, seconds, by thread id)."""

    cpu_s: float
    wait_s: float | None
    waits: dict[bytes, float] = field(default_factory=dict, compare=False)


def waited(before: Usage, after: Usage) -> float | None:
    """Seconds the bot waited for a CPU between two readings: the most any one of its threads
    waited meanwhile (a thread new since `before` counts from 0), so at most the wall time between
    them; the summed figure's difference where threads were not read. None where unknown."""
    if after.waits:
        return max(0.0, *(wait - before.waits.get(tid, 0.0) for tid, wait in after.waits.items()))
    if before.wait_s is None or after.wait_s is None:
        return None
    return max(0.0, after.wait_s - before.wait_s)


STAT = "/proc/stat"
"""The kernel's CPU figures: per CPU (`cpuN` lines), the 8th is the time stolen from it, in ticks."""


_stat_fd: int | None = None
"""/proc/stat, opened once per process (close-on-exec; `pread` at 0 reads it afresh each time)."""
_stat_bytes = 1 << 13
"""What a read of /proc/stat asks for: doubled until one read holds the whole file (a larger
buffer than the file costs its allocation on every read: 30 us a read at 1 MiB, 6 at 8 KiB)."""


def _read_stat() -> bytes:
    """The whole of /proc/stat, read afresh; OSError where it cannot be read."""
    global _stat_fd, _stat_bytes
    if _stat_fd is None:
        _stat_fd = os.open(STAT, os.O_RDONLY | os.O_CLOEXEC)
    while len(data := os.pread(_stat_fd, _stat_bytes, 0)) == _stat_bytes:
        _stat_bytes *= 2
    return data


def cpu_steal() -> tuple[float, ...]:
    """Seconds stolen from each CPU since boot (~9 us on 2 CPUs); () where unknown (no /proc, a
    kernel without the figure)."""
    try:
        data = _read_stat()
    except OSError:
        return ()
    steal = []
    for line in data.split(b"\n"):
        if line[:3] == b"cpu" and line[3:4].isdigit():
            fields = line.split()
            if len(fields) < 9:
                return ()
            steal.append(int(fields[8]) * _TICK_S)
    return tuple(steal)


def stolen(before: tuple[float, ...], after: tuple[float, ...]) -> float:
    """The most seconds stolen from any one CPU between two readings (cpu_steal): at most
    what a thread on that CPU lost; 0 where unknown."""
    if not before or len(before) != len(after):
        return 0.0
    return max(0.0, *(b - a for a, b in zip(before, after, strict=True)))


def referee_wait() -> float | None:
    """Seconds the calling thread (the referee's, as it keeps a game's clock) has waited for a CPU
    since it started (/proc/thread-self/schedstat, ~4 us); None where unknown. A referee kept from
    a CPU reads a move late: that part of the move's wall time is the machine's load too."""
    fields = _read("/proc/thread-self/schedstat").split()
    return int(fields[1]) / 1e9 if len(fields) >= 2 else None


def lagged(before: float | None, after: float | None) -> float:
    """Seconds the referee waited for a CPU between two readings (referee_wait); 0 where unknown."""
    return max(0.0, after - before) if before is not None and after is not None else 0.0


def running(reading: Usage) -> bool:
    """True if one of the threads of `reading` is on a CPU or ready to run now (state R): a bot
    whose threads all sleep (or wait on a disk) is not kept from a CPU, whatever the host steals."""
    return any(stat_fields(f"/proc/{tid.decode()}/stat")[:1] == [b"R"] for tid in reading.waits)


def stat_fields(path: str) -> list[bytes]:
    """The fields of a process's or thread's `stat` file (/proc/PID/stat, /proc/PID/task/TID/stat)
    after its command name, its state first; [] once it is gone."""
    stat = _read(path).rsplit(b")", 1)
    return stat[1].split() if len(stat) == 2 else []


def _read(path: str) -> bytes:
    """The whole (small) file at `path`; b"" if it is gone."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return b""
    try:
        return os.read(fd, 4096)
    except OSError:
        return b""
    finally:
        os.close(fd)


class ThreadStats:
    """The scheduler figures of a changing set of threads, their files kept open (one `pread` a
    thread a reading, the files of threads gone closed). `close()` when done."""

    def __init__(self) -> None:
        self._fds: dict[bytes, int] = {}
        self.waits: dict[bytes, float] = {}

    def usage(self, tids: list[bytes]) -> tuple[float, float]:
        """(CPU seconds, wait seconds) summed over the threads `tids` (those gone count nothing):
        nanoseconds on a CPU, nanoseconds runnable but waiting for one. Each thread's own wait is
        kept in `waits` (seconds, by thread id) until the next reading."""
        cpu = wait = 0
        self.waits: dict[bytes, float] = {}
        for tid in tids:
            fd = self._fds.get(tid)
            if fd is None:
                try:
                    fd = self._fds[tid] = os.open(b"/proc/%s/schedstat" % tid, os.O_RDONLY | os.O_CLOEXEC)
                except OSError:
                    continue
            try:
                fields = os.pread(fd, 128, 0).split()
            except OSError:
                fields = []
            if len(fields) >= 2:
                cpu += int(fields[0])
                wait += int(fields[1])
                self.waits[tid] = int(fields[1]) / 1e9
        if len(self._fds) > len(tids):  # threads that ended
            for gone in set(self._fds) - set(tids):
                os.close(self._fds.pop(gone))
        return cpu / 1e9, wait / 1e9

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()


def threads_usage(tids: list[int] | list[bytes]) -> tuple[float, float, dict[bytes, float]]:
    """(CPU seconds, wait seconds, each thread's wait) of the threads `tids`, read once (ThreadStats
    keeps their files open for repeated readings)."""
    stats = ThreadStats()
    try:
        cpu, wait = stats.usage([str(int(t)).encode() for t in tids])
        return cpu, wait, stats.waits
    finally:
        stats.close()


def process_usage(pid: int) -> Usage | None:
    """A process's usage from its threads' scheduler figures plus its reaped children's CPU time;
    None once it is gone."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    fields = stat_fields(f"/proc/{pid}/stat")
    if not fields:
        return None
    cpu, wait, waits = threads_usage(tids)  # type: ignore[arg-type]
    reaped = (int(fields[13]) + int(fields[14])) * _TICK_S  # cutime + cstime
    return Usage(cpu + reaped, wait, waits)


TASKS_MAX_BYTES = 1 << 20
"""The most of a cgroup's thread list read (a thread id and its newline are at most 8 bytes)."""


def _read_tasks(path: bytes) -> list[bytes] | None:
    """The thread ids a cgroup's `tasks` (v1) or `cgroup.threads` (v2) file lists now, read from a
    fresh open; None once the cgroup is gone. Never from a kept-open file: cgroup v1 keeps the list
    an open file first read, and serves it again to every read that comes within a second of the
    last, so threads and processes started since (a search thread a move) would go unseen."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        chunks = []
        size = 0
        while size < TASKS_MAX_BYTES and (chunk := os.read(fd, 65536)):
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks).split()
    except OSError:
        return None
    finally:
        os.close(fd)


class CgroupUsage:
    """Reads a cgroup's usage, keeping its CPU file open (one `pread` a reading): the CPU time of
    the whole tree from `cpu_file` (cpuacct.usage in ns, or cpu.stat's usage_usec), the threads'
    wait from the scheduler figures of the threads `tasks_file` lists at each reading (read
    afresh: `_read_tasks`). `close()` when done."""

    def __init__(self, cpu_file: Path, tasks_file: Path) -> None:
        self.micro = cpu_file.name == "cpu.stat"
        self._fd: int | None = os.open(cpu_file, os.O_RDONLY | os.O_CLOEXEC)
        self._tasks: bytes | None = os.fsencode(tasks_file)
        self._threads = ThreadStats()

    def cpu_s(self) -> float | None:
        """The tree's CPU seconds so far (None once the cgroup is gone)."""
        if self._fd is None:
            return None
        try:
            data = os.pread(self._fd, 4096, 0)
        except OSError:
            return None
        if self.micro:
            for line in data.splitlines():
                if line.startswith(b"usage_usec "):
                    return int(line.split()[1]) / 1e6
            return None
        return int(data) / 1e9 if data.strip().isdigit() else None

    def usage(self) -> Usage | None:
        cpu = self.cpu_s()
        if cpu is None or self._tasks is None:
            return None
        tids = _read_tasks(self._tasks)
        if tids is None:
            return Usage(cpu, None)
        wait = self._threads.usage(tids)[1]
        return Usage(cpu, wait, self._threads.waits)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
        self._fd = self._tasks = None
        self._threads.close()
