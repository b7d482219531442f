"""Course security, part A, each attack played by a student with an ordinary account against a real
`arena course serve` (tests/course_helpers.py): a build's link to another student's folder or to the
course's session.key, a FIFO as the run command, a build filling the disk, /home in the bot's
sandbox, odd run commands; and a job stuck in any step failing as "stuck" while the queue moves on."""
from __future__ import annotations

import io
import os
import threading
import time
import zipfile
from pathlib import Path

import pytest
from conftest import require
from course_helpers import (
    GOOD_BOT,
    Server,
    csrf_of,
    invite_links,
    make_course,
    signed_in,
    submitted_id,
    upload,
    wait_final,
)

from arena.cell import sandbox
from arena.course.background.submissions import Workers
from arena.course.course import Course
from arena.course.season import archives

try:
    import httpx
except ImportError:  # the test extra
    httpx = None

ROOT = Path(__file__).resolve().parents[1]
KIT_BOT = (ROOT / "examples" / "kits" / "python-stdio" / "bot.py").read_text()
SECRET = "ADA-SECRET-SOURCE-7f3a"
"""In the victim's bot.py: must appear in nothing another student sees."""
DISK_MB = 20
PEEK = '''import sys
print("PEEKED:" + open(sys.argv[1]).read(), file=sys.stderr, flush=True)
sys.exit(3)
'''
WAIT_S = 90.0


@pytest.fixture(scope="module", autouse=True)
def needs_a_sandbox() -> None:
    require(httpx is not None, "needs httpx (pip install -e '.[test]')")
    reason = sandbox.unavailable_reason()
    require(reason is None, f"bots cannot be sandboxed here: {reason}")


def kit_zip(build_sh: str, **files: str) -> bytes:
    """A zip of the python-stdio kit's bot.py (plus `files`) with `build_sh` as its build.sh."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in {"build.sh": build_sh, "bot.py": KIT_BOT, **files}.items():
            info = zipfile.ZipInfo(name)
            info.external_attr = 0o755 << 16
            archive.writestr(info, text)
    return buffer.getvalue()


def upload_zip(client, data: bytes) -> int:
    csrf = csrf_of(client.get("/me").text)
    answer = client.post("/me/submit", data={"csrf": csrf, "protocol": "v1"},
                         files={"file": ("bot.zip", data, "application/zip")})
    return submitted_id(answer)


def seen(client, submission_id: int) -> str:
    """All a student is shown of a submission: its pages, its build log, its games, its status."""
    sub = f"/submissions/{submission_id}"
    pages = ["/me", "/me/submissions.json", sub, f"{sub}/log", f"{sub}/status.json"]
    texts = [client.get(page).text for page in pages]
    n = 1
    while (game := client.get(f"/submissions/{submission_id}/games/{n}")).status_code == 200:
        texts.append(game.text)
        n += 1
    return "\n".join(texts)


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    return make_course(tmp_path_factory.mktemp("sec") / "bots101", disk_mb=str(DISK_MB))


@pytest.fixture(scope="module")
def server(course):
    server = Server(course)
    yield server
    assert server.stop() == 0, server.errors()


@pytest.fixture(scope="module")
def clients(course, server) -> dict:
    links = invite_links(course, server.url)
    return {sid: signed_in(server.url, link) for sid, link in links.items()}


@pytest.fixture(scope="module")
def victim(clients) -> int:
    """Ada's qualified kit, its bot.py holding SECRET."""
    sid = upload_zip(clients["s001"], kit_zip("#!/bin/sh\necho \"stdio:python3 $(pwd)/bot.py\"\n",
                                              **{"bot.py": f"# {SECRET}\n{KIT_BOT}"}))
    found = wait_final(clients["s001"], sid, WAIT_S)
    assert found["status"] == "qualified", found
    return sid


def test_a_build_linking_another_students_folder_fails_and_shows_nothing_of_it(clients, victim, course):
    """The audit's `a1 -> ../1`: build.sh links Ada's build folder, deletes itself and names the link
    in its run command (a bot printing what it reads). The build fails naming the link; Ada's source
    is in nothing Alan sees, not even what build.sh itself printed reading it."""
    build = f"""#!/bin/sh
ln -s ../{victim} a1
cat a1/bot.py || echo "cannot read a1/bot.py"
cat > peek.py <<'EOF'
{PEEK}EOF
rm -f build.sh
echo "stdio:python3 $(pwd)/peek.py $(pwd)/a1/bot.py"
"""
    alan = clients["s002"]
    sid = upload_zip(alan, kit_zip(build))
    found = wait_final(alan, sid, WAIT_S)
    assert (found["status"], found["reason"]) == ("failed", "unsafe build"), found
    assert found["detail"].startswith("build.sh left a1, a link leading out of the submission's "), found
    everything = seen(alan, sid)
    assert SECRET not in everything and "PEEKED" not in everything
    assert str(course) not in everything


def test_a_build_linking_the_courses_session_key_fails_and_the_key_is_not_shown(clients, course):
    """`k -> ../../session.key` (the course directory's, two folders up), named by the run command:
    the build fails naming `k`, and the key appears nowhere the student looks."""
    key = (course / "session.key").read_text().strip()
    build = f"""#!/bin/sh
ln -s ../../session.key k
cat k || echo "cannot read k"
cat > peek.py <<'EOF'
{PEEK}EOF
echo "stdio:python3 $(pwd)/peek.py $(pwd)/k"
"""
    grace = clients["s003"]
    sid = upload_zip(grace, kit_zip(build))
    found = wait_final(grace, sid, WAIT_S)
    assert (found["status"], found["reason"]) == ("failed", "unsafe build"), found
    assert found["detail"].startswith("build.sh left k, a link leading out of the submission's folder"), found
    everything = seen(grace, sid)
    assert key not in everything and "PEEKED" not in everything


def test_a_build_writing_past_disk_mb_is_stopped_fails_fast_and_its_folder_is_removed(clients, course):
    """40 files of 10 MB (each under the file-size limit): past the course's disk_mb (20) the build
    is killed within a second or two, fails "build too big" and leaves nothing behind."""
    build = """#!/bin/sh
i=0
while [ $i -lt 40 ]; do head -c 10000000 /dev/zero > f$i || exit 1; i=$((i + 1)); done
echo "stdio:python3 $(pwd)/bot.py"
"""
    kath = clients["s004"]
    began = time.monotonic()
    sid = upload_zip(kath, kit_zip(build))
    found = wait_final(kath, sid, WAIT_S)
    took = time.monotonic() - began
    assert (found["status"], found["reason"]) == ("failed", "build too big"), found
    assert f"build.sh wrote more than {DISK_MB} MB into its folder" in found["detail"], found
    assert not (course / "builds" / str(sid)).exists()
    assert took < 30, took


HOME_WRITER = '''import os
for path in (os.environ["HOME"] + "/by-home", "/home/bot/by-absolute-path"):
    with open(path, "w") as f:
        f.write("written")
'''


def test_home_is_writable_by_absolute_path_in_the_bots_sandbox(clients):
    ada = clients["s001"]
    sid = submitted_id(upload(ada, "home.py", HOME_WRITER + GOOD_BOT))
    found = wait_final(ada, sid, WAIT_S)
    assert found["status"] == "qualified", found


@pytest.mark.parametrize(("printed", "said"), [
    ("$(printf '%0300d' 0)", "has a name of more than 255 bytes"),
    ("stdio:python3 $(pwd)/bot.py $(printf '\\377')", "is not UTF-8 text"),
    ("stdio:python3 $(pwd)/bot.py $(printf '%05000d' 0)", "is 5"),
], ids=["300-char word", "not UTF-8", "5000 bytes"])
def test_an_odd_run_command_is_a_bad_run_command_naming_no_server_path(clients, course, printed, said):
    alan = clients["s002"]
    sid = upload_zip(alan, kit_zip(f"#!/bin/sh\necho \"{printed}\"\n"))
    found = wait_final(alan, sid, WAIT_S)
    assert (found["status"], found["reason"]) == ("failed", "bad run command"), found
    assert said in found["detail"] and str(course) not in found["detail"] and "Errno" not in found["detail"]


FIFO_BUILD = """#!/bin/sh
rm -f bot
mkfifo bot
chmod +x bot
echo "$(pwd)/bot"
"""


def test_a_fifo_as_run_command_stops_nothing_and_a_restart_does_not_hang(tmp_path):
    """Two students' builds leave a FIFO named as the program (both workers would block opening it):
    both fail naming it, a third student's kit qualifies meanwhile, and after a restart the queue
    still moves (nothing is taken again)."""
    course = make_course(tmp_path / "fifo")
    server = Server(course)
    try:
        clients = {sid: signed_in(server.url, link) for sid, link in invite_links(course, server.url).items()}
        fifos = [upload_zip(clients[s], kit_zip(FIFO_BUILD)) for s in ("s001", "s002")]
        good = upload_zip(clients["s003"], kit_zip("#!/bin/sh\necho \"stdio:python3 $(pwd)/bot.py\"\n"))
        assert wait_final(clients["s003"], good, 60)["status"] == "qualified"
        for student, sid in zip(("s001", "s002"), fifos, strict=True):
            found = wait_final(clients[student], sid, 30)
            assert (found["status"], found["reason"]) == ("failed", "unsafe build"), found
            assert found["detail"].startswith("build.sh left bot, a FIFO"), found
        assert server.stop(30) == 0, server.errors()
        server = Server(course)
        again = httpx.Client(base_url=server.url, cookies=clients["s003"].cookies, timeout=30)
        late = upload_zip(again, kit_zip("#!/bin/sh\necho \"stdio:python3 $(pwd)/bot.py\"\n"))
        assert wait_final(again, late, 60)["status"] == "qualified"
        mine = again.get("/me/submissions.json").json()["submissions"]
        assert [s["status"] for s in mine] == ["qualified"] * 2
    finally:
        server.kill()


def test_a_job_stuck_in_a_step_fails_as_stuck_frees_its_worker_and_writes_nothing(tmp_path, monkeypatch):
    """A step that never ends (here unpacking, made to block on opening a real FIFO): past the
    workers' deadline the submission fails "stuck" naming the step and the limit, the one worker
    qualifies the next upload, and the abandoned job, released later, changes nothing."""
    course = Course(make_course(tmp_path / "c"))
    fifo = tmp_path / "never-written"
    os.mkfifo(fifo)
    unpack = archives.unpack

    def unpack_then_block(filename: str, data: bytes, folder: Path) -> list:
        members = unpack(filename, data, folder)
        if b"BLOCK-HERE" in data:
            with open(fifo, "rb") as f:  # blocks until a writer opens it
                f.read()
        return members

    monkeypatch.setattr(archives, "unpack", unpack_then_block)
    workers = Workers(course, concurrency=1, deadline_s=4)
    workers.start()
    try:
        stuck = course.submit("s001", "kit.zip", kit_zip("#!/bin/sh\necho \"stdio:python3 $(pwd)/bot.py\"\n",
                                                         **{"note.txt": "BLOCK-HERE"}))
        good = course.submit("s002", "bot.py", GOOD_BOT.encode())
        deadline = time.monotonic() + WAIT_S
        while not (course.submission(stuck.id).finished and course.submission(good.id).finished):
            assert time.monotonic() < deadline, (course.submission(stuck.id), course.submission(good.id))
            time.sleep(0.1)
        stuck, good = course.submission(stuck.id), course.submission(good.id)
        assert (stuck.status, stuck.reason) == ("failed", "stuck"), stuck
        assert 'step "unpacking the upload"' in stuck.detail and "deadline of 4 s" in stuck.detail
        assert good.status == "qualified", good.detail
        blocked = [t for t in threading.enumerate() if t.name == f"course-job-{stuck.id}"]
        assert len(blocked) == 1
        with open(fifo, "wb"):  # release it: it must record nothing
            pass
        blocked[0].join(10)
        assert not blocked[0].is_alive()
        after = course.submission(stuck.id)
        assert (after.status, after.reason, after.detail) == ("failed", "stuck", stuck.detail)
        assert course.build_log(stuck.id) == ""
        assert course.store.requeue_interrupted() == []  # a restart takes nothing again
    finally:
        workers.stop(timeout_s=30)
        course.close()
