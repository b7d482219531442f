"""What a student or a stranger can make the course server keep, hold or refuse others, tried
against the real server (`arena course serve` on a free 127.0.0.1 port): bodies bounded as they
stream, half-sent requests closed, sign-in limits per client address (clients bind 127.0.0.x
source addresses: Linux routes all of 127/8 to lo), sessions ended server-side, uploads refused
before anything is stored; and `arena course submit`, which sends its token to its URL's origin
only. Every socket here is on loopback.

The memory and body tests come first: they read the server's peak memory (VmHWM) before any
sign-in has hashed a password. The courses here hash cheaply (course_helpers.CHEAP_HASHING), but
one: the crowd of sign-ins is measured against argon2id's default 64 MiB a hash, on a server of its
own that keeps course.toml's default [accounts], and what that server stores is checked after.
"""
from __future__ import annotations

import contextlib
import http.server
import io
import select
import socket
import threading
import time
from pathlib import Path

import pytest
from conftest import require
from course_helpers import (
    GOOD_BOT,
    PASSWORD,
    Server,
    arena,
    csrf_of,
    invite_links,
    make_course,
    signed_in,
    staff_signed_in,
    statuses,
    submitted_id,
    upload,
)

try:
    import httpx
except ImportError:  # the test extra
    httpx = None

MB = 1_000_000


@pytest.fixture(scope="module", autouse=True)
def needs_httpx() -> None:
    require(httpx is not None, "needs httpx (pip install -e '.[test]')")


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    # a minute between uploads and 50 KB kept a student: both limits trip in a few uploads
    return make_course(tmp_path_factory.mktemp("course") / "sec101", upload_interval_s="60",
                       storage_mb="0.05")


@pytest.fixture(scope="module")
def server(course):
    server = Server(course, concurrency=1)
    yield server
    assert server.stop() == 0, server.errors()


@pytest.fixture(scope="module")
def links(course, server) -> dict[str, str]:
    return invite_links(course, server.url)


def peak_memory(pid: int) -> int:
    """A process's peak resident memory (VmHWM, bytes)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmHWM for {pid}")


def host_port(server: Server) -> tuple[str, int]:
    host, port = server.url.removeprefix("http://").split(":")
    return host, int(port)


def client_from(server: Server, address: str):
    """An httpx client whose connections come from `address` (a 127.0.0.x of lo)."""
    return httpx.Client(base_url=server.url, timeout=60,
                        transport=httpx.HTTPTransport(local_address=address))


def store_bytes(course: Path) -> int:
    """What the store's files take (every upload and report kept)."""
    return sum(p.stat().st_size for p in (course / "files").rglob("*") if p.is_file())


# --- bodies ---

def test_an_oversized_sign_in_body_is_refused_while_it_streams(server):
    before = peak_memory(server.process.pid)
    with socket.create_connection(host_port(server), timeout=30) as sock:  # Content-Length up front
        sock.sendall(b"POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-"
                     b"urlencoded\r\nContent-Length: 50000000\r\n\r\n")
        assert sock.recv(4096).startswith(b"HTTP/1.1 413 "), "no 413 before the body was sent"
    sent, answer = 0, b""
    chunk = b"10000\r\n" + b"a" * 0x10000 + b"\r\n"  # chunked: no length announced
    with socket.create_connection(host_port(server), timeout=30) as sock:
        sock.sendall(b"POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-"
                     b"urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n")
        try:
            while sent < 50 * MB:
                sock.sendall(chunk)
                sent += len(chunk)
                if select.select([sock], [], [], 0)[0]:
                    answer = sock.recv(4096)
                    break
        except (BrokenPipeError, ConnectionResetError):
            pass  # closed by the server: what it answered may be lost with the reset
    assert sent < 8 * MB, f"{sent:,} bytes taken before the refusal"
    assert answer == b"" or answer.startswith(b"HTTP/1.1 413 "), answer[:200]
    grown = peak_memory(server.process.pid) - before
    assert grown < 20 * MB, f"the server's peak memory grew by {grown:,} bytes"
    assert httpx.get(server.url + "/login", timeout=30).status_code == 200  # still serving


def test_a_body_the_app_never_reads_is_not_drained_forever(server):
    """Not signed in, the upload is answered with a redirect before its body is read; the body
    that keeps coming is thrown away up to a bound, then the connection is closed. What the client
    gets rid of before the reset is that bound plus the two kernel buffers between it and the app:
    the server's receive buffer (RECEIVE_BUFFER_BYTES, which Linux doubles), and the client's send
    buffer, set small here (on a busy machine both fill before the app has answered)."""
    from arena.course_web.bounds import DRAIN_MAX_BYTES
    from arena.course_web.server import RECEIVE_BUFFER_BYTES

    send_buffer = 256 * 1024
    sent = 0
    chunk = b"10000\r\n" + b"a" * 0x10000 + b"\r\n"
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, send_buffer)
        sock.settimeout(30)
        sock.connect(host_port(server))
        sock.sendall(b"POST /me/submit HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; "
                     b"boundary=x\r\nTransfer-Encoding: chunked\r\n\r\n")
        try:
            while sent < 100 * MB:
                sock.sendall(chunk)
                sent += len(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass
    kernel = 2 * RECEIVE_BUFFER_BYTES + 2 * send_buffer
    assert sent < DRAIN_MAX_BYTES + kernel + 4 * MB, f"{sent:,} bytes taken by a request already answered"


# --- slow clients ---

HEADER_S, BODY_IDLE_S = 2.0, 3.0
"""The slow-client server's timeouts (`--header-timeout`, `--body-idle-timeout`): short, so that the
test does not sit out the defaults (5 s, 20 s), which bounds.py holds and docs/course.md states."""


@pytest.fixture(scope="module")
def impatient_server(tmp_path_factory):
    """A second server, on a course of its own, that closes half-sent requests after HEADER_S and
    BODY_IDLE_S."""
    course = make_course(tmp_path_factory.mktemp("impatient") / "slow101")
    server = Server(course, "--header-timeout", f"{HEADER_S:g}", "--body-idle-timeout", f"{BODY_IDLE_S:g}",
                    concurrency=1)
    yield server
    assert server.stop() == 0, server.errors()


def test_half_sent_requests_are_closed_and_others_served_meanwhile(impatient_server):
    server = impatient_server
    address = host_port(server)
    held = []
    first_connected = time.monotonic()
    for _ in range(300):
        sock = socket.create_connection(address, timeout=30)
        sock.sendall(b"GET /login HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # no blank line: never finished
        held.append(sock)
    stalled = socket.create_connection(address, timeout=30)  # whole headers, a body that stops
    stalled.sendall(b"POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-"
                    b"urlencoded\r\nContent-Length: 1000\r\n\r\nid=s00")
    body_stalled = time.monotonic()
    started = time.monotonic()
    answer = httpx.get(server.url + "/login", timeout=10)
    assert answer.status_code == 200 and time.monotonic() - started < 5
    open_ = set(held)
    first_closed = None
    while open_ and time.monotonic() - started < HEADER_S + 10:
        for sock in select.select(list(open_), [], [], 1)[0]:
            assert sock.recv(100) == b""  # closed, with nothing said
            first_closed = first_closed or time.monotonic()
            open_.discard(sock)
    closed_s = time.monotonic() - started
    for sock in held:
        sock.close()
    assert not open_, f"{len(open_)} of 300 half-sent requests still open after {closed_s:.0f} s"
    # the server's clock starts when it accepts a connection, so none closes before its deadline
    assert first_closed - first_connected >= HEADER_S - 0.1, "a half-sent request closed before its time"
    # within the body's idle time plus a margin that stays below the default 20 s
    assert select.select([stalled], [], [], BODY_IDLE_S + 10)[0], "the stalled body was never closed"
    assert stalled.recv(100) == b""
    assert time.monotonic() - body_stalled >= BODY_IDLE_S - 0.1, "the stalled body was closed before its time"
    stalled.close()
    assert httpx.get(server.url + "/login", timeout=10).status_code == 200


def test_serve_refuses_a_timeout_that_is_not_a_positive_number(tmp_path):
    from arena.cli import main

    for flag, value in (("--header-timeout", "0"), ("--body-idle-timeout", "soon"),
                        ("--header-timeout", "inf")):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as exit_:
            main(["course", "serve", str(tmp_path), flag, value])
        assert exit_.value.code == 2 and f"argument {flag}: must be " in err.getvalue(), err.getvalue()
        assert value in err.getvalue().splitlines()[-1]


# --- sign-in ---

def wrong_password(client, account_id: str) -> int:
    page = client.get("/login")
    return client.post("/login", data={"csrf": csrf_of(page.text), "id": account_id,
                                       "password": "not the password"}).status_code


def test_a_strangers_wrong_passwords_do_not_keep_the_owner_out(server, links):
    signed_in(server.url, links["s003"]).close()  # s003's password is set
    stranger = client_from(server, "127.0.0.2")
    codes = [wrong_password(stranger, "s003") for _ in range(8)]
    assert codes == [401] * 5 + [429] * 3
    owner = client_from(server, "127.0.0.1")
    page = owner.get("/login")
    answer = owner.post("/login", data={"csrf": csrf_of(page.text), "id": "s003", "password": PASSWORD})
    assert answer.status_code == 303 and answer.headers["location"] == "/me"
    assert owner.get("/me").status_code == 200
    page = stranger.get("/login")
    held = stranger.post("/login", data={"csrf": csrf_of(page.text), "id": "s003", "password": PASSWORD})
    assert held.status_code == 429 and held.headers["retry-after"].isdigit()  # even the right one, from there


def test_one_address_spraying_ids_is_refused(server):
    from arena.course_web.signin import MAX_FAILURES_PER_ADDRESS

    sprayer = client_from(server, "127.0.0.3")
    codes = [wrong_password(sprayer, f"x{n:02}") for n in range(MAX_FAILURES_PER_ADDRESS + 5)]
    assert codes == [401] * MAX_FAILURES_PER_ADDRESS + [429] * 5
    page = sprayer.get("/login")
    answer = sprayer.post("/login", data={"csrf": csrf_of(page.text), "id": "y00", "password": "guess"})
    assert "Too many wrong passwords from your address" in answer.text
    assert wrong_password(client_from(server, "127.0.0.4"), "y00") == 401  # others are not held off


@pytest.fixture(scope="module")
def default_course(tmp_path_factory) -> Path:
    """A course that keeps the template's [accounts]: argon2-cffi's defaults, as a real course has."""
    return make_course(tmp_path_factory.mktemp("default") / "real101", cheap_hashing=False)


@pytest.fixture(scope="module")
def default_server(default_course):
    server = Server(default_course, "--unsafe-no-sandbox", concurrency=1)  # no bot runs: sign-ins only
    yield server
    assert server.stop() == 0, server.errors()


def test_a_crowd_of_sign_ins_hashes_a_few_at_a_time(default_server):
    """Each argon2 hash takes 64 MiB: 12 at once would add some 800 MB; two at a time, memory stays flat."""
    from arena.course_web.signin import HASHES_AT_ONCE

    server = default_server

    before = peak_memory(server.process.pid)
    codes: list[int] = []

    def one(n: int) -> None:
        client = client_from(server, f"127.0.1.{n}")
        codes.append(wrong_password(client, f"crowd{n}"))

    threads = [threading.Thread(target=one, args=(n,)) for n in range(1, 13)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert sorted(codes) == [401] * 12
    grown = peak_memory(server.process.pid) - before
    assert grown < (HASHES_AT_ONCE + 2) * 64 * 2**20, f"peak memory grew by {grown / 2**20:.0f} MiB"


def stored_password(course: Path, account_id: str) -> str:
    import sqlite3

    from arena.course.db.accounts import DB_NAME

    with contextlib.closing(sqlite3.connect(course / DB_NAME)) as db:
        return db.execute("SELECT password FROM accounts WHERE id = ?", (account_id,)).fetchone()[0]


def test_passwords_are_hashed_at_the_courses_costs(course, server, links, default_course, default_server):
    """A course.toml without weak_hashing_for_tests hashes at argon2id's defaults and says nothing; a
    test course's cheap costs are what its server stores, and it says so."""
    signed_in(default_server.url, invite_links(default_course, default_server.url)["s002"]).close()
    assert stored_password(default_course, "s002").startswith("$argon2id$v=19$m=65536,t=3,p=4$")
    assert "WARNING: TEST COURSE" not in default_server.errors()
    student = sign_in(course, server, links, "s001")
    answer = student.post("/logout", data={"csrf": csrf_of(student.get("/me").text)})
    assert answer.status_code == 303  # no session left behind
    assert stored_password(course, "s001").startswith("$argon2id$v=19$m=1024,t=1,p=1$")
    assert ("arena course: WARNING: TEST COURSE: course.toml's [accounts] weak_hashing_for_tests = true: "
            "password hashes (argon2id t=1, 1024 KiB, p=1) may be below OWASP's floor") in server.errors()


# --- sessions ---

def test_a_cookie_copied_before_sign_out_is_refused_after_it(server, links):
    student = signed_in(server.url, links["s004"])
    copied = student.cookies.get("arena_course")
    answer = student.post("/logout", data={"csrf": csrf_of(student.get("/me").text)})
    assert answer.status_code == 303
    thief = httpx.Client(base_url=server.url, timeout=30)
    thief.cookies.set("arena_course", copied)
    answer = thief.get("/me")
    assert answer.status_code == 303 and answer.headers["location"].startswith("/login")
    assert thief.get("/me/submissions.json").status_code == 404


def test_staff_end_a_students_sessions(course, server, links):
    staff = staff_signed_in(course, server.url)
    laptop = sign_in(course, server, links, "s001")
    phone = httpx.Client(base_url=server.url, timeout=30)
    page = phone.get("/login")
    assert phone.post("/login", data={"csrf": csrf_of(page.text), "id": "s001",
                                      "password": PASSWORD}).status_code == 303
    page = staff.get("/staff/students/s001")
    assert "sign s001 out everywhere (2 sessions)" in page.text
    answer = staff.post("/staff/students/s001/sessions/end", data={"csrf": csrf_of(page.text)})
    assert answer.status_code == 303
    for client in (laptop, phone):
        assert client.get("/me").status_code == 303
    assert staff.get("/staff").status_code == 200  # staff's own session goes on
    audit = staff.get("/staff/audit").text
    assert "ended sessions" in audit and "2 sessions" in audit
    student = httpx.Client(base_url=server.url, timeout=30)  # a student cannot do it
    page = student.get("/login")
    student.post("/login", data={"csrf": csrf_of(page.text), "id": "s001", "password": PASSWORD})
    csrf = csrf_of(student.get("/me").text)
    answer = student.post("/staff/students/s002/sessions/end", data={"csrf": csrf})
    assert answer.status_code == 404
    code, out, err = arena("course", "sign-out", str(course), "s001")  # on the server's machine
    assert (code, out) == (0, "s001: 1 session ended\n"), err
    assert student.get("/me").status_code == 303
    code, _, err = arena("course", "sign-out", str(course), "nobody")
    assert code == 2 and "no account 'nobody'" in err


# --- uploads ---

def test_uploads_refused_by_the_rate_limit_leave_nothing_behind(course, server, links):
    student = signed_in(server.url, links["s002"])
    first = submitted_id(upload(student, "first.py", GOOD_BOT))
    size = store_bytes(course)
    answers = [upload(student, f"again{n}.py", GOOD_BOT + f"# {n}\n" + "#" * MB)  # each a new file
               for n in range(20)]
    left = store_bytes(course) - size
    assert left == 0, f"refused uploads left {left:,} bytes in the store"
    for answer in answers:
        assert answer.status_code == 429 and "one upload a minute: try again in" in answer.text
        assert answer.headers["retry-after"].isdigit()
    assert [s["id"] for s in statuses(student)] == [first]


def test_an_upload_past_the_students_storage_is_refused_naming_the_cap(course, server, links):
    student = sign_in(course, server, links, "s001")
    size = store_bytes(course)
    answer = upload(student, "padded.py", GOOD_BOT + "#" * 60_000)
    assert answer.status_code == 400
    assert "storage full" in answer.text and "0.05 MB" in answer.text and "storage_mb" in answer.text
    assert store_bytes(course) == size
    assert submitted_id(upload(student, "small.py", GOOD_BOT)) > 0  # what fits is taken


def sign_in(course: Path, server: Server, links: dict[str, str], student_id: str):
    """A client signed in as `student_id`: through its link the first time, then its password."""
    from arena.course.db.accounts import Accounts

    account = Accounts(course).get(student_id)
    if account is None or not account.has_password:
        return signed_in(server.url, links[student_id])
    client = httpx.Client(base_url=server.url, timeout=30)
    page = client.get("/login")
    answer = client.post("/login", data={"csrf": csrf_of(page.text), "id": student_id, "password": PASSWORD})
    assert answer.status_code == 303, answer.text
    return client


# --- `arena course submit` ---

class Recorder(http.server.BaseHTTPRequestHandler):
    """Records each request's path and headers (server.seen) and answers `server.answer(handler)`."""

    def do_GET(self) -> None:
        self.server.seen.append((self.command, self.path, dict(self.headers)))
        self.server.answer(self)

    do_POST = do_GET

    def log_message(self, *args: object) -> None:
        pass


def listener(address: str, answer) -> http.server.ThreadingHTTPServer:
    server = http.server.ThreadingHTTPServer((address, 0), Recorder)
    server.seen, server.answer = [], answer
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_submit_does_not_follow_a_redirect_to_another_origin(tmp_path):
    def accepted(handler) -> None:
        body = b'{"id": 1, "version": 1, "status": "queued", "finished": true}'
        handler.send_response(201)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    elsewhere = listener("127.0.0.2", accepted)
    target = f"http://127.0.0.2:{elsewhere.server_address[1]}/api/submissions"

    def redirect(handler) -> None:
        length = int(handler.headers.get("Content-Length", "0"))
        handler.rfile.read(length)
        handler.send_response(302)
        handler.send_header("Location", target)
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    course_server = listener("127.0.0.1", redirect)
    bot = tmp_path / "first.py"
    bot.write_text(GOOD_BOT)
    try:
        code, _, err = arena("course", "submit", f"http://127.0.0.1:{course_server.server_address[1]}",
                             str(bot), "--token", "arena_secret-token")
    finally:
        course_server.shutdown()
        elsewhere.shutdown()
    assert [seen[2]["Authorization"] for seen in course_server.seen] == ["Bearer arena_secret-token"]
    assert elsewhere.seen == [], "the token's request went to the other origin"
    assert code == 2 and target in err and "another origin" in err, err
    assert len(err.strip().splitlines()) == 1 and err.count("http://127.0.0.1:") == 1, err


def test_submit_refuses_plain_http_to_another_machine_before_any_connection(tmp_path, monkeypatch):
    tried: list[object] = []

    def no_lookup(*args: object, **kwargs: object):
        tried.append(args[0])
        raise socket.gaierror(socket.EAI_NONAME, "not looked up in this test")

    def no_connect(self: socket.socket, address: object) -> None:
        tried.append(address)
        raise ConnectionRefusedError("no connection in this test")

    monkeypatch.setattr(socket, "getaddrinfo", no_lookup)
    monkeypatch.setattr(socket.socket, "connect", no_connect)
    bot = tmp_path / "first.py"
    bot.write_text(GOOD_BOT)
    code, _, err = arena("course", "submit", "http://course.invalid/", str(bot), "--token", "arena_x")
    assert code == 2 and "plain http://" in err and "--insecure-http" in err, err
    assert tried == [], f"looked up or connected to {tried}"
    code, _, err = arena("course", "submit", "ftp://course.invalid/", str(bot), "--token", "arena_x")
    assert code == 2 and "not a server's address" in err and tried == []
    code, _, err = arena("course", "submit", "http://course.invalid/", str(bot), "--token", "arena_x",
                         "--insecure-http")
    assert code == 2 and "cannot reach" in err and tried == ["course.invalid"]  # the option lifts the check
