"""The course server's engine below the web app (arena/course/): real uploads through
`Course.submit`, built and qualified by real `Workers` in the sandbox against `random`, on
Domineering 4x4 with a short clock; a worker process killed with SIGKILL mid-job, then a new one."""
from __future__ import annotations

import io
import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import ENV, require
from test_kits import READY

from arena.cell import cgroup, sandbox
from arena.course.background.submissions import Workers
from arena.course.config import course_toml as config
from arena.course.course import Course
from arena.course.db.store import FINAL
from arena.course.season.archives import Refused

ROOT = Path(__file__).resolve().parents[1]
KITS = ROOT / "examples" / "kits"
SDK_BOT = textwrap.dedent("""\
    import time
    from bots.sdk import Bot

    class Mine(Bot):
        name = "mine"

        def choose(self, state, time_left):
            time.sleep(SLEEP)
            return self.rng.choice(self.legal)

    if __name__ == "__main__":
        Mine().run()
    """)
RAISES_IN_CHOOSE = SDK_BOT.replace("SLEEP", "0").replace("return self.rng.choice(self.legal)",
                                                          "raise ValueError('my search lost its way')")
RAISES_AT_START = ("import sys\nprint('starting up', file=sys.stderr)\n"
                   "raise RuntimeError('no config file here')\n")
WAIT_S = 90.0


def sdk_bot(sleep_s: float = 0.0) -> bytes:
    return SDK_BOT.replace("SLEEP", repr(sleep_s)).encode()


def needs_sandbox() -> None:
    reason = sandbox.unavailable_reason()
    require(reason is None, f"bots cannot be sandboxed here: {reason}")


def make_course(directory: Path, **keys: object) -> Path:
    """A course on Domineering 4x4, 1 s a move, two qualification games, three students."""
    config.init(directory, "domineering")
    text = (directory / "course.toml").read_text()
    for old, new in (("rows = 8", "rows = 4"), ("cols = 8", "cols = 4"), ("time = 3.0", "time = 1.0")):
        text = text.replace(old, new)
    settings = {"upload_interval_s": 0, **keys}
    for key, value in settings.items():
        line = next(x for x in text.splitlines() if x.startswith(f"{key} =") or x.startswith(f"# {key} ="))
        text = text.replace(line, f"{key} = {value}")
    (directory / "course.toml").write_text(text)
    (directory / "roster.csv").write_text("id,name,email,group\nann,Ann A,ann@example.org,A\n"
                                          "bob,Bob B,bob@example.org,B\ncid,Cid C,cid@example.org,\n")
    return directory


@pytest.fixture
def course(tmp_path):
    needs_sandbox()
    course = Course(make_course(tmp_path / "course"))
    workers = Workers(course, concurrency=2)
    workers.start()
    yield course
    workers.stop(timeout_s=30)
    course.close()


def wait_final(course: Course, *ids: int, timeout_s: float = WAIT_S) -> list:
    deadline = time.monotonic() + timeout_s
    while True:
        subs = [course.submission(i) for i in ids]
        if all(s.finished for s in subs) or time.monotonic() > deadline:
            assert all(s.finished for s in subs), [(s.id, s.status) for s in subs]
            return subs
        time.sleep(0.1)


def kit_zip(kit: str, edit: dict[str, bytes] | None = None, folder: str = "") -> bytes:
    """The starter kit `kit` as a zip (under `folder`/ when given), files replaced or added by `edit`."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted((KITS / kit).rglob("*")):
            rel = path.relative_to(KITS / kit).as_posix()
            if path.is_file() and rel not in ("bot",) and not rel.startswith("build/"):
                info = zipfile.ZipInfo(folder + rel)
                info.external_attr = (path.stat().st_mode & 0o777) << 16
                archive.writestr(info, (edit or {}).get(rel, path.read_bytes()))
        for rel in sorted(set(edit or {}) - set(archive.namelist())):  # files the kit does not have
            info = zipfile.ZipInfo(folder + rel)
            info.external_attr = 0o644 << 16
            archive.writestr(info, edit[rel])
    return buffer.getvalue()


# --- single Python files ---

def test_a_python_sdk_bot_and_a_stdio_script_qualify_against_random(course):
    sdk = course.submit("ann", "mine.py", sdk_bot())
    stdio = course.submit("bob", "bot.py", (KITS / "python-stdio" / "bot.py").read_bytes(), protocol="stdio")
    assert (sdk.status, sdk.kind, sdk.version, sdk.finished) == ("queued", "python", 1, False)
    assert stdio.kind == "stdio"
    for sub in wait_final(course, sdk.id, stdio.id):
        assert (sub.status, sub.reason, sub.active) == ("qualified", None, True), sub.detail
        games = course.games(sub.id)
        assert len(games) == 2 and {g.players.index("random") for g in games} == {0, 1}  # both seats
        assert all(g.forfeit is None and g.isolation == "sandbox" and g.params["rows"] == 4 for g in games)
        assert "compiles" in course.build_log(sub.id)
    assert course.source(sdk.id) == ("mine.py", sdk_bot())
    assert course.source_files(stdio.id) == [("bot.py", (KITS / "python-stdio" / "bot.py").read_text())]


def test_a_bot_that_raises_fails_crashed_with_the_tracebacks_last_line(course):
    in_choose = course.submit("ann", "mine.py", RAISES_IN_CHOOSE.encode())
    at_start = course.submit("bob", "bot.py", RAISES_AT_START.encode())
    syntax = course.submit("cid", "bot.py", b"def choose(:\n    pass\n")
    first, second, third = wait_final(course, in_choose.id, at_start.id, syntax.id)
    assert (first.status, first.reason) == ("failed", "crashed")
    assert first.detail.splitlines()[-1] == "ValueError: my search lost its way"
    assert "choose() raised at ply" in first.detail
    assert (second.status, second.reason) == ("failed", "crashed")
    assert "RuntimeError: no config file here" in second.detail and "starting up" in second.detail
    assert (third.status, third.reason) == ("failed", "compile error")
    assert "bot.py, line 1: SyntaxError" in third.detail and course.games(third.id) == []
    assert all(not s.active for s in (first, second, third))
    for shown in (first.detail, second.detail, third.detail, course.build_log(third.id)):
        # what a student reads names no path of the server's: its own files by name, arena's as <arena>
        assert str(course.config.directory) not in shown and str(ROOT) not in shown, shown
    assert 'File "mine.py", line' in first.detail and '"<arena>/bots/sdk.py"' in first.detail


ILLEGAL_STDIO = """import sys
for line in sys.stdin:
    if line.startswith("turn"):
        print("move Z9", flush=True)
"""


def test_an_illegal_move_and_a_timeout_fail_with_their_reasons(course):
    illegal = course.submit("ann", "bot.py", ILLEGAL_STDIO.encode(), protocol="stdio")
    slow = course.submit("bob", "bot.py", sdk_bot(sleep_s=30))
    illegal, slow = wait_final(course, illegal.id, slow.id)
    assert (illegal.status, illegal.reason) == ("failed", "illegal move") and "Z9" in illegal.detail
    assert (slow.status, slow.reason) == ("failed", "timeout")
    assert slow.detail.startswith("game 1 of 2 (seat ")


# --- archives: the C++ kit ---

def test_the_cpp_kit_zipped_qualifies_and_a_compile_error_shows_the_compilers_message(course):
    require(READY["cpp"]() is None, f"C++ kit: {READY['cpp']()}")
    good = course.submit("ann", "kit.zip", kit_zip("cpp", folder="cpp/"))
    source = (KITS / "cpp" / "bot.cpp").read_text()
    broken = '#include "undeclared_thing_here.hpp"\n' + source  # a fatal error: g++ stops there
    bad = course.submit("bob", "kit.zip", kit_zip("cpp", {"bot.cpp": broken.encode()}))
    good, bad = wait_final(course, good.id, bad.id)
    assert (good.status, good.kind, good.active) == ("qualified", "archive", True), good.detail
    assert "g++" in course.build_log(good.id) and len(course.games(good.id)) == 2
    assert (bad.status, bad.reason) == ("failed", "compile error")
    assert "fatal error: undeclared_thing_here.hpp: No such file or directory" in bad.detail
    assert "build.sh exited with code" in bad.detail
    assert "undeclared_thing_here" in course.build_log(bad.id)
    assert dict(course.source_files(good.id))["bot.cpp"] == source


NETWORK_PROBE = textwrap.dedent("""\
    import errno
    import socket
    import sys


    def route_out():
        \"\"\"The kernel's route to a TEST-NET address (RFC 5737, no host has it): a UDP connect()
        only picks a route and sends nothing.\"\"\"
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            try:
                s.connect(("192.0.2.1", 9))
            except OSError as e:
                return errno.errorcode.get(e.errno, str(e.errno))
            return "ROUTE"


    def host_loopback(port):
        \"\"\"A TCP connection to the test's own listener on the host's loopback.\"\"\"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=3).close()
        except OSError as e:
            return errno.errorcode.get(e.errno, str(e.errno))
        return "REACHED"


    print(f"route out: {route_out()}; host loopback: {host_loopback(int(sys.argv[1]))}", file=sys.stderr)
    """)
"""What a build asks of the network, sending nothing off the machine whatever the sandbox does:
a route look-up, and a connection to a listener on the host's own loopback (which a build in a
network namespace of its own cannot see)."""


def test_a_build_writes_only_its_own_folder_and_has_no_network(course, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir(mode=0o777)
    (tmp_path / "probe.py").write_text(NETWORK_PROBE)
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        on_host = subprocess.run([sys.executable, str(tmp_path / "probe.py"), str(port)], capture_output=True,
                                 text=True, timeout=30)
        assert "host loopback: REACHED" in on_host.stderr, on_host.stderr  # the probe works: a control
        listener.accept()[0].close()
        script = textwrap.dedent(f"""\
            #!/bin/sh
            touch made-here && echo "own folder: ok" >&2
            touch {outside}/x 2>/dev/null && echo "outside: WRITTEN" >&2 || echo "outside: refused" >&2
            python3 probe.py {port}
            echo "stdio:python3 $(pwd)/bot.py"
            """)
        sub = course.submit("ann", "kit.zip", kit_zip("python-stdio", {"build.sh": script.encode(),
                                                                        "probe.py": NETWORK_PROBE.encode()}))
        sub, = wait_final(course, sub.id)
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):  # nothing from the sandbox reached the host's listener
            listener.accept()
    log = course.build_log(sub.id)
    assert "own folder: ok" in log and "outside: refused" in log, log
    assert "route out: ENETUNREACH; host loopback: ECONNREFUSED" in log or \
        "route out: ENETUNREACH; host loopback: ENETUNREACH" in log, log
    assert not (outside / "x").exists()
    assert (course.directory / "builds" / str(sub.id) / "made-here").is_file()
    assert sub.status == "qualified", sub.detail


@pytest.mark.parametrize(("last_line", "expected"), [
    ("random", "names no file of the submission"),
    ("python3 -m bots champion", "names no file of the submission"),
    ("stdio:python3 $(pwd)/bot.py COURSE/course.toml", "course.toml, outside the submission's folder"),
    ("$(pwd)/missing", "cannot run: bot command"),
])
def test_a_run_command_must_run_the_submissions_own_files_and_nothing_else(course, last_line, expected):
    line = last_line.replace("COURSE", str(course.directory))
    sub = course.submit("ann", "kit.zip", kit_zip("python-stdio", {"build.sh": f'echo "{line}"\n'.encode()}))
    sub, = wait_final(course, sub.id)
    assert (sub.status, sub.reason) == ("failed", "bad run command")
    assert expected in sub.detail and course.games(sub.id) == []


GREEDY_BUILD = b"""#!/bin/sh
set -e
python3 -c "x = bytearray(300 << 20); x[::4096] = b'1' * len(x[::4096])"
echo "stdio:python3 $(pwd)/bot.py"
"""


def test_a_build_over_its_time_or_its_memory_is_killed_and_fails(tmp_path):
    needs_sandbox()
    require(cgroup.detect().kind != "none", f"no usable cgroups: {cgroup.detect().reason}")
    course = Course(make_course(tmp_path / "c", time_s=2, memory_mb=100))
    workers = Workers(course, concurrency=2)
    workers.start()
    try:
        slow = course.submit("ann", "kit.zip", kit_zip("python-stdio", {"build.sh": b"sleep 60\n"}))
        greedy = course.submit("bob", "kit.zip", kit_zip("python-stdio", {"build.sh": GREEDY_BUILD}))
        began = time.monotonic()
        slow, greedy = wait_final(course, slow.id, greedy.id, timeout_s=30)
        assert time.monotonic() - began < 20
        assert (slow.status, slow.reason) == ("failed", "build timeout")
        assert "build.sh ran longer than 2 s" in slow.detail
        assert (greedy.status, greedy.reason) == ("failed", "compile error")
        assert "build.sh exited with code 137 (out of memory: the build may use 100 MB)" in greedy.detail
    finally:
        workers.stop(timeout_s=30)


# --- what is taken, when ---

def test_uploads_before_opens_and_after_the_deadline_are_refused(tmp_path):
    opens = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
    course = Course(make_course(tmp_path / "c", opens="2026-03-01T10:00:00+01:00",
                                deadline="2026-03-08T23:59:00+01:00"))
    with pytest.raises(Refused, match=r"^submissions are not open yet: they open at 2026-03-01T10:00:00\+01"):
        course.submit("ann", "bot.py", sdk_bot(), now=opens - timedelta(seconds=1))
    with pytest.raises(Refused, match=r"^submissions are closed: the deadline was 2026-03-08T23:59:00\+01"):
        course.submit("ann", "bot.py", sdk_bot(), now=datetime(2026, 3, 8, 23, 0, tzinfo=UTC))
    taken = course.submit("ann", "bot.py", sdk_bot(), now=opens)
    assert course.submissions("ann") == [taken] and taken.status == "queued"


def test_one_upload_a_minute_a_student_and_the_size_limit(tmp_path):
    course = Course(make_course(tmp_path / "c", upload_interval_s=60, upload_max_mb=0.01))
    now = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    first = course.submit("ann", "bot.py", sdk_bot(), now=now)
    with pytest.raises(Refused, match=r"^one upload a minute: try again in 42 s$"):
        course.submit("ann", "bot.py", sdk_bot(), now=now + timedelta(seconds=18))
    other = course.submit("bob", "bot.py", sdk_bot(), now=now + timedelta(seconds=18))  # per student
    second = course.submit("ann", "bot.py", sdk_bot(0.001), now=now + timedelta(seconds=60))
    assert [s.version for s in course.submissions("ann")] == [2, 1]
    assert [s.id for s in course.submissions("ann")] == [second.id, first.id] and other.version == 1
    with pytest.raises(Refused, match=r"^too big: \d[\d,]* bytes, the limit is 10,000 bytes \(0\.01 MB\)$"):
        course.submit("cid", "bot.py", b"#" * 10_001, now=now)
    with pytest.raises(Refused, match=r"^no student 'zed' in the roster$"):
        course.submit("zed", "bot.py", sdk_bot(), now=now)
    course.set_disabled("cid", True)
    with pytest.raises(Refused, match="your submissions are disabled"):
        course.submit("cid", "bot.py", sdk_bot(), now=now)


def test_an_acknowledged_upload_is_on_disk_and_committed(tmp_path):
    course = Course(make_course(tmp_path / "c"))
    sub = course.submit("ann", "kit.zip", kit_zip("python-stdio"))
    stored = course.store.file_path(sub.sha256)
    assert stored.read_bytes() == kit_zip("python-stdio") and stored.parent.parent.name == "files"
    again = Course(tmp_path / "c")  # another connection reads it: committed
    assert again.submission(sub.id) == sub and again.source(sub.id) == ("kit.zip", kit_zip("python-stdio"))
    private = [stored, stored.parent.parent, *sorted((tmp_path / "c").glob("course.db*")),
               tmp_path / "c" / "roster.csv"]
    assert len(private) == 6 and all(path.stat().st_mode & 0o077 == 0 for path in private), \
        [(path.name, oct(path.stat().st_mode)) for path in private]  # students' code and names: private


def test_sixty_students_uploading_at_once_are_each_stored_once_and_a_double_upload_taken_once(tmp_path):
    directory = make_course(tmp_path / "c", upload_interval_s=60)
    (directory / "roster.csv").write_text("id,name,email\n" + "".join(f"s{n:02},S {n},s{n}@example.org\n"
                                                                       for n in range(60)))
    course = Course(directory)
    barrier = threading.Barrier(64)
    taken: list = []
    refused: list[str] = []

    def upload(student: str, n: int) -> None:
        barrier.wait()
        try:
            taken.append(course.submit(student, "bot.py", sdk_bot(n / 1000)))
        except Refused as exc:
            refused.append(f"{student}: {exc}")
        finally:
            course.close()

    threads = [threading.Thread(target=upload, args=(f"s{n:02}", n)) for n in range(60)]
    threads += [threading.Thread(target=upload, args=("s00", 100 + n)) for n in range(4)]  # s00 again
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(taken) == 60 and len(refused) == 4, refused
    assert all(r.startswith("s00: one upload a minute: try again in ") for r in refused)
    rows = Course(directory).store.submission_rows()
    assert sorted(r["id"] for r in rows) == sorted(s.id for s in taken) and len({r["id"] for r in rows}) == 60
    assert {r["student_id"] for r in rows} == {f"s{n:02}" for n in range(60)}
    for sub in taken:
        assert course.source(sub.id)[1] == course.store.read_file(sub.sha256) and sub.version == 1
    assert course.store.pending() == 60


# --- staff and the active bot ---

def test_active_bot_requeue_rows_and_the_active_sources_zip(course):
    v1 = course.submit("ann", "a.py", sdk_bot())
    v2 = course.submit("ann", "b.py", sdk_bot(0.001))
    v3 = course.submit("ann", "c.py", RAISES_AT_START.encode())
    kit = course.submit("bob", "kit.zip", kit_zip("python-stdio", folder="mine/"))
    wait_final(course, v1.id, v2.id, v3.id, kit.id)
    assert [s.active for s in course.submissions("ann")] == [False, True, False]  # the latest qualified
    course.set_active("ann", v1.id)
    assert [s.active for s in course.submissions("ann")] == [False, False, True]
    with pytest.raises(Refused, match="only a qualified one can be active"):
        course.set_active("ann", v3.id)
    with pytest.raises(Refused, match=f"no submission {kit.id} of yours"):
        course.set_active("ann", kit.id)
    rows = {r.student.id: r for r in course.rows()}
    assert (rows["ann"].versions, rows["ann"].active_id, rows["ann"].status) == (3, v1.id, "failed")
    assert (rows["bob"].active_id, rows["cid"].last, rows["cid"].active_id) == (kit.id, None, None)
    with zipfile.ZipFile(io.BytesIO(course.active_sources_zip())) as archive:
        assert sorted(archive.namelist()) == ["ann/a.py", "bob/README.md", "bob/bot.py", "bob/build.sh"]
        assert archive.read("ann/a.py") == sdk_bot()
    course.requeue(v3.id)
    assert course.submission(v3.id).status in ("queued", "building", "testing")
    v3, = wait_final(course, v3.id)
    assert (v3.status, v3.reason) == ("failed", "crashed")
    course.set_disabled("bob", True)
    assert [r.disabled for r in course.rows()] == [False, True, False]
    with zipfile.ZipFile(io.BytesIO(course.active_sources_zip())) as archive:
        assert archive.namelist() == ["ann/a.py"]


# --- kill -9 of the workers' process ---

WORKER_SCRIPT = """
import sys, time
from pathlib import Path
from arena.course.background.submissions import Workers
from arena.course.course import Course
workers = Workers(Course(Path(sys.argv[1])), concurrency=2)
workers.start()
print("started", flush=True)
time.sleep(600)
"""


def test_kill_9_of_the_workers_then_new_workers_every_submission_ends_once(tmp_path):
    needs_sandbox()
    directory = make_course(tmp_path / "c")
    course = Course(directory)
    ids = [course.submit(student, f"v{n}.py", sdk_bot(0.05 + n / 1000)).id
           for n in range(2) for student in ("ann", "bob", "cid")]  # 6: 2 under way at the kill, 4 queued
    process = subprocess.Popen([sys.executable, "-c", WORKER_SCRIPT, str(directory)], cwd=ROOT, env=ENV,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline().strip() == "started", process.stderr.read()
        deadline = time.monotonic() + WAIT_S
        while not any(course.submission(i).status == "testing" for i in ids):
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.05)
        time.sleep(0.3)  # in the middle of its games
        running = bots_running(directory, wait_s=0)
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
    at_kill = {i: course.submission(i).status for i in ids}
    assert any(s in ("building", "testing") for s in at_kill.values()), at_kill
    assert any(s == "queued" for s in at_kill.values()), at_kill
    assert running, "no bot seen running before the kill"
    assert bots_running(directory, wait_s=10) == [], "bots outlived the killed workers"
    late = course.submit("ann", "late.py", sdk_bot())  # taken while no worker runs
    workers = Workers(Course(directory), concurrency=2)
    workers.start()
    try:
        subs = wait_final(course, *ids, late.id, timeout_s=120)
    finally:
        workers.stop(timeout_s=30)
    assert all(s.status in FINAL for s in subs)
    assert [s.status for s in subs] == ["qualified"] * len(subs), [(s.id, s.reason, s.detail) for s in subs]
    assert all(len(course.games(s.id)) == 2 for s in subs)  # played once to the end, not twice
    assert course.store.pending() == 0
    assert len({s.id for s in subs}) == len(ids) + 1


def bots_running(directory: Path, wait_s: float) -> list[str]:
    """Command lines of live processes running a file under `directory` (after up to `wait_s`)."""
    deadline = time.monotonic() + wait_s
    while True:
        found = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if str(directory) in cmdline and state != "Z" and int(pid) != os.getpid():
                found.append(cmdline)
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


REFUSING_SCRIPT = """
import sys
from pathlib import Path
from arena.cell.sandbox import SandboxUnavailable
from arena.course.background.submissions import Workers
from arena.course.course import Course
try:
    Workers(Course(Path(sys.argv[1]))).start()
except SandboxUnavailable as exc:
    print(exc)
"""


def test_workers_refuse_to_start_where_bots_cannot_be_sandboxed(tmp_path):
    directory = make_course(tmp_path / "c")
    Course(directory).submit("ann", "bot.py", sdk_bot())
    env = dict(ENV, PATH=str(tmp_path))  # no bwrap on this PATH
    done = subprocess.run([sys.executable, "-c", REFUSING_SCRIPT, str(directory)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    said = "sandbox = on, but bots cannot be isolated here: bwrap not installed; fix: install bubblewrap"
    assert done.stdout.startswith(said), (done.stdout, done.stderr)
    assert Course(directory).submissions("ann")[0].status == "queued"  # nothing ran, nothing lost


def test_a_job_interrupted_three_times_fails_interrupted_once_and_for_all(tmp_path):
    course = Course(make_course(tmp_path / "c"))
    sub = course.submit("ann", "bot.py", sdk_bot())
    for attempt in range(1, 4):  # a server killed each time it took the job
        assert course.store.claim() == sub.id
        course.store.set_status(sub.id, "building")
        assert course.store.requeue_interrupted() == ([sub.id] if attempt < 3 else [])
    sub = course.submission(sub.id)
    assert (sub.status, sub.reason, sub.finished) == ("failed", "interrupted", True)
    assert "stopped 3 times" in sub.detail and course.store.pending() == 0
    course.requeue(sub.id)  # staff try again: a fresh count
    course.requeue(sub.id)  # queued already: not twice
    assert course.submission(sub.id).status == "queued" and course.store.pending() == 1
    assert course.store.claim() == sub.id and course.store.claim() is None
    course.requeue(sub.id)  # running: not twice at once
    assert course.store.claim() is None
    with pytest.raises(KeyError):
        course.requeue(sub.id + 1)


# --- the command line ---

def test_arena_course_init_and_status(tmp_path):
    from conftest import run_arena

    done = run_arena("course", "init", str(tmp_path / "c"), "--game", "morris", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert 'game = "morris"' in (tmp_path / "c" / "course.toml").read_text()
    again = run_arena("course", "init", str(tmp_path / "c"), "--game", "morris", cwd=tmp_path)
    assert again.returncode == 2
    toml = tmp_path / "c" / "course.toml"
    assert again.stderr.strip() == f"arena course: error: {toml}: already there (not overwritten)"
    shutil.rmtree(tmp_path / "c")
    course = Course(make_course(tmp_path / "c"))
    course.submit("bob", "bot.py", sdk_bot())
    done = run_arena("course", "status", str(tmp_path / "c"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["student", "name", "group", "versions", "active", "last", "status"]
    assert lines[2].split()[:4] == ["bob", "Bob", "B", "B"] and lines[2].split()[-1] == "queued"
    assert lines[-1] == "3 students, 1 submission, 1 to build or test"
    (tmp_path / "c" / "course.toml").write_text('game = "chess"\n')
    bad = run_arena("course", "status", str(tmp_path / "c"), cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
    assert "course.toml: game: must be one of" in bad.stderr
