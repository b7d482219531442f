"""What a bot's processes used of the machine: CPU time, and time spent runnable but waiting for a
CPU (the machine's load, not the bot's doing).

Read from the bot's cgroup where it has one (`cpuacct.usage` or `cpu.stat`: the whole process tree,
in nanoseconds), else from the kernel's per-thread scheduler figures of its main process
(`/proc/PID/task/*/schedstat`: time on a CPU, time waiting in the run queue, in nanoseconds) plus
the children it has reaped (`/proc/PID/stat`). The wait time is always the scheduler's, summed
over the bot's threads. Reading is a few small files; benchmarks/fair_clock.py measures it.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

_TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Usage:
    """A bot's totals so far: `cpu_s` (user + system, seconds, its whole tree where a cgroup counts
    it) and `wait_s` (seconds its threads were runnable but not running; None where unknown)."""

    cpu_s: float
    wait_s: float | None


def _schedstat(path: str) -> tuple[int, int]:
    """(ns on a CPU, ns waiting for one) of one thread; (0, 0) if it is gone."""
    try:
        with open(path, "rb") as f:
            fields = f.read().split()
        return int(fields[0]), int(fields[1])
    except (OSError, ValueError, IndexError):
        return 0, 0


def threads_usage(tids: list[int]) -> tuple[float, float]:
    """(CPU seconds, wait seconds) summed over the threads `tids` (those gone count nothing)."""
    cpu = wait = 0
    for tid in tids:
        on, waited = _schedstat(f"/proc/{tid}/schedstat")
        cpu += on
        wait += waited
    return cpu / 1e9, wait / 1e9


def process_usage(pid: int) -> Usage | None:
    """A process's usage from its threads' scheduler figures plus its reaped children's CPU time;
    None once it is gone."""
    try:
        tids = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except (OSError, ValueError):
        return None
    cpu, wait = threads_usage(tids)
    reaped = (int(fields[13]) + int(fields[14])) * _TICK_S  # cutime + cstime
    return Usage(cpu + reaped, wait)


def cgroup_usage(cpu_file: Path, tasks_file: Path | None) -> Usage | None:
    """A cgroup's usage: its CPU time from `cpu_file` (cpuacct.usage in ns, or cpu.stat's
    usage_usec), its threads' wait from the scheduler figures of those `tasks_file` lists."""
    try:
        text = cpu_file.read_text()
    except OSError:
        return None
    if cpu_file.name == "cpu.stat":
        usec = next((int(v) for k, _, v in (ln.partition(" ") for ln in text.splitlines())
                     if k == "usage_usec"), 0)
        cpu = usec / 1e6
    else:
        try:
            cpu = int(text) / 1e9
        except ValueError:
            return None
    if tasks_file is None:
        return Usage(cpu, None)
    try:
        tids = [int(t) for t in tasks_file.read_text().split()]
    except (OSError, ValueError):
        return Usage(cpu, None)
    return Usage(cpu, threads_usage(tids)[1])
