"""What a move waited for a CPU (arena/cell/usage.py `waited`): the most any one of the bot's threads
waited meanwhile, so never more than the move took, however many threads wait beside the main one.
Summed over threads, a JVM whose JIT and GC threads waited beside its main thread was said to have
"waited 3.221 s for a CPU" on a 1.05 s deadline."""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
import time

from conftest import require

from arena.cell import cgroup
from arena.cell.usage import Usage, process_usage, waited


def test_a_moves_wait_is_its_longest_waiting_thread_not_the_sum():
    before = Usage(1.0, 0.9, {b"10": 0.5, b"11": 0.2, b"12": 0.2})
    after = Usage(2.0, 3.4, {b"10": 1.1, b"11": 0.8, b"12": 0.8, b"13": 0.7})  # 13: started meanwhile
    assert waited(before, after) == 0.7  # thread 13's 0.7 s; the sum said 2.5 s
    assert waited(Usage(1.0, 0.5), Usage(2.0, 0.8)) == 0.30000000000000004  # no threads read: the sum
    assert waited(Usage(1.0, None), Usage(2.0, None)) is None


def test_a_real_reading_keeps_each_threads_wait():
    stop = threading.Event()
    block = bytes(1 << 20)

    def busy() -> None:
        while not stop.is_set():
            hashlib.sha256(block).digest()

    threads = [threading.Thread(target=busy) for _ in range(3)]
    for thread in threads:
        thread.start()
    try:
        first = process_usage(os.getpid())
        stop.wait(0.3)
        second = process_usage(os.getpid())
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert first is not None and second is not None
    ids = {str(t.native_id).encode() for t in threads}
    assert ids <= set(second.waits), (ids, second.waits)  # every thread read on its own
    assert abs(sum(second.waits.values()) - second.wait_s) < 1e-6  # the sum is kept as it was
    assert 0.0 <= waited(first, second) <= 0.3 + 0.2  # one thread's wait: at most the time between


def test_a_cgroups_reading_sees_the_threads_started_since_the_last():
    """cgroup v1 serves a kept-open `tasks` file the list of its first read again while it is read
    more than once a second: a bot's search thread started after its first move went unseen, and
    so did its wait for a CPU. Each reading lists the threads afresh."""
    layout = cgroup.detect()
    require(layout.kind != "none", f"no cgroups here: {layout.reason}")
    group = cgroup.Cgroup.create(None, None)
    sleepers: list[subprocess.Popen] = []
    try:
        for _ in range(2):
            sleepers.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"]))
            group.add(sleepers[-1].pid)
            time.sleep(0.05)  # within a second of the reading before
            usage = group.usage()
            assert usage is not None
            assert {str(p.pid).encode() for p in sleepers} <= set(usage.waits), (usage.waits, group.pids())
    finally:
        for sleeper in sleepers:
            sleeper.kill()
            sleeper.wait()
        group.remove()
