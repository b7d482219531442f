"""How the suite itself runs (tests/conftest.py, tests/scheduling.py), checked on a small suite of
its own run by a real `pytest -n 2` in a temporary directory: the tests marked `timing` never run
side by side, those marked `loads_machine` run after every other test and one at a time, and a
process the run leaves behind fails the run, is named, and is killed."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ENV, SURVIVOR_GRACE_ENV

HERE = Path(__file__).resolve().parent

RECORDER = '''import json, os, time
from pathlib import Path


def record(name, seconds):
    began = time.time()
    time.sleep(seconds)
    line = json.dumps({"name": name, "began": began, "ended": time.time(),
                       "worker": os.environ.get("PYTEST_XDIST_WORKER", "")})
    with open(Path(os.environ["SPANS"]), "a") as f:
        f.write(line + "\\n")
'''
PLAIN = '''from recorder import record


def test_one():
    record("plain-1", 0.3)


def test_two():
    record("plain-2", 0.3)
'''
OTHER = '''from recorder import record


def test_three():
    record("plain-3", 0.3)


def test_four():
    record("plain-4", 0.3)
'''
TIMING = '''import pytest
from recorder import record

pytestmark = pytest.mark.loads_machine


def test_a():
    record("alone-a", 0.2)


def test_b():
    record("alone-b", 0.2)
'''
MORE_TIMING = '''import pytest
from recorder import record


@pytest.mark.loads_machine
def test_c():
    record("alone-c", 0.2)


@pytest.mark.timing
def test_e():
    record("timing-e", 0.25)


def test_d():
    record("plain-d", 0.15)
'''
CLOCKED = '''import pytest
from recorder import record


@pytest.mark.timing
def test_f():
    record("timing-f", 0.25)


@pytest.mark.timing
def test_g():
    record("timing-g", 0.25)
'''
LEAK = '''import subprocess


def test_leaves_an_orphan():
    # a child that forks `sleep` into a session of its own and exits: the sleep is orphaned
    subprocess.run(["sh", "-c", "setsid sleep 612 >/dev/null 2>&1 &"], check=True)
'''


def _suite(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "suite"
    root.mkdir()
    for name in ("conftest.py", "scheduling.py"):
        shutil.copy(HERE / name, root / name)
    (root / "recorder.py").write_text(RECORDER)
    for name, text in files.items():
        (root / name).write_text(text)
    return root


def _run(root: Path, spans: Path) -> subprocess.CompletedProcess:
    env = {**ENV, "SPANS": str(spans), "PYTHONPATH": os.pathsep.join([str(root), ENV["PYTHONPATH"]]),
           SURVIVOR_GRACE_ENV: "1"}  # the leak stays: no need to give it the suite's 10 s
    env.pop("PYTEST_XDIST_WORKER", None)  # this test may itself run on a worker
    env.pop("PYTEST_XDIST_WORKER_COUNT", None)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist", "load",
                           "-p", "no:cacheprovider", "-c", os.devnull, "--rootdir", str(root), str(root)],
                          cwd=root, env=env, capture_output=True, text=True, timeout=180)


def test_timing_tests_never_overlap_and_those_loading_the_machine_run_last_alone(tmp_path):
    spans = tmp_path / "spans.jsonl"
    root = _suite(tmp_path, {"test_plain.py": PLAIN, "test_other.py": OTHER, "test_timing.py": TIMING,
                             "test_more.py": MORE_TIMING, "test_clocked.py": CLOCKED})
    done = _run(root, spans)
    assert done.returncode == 0 and "outlived" not in done.stdout, done.stdout + done.stderr  # nothing left
    found = {s["name"]: s for s in map(json.loads, spans.read_text().splitlines())}

    def kind(prefix: str) -> list[dict]:
        return sorted((s for n, s in found.items() if n.startswith(prefix)), key=lambda s: s["began"])

    others, timing, alone = kind("plain") + kind("timing"), kind("timing"), kind("alone")
    assert (len(others), len(timing), len(alone)) == (8, 3, 3), found
    assert len({s["worker"] for s in others}) == 2  # the others ran on both workers
    assert all(a["ended"] <= b["began"] for a, b in zip(timing, timing[1:], strict=False))  # one at a time
    assert min(s["began"] for s in alone) >= max(s["ended"] for s in others)  # after every other test
    assert all(a["ended"] <= b["began"] for a, b in zip(alone, alone[1:], strict=False))
    assert len({s["worker"] for s in alone}) == 1


def test_a_process_left_behind_fails_the_run_and_is_killed(tmp_path):
    root = _suite(tmp_path, {"test_leak.py": LEAK, "test_plain.py": PLAIN})
    done = _run(root, tmp_path / "spans.jsonl")
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "3 passed" in out and "1 process(es) started by the run outlived it (now killed)" in out, out
    assert "sleep 612" in out, out
    deadline = time.monotonic() + 5
    while _sleeping() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _sleeping() == []


def _sleeping() -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if f.read() == b"sleep\x00612\x00":
                    found.append(int(name))
        except OSError:
            continue
    return found


class _Config:
    """What ModuleScheduling reads of pytest's config: two workers, and the cache."""

    def __init__(self, cached: dict[str, float], workers: int = 2) -> None:
        self.cache = self
        self.cached = cached
        self.workers = workers

    def getvalue(self, name: str) -> list[str]:
        assert name == "tx"
        return [f"{self.workers}*popen"]

    def get(self, key: str, default: object) -> object:
        from scheduling import CACHE_KEY

        return self.cached if key == CACHE_KEY else default


class _Node:
    """A worker as the scheduler sees it, running its tests as xdist's does (xdist/remote.py): the
    first test it holds only once it knows what follows it, another test or its shutdown."""

    def __init__(self, sends: list[tuple[_Node, list[int]]] | None = None) -> None:
        self.sent: list[list[int]] = []
        self.queue: list[int] = []
        self.shutting_down = False
        self.sends = [] if sends is None else sends
        """Every worker's sends in the order the scheduler made them."""

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent.append(list(indices))
        self.queue.extend(indices)
        self.sends.append((self, list(indices)))

    def shutdown(self) -> None:
        self.shutting_down = True

    def can_run(self) -> bool:
        return len(self.queue) > 1 or (bool(self.queue) and self.shutting_down)


def _scheduled(tmp_path: Path, collection: list[str], marked: dict[str, list[str]], seconds: dict[str, float],
               workers: int = 2, cpus: int | None = None):
    """tests/scheduling.py in-process: `workers` workers that collected `collection` (its marked
    tests `marked`, the cache's `seconds` a module), after its first schedule(); `cpus` in place of
    this machine's. Returns the scheduler and its workers."""
    from scheduling import ModuleScheduling, write_marked

    for number in range(workers):
        write_marked(tmp_path, f"gw{number}", marked)
    log = type("Log", (), {"arenasched": print})()
    scheduler = ModuleScheduling(_Config(seconds, workers), log, tmp_path)
    if cpus is not None:
        scheduler.cpus = cpus
    sends: list[tuple[_Node, list[int]]] = []
    nodes = [_Node(sends) for _ in range(workers)]
    for node in nodes:
        scheduler.add_node(node)
    for node in nodes:
        scheduler.add_node_collection(node, collection)
    scheduler.schedule()
    return scheduler, nodes


def _simulate(scheduler, nodes: list[_Node], seconds: list[float]) -> dict[int, tuple[int, float, float]]:
    """Run what `scheduler` sends as xdist's workers and controller would (the controller stops
    every worker once the scheduler says the tests are finished), test i taking seconds[i]: each
    test's (worker, start, end). Fails if the run stalls: tests left and no worker able to run one."""
    clock, ran = 0.0, {}
    running: dict[_Node, tuple[int, float]] = {}
    while True:
        moved = True
        while moved:
            moved = False
            for node in list(scheduler.nodes):
                if node not in running and node.can_run():
                    running[node] = (node.queue.pop(0), clock)
                    moved = True
                elif node not in running and node.shutting_down and not node.queue:
                    scheduler.remove_node(node)
                    moved = True
        if not running:
            assert not scheduler.nodes and not scheduler.has_pending, (
                f"stalled at {clock} s: {[(nodes.index(n), n.queue) for n in scheduler.nodes]}")
            return ran
        node = min(running, key=lambda n: running[n][1] + seconds[running[n][0]])
        index, start = running.pop(node)
        clock = start + seconds[index]
        ran[index] = (nodes.index(node), start, clock)
        scheduler.mark_test_complete(node, index, seconds[index])
        if scheduler.tests_finished:
            for other in scheduler.nodes:
                other.shutdown()


def _busy_at(ran: dict[int, tuple[int, float, float]], moment: float) -> int:
    return sum(1 for _, start, end in ran.values() if start <= moment < end)


def test_the_scheduler_sends_the_timing_unit_first_then_the_longest_modules_and_the_hogs_alone_last(tmp_path):
    """tests/scheduling.py in-process, with two workers of its own: the `timing` tests as the first
    unit, then modules by the seconds the cache says (longest first, the module's marked tests
    left out of them), the `loads_machine` tests on the last worker left once the other has gone
    (the one done first leaves at once: kept, it would hold its last test unrun); the seconds it
    records for the cache count the marked tests apart."""
    from scheduling import MARKED_KEY

    collection = ["tests/test_a.py::t1", "tests/test_a.py::t2", "tests/test_b.py::t1", "tests/test_c.py::t1",
                  "tests/test_c.py::clocked", "tests/test_c.py::hog"]
    marked = {"timing": ["tests/test_c.py::clocked"], "loads_machine": ["tests/test_c.py::hog"]}
    seconds = {"tests/test_a.py": 1.0, "tests/test_b.py": 9.0, "tests/test_c.py": 5.0}
    scheduler, (first, second) = _scheduled(tmp_path, collection, marked, seconds)
    ran = _simulate(scheduler, [first, second], [0.5, 0.5, 8.0, 4.0, 2.0, 3.0])
    # the timing unit, one test, with test_b (9 s) behind it; test_c without its marked tests (5 s)
    # with test_a (1 s) behind it; the hog
    assert [([first, second].index(n), sent) for n, sent in first.sends] == [
        (0, [4]), (0, [2]), (1, [3]), (1, [0, 1]), (1, [5])]
    # test_a's last test waits for the other worker to leave; the hog runs alone after it
    assert ran == {4: (0, 0.0, 2.0), 2: (0, 2.0, 10.0), 3: (1, 0.0, 4.0), 0: (1, 4.0, 4.5),
                   1: (1, 10.0, 10.5), 5: (1, 10.5, 13.5)}
    assert scheduler.seconds == {"tests/test_a.py": 1.0, "tests/test_b.py": 8.0, "tests/test_c.py": 4.0,
                                 MARKED_KEY: 5.0}


def test_with_a_worker_more_than_cpus_it_waits_until_the_timing_tests_are_done(tmp_path):
    """Three workers on two CPUs: while the timing unit runs, the third worker gets nothing (the
    timing tests never run beside more than one other worker); once the last timing test is done,
    it gets the next module at once."""
    collection = ["tests/test_a.py::t1", "tests/test_b.py::t1", "tests/test_c.py::t1", "tests/test_d.py::t1",
                  "tests/test_c.py::clocked1", "tests/test_c.py::clocked2"]
    marked = {"timing": ["tests/test_c.py::clocked1", "tests/test_c.py::clocked2"], "loads_machine": []}
    seconds = {"tests/test_a.py": 1.0, "tests/test_b.py": 9.0, "tests/test_c.py": 5.0, "tests/test_d.py": 0.5}
    scheduler, nodes = _scheduled(tmp_path, collection, marked, seconds, workers=3, cpus=2)
    assert [n.sent for n in nodes] == [[[4, 5]], [[1], [2]], []]  # the timing unit; test_b, test_c; held
    ran = _simulate(scheduler, nodes, [1.0, 9.0, 5.0, 0.5, 1.0, 1.0])
    assert ran[4][1:] == (0.0, 1.0) and ran[5][1:] == (1.0, 2.0)
    assert all(_busy_at(ran, moment) <= 2 for moment in (0.0, 0.5, 1.0, 1.5))
    assert ran[3] == (2, 2.0, 2.5)  # the third worker's first test, as the last timing test ends
    assert len(ran) == len(collection)


@pytest.mark.parametrize("workers", [2, 3])
def test_a_timing_unit_of_one_test_runs_and_the_run_ends(tmp_path, workers):
    """A run of a few modules holding one `timing` test (and a `loads_machine` one): the worker
    sent it holds it until it knows what follows, so it gets the next module with it; the run
    ends with every test run, the hog last and alone."""
    collection = ["tests/test_a.py::t1", "tests/test_a.py::t2", "tests/test_b.py::t1",
                  "tests/test_b.py::clocked", "tests/test_c.py::hog"]
    marked = {"timing": ["tests/test_b.py::clocked"], "loads_machine": ["tests/test_c.py::hog"]}
    seconds = {"tests/test_a.py": 2.0, "tests/test_b.py": 1.0}
    scheduler, nodes = _scheduled(tmp_path, collection, marked, seconds, workers=workers, cpus=2)
    assert nodes[0].sent == [[3], [0, 1]]
    ran = _simulate(scheduler, nodes, [1.0, 1.0, 1.0, 1.0, 1.0])
    assert sorted(ran) == list(range(len(collection)))
    assert ran[4][1] == max(end for index, (_, _, end) in ran.items() if index != 4)
    assert _busy_at(ran, ran[4][1]) == 1


def test_a_worker_lost_during_its_last_timing_test_holds_no_worker_after_it(tmp_path):
    """The timing test a crashed worker was running is never marked complete: the worker that
    xdist starts in its place gets work while the others are busy, as once no timing test is left."""
    collection = ["tests/test_a.py::t1", "tests/test_b.py::t1", "tests/test_d.py::t1", "tests/test_e.py::t1",
                  "tests/test_f.py::t1", "tests/test_c.py::clocked"]
    marked = {"timing": ["tests/test_c.py::clocked"], "loads_machine": []}
    seconds = {"tests/test_a.py": 1.0, "tests/test_b.py": 9.0, "tests/test_d.py": 0.5, "tests/test_e.py": 0.2,
               "tests/test_f.py": 0.1}
    scheduler, nodes = _scheduled(tmp_path, collection, marked, seconds, workers=3, cpus=2)
    assert [n.sent for n in nodes] == [[[5], [1]], [[0], [2]], []]  # timing, test_b; test_a, test_d; held
    assert scheduler.remove_node(nodes[0]) == "tests/test_c.py::clocked"
    assert nodes[2].sent == [[1], [3]]  # test_b, put back, and test_e: no timing test is left
    replacement = _Node()
    scheduler.add_node(replacement)
    scheduler.add_node_collection(replacement, collection)
    scheduler.schedule()
    assert replacement.sent == [[4]] and replacement.shutting_down  # test_f, beside two busy workers
