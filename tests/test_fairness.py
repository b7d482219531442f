"""Fairness against a dishonest opponent (issue 21), with real attacking bots (tests/bots/attacks.py).

- Thinking on the opponent's time: by default the bot not to move is frozen (its cgroup's
  freezer), so an opponent that keeps CPU-burning children running takes nothing of an honest
  bot's move; with `--no-suspend` (suspend = false) the same children burn through the honest
  bot's turns.
- Pinning: a pinned bot's cgroup has a cpuset, so the bot's own sched_setaffinity(all CPUs) leaves
  it on its CPU; without the sandbox (no cgroup) the same call widens it (the attack is real).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import require, run_arena

from arena.cell import cgroup, sandbox
from arena.cell.launcher import resolve_command
from arena.cell.limits import Limits, cpu_for
from arena.cli import build_parser
from arena.cli.match import limits_of
from arena.match.clock import TimeControl
from arena.match.referee import run_match
from arena.match.spec import BotSpec, MatchSpec

HERE = Path(__file__).resolve().parent
ATTACKS = HERE / "bots" / "attacks.py"
TAG = f"fair{os.getpid()}"
"""In the command line of every attacker process of this run (and of its forked children)."""
THINK_S = 0.15
"""CPU seconds the honest bot needs for each move."""
CLOCK = TimeControl(per_move=0.4)


@pytest.fixture(autouse=True)
def _no_attacker_left():
    yield
    left = _tagged()
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    assert left == []


def _tagged(word: str = "") -> list[int]:
    """Live processes of this run's bots (those whose command line holds `word`)."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid():
            try:
                line = Path(f"/proc/{name}/cmdline").read_bytes()
                state = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if TAG.encode() in line and word.encode() in line and b"bwrap" not in line and state not in "ZX":
                found.append(int(name))
    return found


def _cpu_s(pids: list[int]) -> float:
    """CPU seconds (user + system) used so far by `pids`."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def _autogroup_nice(path: Path) -> str | None:
    """The nice value of an autogroup ("/autogroup-40672 nice 0" → "0"), or None where the kernel
    keeps none (no such file, or an empty one: autogroups turned off)."""
    try:
        words = path.read_text().split()
    except OSError:
        return None
    return words[-1] if words else None


@pytest.fixture
def ahead():
    """The bots of this run ahead of the rest of the machine (other test runs on a shared machine),
    so that what the one bot does to the other is measured, not the machine's load: each bot runs
    in a session of its own, which the scheduler weighs as one group (an autogroup), so a thread
    gives the group of each bot process, and the referee's, the highest priority (nice -20) as
    soon as it appears. Root only (elsewhere: at the machine's priority)."""
    done = threading.Event()

    def raise_new() -> None:
        seen: set[int] = set()
        bots: set[int] = set()
        while not done.wait(0.005):
            for pid in {int(name) for name in os.listdir("/proc") if name.isdigit()} - seen:
                seen.add(pid)
                try:
                    if TAG.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                        bots.add(pid)
                except OSError:
                    pass
            for pid in list(bots):  # again and again: a bot may start a session (a group) of its own
                nice = _autogroup_nice(Path(f"/proc/{pid}/autogroup"))
                try:
                    if nice is None:  # gone, or no autogroups here
                        bots.discard(pid)
                    elif nice != "-20":
                        Path(f"/proc/{pid}/autogroup").write_text("-20")
                except OSError:
                    bots.discard(pid)

    own = Path("/proc/self/autogroup")
    before = _autogroup_nice(own)
    try:
        own.write_text("-20")  # the referee too: it must freeze the bots when their turn ends
    except OSError:
        pass
    thread = threading.Thread(target=raise_new, daemon=True)
    thread.start()
    yield
    done.set()
    thread.join()
    if before is not None:
        try:
            own.write_text(before)
        except OSError:
            pass


def needs_freezer() -> None:
    reason = sandbox.unavailable_reason()
    require(reason is None, f"bots cannot be sandboxed here: {reason}")
    layout = cgroup.detect()
    require(layout.kind != "none", f"no usable cgroups: {layout.reason}")


def bot(mode: str, *options: str) -> BotSpec:
    return BotSpec(f"{mode}", (sys.executable, str(ATTACKS), mode, f"tag={TAG}", *options))


PAUSE_S = 0.1
"""After each of the honest bot's moves, how long the test watches the attacker's CPU time while
the turn is not the attacker's (seconds)."""


def _schedstat_ns(pid: int) -> int | None:
    """Nanoseconds `pid` has run so far (/proc/PID/schedstat: exact, where /proc/PID/stat counts
    clock ticks), None once it is gone."""
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


class CpuTrace:
    """The CPU time of a run's processes (those whose command line holds `word`), read every
    millisecond by a thread: what they burned within a span of monotonic time can be told after."""

    def __init__(self, word: str) -> None:
        self.word = word
        self.samples: list[tuple[float, float, dict[int, int]]] = []  # (read from, read by, ns by pid)
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> CpuTrace:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()

    def _run(self) -> None:
        pids: list[int] = []
        rescan = 0.0
        while not self._done.wait(0.001):
            if time.monotonic() >= rescan:  # the bots start, and fork, after the trace does
                pids, rescan = _tagged(self.word), time.monotonic() + 0.05
            began = time.monotonic()
            ns = {pid: n for pid in pids if (n := _schedstat_ns(pid)) is not None}
            self.samples.append((began, time.monotonic(), ns))

    def burned(self, begin: float, end: float) -> float | None:
        """CPU seconds burned between the first sample read wholly after `begin` and the last read
        wholly before `end` (None with fewer than two such samples)."""
        inside = [ns for start, stop, ns in self.samples if start >= begin and stop <= end]
        if len(inside) < 2:
            return None
        first, last = inside[0], inside[-1]
        return sum(last[pid] - first[pid] for pid in first.keys() & last.keys()) / 1e9


def _ponder_match(limits: Limits, clock: TimeControl = CLOCK,
                  games: tuple[int, ...] = (0, 1)) -> tuple[list, list[tuple[float, ...]]]:
    """The games `games` (two by default) of the pondering attacker (two CPU-burning children)
    against the honest bot that needs THINK_S of CPU a move (at a 0.4 s clock by default): the
    records, and for each of the honest bot's moves (the attacker's CPU seconds while the honest
    bot thought, from the span the honest bot reports; the attacker's CPU seconds in PAUSE_S after
    the move, before the attacker's turn is sent; the move's time on the clock). Six of the honest
    bot's moves a game."""
    pauses: list[float] = []

    def on_move(record, move, state):
        if record.players[move.seat] == "think":  # the attacker is not to move: it may not compute
            pids = _tagged("ponder")
            before = _cpu_s(pids)
            time.sleep(PAUSE_S)
            pauses.append(_cpu_s(pids) - before)

    spec = MatchSpec("ponder", "domineering", (bot("ponder", "n=2"), bot("think", f"s={THINK_S}")),
                     clock, games, params={"rows": 5, "cols": 5}, limits=limits)
    with CpuTrace("ponder") as trace:
        records = run_match(spec, on_move=on_move)
    honest = [m for r in records for m in r.moves if r.players[m.seat] == "think"]
    during = [trace.burned(*m.info["span"]) for m in honest]
    assert None not in during, "the trace has too few samples inside an honest move"
    return records, [(d, pause, m.time_s) for d, pause, m in zip(during, pauses, honest, strict=True)]


@pytest.mark.loads_machine  # the attacker's children burn CPU
def test_by_default_a_pondering_opponent_is_frozen_and_the_honest_bot_never_loses_on_time(ahead):
    needs_freezer()
    records, turns = [], []
    for games in ((0, 1), (2, 3), (4, 5)):  # suspend left to its default
        more, measured = _ponder_match(Limits(sandbox="on"), games=games)
        records, turns = records + more, turns + measured
        honest = [r.forfeit for r in records if r.forfeit_of(r.players.index("think")) is not None]
        # the honest bot never forfeits but on time under load: it waited for a CPU most of its
        # time while the attacker, frozen, burned nothing (`during`, below, on every other honest
        # move; a freezer that failed would show there). Two hogs elsewhere made that happen in full
        # runs, whatever priority the `ahead` fixture gives the bots, once in both games (two
        # moves measured): such games are played again, as the course plays again a judged game
        # lost on time under load. The attacker may lose on time on a machine others load (its own
        # children compete with it on its turn): its doing.
        assert all(f["reason"] == "timeout" and f.get("under_load") for f in honest), \
            ([r.forfeit for r in records], turns)
        if len(turns) >= 6:
            break
    print("attacker CPU s during, after; honest move s:", [tuple(round(x, 4) for x in t) for t in turns])
    assert len(turns) >= 6, ([r.forfeit for r in records], turns)
    assert max(pause for _, pause, _ in turns) < 0.01, turns  # frozen: its children burn nothing
    assert max(during for during, _, _ in turns) < 0.002, turns  # frozen before the turn is sent


@pytest.mark.loads_machine
def test_with_no_suspend_the_pondering_children_burn_through_the_honest_bots_turns():
    """At a 5 s clock, so that the honest bot's moves are there to measure (at 0.4 s it may lose
    them all on time), and at the machine's priority (the attacker's children are not frozen). One
    game: the children burn through every turn, and on a busy machine each turn takes a second."""
    needs_freezer()
    records, turns = _ponder_match(Limits(sandbox="on", suspend=False), TimeControl(per_move=5.0),
                                   games=(0,))
    over = sum(u > CLOCK.per_move for _, _, u in turns)
    print("attacker CPU s during, after; honest move s:", [tuple(round(x, 3) for x in t) for t in turns],
          f"honest moves over {CLOCK.per_move} s: {over} of {len(turns)}")
    assert all(r.forfeit is None for r in records), [r.forfeit for r in records]
    assert len(turns) >= 4
    assert sum(during for during, _, _ in turns) / len(turns) > 0.05, turns  # the attack is real
    assert sum(pause for _, pause, _ in turns) / len(turns) > 0.01, turns


def test_suspend_options_default_none_and_no_suspend_and_suspend():
    parser = build_parser()
    base = ["match", "domineering", "random", "random"]
    assert limits_of(parser.parse_args(base)).suspend is None
    assert limits_of(parser.parse_args([*base, "--no-suspend"])).suspend is False
    assert limits_of(parser.parse_args([*base, "--suspend"])).suspend is True
    assert Limits.from_dict({"suspend": False}).suspend is False
    assert Limits.from_dict({}).suspend is None
    with pytest.raises(ValueError, match="suspend must be true or false"):
        Limits.from_dict({"suspend": "no"})


def test_a_pinned_sandboxed_bot_cannot_widen_its_cpus_but_an_unsandboxed_one_can():
    needs_freezer()
    require(cgroup.detect().cpuset is not None, "no writable cpuset hierarchy for the bots' cgroups")
    require(len(os.sched_getaffinity(0)) > 1, "a single CPU: nothing to widen")
    everything = sorted(range(os.cpu_count() or 1))

    def cpus_reported(limits: Limits) -> list[list[int]]:
        spec = MatchSpec("pin", "domineering", (bot("unpin"), BotSpec("random", resolve_command("random"))),
                         TimeControl(per_move=2.0), (0,), params={"rows": 4, "cols": 4}, limits=limits)
        record = run_match(spec)[0]
        assert record.forfeit is None, record.forfeit
        return [m.info["cpus"] for m in record.moves if m.seat == 0]

    held = cpus_reported(Limits(sandbox="on", pin_cpus=True))
    assert held and all(cpus == [cpu_for(0)] for cpus in held), held
    free = cpus_reported(Limits(sandbox="off", pin_cpus=True))
    assert free and all(cpus == everything for cpus in free), free  # sched_setaffinity alone: undone


def test_a_cgroup_with_a_cpu_holds_its_whole_tree_there_whatever_affinity_a_child_asks():
    needs_freezer()
    require(cgroup.detect().cpuset is not None, "no writable cpuset hierarchy for the bots' cgroups")
    require(len(os.sched_getaffinity(0)) > 1, "a single CPU: nothing to widen")
    cpu = cpu_for(1)
    group = cgroup.Cgroup.create(None, None, cpus={cpu})
    try:
        assert group.cpus() == str(cpu)
        show = "import os; print(sorted(os.sched_getaffinity(0)), flush=True)"
        widen = (f"import os, subprocess, sys; os.sched_setaffinity(0, range(os.cpu_count())); {show}; "
                 f"subprocess.run([sys.executable, '-c', {show!r}])")
        done = subprocess.run([sys.executable, "-c", widen], preexec_fn=group.join_in_child,
                              capture_output=True, text=True, timeout=30)
        assert done.stdout.split("\n")[:2] == [f"[{cpu}]", f"[{cpu}]"], done  # it and its child
    finally:
        group.remove()


@pytest.mark.loads_machine
def test_without_a_freezer_the_default_does_not_suspend_and_suspend_true_stops_the_group():
    """sandbox = off: no cgroup, so no freezer. By default the bots are then not suspended (the run
    says so: arena.cell.notices); suspend = true stops the bot's process group (SIGSTOP), which
    holds these children (they stay in its group). One game each: four or more of the honest
    bot's moves."""
    _, free = _ponder_match(Limits(sandbox="off"), TimeControl(per_move=5.0), games=(0,))
    _, stopped = _ponder_match(Limits(sandbox="off", suspend=True), TimeControl(per_move=5.0), games=(0,))
    assert len(free) >= 4 and len(stopped) >= 4, (free, stopped)
    assert sum(pause for _, pause, _ in free) / len(free) > 0.01, free
    assert max(pause for _, pause, _ in stopped) < 0.01, stopped


def test_each_worker_of_a_pool_pins_its_bots_to_cores_of_its_own_and_too_many_are_refused(tmp_path,
                                                                                           monkeypatch):
    """A tournament's concurrent matches never share a core when bots are pinned: worker k of the
    pool pins its bots to core k (the bot not to move is frozen, so a match needs one core), or to
    cores 2k and 2k+1 when pondering is allowed; `--concurrency` past what fits is refused."""
    from arena.cell import limits
    from arena.tournament import workers

    for per_match in (1, 2):
        pool = workers.make_pool(2, per_match=per_match)
        try:
            got = {f.result() for f in [pool.submit(limits.match_cpus, 0.3) for _ in range(6)]}
        finally:
            pool.shutdown()
        assert got == {(0, per_match), (per_match, per_match)}
    cpus = sorted(os.sched_getaffinity(0))
    monkeypatch.delenv(limits.CPU_OFFSET_ENV, raising=False)  # the suite's xdist workers set it
    try:
        limits.set_match_cpus(1, 1)
        assert [limits.cpu_for(0), limits.cpu_for(1)] == [cpus[1 % len(cpus)]] * 2
        limits.set_match_cpus(2, 2)
        assert [limits.cpu_for(0), limits.cpu_for(1)] == [cpus[2 % len(cpus)], cpus[3 % len(cpus)]]
        monkeypatch.setenv(limits.CPU_OFFSET_ENV, "1")  # a second run on the machine starts one core on
        assert [limits.cpu_for(0), limits.cpu_for(1)] == [cpus[3 % len(cpus)], cpus[4 % len(cpus)]]
        limits.set_match_cpus(0, 1)
        assert limits.cpu_for(0) == cpus[1 % len(cpus)]
        monkeypatch.setenv(limits.CPU_OFFSET_ENV, "one")
        with pytest.raises(ValueError, match="ARENA_CPU_OFFSET='one': must be a whole number"):
            limits.cpu_for(0)
    finally:
        limits.set_match_cpus(0, 2)
        monkeypatch.delenv(limits.CPU_OFFSET_ENV, raising=False)
    for suspend, per_match in (("", 1), ("suspend = false\n", 2)):
        (tmp_path / "t.toml").write_text('name = "t"\ngame = "domineering"\ntime = "1"\n[params]\nrows = 4\n'
                                         f'cols = 4\n[limits]\npin_cpus = true\n{suspend}[[bots]]\n'
                                         'name = "a"\ncommand = "random"\n[[bots]]\nname = "b"\n'
                                         'command = "greedy"\n')
        fits = max(1, len(cpus) // per_match)
        done = run_arena("tournament", "run", "t.toml", "--concurrency", str(fits + 1), cwd=tmp_path)
        assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert f"at most {fits} matches fit" in done.stderr
