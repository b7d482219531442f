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
from pathlib import Path

import pytest
from conftest import require

from arena.cell import cgroup
from arena.cell.limits import Limits
from arena.cell.usage import Usage, cpu_steal, lagged, process_usage, referee_wait, running, stolen, waited
from arena.match import turns
from arena.match.clock import TimeControl
from arena.match.referee import run_match
from arena.match.spec import BotSpec, MatchSpec

HERE = Path(__file__).resolve().parent


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


# --- the time a virtual machine's host steals from its CPUs (issue 35) ---

def test_the_steal_of_each_cpu_is_read_from_proc_stat_and_only_grows():
    lines = [line for line in Path("/proc/stat").read_text().splitlines()
             if line.startswith("cpu") and line[3:4].isdigit()]
    first = cpu_steal()
    second = cpu_steal()
    assert len(first) == len(second) == len(lines) >= 1
    assert all(b >= a >= 0 for a, b in zip(first, second, strict=True))
    assert stolen((1.0, 2.0), (1.3, 2.1)) == pytest.approx(0.3)  # the most any one CPU lost
    assert stolen((), (1.0,)) == 0.0 and stolen((1.0,), (1.0, 2.0)) == 0.0  # unknown: nothing


def test_running_tells_a_bot_at_work_from_one_asleep():
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    asleep = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # both past their start (reading files, importing)
            at_work, dozing = process_usage(busy.pid), process_usage(asleep.pid)
            if at_work and dozing and running(at_work) and not running(dozing):
                break
            time.sleep(0.05)
        assert running(process_usage(busy.pid))
        assert not running(process_usage(asleep.pid))
    finally:
        for process in (busy, asleep):
            process.kill()
            process.wait()


SLEEPER = BotSpec("sleeper", (sys.executable, str(HERE / "bots" / "broken.py"), "sleep", "10"))
"""A bot asleep past any clock of these tests: its timeout is always its own."""


def _timeout_of(bot: BotSpec, clock: TimeControl) -> dict:
    """The forfeit of `bot`, in seat 0, that loses its game against random on time."""
    other = BotSpec("random", (sys.executable, "-m", "bots", "random"))
    record = run_match(MatchSpec("late", "domineering", (bot, other), clock, (0,),
                                 params={"rows": 5, "cols": 5}, limits=Limits()))[0]
    assert record.forfeit and record.forfeit["reason"] == "timeout" and record.forfeit["seat"] == 0
    return record.forfeit


def test_the_referees_own_wait_for_a_cpu_is_read_from_its_thread_and_only_grows():
    stop = threading.Event()

    def spin() -> None:  # two threads beside this one on a CPU or two: one of them waits
        while not stop.is_set():
            pass
    spinners = [threading.Thread(target=spin) for _ in range(max(2, os.cpu_count() or 1))]
    first = referee_wait()
    for thread in spinners:
        thread.start()
    try:
        deadline = time.monotonic() + 10
        while lagged(first, referee_wait()) <= 0 and time.monotonic() < deadline:
            sum(range(10_000))  # this thread at work too, so it queues behind the spinners
    finally:
        stop.set()
        for thread in spinners:
            thread.join()
    assert first is not None and lagged(first, referee_wait()) > 0
    assert lagged(None, 1.0) == 0.0 and lagged(2.0, 1.0) == 0.0  # unknown: nothing; never below 0


def test_a_move_read_late_by_a_referee_kept_from_its_cpu_is_under_load_not_a_sleepers_timeout(monkeypatch):
    """No test can make the kernel keep the referee from a CPU on cue: this one stands in for it.
    The referee sleeps 0.6 s right after sending the first turn (as a descheduled thread would) and
    the kernel's figure is stood in for: no wait, then 80% of its time waited for a CPU (no steal,
    whatever the host does meanwhile). The bot's move, sent at once, is found waiting past the
    deadline: a late move, the referee's wait counted and named only where it is read (without it,
    the bot's own wait alone may say the machine was busy). A bot asleep past its clock is never
    helped by the referee's wait."""
    await_move = turns.Turns._await_move

    def descheduled(self, seat, game_id, ply, *rest):
        if ply == 0:
            time.sleep(0.6)
        return await_move(self, seat, game_id, ply, *rest)
    monkeypatch.setattr(turns.Turns, "_await_move", descheduled)
    monkeypatch.setattr(turns, "cpu_steal", lambda: ())
    monkeypatch.setattr(turns, "referee_wait", lambda: 0.0)
    clock = TimeControl(per_move=0.2)
    quick = BotSpec("random", (sys.executable, "-m", "bots", "random"))
    unseen = _timeout_of(quick, clock)
    assert "the move for ply 0 came" in unseen["detail"], unseen
    assert "the referee waited" not in unseen["detail"], unseen
    monkeypatch.setattr(turns, "referee_wait", lambda: 0.8 * time.monotonic())
    seen = _timeout_of(quick, clock)
    assert "the move for ply 0 came" in seen["detail"] and seen.get("under_load"), seen
    assert "while the referee waited for one" in seen["detail"], seen
    slept = _timeout_of(SLEEPER, clock)
    assert "no move for ply 0" in slept["detail"] and not slept.get("under_load"), slept


def test_a_timeout_while_the_host_steals_the_cpu_of_a_bot_at_work_is_under_load_not_a_sleepers(
        monkeypatch):
    """No test can make a hypervisor steal: this one stands in for the host, reporting 80% of every
    CPU's time stolen (as `cpu_steal` would read it), with real bots and a real referee. A bot that
    worked (0.1 s of CPU) and then did nothing is taken for one the host kept from its CPU: its
    timeout is under load, the steal named. One asleep from the start lost nothing to the host: its
    timeout is its own. Without steal neither was under load (a 0.2 s move lost 0.19 s so)."""
    cpus = len(cpu_steal()) or 1
    monkeypatch.setattr(turns, "cpu_steal", lambda: (0.8 * time.monotonic(),) * cpus)
    clock = TimeControl(per_move=0.5)

    worker = (sys.executable, str(HERE / "bots" / "cpu_burner.py"), "0.1", "asleep")
    worked = _timeout_of(BotSpec("worker", worker), clock)
    assert worked.get("under_load"), worked
    assert "while the host ran others on its virtual CPU" in worked["detail"], worked
    slept = _timeout_of(SLEEPER, clock)
    assert not slept.get("under_load") and "s of CPU and waited" in slept["detail"], slept
