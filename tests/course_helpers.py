"""What the course server's tests share: a course made with `arena course init`, the real server
(`arena course serve` in a subprocess on a free 127.0.0.1 port), signing in, and bots to upload."""
from __future__ import annotations

import contextlib
import functools
import io
import os
import re
import signal
import ssl
import subprocess
import threading
import time
from pathlib import Path

from conftest import ENV, arena_cmd

PASSWORD = "a long enough password"
CSRF_RE = re.compile(r'name="csrf" value="([^"]+)"')
START_TIMEOUT_S = 60.0
ROSTER = [("s001", "Ada Lovelace", "ada@example.org", "A"), ("s002", "Alan Turing", "alan@example.org", "A"),
          ("s003", "Grace Hopper", "grace@example.org", "B"),
          ("s004", "Katherine Johnson", "katherine@example.org", "B")]

GOOD_BOT = '''"""Plays the first legal move (the SDK's smallest bot)."""
from bots.sdk import Bot


class FirstBot(Bot):
    name = "first"

    def choose(self, state, time_left):
        return self.legal[0]


if __name__ == "__main__":
    FirstBot().run()
'''
RAISING_BOT = '''"""Its choose() raises on every move."""
from bots.sdk import Bot


class BrokenBot(Bot):
    name = "broken"

    def choose(self, state, time_left):
        raise ValueError("my bot is broken")


if __name__ == "__main__":
    BrokenBot().run()
'''
RAISED_LINE = "ValueError: my bot is broken"
SLOW_START = ("import time\n"
              "time.sleep(1)  # a slow start: the page shows the submission before its status is final\n")
"""Put before a bot, so that a page opened right after the upload sees its status change."""
SYNTAX_ERROR_BOT = "def choose(:\n    pass\n"
CHEAP_HASHING = ("\n[accounts]\nweak_hashing_for_tests = true\n"
                 "argon2_time_cost = 1\nargon2_memory_kib = 1024\nargon2_parallelism = 1\n")
"""course.toml's [accounts] for a test course: argon2id at 1 MiB and one pass takes about a
millisecond a sign-in where the defaults (64 MiB, 3 passes, 4 lanes) take a third of a CPU second.
The tests of the defaults themselves keep them (make_course(..., cheap_hashing=False))."""


def make_course(directory: Path, roster=ROSTER, cheap_hashing: bool = True, **settings: str) -> Path:
    """A course made with `arena course init` (Domineering), then made small and fast: a 4x4
    board, one qualification game, 1 s a move, no upload interval, CHEAP_HASHING at its end (unless
    `cheap_hashing` is False); `settings` are more lines of course.toml (key -> TOML value), each
    where the template has that key (commented or not), else before its first table."""
    code, _, err = arena("course", "init", str(directory), "--game", "domineering")
    assert code == 0, err
    path = directory / "course.toml"
    text = path.read_text()
    changes = {"time": "1", "qualification_games": "1", "upload_interval_s": "0", "rows": "4", "cols": "4",
               **settings}
    for key, value in changes.items():
        text, count = re.subn(rf"(?m)^#?\s*{key} = .*$", f"{key} = {value}", text, count=1)
        if not count:  # a key the template does not show: before the first table
            text = re.sub(r"(?m)^\[", f"{key} = {value}\n[", text, count=1)
    path.write_text(text + (CHEAP_HASHING if cheap_hashing else ""))
    lines = "".join(",".join(r) + "\n" for r in roster)
    (directory / "roster.csv").write_text("id,name,email,group\n" + lines)
    return directory


class Server:
    """`arena course serve DIR --port 0` in a subprocess; `url` is read from its first line.
    `launch`: what runs `python -m arena ...` (default: this interpreter, as this user), e.g. a
    service user's wrapper; `env`: its environment."""

    def __init__(self, directory: Path, *extra: str, concurrency: int = 2, launch: list[str] | None = None,
                 env: dict[str, str] | None = None) -> None:
        self.directory = directory
        self.log = open(directory.parent / f"{directory.name}-server.log", "a+")  # noqa: SIM115
        serve = ["course", "serve", str(directory), "--port", "0", "--concurrency", str(concurrency), *extra]
        argv = arena_cmd(*serve) if launch is None else [*launch, "-m", "arena", *serve]
        self.process = subprocess.Popen(argv, env=ENV if env is None else env, stdout=subprocess.PIPE,
                                        stderr=self.log, text=True, start_new_session=True)
        self.lines: list[str] = []
        first = threading.Event()
        threading.Thread(target=self._read, args=(first,), daemon=True).start()
        if not first.wait(START_TIMEOUT_S) or not self.lines:
            self.kill()
            raise AssertionError(f"the server did not start: {self.errors()}")
        match = re.search(r"(http://[0-9.]+:\d+)/", self.lines[0])
        assert match, self.lines[0]
        self.url = match.group(1)

    def _read(self, first: threading.Event) -> None:
        for line in self.process.stdout:
            self.lines.append(line)
            first.set()
        first.set()

    def errors(self) -> str:
        self.log.flush()
        self.log.seek(0)
        return self.log.read()[-3000:]

    def stop(self, timeout: float = 60.0) -> int:
        """SIGTERM, and its exit code once it stopped."""
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"the server did not stop on SIGTERM within {timeout} s") from None

    def kill(self) -> None:
        """kill -9 of the server's whole process tree (its session)."""
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait(30)


def csrf_of(html: str) -> str:
    match = CSRF_RE.search(html)
    assert match, "no CSRF token in the page"
    return match.group(1)


def arena(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """`arena ARGS...` run in this process (the same parser and commands as the installed script,
    without a new interpreter's start-up): (exit code, stdout, stderr)."""
    from arena.cli import main

    out, err = io.StringIO(), io.StringIO()
    saved = dict(os.environ)
    os.environ.update(env or {})
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return code, out.getvalue(), err.getvalue()


def invite_links(directory: Path, url: str) -> dict[str, str]:
    """id -> sign-in link, from the invites.csv that `arena course invite` writes."""
    import csv

    code, _, err = arena("course", "invite", str(directory), "--url", url)
    assert code == 0, err
    with open(directory / "invites.csv", newline="") as f:
        return {row["id"]: row["link"] for row in csv.DictReader(f)}


@functools.cache
def tls() -> ssl.SSLContext:
    """The one TLS context of the suite's httpx clients (`verify=tls()`): a client made without it
    loads the CA bundle again, 30 ms of CPU each, for servers that the tests reach by plain HTTP on
    127.0.0.1 anyway (60 students' uploads at once spent seconds on it)."""
    return ssl.create_default_context()


def signed_in(url: str, link: str):
    """An httpx client signed in through a one-time sign-in link (its password set)."""
    import httpx

    client = httpx.Client(base_url=url, timeout=30, verify=tls())
    page = client.get(link)
    assert page.status_code == 200, page.text
    answer = client.post(link, data={"csrf": csrf_of(page.text), "password": PASSWORD, "again": PASSWORD})
    assert answer.status_code == 303, answer.text
    return client


def staff_signed_in(directory: Path, url: str, name: str = "teacher"):
    """An httpx client signed in as a new staff member `name` (`arena course staff add`, then
    its one-time link)."""
    code, out, err = arena("course", "staff", "add", str(directory), name, "--url", url)
    assert code == 0, err
    return signed_in(url, out.strip().splitlines()[-1])


def upload(client, name: str, text: str, protocol: str = "v1"):
    """The student's upload through the page's form (its CSRF token read from /me)."""
    csrf = csrf_of(client.get("/me").text)
    return client.post("/me/submit", data={"csrf": csrf, "protocol": protocol},
                       files={"file": (name, text.encode(), "text/x-python")})


def statuses(client) -> list[dict]:
    answer = client.get("/me/submissions.json")
    assert answer.status_code == 200, answer.text
    return answer.json()["submissions"]


def wait_final(client, submission_id: int, timeout: float = 90.0) -> dict:
    """The submission (as /me/submissions.json shows it) once its status is final."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = next(s for s in statuses(client) if s["id"] == submission_id)
        if found["finished"]:
            return found
        time.sleep(0.2)
    raise AssertionError(f"submission {submission_id} not finished after {timeout} s: {found}")


def submitted_id(answer) -> int:
    """The new submission's id from the form's redirect (/me?submitted=ID)."""
    assert answer.status_code == 303, answer.text[-2000:]
    return int(answer.headers["location"].rsplit("=", 1)[1])


PHASE_CHECKS_TIMEOUT_S = 300.0


def wait_phase_checks(directory: Path, timeout: float = PHASE_CHECKS_TIMEOUT_S) -> None:
    """Wait until no phase check is due on the course in `directory` (the running server's
    background thread ran them all: arena/course/background/phase_checks.py); AssertionError,
    naming those left, after `timeout` seconds."""
    from arena.course.course import Course
    from arena.course.season.phase_checks import due

    course = Course(directory)
    try:
        deadline = time.monotonic() + timeout
        while True:
            left = due(course)
            if not left:
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"phase checks still due after {timeout} s: {', '.join(map(str, left))}")
            time.sleep(0.2)
    finally:
        course.close()
