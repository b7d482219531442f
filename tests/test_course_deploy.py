"""The deployment docs/course.md recommends, tested as documented: `arena course serve` run by a
service user (nobody here) alone in a cgroup delegated to it (systemd's `Delegate=yes`, by hand as
tests/test_nonroot.py does it), behind nginx from Debian on loopback with docs/deploy/nginx-arena.conf
(its TEST-marked lines swapped for a loopback listen and the server's port; header timeout shortened).

On it, as a student with an ordinary account, the attacks of the third hostile audit: a build that
leaves a link to the course's `session.key` or to another student's build folder and names it in its
run command, a FIFO as the run command, a build that writes far past its disk cap. The server's
secrets and other students' code must appear in nothing the student receives, and the queue moves on.
Also: a half-sent request is cut off by nginx, and an oversized sign-in body refused before it is kept.
"""
from __future__ import annotations

import io
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import pytest
from conftest import require
from course_helpers import (
    PASSWORD,
    Server,
    arena,
    csrf_of,
    invite_links,
    make_course,
    submitted_id,
    tls,
    wait_final,
)
from test_nonroot import NOBODY, _delegate, _reveal_args

from arena.cell import cgroup, sandbox

ROOT = Path(__file__).resolve().parents[1]
SITE_CONF = ROOT / "docs" / "deploy" / "nginx-arena.conf"
HEADER_TIMEOUT_S = 2
"""nginx's client_header_timeout in the test (the shipped block says 10 s; the mechanism is the same)."""
START_TIMEOUT_S = 60.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def nginx_conf(prefix: Path, listen: int, upstream: str) -> Path:
    """A whole nginx.conf around docs/deploy/nginx-arena.conf's server block, on loopback."""
    lines = []
    for line in SITE_CONF.read_text().splitlines():
        if "# TEST: drop" in line:
            continue
        if "# TEST: listen" in line:
            line = f"    listen 127.0.0.1:{listen};"
        elif "# TEST: upstream" in line:
            line = f"        proxy_pass {upstream};"
        line = re.sub(r"client_header_timeout\s+\d+s", f"client_header_timeout {HEADER_TIMEOUT_S}s", line)
        lines.append(line)
    (prefix / "arena.conf").write_text("\n".join(lines) + "\n")
    temps = "".join(f"    {kind}_temp_path {prefix / kind};\n" for kind in ("client_body", "proxy", "fastcgi",
                                                                           "uwsgi", "scgi"))
    conf = prefix / "nginx.conf"
    conf.write_text(f"""daemon off;
worker_processes 1;
pid {prefix / 'nginx.pid'};
error_log {prefix / 'error.log'};
events {{ worker_connections 512; }}
http {{
    access_log {prefix / 'access.log'};
{temps}    include {prefix / 'arena.conf'};
}}
""")
    return conf


class Deployment:
    """The course server as nobody in a delegated cgroup, nginx in front: `url` is nginx's."""

    def __init__(self, home: Path) -> None:
        self.home = home
        roster = [(f"s{n:03}", f"Student {n}", f"s{n:03}@example.org", "A") for n in range(1, 11)]
        self.course = make_course(home / "course", roster, qualification_games="1")
        self.links = invite_links(self.course, "http://127.0.0.1")
        self.clients: dict[str, object] = {}
        subprocess.run(["chown", "-R", f"{NOBODY}:{NOBODY}", str(home)], check=True)
        self.delegated = _delegate(f"arena-test-deploy-{secrets.token_hex(4)}")
        enter = 'for f in $JOIN; do echo $$ > "$f" || exit 99; done; unset JOIN; exec "$@"'
        as_service_user = ["bwrap", "--dev-bind", "/", "/", *_reveal_args(), "--chdir", str(home), "--",
                           "sh", "-c", enter, "sh", "setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
                           "--clear-groups", "env", f"PYTHONPATH={ROOT}", f"HOME={home}", sys.executable]
        env = {**os.environ, "JOIN": " ".join(str(d / "cgroup.procs") for d in self.delegated)}
        try:  # started as docs/deploy/arena-course.service starts it
            self.server = Server(self.course, "--trusted-proxy", "127.0.0.1", launch=as_service_user, env=env)
        except AssertionError:
            self.stop()
            raise
        self.upstream = self.server.url
        prefix = home.parent / f"{home.name}-nginx"
        prefix.mkdir()
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
            (prefix / kind).mkdir()
            os.chown(prefix / kind, NOBODY, NOBODY)
        self.port = _free_port()
        conf = nginx_conf(prefix, self.port, self.upstream)
        self.nginx = subprocess.Popen(["nginx", "-c", str(conf)], stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE, start_new_session=True)
        self.url = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if self.nginx.poll() is not None:
                    why = self.nginx.stderr.read().decode()
                    raise AssertionError(f"nginx did not start: {why}") from None
                time.sleep(0.1)

    def errors(self) -> str:
        return self.server.errors()

    def signed_in(self, student: str):
        """An httpx client of `student`'s through nginx, signed in once (a sign-in link is used once)."""
        import httpx

        if student in self.clients:
            return self.clients[student]
        client = httpx.Client(base_url=self.url, timeout=30, verify=tls())
        link = self.links[student].replace("http://127.0.0.1", "")
        page = client.get(link)
        assert page.status_code == 200, page.text
        answer = client.post(link, data={"csrf": csrf_of(page.text), "password": PASSWORD, "again": PASSWORD})
        assert answer.status_code == 303, answer.text
        self.clients[student] = client
        return client

    def stop(self) -> None:
        server = getattr(self, "server", None)
        for process in (getattr(self, "nginx", None), server.process if server is not None else None):
            if process is None:
                continue
            try:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(30)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(10)
        for path in self.delegated:
            for group in sorted((p for p in path.rglob("*") if p.is_dir()), reverse=True) + [path]:
                _empty_and_remove(group)


def _empty_and_remove(group: Path, timeout_s: float = 10.0) -> None:
    """Kill what is left in the cgroup `group` (a process dies a moment after its signal), then remove it."""
    deadline = time.monotonic() + timeout_s
    while True:
        pids = (group / "cgroup.procs").read_text().split() if (group / "cgroup.procs").exists() else []
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            group.rmdir()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


@pytest.fixture(scope="module")
def deployment():
    require(os.geteuid() == 0, "not root: cannot make a service user's deployment")
    reason = sandbox.unavailable_reason()
    require(reason is None, f"bots cannot be sandboxed here: {reason}")
    require(shutil.which("nginx"), "nginx not installed (Debian: apt-get install nginx)")
    layout = cgroup.detect()
    require(layout.kind != "none", f"no usable cgroups (as root) to delegate: {layout.reason}")
    home = Path(tempfile.mkdtemp(prefix="arena-deploy-"))
    os.chmod(home, 0o755)
    found = Deployment(home)
    try:
        yield found
    finally:
        found.stop()
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(home.parent / f"{home.name}-nginx", ignore_errors=True)


def zipped(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            info = zipfile.ZipInfo(name)
            info.external_attr = 0o755 << 16
            archive.writestr(info, text)
    return buffer.getvalue()


def upload_zip(client, files: dict[str, str]) -> int:
    csrf = csrf_of(client.get("/me").text)
    answer = client.post("/me/submit", data={"csrf": csrf, "protocol": "stdio"},
                         files={"file": ("bot.zip", zipped(files), "application/zip")})
    return submitted_id(answer)


def everything_seen(client, submission_id: int) -> str:
    """All a student can fetch of one submission: its row, page, log and games."""
    seen = [client.get("/me/submissions.json").text, client.get("/me").text]
    for tail in ("", "/status.json", "/log"):
        seen.append(client.get(f"/submissions/{submission_id}{tail}").text)
    for number in range(1, 3):
        seen.append(client.get(f"/submissions/{submission_id}/games/{number}").text)
    return "\n".join(seen)


KIT = ROOT / "examples" / "kits" / "python-stdio"
GOOD = {name: (KIT / name).read_text() for name in ("build.sh", "bot.py")}
"""The python-stdio starter kit, unmodified: it qualifies."""


def test_a_good_bot_qualifies_through_nginx_as_the_service_user(deployment):
    client = deployment.signed_in("s001")
    sub = upload_zip(client, GOOD)
    found = wait_final(client, sub, timeout=120)
    assert found["status"] == "qualified", (found, deployment.errors())
    who = subprocess.run(["ps", "-o", "user=", "-p", str(_server_pid(deployment))], capture_output=True,
                         text=True)
    assert who.stdout.strip() == "nobody", who.stdout


def _server_pid(deployment: Deployment) -> int:
    """The course server's own pid (setpriv execs into sh, then env, then python)."""
    out = subprocess.run(["pgrep", "-f", "-s", str(deployment.server.process.pid), "arena course serve"],
                         capture_output=True, text=True).stdout.split()
    return int(out[-1])


LINKS = [("../../session.key", "s005"), ("../../course.db", "s006"), ("../../invites.csv", "s007"),
         ("../OWNER", "s008")]


@pytest.mark.parametrize(("target", "student"), LINKS)
def test_a_link_out_of_the_build_folder_never_shows_the_server_or_another(deployment, target, student):
    """`build.sh` leaves `a1 -> TARGET` and names it in its run command: the build fails with a reason;
    nothing the student can fetch holds the key, the accounts, the invites or another's code."""
    owner = deployment.signed_in("s002")
    first = upload_zip(owner, {**GOOD, "bot.py": GOOD["bot.py"] + "# SECRET-OF-S002\n"})
    wait_final(owner, first, timeout=120)
    target = target.replace("OWNER", str(first))  # the other student's build folder
    attacker = deployment.signed_in(student)
    run = "/bin/cat $(pwd)/a1" if target.startswith("../../") else "/bin/cat $(pwd)/a1/bot.py"
    sub = upload_zip(attacker, {"build.sh": f'ln -s {target} a1\nrm -f build.sh\necho "{run}"\n'})
    found = wait_final(attacker, sub, timeout=120)
    assert found["status"] == "failed", found
    seen = everything_seen(attacker, sub)
    key = (deployment.course / "session.key").read_text().strip()
    assert key not in seen
    assert "SECRET-OF-S002" not in seen
    assert "SQLite format" not in seen
    assert not any(link.rsplit("/", 1)[-1] in seen for link in deployment.links.values())  # the invites
    assert "a1" in found["detail"], found  # the reason names the link


def test_a_fifo_run_command_fails_and_the_queue_moves_on(deployment):
    client = deployment.signed_in("s004")
    stuck = upload_zip(client, {"build.sh": 'mkfifo bot\necho "$(pwd)/bot"\n'})
    later = deployment.signed_in("s001")
    good = upload_zip(later, GOOD)
    assert wait_final(client, stuck, timeout=120)["status"] == "failed"
    assert wait_final(later, good, timeout=120)["status"] == "qualified"


def test_a_build_writing_past_its_disk_cap_is_stopped_and_its_folder_removed(deployment):
    client = deployment.signed_in("s009")
    many = "for i in $(seq 1 40); do head -c 50000000 /dev/zero > f$i; done\n"  # 2 GB, each file small
    sub = upload_zip(client, {"build.sh": many + "echo python3 f1\n"})
    found = wait_final(client, sub, timeout=120)
    assert found["status"] == "failed", found
    assert "MB" in found["detail"], found
    assert not list((deployment.course / "builds").glob(f"{sub}/f*"))  # its folder removed


def test_nginx_cuts_off_a_half_sent_request_and_serves_others_meanwhile(deployment):
    import httpx

    held = [socket.create_connection(("127.0.0.1", deployment.port), timeout=10) for _ in range(20)]
    for s in held:
        s.sendall(b"GET /login HTTP/1.1\r\nHost: x\r\n")  # no end of headers, ever
    assert httpx.get(f"{deployment.url}/login", timeout=10).status_code == 200
    began = time.monotonic()
    for s in held:
        s.settimeout(HEADER_TIMEOUT_S + 10)
        try:
            while s.recv(4096):  # nginx answers 408 or just closes
                pass
        except ConnectionResetError:
            pass
        s.close()
    assert time.monotonic() - began < HEADER_TIMEOUT_S + 8


def test_an_oversized_sign_in_body_is_refused_by_nginx_before_the_server_keeps_it(deployment):
    body = b"x" * (7 * 1024 * 1024)
    answer = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST",
                             "--data-binary", "@-", f"{deployment.url}/login"],
                            input=body, capture_output=True, timeout=60)
    assert answer.stdout.decode() == "413", answer.stdout
    code, out, err = arena("course", "status", str(deployment.course))
    assert code == 0, err


def test_through_nginx_a_strangers_wrong_passwords_do_not_keep_the_owner_out(deployment):
    """Behind the proxy the server counts sign-in tries by the client's address (X-Forwarded-For
    from the trusted proxy), not the proxy's: a stranger at 127.0.0.2 is refused, the owner is not."""
    import httpx

    deployment.signed_in("s010")  # the password is set
    stranger = httpx.Client(base_url=deployment.url, timeout=30,
                            transport=httpx.HTTPTransport(local_address="127.0.0.2"))
    codes = []
    for _ in range(8):
        page = stranger.get("/login")
        codes.append(stranger.post("/login", data={"csrf": csrf_of(page.text), "id": "s010",
                                                   "password": "not the password"}).status_code)
    assert codes[:5] == [401] * 5 and codes[-1] == 429, codes
    owner = httpx.Client(base_url=deployment.url, timeout=30)
    page = owner.get("/login")
    answer = owner.post("/login", data={"csrf": csrf_of(page.text), "id": "s010", "password": PASSWORD})
    assert answer.status_code == 303, answer.text
