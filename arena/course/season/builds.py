"""Running a submission's `build.sh` in the sandbox, and its run command.

The build runs as a bot does (arena/cell/sandbox.py: the read-only system, no network but
loopback, its own PID namespace, the seccomp filter; as root, a user id of its own), except that
it may write its own build folder (seen at the same path as on the host, so the command it prints
names host paths), and under the course's build limits: `time_s` of wall time, `memory_mb` for
all of its processes together (a cgroup, where the machine has one), the games' process and
file-size limits, and `disk_mb` for all it writes into its folder (watched while it runs: past it
the build is stopped, failed and its folder removed). Its output (stdout and stderr, in the order
printed) is kept as the build log; the last line it printed on stdout is the command that runs the
bot (starter kits: examples/kits/). What it leaves is checked when it ends (`unsafe_entry`): a
FIFO, socket or device anywhere in its folder, or a link leading out of it, fails the build.
"""
from __future__ import annotations

import dataclasses
import os
import selectors
import shutil
import signal
import stat
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from arena.cell import sandbox, seccomp, uids
from arena.cell.cgroup import Cgroup, CgroupError
from arena.cell.limits import MIB, Limits

LOG_MAX_BYTES = 256_000
"""A build log keeps its first and last halves of this much."""
LOG_TAIL_LINES = 30
"""How many of a failed build log's last lines a failure's detail quotes."""
BUILD_PATH = "/usr/local/bin:/usr/bin:/bin"
DISK_POLL_S = 0.1
"""How often a running build's folder is measured against its disk cap."""
ENTRY_BYTES = 4096
"""What each file, folder or link counts for at least against the disk cap (its inode and block):
a build of a million empty files is over a cap as a build of big ones is, and measuring stays quick."""


@dataclass(frozen=True)
class BuildResult:
    """How a build went: `command` (its last stdout line) when it succeeded, else `error` (one
    line: why it failed); `log`: all it printed (cut to LOG_MAX_BYTES); `timed_out`."""

    command: str | None
    log: str
    error: str | None = None
    timed_out: bool = False
    seconds: float = 0.0
    too_big: bool = False
    """It wrote more than its disk cap (its folder is removed)."""
    unsafe: bool = False
    """It left a special file or a link leading out of its folder (`error` names it)."""

    @property
    def ok(self) -> bool:
        return self.command is not None


def build(folder: Path, time_s: float, memory_mb: int, limits: Limits | None = None,
          disk_mb: int | None = None, private: tuple[str, ...] = ()) -> BuildResult:
    """Run `folder`/build.sh (with /bin/sh) in the sandbox (unless `limits.sandbox` is "off"),
    writable `folder` only, for at most `time_s` seconds and `memory_mb` MB (all of its processes
    together in a cgroup; each process, without one), writing at most `disk_mb` MB into `folder`
    (None: no cap; past it the folder is removed); as root, `folder` is handed to the build's own
    user for the build, then back to arena's, readable by all. The other limits (processes, file
    size) are `limits'`; `private`: host paths never bound (sandbox.check_private). A build that
    ended well is failed when it left a special file or a link leading out of `folder`."""
    folder = Path(folder).resolve()
    result = _build(folder, time_s, memory_mb, limits or Limits(), disk_mb, private)
    if result.too_big:
        remove(folder)
    elif result.ok:
        unsafe = unsafe_entry(folder)
        if unsafe is not None:
            result = dataclasses.replace(result, command=None, error=f"build.sh left {unsafe}", unsafe=True)
    return result


def _build(folder: Path, time_s: float, memory_mb: int, limits: Limits, disk_mb: int | None,
           private: tuple[str, ...]) -> BuildResult:
    """`build` until build.sh ended (its folder handed back to arena's user)."""
    disk = (disk_mb, disk_mb * 1_000_000) if disk_mb is not None else None
    command = ["/bin/sh", str(folder / sandbox.KIT_MARK)]
    if limits.sandbox == "off" or not sandbox.decide(limits.sandbox).sandboxed:
        env = {"PATH": BUILD_PATH, "HOME": str(folder), "LANG": "C.UTF-8"}
        preexec = dataclasses.replace(limits, memory_mb=memory_mb).preexec()
        return _run(command, folder, env, preexec, time_s, (), None, memory_mb, disk)
    lease = uids.lease(limits.bot_uids) if os.geteuid() == 0 else None
    group: Cgroup | None = None
    filter_fd: int | None = None
    try:
        if lease is not None:
            _chown_tree(folder, lease.uid)
        try:
            group = Cgroup.create(memory_mb * MIB, limits.processes)
        except CgroupError:
            group = None
        each = dataclasses.replace(limits, memory_mb=None if group is not None else memory_mb)
        filter_fd = seccomp.filter_fd()
        argv = sandbox.bwrap_argv(command, None, workdir_mb=limits.file_mb or 64, write=(str(folder),),
                                  chdir=str(folder), hide=limits.hide, seccomp_fd=filter_fd, new_session=True,
                                  uid=lease.uid if lease is not None else None, private=private)
        preexec = _first(seccomp.keyring_joiner(),
                         each.preexec(join=group.join_in_child if group is not None else None,
                                      own_user=lease is not None))
        env = {"PATH": BUILD_PATH, "HOME": sandbox.HOME_INSIDE, "LANG": "C.UTF-8"}
        return _run(argv, folder, env, preexec, time_s, (filter_fd,), group, memory_mb, disk)
    finally:
        if filter_fd is not None:
            os.close(filter_fd)
        if group is not None:
            group.kill()
            group.remove()
        if lease is not None:
            _chown_tree(folder, os.geteuid(), readable=True)
            lease.release()


def _first(*functions: Callable[[], None] | None) -> Callable[[], None]:
    """A preexec function running each of `functions` in turn."""

    def both() -> None:
        for function in functions:
            if function is not None:
                function()
    return both


def _run(argv: list[str], folder: Path, env: dict[str, str], preexec: Callable[[], None], time_s: float,
         pass_fds: tuple[int, ...], group: Cgroup | None, memory_mb: int,
         disk: tuple[int, int] | None = None) -> BuildResult:
    """Start the build, read its stdout and stderr into one log until it ends, `time_s` is over or
    its folder holds more than `disk` (MB as set, bytes) (then its whole process group and cgroup
    are killed)."""
    began = time.monotonic()
    process = subprocess.Popen(argv, cwd=folder, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, start_new_session=True, close_fds=True,
                               pass_fds=pass_fds, preexec_fn=preexec)
    log = bytearray()
    stdout_lines = bytearray()
    timed_out = too_big = False
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ, "out")  # type: ignore[arg-type]
        selector.register(process.stderr, selectors.EVENT_READ, "err")  # type: ignore[arg-type]
        open_streams = 2
        while open_streams or process.poll() is None:  # its outputs closed, it may still write files
            left = time_s - (time.monotonic() - began)
            if left <= 0:
                timed_out = True
                break
            if disk is not None and folder_bytes(folder, disk[1]) > disk[1]:
                too_big = True
                break
            if not open_streams:
                _wait(process, min(left, DISK_POLL_S))
                continue
            for key, _ in selector.select(timeout=min(left, DISK_POLL_S if disk is not None else 1.0)):
                chunk = os.read(key.fileobj.fileno(), 1 << 16)  # type: ignore[union-attr]
                if not chunk:
                    selector.unregister(key.fileobj)
                    open_streams -= 1
                    continue
                _append(log, chunk)
                if key.data == "out":
                    _append(stdout_lines, chunk)
    if timed_out or too_big or process.poll() is None:
        _kill(process, group)
    code = process.wait()
    for stream in (process.stdout, process.stderr):
        stream.close()  # type: ignore[union-attr]
    if not too_big and disk is not None and folder_bytes(folder, disk[1]) > disk[1]:
        too_big = True  # written between the last look and its end
    seconds = time.monotonic() - began
    text = log.decode("utf-8", "replace")
    if too_big:
        cap = disk[0] if disk is not None else 0
        return BuildResult(None, text, f"build.sh wrote more than {cap} MB into its folder (the course's "
                                       "[build] disk_mb): stopped, and its folder removed", False, seconds,
                           too_big=True)
    if timed_out:
        return BuildResult(None, text, f"build.sh ran longer than {time_s:g} s", True, seconds)
    if code != 0:
        why = f"exited with code {code}" if code > 0 else f"killed by {signal.Signals(-code).name}"
        if group is not None and group.oom_kills():
            why += f" (out of memory: the build may use {memory_mb} MB)"
        return BuildResult(None, text, f"build.sh {why}", False, seconds)
    lines = [line.strip() for line in stdout_lines.decode("utf-8", "replace").splitlines() if line.strip()]
    if not lines:
        return BuildResult(None, text, "build.sh printed no run command (its last line printed must be the "
                                       "command that runs the bot)", False, seconds)
    return BuildResult(lines[-1], text, None, False, seconds)


def _wait(process: subprocess.Popen, seconds: float) -> None:
    try:
        process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        pass


def folder_bytes(folder: Path, stop_at: int | None = None) -> int:
    """What `folder` holds on disk (bytes: each entry's blocks, at least ENTRY_BYTES), never
    following a link; counting stops once past `stop_at`."""
    total = 0
    pending = [str(folder)]
    while pending:
        try:
            entries = list(os.scandir(pending.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            total += max(info.st_blocks * 512, ENTRY_BYTES)
            if stat.S_ISDIR(info.st_mode):
                pending.append(entry.path)
            if stop_at is not None and total > stop_at:
                return total
    return total


SPECIAL_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a device"),
                 (stat.S_ISBLK, "a device"))


def unsafe_entry(folder: Path) -> str | None:
    """The first thing in `folder` a bot must not be given, as one line naming it (relative to
    `folder`): a FIFO, socket or device, or a link whose target resolves out of `folder`; None
    when there is none. Nothing is opened or followed."""
    real = os.path.realpath(folder)
    for root, dirs, files in os.walk(folder):
        for name in sorted([*dirs, *files]):
            path = os.path.join(root, name)
            shown = os.path.relpath(path, folder)
            try:
                mode = os.lstat(path).st_mode
            except OSError:
                continue
            kind = next((what for test, what in SPECIAL_KINDS if test(mode)), None)
            if kind is not None:
                return f"{shown}, {kind}: a bot's folder may hold only files, folders and links inside it"
            if stat.S_ISLNK(mode):
                target = os.path.realpath(path)
                if target != real and not target.startswith(real.rstrip("/") + "/"):
                    return (f"{shown}, a link leading out of the submission's folder: a bot may use only its "
                            "own files")
    return None


def remove(folder: Path) -> None:
    """Remove `folder` and all in it, whatever modes the build left."""
    for root, dirs, _ in os.walk(folder):
        for name in dirs:
            try:
                os.chmod(os.path.join(root, name), 0o700)
            except OSError:
                pass
    shutil.rmtree(folder, ignore_errors=True)


def _append(buffer: bytearray, chunk: bytes) -> None:
    """Add `chunk`, keeping the first and last halves of LOG_MAX_BYTES."""
    buffer += chunk
    if len(buffer) > LOG_MAX_BYTES:
        half = LOG_MAX_BYTES // 2
        marker = b"\n[... cut ...]\n"
        del buffer[half:len(buffer) - half + len(marker)]
        buffer[half:half] = marker


def _kill(process: subprocess.Popen, group: Cgroup | None) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        pass
    if group is not None:
        group.kill()


def _chown_tree(folder: Path, uid: int, readable: bool = False) -> None:
    """Give `folder` and everything in it to `uid` (never following a link); with `readable`,
    also readable (folders and executables enterable) by all, for the bot's own user."""
    for root, dirs, files in os.walk(folder):
        for name in [*dirs, *files, None]:
            path = os.path.join(root, name) if name is not None else root
            try:
                os.lchown(path, uid, uid)
                if readable and not os.path.islink(path):
                    mode = os.lstat(path).st_mode
                    extra = 0o055 if os.path.isdir(path) or mode & 0o100 else 0o044
                    os.chmod(path, (mode & 0o7777 & ~0o6000) | extra)
            except OSError:
                pass


FOOTER_PREFIX = "--- build.sh "


def footer(result: BuildResult) -> str:
    """The build log's last line: how build.sh ended, how long it took ("--- build.sh ok, after 4.87 s")."""
    how = "ok" if result.ok else result.error.removeprefix("build.sh ")  # type: ignore[union-attr]
    end = "" if not result.log or result.log.endswith("\n") else "\n"
    return f"{end}{FOOTER_PREFIX}{how}, after {result.seconds:.2f} s\n"


def tail(text: str, lines: int = LOG_TAIL_LINES) -> str:
    """The last `lines` lines of `text` (a build log, a bot's output)."""
    return "\n".join(text.rstrip().splitlines()[-lines:])
