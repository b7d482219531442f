"""60 students upload at once to the real course server (bounded: a pool of 16 threads on
127.0.0.1, files of a few hundred bytes): every upload acknowledged is stored and ends qualified or
failed, none twice. Then the same with `kill -9` of the server in the middle of a second round,
and a restart: the acknowledged uploads are all there and every stored one ends in exactly one
final status (a job cut short is resumed, its games not counted twice).

Most bots are trivially fast (a syntax error fails at once); one in ten is a real bot that
plays its one qualification game, so the workers are busy when the server is killed.
"""
from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import require
from course_helpers import GOOD_BOT, SYNTAX_ERROR_BOT, Server, make_course, tls

try:
    import httpx
except ImportError:  # the test extra
    httpx = None

STUDENTS = 60
THREADS = 16
REAL_BOT_EVERY = 10
"""Every tenth student uploads a bot that plays; the others one that fails to compile."""
FINISH_TIMEOUT_S = 120.0
KILL_AFTER_ACKS = 20
"""In the second round, the server is killed once this many uploads were acknowledged."""
FINAL = ("qualified", "failed")


def roster() -> list[tuple[str, str, str, str]]:
    return [(f"s{n:03d}", f"Student {n}", f"s{n:03d}@example.org", "AB"[n % 2]) for n in range(STUDENTS)]


def bot_for(n: int) -> tuple[str, bytes, str]:
    """Student n's upload: (file name, bytes, the status it must end in)."""
    if n % REAL_BOT_EVERY == 0:
        return "first.py", GOOD_BOT.encode(), "qualified"
    return "typo.py", SYNTAX_ERROR_BOT.encode(), "failed"


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    require(httpx is not None, "needs httpx (pip install -e '.[test]')")
    return make_course(tmp_path_factory.mktemp("load") / "crowd", roster=roster())


@pytest.fixture(scope="module")
def tokens(course) -> dict[str, str]:
    """Each student's API token (made as `arena course token` does, without 60 processes)."""
    from arena.course.course import Course
    from arena.course.db.accounts import Accounts

    Course(course)  # the roster's students into course.db
    accounts = Accounts(course)
    return {sid: accounts.new_token(sid) for sid, *_ in roster()}


def upload_all(url: str, tokens: dict[str, str], on_ack=None) -> dict[str, int]:
    """Every student uploads once, THREADS at a time; student id -> the id acknowledged (201).
    Uploads that get no acknowledgement (the server died) are left out."""
    acked: dict[str, int] = {}

    def one(n: int) -> None:
        sid = f"s{n:03d}"
        name, data, _ = bot_for(n)
        try:
            answer = httpx.post(f"{url}/api/submissions", headers={"Authorization": f"Bearer {tokens[sid]}"},
                                files={"file": (name, data)}, data={"protocol": "v1"}, timeout=60,
                                verify=tls())
        except httpx.TransportError:
            return
        assert answer.status_code == 201, answer.text
        acked[sid] = answer.json()["id"]
        if on_ack is not None:
            on_ack(len(acked))

    with ThreadPoolExecutor(THREADS) as pool:
        list(pool.map(one, range(STUDENTS)))
    return acked


def wait_until_all_final(course: Path, timeout: float = FINISH_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pending = unfinished(course)
        if not pending:
            return
        time.sleep(0.3)
    raise AssertionError(f"submissions {pending} never finished")


def unfinished(course: Path) -> list[int]:
    """The submissions not yet final, read from course.db read-only (a server stopped in the middle
    of a write holds its lock; a reader of the WAL sees what was committed)."""
    from arena.course.db.store import DB_NAME, FINAL

    marks = ", ".join("?" * len(FINAL))
    with contextlib.closing(sqlite3.connect(f"file:{course / DB_NAME}?mode=ro", uri=True)) as db:
        rows = db.execute(f"SELECT id FROM submissions WHERE status NOT IN ({marks}) ORDER BY id", FINAL)
        return [row[0] for row in rows]


def check(course: Path, acked_rounds: list[dict[str, int]]) -> int:
    """Every acknowledged upload stored; every stored one final, as its bot deserves, once (one
    row per upload, its games played once); returns how many are stored."""
    from arena.course.course import Course

    view = Course(course)
    stored = {s.id: s for sid, *_ in roster() for s in view.submissions(sid)}
    for acked in acked_rounds:
        for sid, submission_id in acked.items():
            assert submission_id in stored and stored[submission_id].student_id == sid
    for s in stored.values():
        n = int(s.student_id[1:])
        assert s.status == bot_for(n)[2], f"{s.student_id} v{s.version}: {s.status} ({s.reason}: {s.detail})"
        if s.status == "qualified":
            assert len(view.games(s.id)) == view.config.qualification_games, f"games of {s.id}"
    for sid, *_ in roster():  # versions 1, 2... with no gap and no repeat
        versions = sorted(s.version for s in stored.values() if s.student_id == sid)
        assert versions == list(range(1, len(versions) + 1)), (sid, versions)
    return len(stored)


def test_sixty_students_upload_at_once_then_a_kill_9_and_a_restart(course, tokens):
    server = Server(course, concurrency=2)
    killed = []
    try:
        first = upload_all(server.url, tokens)
        assert len(first) == STUDENTS  # nothing refused: no rate limit in this course, small files
        wait_until_all_final(course)
        assert check(course, [first]) == STUDENTS

        def kill_in_the_middle(count: int) -> None:  # once acknowledged uploads wait or are being judged
            with deciding:
                if count < KILL_AFTER_ACKS or killed:
                    return
                # stopped while we look (SIGSTOP to its session), no job of the server can finish
                # between the look and the kill
                os.killpg(server.process.pid, signal.SIGSTOP)
                if unfinished(course):
                    killed.append(count)
                    server.kill()
                else:
                    os.killpg(server.process.pid, signal.SIGCONT)

        deciding = threading.Lock()

        second = upload_all(server.url, tokens, on_ack=kill_in_the_middle)
    finally:
        server.kill()
    assert killed and KILL_AFTER_ACKS <= len(second) < STUDENTS
    assert unfinished(course), "the kill came after the work: nothing left to resume"
    restarted = Server(course, concurrency=2)  # resumes every queued or interrupted job
    try:
        wait_until_all_final(course)
        stored = check(course, [first, second])
        assert STUDENTS + len(second) <= stored <= 2 * STUDENTS
    finally:
        assert restarted.stop() == 0, restarted.errors()
