"""Dishonest bots for the sandbox tests: `python tests/bots/attacks.py MODE [key=value ...]`.

Each tries its attacks, then plays legal[0] on every turn, and reports what each attack got in
the `info` of every move: {"attacks": {name: "denied: ..." | "SUCCEEDED: ..."}}. Written on the
raw protocol (BotClient), so nothing of the SDK helps or hinders it. Arguments are `key=value`
(never bare paths, which would be granted to the bot as program files):
  tag=T          a word put in every process's command line, so the test can find them
  read=P,P...    files to read (the opponent's source, the tournament file, results.sqlite, logs)
  write=P,P...   files to overwrite, then delete (results.sqlite, the tournament file, the opponent)
  pid=N,N...     host processes to SIGSTOP and SIGKILL (the referee, the opponent)
  port=N         a TCP port listening on the host's loopback (the only address it ever connects to)
  listen=N       a TCP port to listen on (the test tries to connect to it from the host)
  inotify=N      inotify instances to take and hold (the per-user limit is 128 by default)
  rootfs=1       write 64 MiB into the sandbox's own root (/), then remove it (only inside a sandbox)
  victim=P       a file its log is replaced by a link to
Modes:
  all        every attack above, plus: other bots' logs, tokens in /proc/*/environ, other
             processes' command lines, the name servers it can read (/etc/resolv.conf: it never
             resolves a name), a route out of the machine (asked of the kernel by a UDP connect to
             a TEST-NET address, which sends no packet), 300 processes started, a daemon left
             behind (setsid, cleared environment, sleeping), a symbolic link in place of bot.log,
             its user id (root or not), the keys of the session keyring it started in (the
             referee's), a note left in its user's keyring for later bots, a user namespace (all
             capabilities inside it), io_uring, the machine's CPU times (/proc/stat, /proc/loadavg)
  memory     3 children that each touch 120 MiB (past a 256 MiB limit over the tree), and 300 MiB
             written to /dev/shm
  burner     a setsid child that burns CPU without end (to escape `suspend`)
  fallocate  reserves mb=N MiB (default 1024) of disk through its stdout and stderr with
             fallocate(FALLOC_FL_KEEP_SIZE), which leaves a file's size unchanged
  print      from its hello on, a thread prints mb=N MiB (default 100) to stdout without pause
  sockets    after its first move (during the opponent's turn) opens n=N raw connections (default
             5000) to its own referee socket as fast as they are taken and holds them, shared out
             among procs=P processes (default 1; each has its own open files limit); with
             early=S, from its start on, and it says hello S seconds later
  ponder     n=N children (default 2) that burn CPU without end from its hello on: it thinks on
             its opponent's time, the opponent's moves get slower
  unpin      on every turn widens its CPU affinity to every CPU (os.sched_setaffinity), then
             reports the CPUs it may run on (`cpus` in its info; the attack "unpin")
The honest opponent of `ponder`:
  think      uses s=S seconds of CPU (default 0.15) on every move, then plays legal[0]; its info
             says how long the move took (`wall_s`) and when it thought (`span`, monotonic)
"""
from __future__ import annotations

import ctypes
import os
import platform
import signal
import socket
import struct
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
    """Other bots' logs where the referee keeps them (its working directories under /tmp). A log
    gone since the listing (another referee's match ended meanwhile) is passed over for the next."""
    import glob
    mine = os.path.realpath("bot.log") if os.path.exists("bot.log") else ""
    gone: FileNotFoundError | None = None
    for path in glob.glob("/tmp/arena-*/*/bot.log") + glob.glob("/tmp/*/arena-*/*/bot.log"):
        if os.path.realpath(path) != mine:
            try:
                return _read(path)
            except FileNotFoundError as exc:
                gone = exc
    if gone is not None:
        raise gone
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


def _connect_loopback(port: int) -> str:
    """A TCP connection to a port the test listens on at the host's 127.0.0.1 (never elsewhere)."""
    with socket.create_connection(("127.0.0.1", port), timeout=1.0):
        return f"connected to 127.0.0.1:{port}"


NO_HOST = ("192.0.2.1", 9)
"""A TEST-NET-1 address (RFC 5737: no host has it) and the discard port."""


def _route_out() -> str:
    """Whether the kernel has a route off the machine, asked without sending anything: connecting
    a UDP socket only picks the route and the source address."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(NO_HOST)
        return f"a route out from {probe.getsockname()[0]}"


def _name_servers() -> str | None:
    """The name servers this process could ask (what /etc/resolv.conf names); nothing is resolved."""
    with open("/etc/resolv.conf") as f:
        servers = [line.split()[1] for line in f if line.startswith("nameserver") and len(line.split()) > 1]
    return f"name servers {', '.join(servers)}" if servers else None


SYSCALLS = {"x86_64": {"keyctl": 250, "add_key": 248, "io_uring_setup": 425},
            "aarch64": {"keyctl": 219, "add_key": 217, "io_uring_setup": 425}}
KEYCTL_GET_KEYRING_ID, KEYCTL_DESCRIBE, KEYCTL_READ = 0, 6, 11
KEY_SPEC_SESSION_KEYRING, KEY_SPEC_USER_KEYRING = -3, -4
CLONE_NEWUSER = 0x10000000
_LIBC = ctypes.CDLL(None, use_errno=True)


def _syscall(name: str, *args) -> int:
    number = SYSCALLS.get(platform.machine(), {}).get(name)
    if number is None:
        raise OSError(f"no {name} number known for {platform.machine()}")
    result = _LIBC.syscall(number, *args)
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{name}: {os.strerror(code)}")
    return result


def _session_keys() -> str | None:
    """The descriptions of the keys in the session keyring this process started in."""
    ring = _syscall("keyctl", KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0)
    buffer = ctypes.create_string_buffer(4096)
    size = min(_syscall("keyctl", KEYCTL_READ, ring, buffer, 4096), 4096)
    names = []
    for key in struct.unpack(f"{size // 4}i", buffer.raw[:size - size % 4]):
        text = ctypes.create_string_buffer(512)
        if _LIBC.syscall(SYSCALLS[platform.machine()]["keyctl"], KEYCTL_DESCRIBE, key, text, 512) > 0:
            names.append(text.value.decode("utf-8", "replace").rsplit(";", 1)[-1])
    return f"session keyring {ring} holds {', '.join(names)}" if names else None


def _user_note() -> str:
    """A key left in its user's keyring, for the next bot of the same user to read."""
    note = b"meet me in the next match"
    key = _syscall("add_key", b"user", b"arena-note", note, len(note), KEY_SPEC_USER_KEYRING)
    return f"left key {key} in the user keyring"


def _user_namespace() -> str:
    """A child that makes a new user namespace (in which it would hold every capability)."""
    pid = os.fork()
    if pid == 0:
        os._exit(0 if _LIBC.unshare(CLONE_NEWUSER) == 0 else 1)
    if os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) != 0:
        raise OSError("unshare(CLONE_NEWUSER) refused")
    return "made a user namespace"


def _io_uring() -> str:
    params = ctypes.create_string_buffer(120)  # struct io_uring_params, zeroed
    fd = _syscall("io_uring_setup", 4, params)
    os.close(fd)
    return "set up an io_uring"


def _machine_cpu() -> str | None:
    """The whole machine's CPU times and load: the opponent's use, turn by turn."""
    with open("/proc/stat") as f:
        stat = f.readline()
    with open("/proc/loadavg") as f:
        load = f.read().strip()
    return f"{stat.strip()[:40]}... load {load}" if stat.startswith("cpu") or load else None


def _inotify(count: int) -> tuple[str, list[int]]:
    """Take up to `count` inotify instances and keep them (what its user may have is limited)."""
    fds = []
    for _ in range(count):
        fd = _LIBC.inotify_init1(os.O_CLOEXEC)
        if fd < 0:
            break
        fds.append(fd)
    return f"holds {len(fds)} inotify instances", fds


def _root_write() -> str:
    """Files in the sandbox's root (a tmpfs that no size limit covered): memory past every limit."""
    with open("/arena-hoard", "wb") as f:
        for _ in range(64):
            f.write(b"\1" * MIB)
    os.unlink("/arena-hoard")
    return "wrote 64 MiB in /"


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
    the match. Returns once the grandchild has its new program (the end of a pipe it holds closes
    on exec), so that the daemon is there before the game starts however busy the machine."""
    read_end, write_end = os.pipe()  # both close on exec
    child = os.fork()
    if child == 0:
        os.close(read_end)
        os.setsid()
        if os.fork() == 0:
            tag = _options().get("tag", "x")
            argv = [sys.executable, "-c", "import time; time.sleep(600)", f"daemon-{tag}"]
            os.execve(sys.executable, argv, {})
        os._exit(0)
    os.close(write_end)
    os.read(read_end, 1)  # end of file: the grandchild has exec'd (or died)
    os.close(read_end)
    os.waitpid(child, 0)


def _listen(port: int) -> socket.socket:
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", port))  # its own network namespace's loopback in the sandbox
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
        report["tcp referee host"] = _try("tcp", lambda: _connect_loopback(int(options["port"])))
    report["route outside"] = _try("route", _route_out)
    report["name servers"] = _try("resolv.conf", _name_servers)
    if "listen" in options:
        try:
            keep.append(_listen(int(options["listen"])))
        except OSError:
            pass
    report["300 processes"] = _try("fork", lambda: _many(300))
    if "victim" in options:
        report["log link"] = _try("link", lambda: _link_log(options["victim"]))
    report["uid"] = f"{'SUCCEEDED' if os.getuid() == 0 else 'denied'}: uid {os.getuid()}"
    report["session keyring"] = _try("keyring", _session_keys)
    report["user keyring"] = _try("keyring", _user_note)
    report["user namespace"] = _try("userns", _user_namespace)
    report["io_uring"] = _try("io_uring", _io_uring)
    report["machine cpu"] = _try("/proc/stat", _machine_cpu)
    if options.get("rootfs") == "1":
        report["root tmpfs"] = _try("rootfs", _root_write)
    if "inotify" in options:
        report["inotify"], fds = _inotify(int(options["inotify"]))  # information, not an attack's success
        keep.append(fds)
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


FALLOC_FL_KEEP_SIZE = 1


def fallocate(fd: int, size: int) -> str:
    """Reserve `size` bytes of disk for `fd` without changing its size (what the log file took)."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.fallocate.argtypes = (ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64)
    if libc.fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, size) != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{os.strerror(code)} ({errno_name(code)})")
    info = os.fstat(fd)
    return f"reserved {info.st_blocks * 512 >> 20} MiB, size still {info.st_size}"


def errno_name(code: int) -> str:
    import errno
    return errno.errorcode.get(code, str(code))


def attack_fallocate(options: dict[str, str]) -> dict[str, str]:
    size = int(options.get("mb", "1024")) * MIB
    return {name: _try("fallocate", lambda fd=fd: fallocate(fd, size))
            for name, fd in (("stdout", 1), ("stderr", 2))}


def printer(total: int, report: dict[str, str]) -> None:
    """Print `total` bytes to stdout as fast as the pipe takes them."""
    chunk = b"p" * (1 << 16)
    started, done = time.monotonic(), 0
    while done < total:
        done += os.write(1, chunk[: total - done])
        report["print"] = f"SUCCEEDED: printed {done >> 20} MiB"
    report["print"] = f"SUCCEEDED: printed {done >> 20} MiB in {time.monotonic() - started:.2f} s"


def open_connections(path: str, count: int, held: list, report: dict[str, str]) -> None:
    """Open `count` raw connections to the unix socket `path` as fast as it takes them, and hold
    them (in `held`) until the bot ends; the report says how many were opened."""
    started = time.monotonic()
    for i in range(count):
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            conn.connect(path)
        except OSError as exc:
            conn.close()
            report["connections"] = f"denied: {i} connections, then {type(exc).__name__}: {exc}"
            return
        held.append(conn)
        report["connections"] = f"opened {i + 1}"
    report["connections"] = f"opened {count} in {time.monotonic() - started:.2f} s"


def flood_socket(options: dict[str, str], held: list, report: dict[str, str]) -> None:
    """Start opening the `sockets` mode's connections, in this process (a thread) and procs - 1
    children (each holds its share: an open files limit is per process)."""
    import threading
    held.append(None)
    path = os.environ["ARENA_ENDPOINT"].removeprefix("ipc://")
    count, procs = int(options.get("n", "5000")), int(options.get("procs", "1"))
    for _ in range(procs - 1):
        if os.fork() == 0:
            open_connections(path, count // procs, held, {})
            time.sleep(3600)
    threading.Thread(target=open_connections, daemon=True, args=(path, count // procs, held, report)).start()
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


def think(seconds: float) -> dict[str, object]:
    """Use `seconds` of CPU; the move's info: the wall time it took, and when it began and ended
    (CLOCK_MONOTONIC, the machine's: the test reads what the opponent burned in between)."""
    began, start = time.monotonic(), time.process_time()
    while time.process_time() - start < seconds:
        sum(range(1000))
    ended = time.monotonic()
    return {"wall_s": ended - began, "span": [began, ended]}


def main() -> int:
    mode = sys.argv[1]
    options = _options()
    keep: list = []
    held: list[socket.socket] = []
    report: dict[str, str] = {}
    if mode == "all":
        report, keep = attack_all(options)
    elif mode == "memory":
        report = attack_memory()
    elif mode == "fallocate":
        report = attack_fallocate(options)
    elif mode == "print":
        import threading
        report = {"print": "printing"}
        threading.Thread(target=printer, args=(int(float(options.get("mb", "100")) * MIB), report),
                         daemon=True).start()
    elif mode == "sockets":
        report = {}
        if options.get("early"):  # before its own hello
            flood_socket(options, held, report)
            time.sleep(float(options["early"]))
    elif mode == "burner":
        burner()
    with BotClient(os.environ["ARENA_ENDPOINT"]) as client:
        client.send({"type": "hello", "token": os.environ["ARENA_TOKEN"], "name": f"attack-{mode}",
                     "protocol": 1})
        if mode == "ponder":
            ponder(int(options.get("n", "2")))
        while True:
            message = client.receive_while_parent_lives(1.0)
            if message is None or message["type"] == "bye":
                return 0
            if message["type"] == "turn":
                info: dict[str, object] = {"attacks": dict(report)}
                if mode == "unpin":
                    info = unpin()
                elif mode == "think":
                    info = think(float(options.get("s", "0.15")))
                client.send({"type": "move", "game_id": message["game_id"], "ply": message["ply"],
                             "move": message["legal"][0], "info": info})
                if mode == "sockets" and not held:  # the opponent's turn begins
                    flood_socket(options, held, report)


if __name__ == "__main__":
    sys.exit(main())
