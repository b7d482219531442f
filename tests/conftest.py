"""Shared test helpers, and how the suite runs: on pytest-xdist's workers a module at a time, the
tests marked `timing` one at a time and those marked `loads_machine` last and alone
(tests/scheduling.py), one worker more than the CPUs (`-n auto`), the workers' pinned bots on the
cores in turn (ARENA_CPU_OFFSET), and a check at the end that no process the run started survives."""
from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
"""This process's xdist worker id (gw0, gw1, ...), empty in the controller or a run without xdist."""
if WORKER[2:].isdigit():
    # set before ENV below is copied, so that the `arena` processes tests start inherit it too
    os.environ["ARENA_CPU_OFFSET"] = WORKER[2:]

if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    # a run started in the background by a script (`pytest &`, in a shell without job control)
    # inherits SIGINT ignored, and so would every `arena` a test starts, whose Ctrl-C the tests
    # check (they failed, the process deaf to it): each process of the run takes it back
    signal.signal(signal.SIGINT, signal.default_int_handler)

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
"""The environment for a real `arena` process: this checkout first on the import path."""

CI = os.environ.get("CI", "").lower() == "true"
"""Under CI=true a missing compiler or library fails the test instead of skipping it."""


def require(condition: object, reason: str) -> None:
    """Skip the calling test with `reason` unless `condition` holds; under CI=true, fail instead
    (CI installs everything the tests need, so a skip there would hide a broken setup)."""
    if condition:
        return
    if CI:
        pytest.fail(f"CI=true but {reason}", pytrace=False)
    pytest.skip(reason)


def arena_cmd(*args: str) -> list[str]:
    """The real `arena` command line, as `python -m arena ARGS`."""
    return [sys.executable, "-m", "arena", *args]


def run_arena(*args: str, cwd: Path, env: dict[str, str] | None = None,
              timeout: float = 120) -> subprocess.CompletedProcess:
    """Run `arena ARGS` in `cwd` to its end, its output captured as text."""
    return subprocess.run(arena_cmd(*args), cwd=cwd, env=ENV if env is None else env, capture_output=True,
                          text=True, timeout=timeout)


def call_arena(*args: str, cwd: Path, env: dict[str, str] | None = None,
               timeout: float = 120) -> subprocess.CompletedProcess:
    """`arena ARGS` as run_arena runs it, but in this process: the same parser and commands
    (arena.cli.main) without a new interpreter's start-up and imports (about 1 CPU s each). Run in
    `cwd` with `env` as the environment (ENV by default); its output is captured at the file
    descriptors, so what the processes it starts (workers, bots) write to them is caught too, as
    a subprocess's pipes would catch it; after `timeout` seconds, TimeoutError is raised inside the
    command (SIGALRM: from the main thread only). For where the process itself is not the point."""
    import tempfile

    from arena.cli import main

    def too_long(signum: int, frame: object) -> None:
        raise TimeoutError(f"arena {' '.join(args)}: still running after {timeout} s")

    saved_env = dict(os.environ)
    saved_fds = [os.dup(1), os.dup(2)]
    saved_streams = sys.stdout, sys.stderr
    code: int | None = None
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        streams = [open(f.fileno(), "w", closefd=False, encoding="utf-8", errors="backslashreplace",
                        buffering=-1 if f is out else 1) for f in (out, err)]  # as a process's would be
        try:
            os.environ.clear()
            os.environ.update(ENV if env is None else env)
            for stream in saved_streams:
                with contextlib.suppress(ValueError, OSError):
                    stream.flush()
            os.dup2(out.fileno(), 1)
            os.dup2(err.fileno(), 2)
            sys.stdout, sys.stderr = streams
            alarm = signal.signal(signal.SIGALRM, too_long)
            signal.setitimer(signal.ITIMER_REAL, timeout)
            try:
                with contextlib.chdir(cwd):
                    code = main(list(args)) or 0  # as sys.exit(main()) would exit
            except SystemExit as exc:  # argparse's usage errors
                code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, alarm)
        finally:
            for stream in streams:
                stream.close()  # flushes into the files
            sys.stdout, sys.stderr = saved_streams
            os.dup2(saved_fds[0], 1)
            os.dup2(saved_fds[1], 2)
            for fd in saved_fds:
                os.close(fd)
            os.environ.clear()
            os.environ.update(saved_env)
            said = []
            for f in (out, err):
                f.seek(0)
                said.append(f.read().decode(errors="replace"))
            if code is None:  # raised: what it said is shown with the test's failure
                sys.stderr.write("".join(said))
    return subprocess.CompletedProcess(["arena", *args], code, said[0], said[1])


def rss_bytes() -> int:
    """This process's resident memory (bytes), from /proc."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


# --- the starter kits, each built once per run ---

@pytest.fixture(scope="session")
def built_kit(request, tmp_path_factory):
    """kit name -> (its built folder, the run command its build.sh printed): each kit in
    examples/kits/ built with its own build.sh once per run (test_kits.build_kit): on xdist, by the
    first worker that asks, in the run's own temporary directory (the workers' basetemps are in
    it), the other waiting on a lock and taking that build. A test that changes the folder works on
    a copy (shutil.copytree keeps the times: make finds it up to date)."""
    import fcntl
    import shutil

    from test_kits import build_kit

    own = tmp_path_factory.getbasetemp()
    if hasattr(request.config, "workerinput") and own.name.startswith("popen-"):  # the run's /popen-gwN
        base = own.parent / "kits"
        base.mkdir(exist_ok=True)
    else:
        base = tmp_path_factory.mktemp("kits")
    built: dict[str, tuple[Path, str]] = {}

    def get(kit: str) -> tuple[Path, str]:
        if kit not in built:
            with open(base / f"{kit}.lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)  # released when closed
                command = base / f"{kit}.command"  # written once the build is done
                if not command.is_file():
                    shutil.rmtree(base / kit, ignore_errors=True)  # a build that failed half-way
                    part = base / f"{kit}.part"
                    part.write_text(build_kit(kit, base), encoding="utf-8")
                    part.rename(command)
                built[kit] = (base / kit, command.read_text(encoding="utf-8"))
        return built[kit]

    return get


# --- the browser: one headless Chromium per process (per xdist worker), shared by its modules ---

@pytest.fixture(scope="session")
def chromium():
    """Debian's chromium through Selenium, started once (each start costs a second or two)."""
    import shutil
    import tempfile

    from test_site import CHROME_FLAGS, CHROMEDRIVER, CHROMIUM, HEIGHT_PX, WIDE_PX

    require(Path(CHROMIUM).is_file() and Path(CHROMEDRIVER).is_file(),
            f"needs Debian's chromium and chromium-driver ({CHROMIUM}, {CHROMEDRIVER})")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        require(False, "needs selenium (pip install -e '.[test]')")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROME_FLAGS:
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="arena-chromium-")
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_window_size(WIDE_PX, HEIGHT_PX)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def browser(chromium):
    """The process's Chromium as a new one would be for each module: a blank page of the usual
    size, no cookies (servers on 127.0.0.1 share them whatever their port), an empty console log."""
    from test_site import HEIGHT_PX, WIDE_PX

    chromium.get("about:blank")
    chromium.execute_cdp_cmd("Network.clearBrowserCookies", {})
    chromium.execute_cdp_cmd("Network.clearBrowserCache", {})
    chromium.set_window_size(WIDE_PX, HEIGHT_PX)
    chromium.get_log("browser")  # what earlier modules' pages logged
    yield chromium
    chromium.get("about:blank")


# --- how the suite runs ---

TIMING_DIR_ENV = "ARENA_TEST_TIMING_DIR"
"""Where the workers write their lists of `timing` and `loads_machine` tests for the controller."""
SURVIVOR_GRACE_ENV = "ARENA_TEST_SURVIVOR_GRACE_S"
SURVIVOR_GRACE_S = float(os.environ.get(SURVIVOR_GRACE_ENV, "10"))
"""How long the run's last processes (a browser quitting, a watchdog's sweep) may take to end
(seconds; $ARENA_TEST_SURVIVOR_GRACE_S: tests/test_suite_runs.py's small suites, whose leak is
there to stay, wait 1 s)."""


COMPILED = ("arena", "rules", "bots")
"""The packages every bot, server and `arena` process of the run imports."""


def compile_sources() -> None:
    """Compile COMPILED's sources to __pycache__ once, where stale or missing (ignored by git).
    Where PYTHONDONTWRITEBYTECODE is set (as on this project's machines) nothing else writes them,
    and each of the run's ~3,000 processes compiled what it imported again: 17% of a bot's start.
    The suite's helper modules too (not the test modules: pytest rewrites and caches those,
    pytest_collection below)."""
    import compileall
    import re

    for package in COMPILED:
        compileall.compile_dir(ROOT / package, quiet=2)
    tests_themselves = re.compile(r"[/\\](test_|conftest)[^/\\]*$")
    compileall.compile_dir(ROOT / "tests", quiet=2, maxlevels=0, rx=tests_themselves)


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> object:
    """Collect with pytest's cache of rewritten test modules written (tests/__pycache__, ignored
    by git) even where PYTHONDONTWRITEBYTECODE is set: without it every worker parsed, rewrote and
    compiled every test module again, each run (collection: 12.5 CPU s, 3.5 s with the cache)."""
    saved = sys.dont_write_bytecode
    sys.dont_write_bytecode = False
    try:
        return (yield)
    finally:
        sys.dont_write_bytecode = saved


def pytest_configure(config: pytest.Config) -> None:
    if not WORKER:
        compile_sources()
    config.addinivalue_line("markers", "timing: reads a clock against a limit: never beside another "
                            "timing test, and at a higher priority than the rest of the suite")
    config.addinivalue_line("markers", "loads_machine: CPU hogs of its own, or checks that the machine is "
                            "quiet: a timing test run after all others, with no other test beside it")
    if not WORKER and config.getvalue("dist") != "no":
        import tempfile

        os.environ[TIMING_DIR_ENV] = tempfile.mkdtemp(prefix="arena-timing-")  # the workers inherit it
        # the controller, which runs no test: the run's orphans come back to it, reaped as they die
        from arena.cell.limits import set_child_subreaper

        if set_child_subreaper():
            reaper = _OrphanReaper()
            reaper.start()
            config.stash[_REAPER] = reaper


class _OrphanReaper(threading.Thread):
    """Reaps the run's orphans when they end (as init would: a zombie may keep a cgroup busy),
    leaving the xdist workers, the controller's own children, to execnet."""

    def __init__(self) -> None:
        super().__init__(name="orphan-reaper", daemon=True)
        self.workers: set[int] = set()
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.1):
            self.reap()

    def reap(self) -> None:
        """Reap each ended child but the workers: waitid(WNOWAIT) names one without reaping it, a
        system call where a scan of /proc cost the controller 30 CPU s a run."""
        while True:
            try:
                ended = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:  # no children at all
                return
            if ended is None or ended.si_pid in self.workers:  # a worker is execnet's to reap
                return
            with contextlib.suppress(ChildProcessError):
                os.waitpid(ended.si_pid, os.WNOHANG)


_REAPER = pytest.StashKey[_OrphanReaper]()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodeready(node) -> None:
    """A worker is up: no test has run yet, so every child of the controller now is a worker."""
    reaper = node.config.stash.get(_REAPER, None)
    if reaper is not None:
        reaper.workers |= set(children_of(os.getpid()))


def children_of(pid: int) -> dict[int, str]:
    """The children of `pid`, each with its state letter (R, S, Z, ...)."""
    found = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found[int(name)] = fields[0].decode()
    return found


TIMING_BOOST = 10
"""How much higher a timing or loads_machine test (and every process it starts) runs than the
suite: on a machine others keep busy, its bots then get the CPU their clocks assume; the load a
test makes itself (a hog) starts from the test and is raised with it. Root only; elsewhere the
test runs as it is."""


@pytest.fixture(autouse=True)
def _timing_priority(request: pytest.FixtureRequest):
    """Run a `timing` or `loads_machine` test at TIMING_BOOST above the suite's priority (this
    thread and its children)."""
    if not any(request.node.get_closest_marker(mark) for mark in ("timing", "loads_machine")):
        yield
        return
    before = os.getpriority(os.PRIO_PROCESS, 0)
    try:
        os.setpriority(os.PRIO_PROCESS, 0, max(-20, before - TIMING_BOOST))
    except OSError:  # not root: the priority cannot be raised
        pass
    yield
    os.setpriority(os.PRIO_PROCESS, 0, before)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On a worker, tell the controller which tests are marked `timing` or `loads_machine`: it sees
    only node ids (xdist's own channel, the `@group` suffix of --dist loadgroup, is lost on pytest
    9's node ids)."""
    folder = os.environ.get(TIMING_DIR_ENV)
    if WORKER and folder:
        from scheduling import write_marked

        write_marked(Path(folder), WORKER, {mark: [i.nodeid for i in items if i.get_closest_marker(mark)]
                                            for mark in ("timing", "loads_machine")})


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto` (pyproject's addopts): one worker more than the CPUs this run may use. Tests wait
    on clocks, sockets and browsers a third of their time: on 2 CPUs, back to back, a quiet full
    run took 331 s on two workers, 306 s on three (tests/scheduling.py keeps the third idle while
    the timing tests run)."""
    return len(os.sched_getaffinity(0)) + 1


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    from scheduling import ModuleScheduling

    scheduler = ModuleScheduling(config, log, Path(os.environ[TIMING_DIR_ENV]))
    config.stash[_SCHEDULER] = scheduler
    return scheduler


_SCHEDULER = pytest.StashKey[object]()


def descendants(pid: int) -> dict[int, str]:
    """Live (not zombie) descendants of `pid`: pid -> command line; zombie children are reaped."""
    children: dict[int, list[int]] = {}
    states: dict[int, str] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        states[int(name)] = fields[0].decode()
        children.setdefault(int(fields[1]), []).append(int(name))
    found: dict[int, str] = {}
    todo = list(children.get(pid, []))
    while todo:
        child = todo.pop()
        todo += children.get(child, [])
        if states.get(child) in ("Z", "X"):
            if child in children.get(pid, []):
                try:
                    os.waitpid(child, os.WNOHANG)
                except ChildProcessError:
                    pass
            continue
        try:
            with open(f"/proc/{child}/cmdline", "rb") as f:
                found[child] = f.read().replace(b"\0", b" ").decode(errors="replace").strip()[:200]
        except OSError:
            continue
    return found


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run if a process it started outlives it, naming and killing each (on xdist the
    controller is the subreaper of the run's orphans, so a bot whose referee died ends up here;
    with -n 0 only the test process's own descendants are seen)."""
    config = session.config
    if WORKER:
        return
    reaper = config.stash.get(_REAPER, None)
    if reaper is not None:
        reaper.done.set()
        reaper.join()
    if os.environ.get(TIMING_DIR_ENV):
        import shutil

        shutil.rmtree(os.environ.pop(TIMING_DIR_ENV), ignore_errors=True)
    scheduler = config.stash.get(_SCHEDULER, None)
    cache = getattr(config, "cache", None)
    if scheduler is not None and cache is not None and not config.option.keyword \
            and not config.option.markexpr and not config.option.file_or_dir and exitstatus in (0, 1):
        from scheduling import CACHE_KEY

        cache.set(CACHE_KEY, {m: round(s, 1) for m, s in scheduler.seconds.items()})
    deadline = time.monotonic() + SURVIVOR_GRACE_S
    while (left := _survivors()) and time.monotonic() < deadline:
        time.sleep(0.2)
    if not left:
        return
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    lines = [f"  pid {pid}: {command}" for pid, command in sorted(left.items())]
    message = f"{len(left)} process(es) started by the run outlived it (now killed):\n" + "\n".join(lines)
    if reporter is not None:
        reporter.write_sep("=", "processes left behind", red=True)
        reporter.write_line(message)
    else:
        print(message, file=sys.stderr)
    for pid in left:
        thaw(pid)  # a frozen process keeps its SIGKILL pending (cgroup v1's freezer)
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _survivors() -> dict[int, str]:
    """This process's live descendants, less its own multiprocessing resource tracker (a run with
    -n 0 starts it in the test process, and it ends when that process does)."""
    left = descendants(os.getpid())
    tracker = sys.modules.get("multiprocessing.resource_tracker")
    own = getattr(getattr(tracker, "_resource_tracker", None), "_pid", None)
    left.pop(own, None)
    return left


def thaw(pid: int) -> None:
    """Thaw the freezer cgroup of `pid` (v1's freezer.state, v2's cgroup.freeze), if it has one."""
    try:
        with open(f"/proc/{pid}/cgroup") as f:
            lines = f.read().splitlines()
    except OSError:
        return
    for line in lines:
        _, controllers, path = line.split(":", 2)
        target = None
        if "freezer" in controllers.split(","):
            target = (Path("/sys/fs/cgroup/freezer") / path.lstrip("/") / "freezer.state", "THAWED")
        elif controllers == "":
            target = (Path("/sys/fs/cgroup") / path.lstrip("/") / "cgroup.freeze", "0")
        if target is not None and target[0].is_file():
            with contextlib.suppress(OSError):
                target[0].write_text(target[1])
