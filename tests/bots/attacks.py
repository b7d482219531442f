"""Dishonest bots for the sandbox tests: `python tests/bots/attacks.py MODE [key=value ...]`.

Each tries its attacks, then plays legal[0] on every turn, and reports what each attack got in
the `info` of every move: {"attacks": {name: "denied: ..." | "SUCCEEDED: ..."}}. Written on the
raw protocol (BotClient), so nothing of the SDK helps or hinders it. Arguments are `key=value`
(never bare paths, which would be granted to the bot as program files):
  tag=T          a word put in every process's command line, so the test can find them
  read=P,P...    files to read (the opponent's source, the tournament file, results.sqlite, logs)
  write=P,P...   files to overwrite, then delete (results.sqlite, the tournament file, the opponent)
  pid=N,N...     host processes to SIGSTOP and SIGKILL (the referee, the opponent)
  port=N         a TCP port listening on the host's loopback
  listen=N       a TCP port to listen on (the test tries to connect to it from the host)
  victim=P       a file its log is replaced by a link to
Modes:
  all        every attack above, plus: other bots' logs, tokens in /proc/*/environ, other
             processes' command lines, names resolved, an outside address reached, 300
             processes started, a daemon left behind (setsid, cleared environment, sleeping), a
             symbolic link in place of bot.log, its user id (root or not)
  memory     3 children that each touch 120 MiB (past a 256 MiB limit over the tree), and 300 MiB
             written to /dev/shm
  burner     a setsid child that burns CPU without end (to escape `suspend`)
  ponder     n=N children (default 2) that burn CPU without end from its hello on: it thinks on
             its opponent's time, the opponent's moves get slower
  unpin      on every turn widens its CPU affinity to every CPU (os.sched_setaffinity), then
             reports the CPUs it may run on (`cpus` in its info; the attack "unpin")
The honest opponent of `ponder`:
  think      uses s=S seconds of CPU (default 0.15) on every move, then plays legal[0]; its info
             says how long the move took (`wall_s`)
"""
from __future__ import annotations

import os
import signal
import socket
import sys
import time

from arena.match.protocol import BotClient

MIB = 1 << 20


def _options() -> dict[str, str]:
    return dict(arg.split("=", 1) for arg in sys.argv[2:] if "=" in arg)


def _try(label: str, action) -> str:
    try:
        got = action()
    except Exception as exc:  # every refusal counts: EACCES, ENOENT, EROFS, EPERM, ESRCH...
        return f"denied: {type(exc).__name__}: {exc}"[:200]
    return f"SUCCEEDED: {got}"[:200] if got is not None else f"denied: {label} found nothing"


def _read(path: str) -> str:
    with open(path, "rb") as f:
        return f"read {len(f.read())} bytes of {path}"


def _write(path: str) -> str:
    with open(path, "r+b") as f:
        f.write(b"owned")
    os.unlink(path)
    return f"overwrote and deleted {path}"


def _logs() -> str | None:
    """Other bots' logs where the referee keeps them (its working directories under /tmp)."""
    import glob
    mine = os.path.realpath("bot.log") if os.path.exists("bot.log") else ""
    for path in glob.glob("/tmp/arena-*/*/bot.log") + glob.glob("/tmp/*/arena-*/*/bot.log"):
        if os.path.realpath(path) != mine:
            return _read(path)
    return None


def _tokens() -> str | None:
    mine = os.environ.get("ARENA_TOKEN", "")
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    env = f.read().split(b"\0")
            except OSError:
                continue
            for item in env:
                if item.startswith(b"ARENA_TOKEN=") and item[12:].decode() != mine:
                    return f"token of pid {pid}"
    return None


def _others() -> str | None:
    """Command lines of processes that are not this bot's (the opponent, the referee)."""
    tag = _options().get("tag", "")
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    line = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
            except OSError:
                continue
            if line and tag not in line and "bwrap" not in line:
                return f"saw pid {pid}: {line[:80]}"
    return None


def _signal(pid: int) -> str:
    os.kill(pid, signal.SIGSTOP)
    os.kill(pid, signal.SIGCONT)
    return f"stopped pid {pid}"


def _connect(host: str, port: int) -> str:
    with socket.create_connection((host, port), timeout=1.0):
        return f"connected to {host}:{port}"


def _resolve() -> str:
    return f"resolved {socket.getaddrinfo('example.com', 80)[0][4]}"


def _many(count: int) -> str:
    children = []
    try:
        for _ in range(count):
            pid = os.fork()
            if pid == 0:
                time.sleep(30)
                os._exit(0)
            children.append(pid)
    except OSError as exc:
        raise OSError(f"{len(children)} processes, then {exc}") from None
    finally:
        for pid in children:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    return f"started {count} processes"


def _daemon() -> None:
    """A grandchild in its own session with a cleared environment, sleeping: it must not outlive
    the match."""
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            tag = _options().get("tag", "x")
            argv = [sys.executable, "-c", "import time; time.sleep(600)", f"daemon-{tag}"]
            os.execve(sys.executable, argv, {})
        os._exit(0)


def _listen(port: int) -> socket.socket:
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("0.0.0.0", port))
    server.listen()
    return server


def attack_all(options: dict[str, str]) -> tuple[dict[str, str], list]:
    report: dict[str, str] = {}
    keep = []
    for i, path in enumerate(p for p in options.get("read", "").split(",") if p):
        report[f"read {i}"] = _try("read", lambda p=path: _read(p))
    for i, path in enumerate(p for p in options.get("write", "").split(",") if p):
        report[f"write {i}"] = _try("write", lambda p=path: _write(p))
    for i, pid in enumerate(p for p in options.get("pid", "").split(",") if p):
        report[f"signal {i}"] = _try("signal", lambda p=int(pid): _signal(p))
    report["other logs"] = _try("logs", _logs)
    report["tokens"] = _try("tokens", _tokens)
    report["processes"] = _try("processes", _others)
    report["shadow"] = _try(
        "shadow", lambda: _read("/etc/shadow") if os.path.getsize("/etc/shadow") else None)
    if "port" in options:
        report["tcp referee host"] = _try("tcp", lambda: _connect("127.0.0.1", int(options["port"])))
    report["tcp outside"] = _try("tcp", lambda: _connect("1.1.1.1", 53))
    report["resolve"] = _try("resolve", _resolve)
    if "listen" in options:
        try:
            keep.append(_listen(int(options["listen"])))
        except OSError:
            pass
    report["300 processes"] = _try("fork", lambda: _many(300))
    if "victim" in options:
        report["log link"] = _try("link", lambda: _link_log(options["victim"]))
    report["uid"] = f"{'SUCCEEDED' if os.getuid() == 0 else 'denied'}: uid {os.getuid()}"
    _daemon()
    return report, keep


def _link_log(victim: str) -> str | None:
    """Replace its log file by a link to `victim`, hoping the referee truncates that when it cuts
    the log (it prints megabytes afterwards so that it does)."""
    for path in ("bot.log", "../bot.log"):
        if os.path.exists(path):
            os.unlink(path)
            os.symlink(victim, path)
            sys.stdout.write("z" * (3 * MIB))
            sys.stdout.flush()
            return f"replaced {path} with a link to {victim}"
    return None


def attack_memory() -> dict[str, str]:
    report = {}
    children = []
    for _ in range(3):
        pid = os.fork()
        if pid == 0:
            block = bytearray(120 * MIB)
            for i in range(0, len(block), 4096):
                block[i] = 1
            time.sleep(2)
            os._exit(0)
        children.append(pid)
    statuses = [os.waitpid(pid, 0)[1] for pid in children]
    killed = sum(1 for s in statuses if os.WIFSIGNALED(s))
    report["3 x 120 MiB"] = (f"denied: {killed} of 3 children killed" if killed
                             else "SUCCEEDED: 360 MiB in 3 children")
    report["/dev/shm"] = _try("shm", _shm)
    return report


def _shm() -> str:
    pid = os.fork()
    if pid == 0:  # in a child, so the kernel's answer (a kill) does not end the bot
        with open("/dev/shm/hoard", "wb") as f:
            for _ in range(300):
                f.write(b"\1" * MIB)
        os._exit(0)
    status = os.waitpid(pid, 0)[1]
    try:
        os.unlink("/dev/shm/hoard")
    except OSError:
        pass
    if os.WIFSIGNALED(status) or os.WEXITSTATUS(status):
        raise OSError(f"the writer ended with status {status}")
    return "300 MiB in /dev/shm"


def burner() -> None:
    if os.fork() == 0:
        os.setsid()
        tag = _options().get("tag", "x")
        os.execv(sys.executable, [sys.executable, "-c", "while True: pass", f"burner-{tag}"])


def ponder(count: int) -> None:
    for _ in range(count):
        if os.fork() == 0:
            while True:
                pass


def unpin() -> dict[str, object]:
    everything = set(range(os.cpu_count() or 1))
    try:
        os.sched_setaffinity(0, everything)
    except OSError as exc:
        return {"attacks": {"unpin": f"denied: {exc}"}, "cpus": sorted(os.sched_getaffinity(0))}
    cpus = os.sched_getaffinity(0)
    got = f"SUCCEEDED: runs on CPUs {sorted(cpus)}" if cpus == everything else f"denied: still {sorted(cpus)}"
    return {"attacks": {"unpin": got}, "cpus": sorted(cpus)}


def think(seconds: float) -> float:
    """Use `seconds` of CPU; return the wall time it took."""
    began, start = time.monotonic(), time.process_time()
    while time.process_time() - start < seconds:
        sum(range(1000))
    return time.monotonic() - began


def main() -> int:
    mode = sys.argv[1]
    options = _options()
    keep: list = []
    report: dict[str, str] = {}
    if mode == "all":
        report, keep = attack_all(options)
    elif mode == "memory":
        report = attack_memory()
    elif mode == "burner":
        burner()
    with BotClient(os.environ["ARENA_ENDPOINT"]) as client:
        client.send({"type": "hello", "token": os.environ["ARENA_TOKEN"], "name": f"attack-{mode}",
                     "protocol": 1})
        if mode == "ponder":
            ponder(int(options.get("n", "2")))
        while True:
            message = client.receive(10.0)
            if message is None or message["type"] == "bye":
                return 0
            if message["type"] == "turn":
                info: dict[str, object] = {"attacks": report}
                if mode == "unpin":
                    info = unpin()
                elif mode == "think":
                    info = {"wall_s": think(float(options.get("s", "0.15")))}
                client.send({"type": "move", "game_id": message["game_id"], "ply": message["ply"],
                             "move": message["legal"][0], "info": info})


if __name__ == "__main__":
    sys.exit(main())
