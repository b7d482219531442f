"""One bot process as one object: start it in its limits, suspend, resume, stop it, read its log.

`BotProcess` runs a bot as its own process group with its endpoint and token, registered with the
match's `Watchdog`, pinned to a CPU when the limits ask for it, and stops the whole group (and the
processes that left it). `PlayerProcess` is what the referee needs of any player's process, a bot's
or the stand-in of an external player. A bot's stdout and stderr are a pipe the referee reads into
a log file in the bot's working directory, kept under a size cap (arena/cell/botlog.py): the bot
never holds a file it could grow or reserve disk through.
"""
from __future__ import annotations

import errno
import functools
import importlib.util
import json
import os
import re
import secrets
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Protocol

from arena.cell import interpreters, sandbox, seccomp, uids
from arena.cell.botlog import BotLog
from arena.cell.cgroup import Cgroup, CgroupError
from arena.cell.endpoint import ENDPOINT_ENV, TOKEN_ENV, PrivateSocket
from arena.cell.interpreters import Word
from arena.cell.limits import Limits, Watchdog, connection_owner, cpu_for
from arena.cell.usage import Usage, process_usage
from arena.cell.watchdog import MARKER_ENV, kill_marked, signal_group

LOG_CAP_BYTES = 1 << 20
"""A bot's log file is cut back to its last half when it grows past this (bytes); the default of
`Limits.log_mb`."""

LOG_NAME = "bot.log"

_PROJECT_ROOT = Path(__file__).resolve().parents[2]
"""The directory holding the `arena`, `bots` and `rules` packages (put on the bots' PYTHONPATH)."""


PROTOCOL_V1 = "v1"
"""The bot speaks protocol v1 (ZeroMQ + msgpack) itself."""
PROTOCOL_STDIO = "stdio"
"""The bot speaks the text protocol on stdin/stdout, through the adapter `arena.match.stdio`."""
PROTOCOLS = (PROTOCOL_V1, PROTOCOL_STDIO)
STDIO_PREFIX = "stdio:"
"""A command line `stdio:COMMAND` is COMMAND speaking the text protocol."""
STDIO_MODULE = "arena.match.stdio"
STDIO_OPTIONS = ("position", "legal", "fd3", "ready")
"""The text protocol's opt-in extensions (docs/PROTOCOL.md section 11): `stdio+position,legal:COMMAND`
names them before the command, as the word `--arena-options=position,legal` after it does."""
STDIO_OPTIONS_WORD = "--arena-options="
"""The word the adapter reads the extensions from (and takes out of the bot's command)."""
_STDIO_WITH_OPTIONS = re.compile(r"^stdio\+([a-z0-9,+]*):")


def stdio_options(text: str) -> tuple[str, str] | None:
    """(the options word, the command) of `stdio+OPTS:COMMAND`; None for any other text; LaunchError
    naming an unknown option (caught here, before any game, not when the bot starts)."""
    found = _STDIO_WITH_OPTIONS.match(text.strip())
    if found is None:
        return None
    names = [n for n in re.split(r"[,+]", found.group(1)) if n]
    unknown = [n for n in names if n not in STDIO_OPTIONS]
    if unknown or not names:
        bad = (unknown or [""])[0]
        raise LaunchError(f"bot command {text.strip()!r}: unknown text-protocol option {bad!r} "
                          f"(known: {', '.join(STDIO_OPTIONS)})")
    return STDIO_OPTIONS_WORD + ",".join(dict.fromkeys(names)), text.strip()[found.end():]


class LaunchError(ValueError):
    """A bot command that cannot be run; the message names it."""


SHIPPED_PACKAGE = "bots"
SHIPPED_REGISTRY = "shipped.json"
"""The shipped bots' registry in the `bots` package ({name: "module:Class"}), read without importing it."""


def shipped_bots() -> dict[str, str]:
    """The bots shipped in `bots/`: name -> "module:Class" (empty if the package is not installed)."""
    return dict(_read_shipped())


@functools.cache
def _read_shipped() -> dict[str, str]:
    spec = importlib.util.find_spec(SHIPPED_PACKAGE)  # finds the package without running it
    for directory in (spec.submodule_search_locations or []) if spec is not None else []:
        try:
            return json.loads((Path(directory) / SHIPPED_REGISTRY).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
    return {}


def resolve_command(command: str | list[str] | tuple[str, ...],
                    base: str | Path | None = None, protocol: str = PROTOCOL_V1) -> tuple[str, ...]:
    """The argv for `command`: a shipped bot NAME runs as `python -m bots NAME`, a string is a
    shell-like command line split with shlex, a list is the argv itself. Bots run in their own
    working directory, so relative paths to existing files and folders (the program, a script, a
    weights file, an engine's checkout; not a bare `.` or `..`) are made absolute here, against
    `base` (default: the current directory; a tournament file's
    commands use the file's directory). A bot speaking the text protocol (`protocol="stdio"`, or
    a command line `stdio:COMMAND`) runs through the adapter: `python -m arena.match.stdio ARGV`.
    LaunchError if the command is empty, its program is missing or its script file is missing."""
    if protocol not in PROTOCOLS:
        raise LaunchError(f"unknown bot protocol {protocol!r} (known: {', '.join(PROTOCOLS)})")
    options: tuple[str, ...] = ()
    if isinstance(command, str) and command.strip().startswith(STDIO_PREFIX):
        command, protocol = command.strip()[len(STDIO_PREFIX):], PROTOCOL_STDIO
    elif isinstance(command, str) and (prefixed := stdio_options(command)) is not None:
        options, command, protocol = (prefixed[0],), prefixed[1], PROTOCOL_STDIO
    if protocol == PROTOCOL_STDIO:
        return (sys.executable, "-m", STDIO_MODULE, *resolve_command(command, base), *options)
    if isinstance(command, (list, tuple)):
        argv = [str(arg) for arg in command]
    else:
        text = str(command).strip()
        if text in shipped_bots():
            return (sys.executable, "-m", "bots", text)
        try:
            argv = shlex.split(text)
        except ValueError as exc:
            raise LaunchError(f"bad bot command {text!r}: {exc}") from None
    if not argv:
        raise LaunchError("empty bot command")
    try:
        return _resolve_argv(argv, base)
    except OSError as exc:  # a name too long for the system, a path through a file...: said in words
        raise LaunchError(f"bot command {' '.join(argv)[:200]!r}: {os.strerror(exc.errno or 0)}") from None


def _resolve_argv(argv: list[str], base: str | Path | None) -> tuple[str, ...]:
    """`resolve_command` of a split command line: its paths made absolute against `base`, checked."""
    root = Path(base) if base is not None else Path.cwd()
    shown = " ".join(argv)
    try:
        kinds = interpreters.words(argv)
    except interpreters.MissingValue as exc:
        raise LaunchError(f"bot command {shown!r}: {exc}") from None
    for i, (kind, prefix) in enumerate(kinds):
        arg = argv[i]
        value = arg[len(prefix):]
        if kind is Word.PROGRAM:
            if os.sep in arg:
                argv[i] = os.path.abspath(root / arg)  # not resolve(): a venv's python is a symlink to keep
            elif shutil.which(arg) is None and (root / arg).is_file():
                raise LaunchError(f"bot command {shown!r}: {arg!r} is not a program on PATH, but there is a "
                                  f"file {arg} in {os.path.abspath(root)}: write './{arg}' to run that file")
        elif kind in (Word.SCRIPT, Word.PATH):
            argv[i] = prefix + _absolute(root, value, shown, directory_ok=kind is Word.PATH)
        elif kind is Word.CLASSPATH:
            entries = [_absolute(root, entry, shown, classpath=True)
                       for entry in interpreters.classpath_entries(value)]
            argv[i] = prefix + os.pathsep.join(entries)
        elif kind is Word.ARGUMENT and arg not in (".", "..") and (root / arg).exists():
            argv[i] = os.path.abspath(root / arg)  # a weights file, a config, a checkout of the engine...
    check_command(argv)
    return tuple(argv)


def _regular_file(path: str) -> bool:
    """`path` leads to a regular file (links followed)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def _script_without_shebang(path: str) -> bool:
    """Whether the file `path` is text (no NUL in its first bytes) that neither starts with `#!` nor
    is an ELF program: the kernel cannot run it, and every game would forfeit."""
    head = sandbox.read_head(path, 512)  # never opens a FIFO or a device for good
    return bool(head) and not head.startswith((b"#!", b"\x7fELF")) and b"\0" not in head


def _absolute(root: Path, path: str, shown: str, directory_ok: bool = False, classpath: bool = False) -> str:
    """`path` made absolute against `root`; LaunchError naming it (as written) when it is missing."""
    where = Path(os.path.abspath(root / path))  # an absolute `path` stays itself
    if classpath:
        there = interpreters.entry_exists(where)
    else:
        there = where.is_file() or directory_ok and where.is_dir()
    if not there:
        what = "class path entry" if classpath else "file"
        seen = "" if Path(path).is_absolute() else f" (looked for {where})"
        raise LaunchError(f"bot command {shown!r}: no {what} {path!r}{seen}")
    return str(where)


def check_command(argv: tuple[str, ...] | list[str]) -> None:
    """LaunchError unless argv[0] is an executable program (on PATH or as a path) and, for an
    interpreter (python, java, mono...), its script or archive, the paths its options name and
    every class path entry exist."""
    program = argv[0]
    shown = " ".join(argv)
    if shutil.which(program) is None and program in shipped_bots():
        raise LaunchError(f"bot command {shown!r}: {program!r} is a shipped bot, which takes no options "
                          f"here: write just {program!r}")
    if shutil.which(program) is None:
        where = "file" if os.sep in program else "program on PATH"
        known = ", ".join(sorted(shipped_bots()))
        raise LaunchError(f"bot command {shown!r}: no executable {where} {program!r} (shipped bots: {known})")
    if os.sep in program and not _regular_file(program):
        raise LaunchError(f"bot command {shown!r}: {program!r} is not a regular file (a FIFO, a device, a "
                          "socket?): a bot's program must be a file")
    if os.sep in program and _script_without_shebang(program):
        raise LaunchError(f"bot command {shown!r}: {program!r} is a script without a '#!' first line "
                          "(e.g. #!/usr/bin/env python3), so it cannot run by itself: add that line, or "
                          "name its interpreter first (python bot.py)")
    if tuple(argv[1:3]) == ("-m", STDIO_MODULE) and len(argv) > 3:  # the adapter, then the bot's own command
        check_command(argv[3:])
    try:
        kinds = interpreters.words(argv)
    except interpreters.MissingValue as exc:
        raise LaunchError(f"bot command {shown!r}: {exc}") from None
    for arg, (kind, prefix) in zip(argv, kinds, strict=True):
        value = arg[len(prefix):]
        if kind is Word.SCRIPT and not Path(value).is_file():
            raise LaunchError(f"bot command {shown!r}: no file {value!r}")
        if kind is Word.PATH and not Path(value).exists():
            raise LaunchError(f"bot command {shown!r}: no file or directory {value!r}")
        if kind is Word.CLASSPATH:
            for entry in interpreters.classpath_entries(value):
                if not interpreters.entry_exists(Path(entry)):
                    raise LaunchError(f"bot command {shown!r}: no class path entry {entry!r}")


def display_name(text: str) -> str:
    """A short name for a bot given as `text`: the shipped name, or the program, script or class name."""
    text = str(text).strip()
    if text.startswith(STDIO_PREFIX):
        text = text[len(STDIO_PREFIX):].strip()
    elif _STDIO_WITH_OPTIONS.match(text):
        text = text[_STDIO_WITH_OPTIONS.match(text).end():].strip()  # type: ignore[union-attr]
    if text in shipped_bots():
        return text
    try:
        argv = shlex.split(text)
        kinds = interpreters.words(argv) if argv else []
    except (ValueError, interpreters.MissingValue):
        return text
    if not argv:
        return text
    for arg, (kind, prefix) in zip(argv, kinds, strict=True):
        if kind is Word.SCRIPT:
            return Path(arg[len(prefix):]).stem or text
        if kind is Word.NAME:  # a module or class: its last part (bots.random -> random)
            return arg[len(prefix):].rsplit(".", 1)[-1] or text
    return Path(argv[0]).stem or text


class PlayerProcess(Protocol):
    """What the referee asks of a player's process: a bot's (`BotProcess`) or the stand-in of an
    external player, which has nothing to start, suspend or kill and no log."""

    @property
    def pid(self) -> int | None: ...

    def start(self, endpoint: str, token: str) -> None:
        """Start the player with the referee's endpoint and its token; OSError/ValueError if it cannot."""

    def exit_status(self) -> str | None:
        """None while the player is there, else why it left ("exited with code 3")."""

    @property
    def freezes(self) -> bool:
        """True if `suspend` stops all of its processes for sure (a freezer): what the default
        `suspend` (None) needs."""

    def suspend(self, wait: bool = False) -> None:
        """Stop it thinking while its opponent does; `wait`: until it has stopped for sure."""

    def resume(self) -> None:
        """Let it run again after `suspend`."""

    def stop(self, grace_s: float = 0.0) -> None:
        """End it (all of its processes), waiting up to `grace_s` for it to exit by itself."""

    def owns_connection(self, peer: tuple[str, int], server_port: int) -> bool:
        """True if the player opened the loopback connection from `peer` to `server_port`."""

    def log_size(self) -> int: ...

    def read_log(self, offset: int, max_chars: int) -> str: ...

    def cap_log(self) -> bool: ...

    def usage(self) -> Usage | None:
        """What its processes used so far (CPU time, wait for a CPU); None where it cannot be read."""


class BotProcess:
    """One bot process: `start()` in its limits, `exit_status()` while it runs, `suspend()`/`resume()`,
    `stop()` to kill its group, and its log. A context manager: leaving the block stops it.

    `watchdog`: the match's watchdog, told about the process when it starts and when it is stopped,
    so the bot dies with the referee. `cpu_slot`: which of the allowed CPUs (taken in turn) the bot
    is pinned to when `limits.pin_cpus`; `cpu` pins it to that CPU whatever the limits say (by the
    cpuset of its cgroup when it has one, which the bot cannot undo; always by sched_setaffinity).

    `private` (an arena.cell.endpoint.PrivateSocket): the bot runs sandboxed
    (arena/cell/sandbox.py), in a cgroup of its own where the machine allows one
    (arena/cell/cgroup.py), and reaches the referee only through that private socket, at
    `socket_path`; its connections are named `channel` by the referee's endpoint. Its log then lies
    outside anything it can see. The socket is closed when the bot is stopped: it lives as long as
    the process.
    """

    def __init__(self, command: tuple[str, ...], workdir: Path, log_cap: int | None = None,
                 limits: Limits | None = None, cpu: int | None = None, *,
                 cpu_slot: int | None = None, watchdog: Watchdog | None = None,
                 private: PrivateSocket | None = None) -> None:
        self.command = tuple(command)
        self.workdir = Path(workdir)
        self.log_path = self.workdir / LOG_NAME
        self.limits = limits if limits is not None else Limits()
        self.log_cap = log_cap if log_cap is not None else self.limits.log_bytes
        if cpu is None and cpu_slot is not None and self.limits.pin_cpus:
            cpu = cpu_for(cpu_slot)
        self.cpu = cpu
        self.watchdog = watchdog
        self.marker = f"{os.getpid()}-{secrets.token_hex(8)}"
        """Inherited by every process of this bot (MARKER_ENV): how its escaped children are found."""
        self.suspended = False
        self.private = private
        self.socket_path = private.path if private is not None else None
        self.channel = private.endpoint.channel_name(private.channel) if private is not None else None
        self.cgroup: Cgroup | None = None
        """The bot's cgroup while it runs sandboxed (None: rlimits only)."""
        self.uid: uids.UidLease | None = None
        """The user id of its own it runs as while it runs sandboxed, when arena is root."""
        self._process: subprocess.Popen | None = None
        self._log: BotLog | None = None
        """Its output, from `start()` on."""

    @property
    def sandboxed(self) -> bool:
        return self.socket_path is not None

    def __enter__(self) -> BotProcess:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    def start(self, endpoint: str, token: str) -> None:
        """Launch the command in a new session; OSError if it cannot be executed."""
        self.workdir.mkdir(mode=0o700, parents=True, exist_ok=True)
        if self.sandboxed:
            if shutil.which(self.command[0]) is None:  # as Popen says it without a sandbox
                raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), self.command[0])
            try:
                self.cgroup = Cgroup.create(_mib(self.limits.memory_mb), self.limits.processes,
                                            cpus={self.cpu} if self.cpu is not None else None)
            except CgroupError:
                self.cgroup = None  # rlimits only, as without the sandbox
            if os.geteuid() == 0:
                try:
                    self.uid = uids.lease(self.limits.bot_uids)
                except BaseException:
                    self._release()
                    raise
        try:
            self._log = BotLog(self.log_path, self.log_cap)  # OSError for a link in its place
        except BaseException:
            self._release()
            raise
        try:
            launch = self.launch_args(endpoint, token)  # sandbox.BindRefused: a path it will not show
        except BaseException:
            self._release()
            self._log.close()
            raise
        try:
            self._process = subprocess.Popen(
                stdin=subprocess.DEVNULL,
                stdout=self._log.writer,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                close_fds=True,
                **launch,
            )
        except BaseException:
            self._release()
            self._log.close()
            raise
        finally:
            for passed in launch.get("pass_fds", ()):  # the seccomp filter: bwrap has read it
                os.close(passed)
        self._log.started()
        if self.watchdog is not None:
            self.watchdog.register(self._process.pid, self.marker)
            if self.cgroup is not None:
                self.watchdog.register_cgroup([str(d) for d in self.cgroup.dirs.values()])

    def launch_args(self, endpoint: str, token: str) -> dict[str, Any]:
        """How the bot is started: the argv, working directory, environment and the function run in
        the child before exec (its limits). The one place a sandbox wraps the command."""
        if self.sandboxed:
            filter_fd = seccomp.filter_fd()
            try:
                argv = sandbox.bwrap_argv(
                    self.command, self.socket_path, workdir_mb=self.limits.file_mb or 64,  # type: ignore[arg-type]
                    read=self.limits.read, hide=(*self.limits.hide, str(self.workdir.parent)),
                    new_session=self.cgroup is not None, seccomp_fd=filter_fd,
                    uid=self.uid.uid if self.uid is not None else None)
            except BaseException:
                os.close(filter_fd)
                raise
            join = self.cgroup.join_in_child if self.cgroup is not None else None
            limits = self.limits.preexec(self.cpu, join=join, own_user=self.uid is not None)
            return {"args": argv, "cwd": self.workdir, "env": sandbox.bot_env(self.command, token),
                    "preexec_fn": _first(seccomp.keyring_joiner(), limits),
                    "pass_fds": (filter_fd,)}
        env = dict(os.environ)
        env[ENDPOINT_ENV] = endpoint
        env[TOKEN_ENV] = token
        env["PYTHONUNBUFFERED"] = "1"
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_PROJECT_ROOT), env.get("PYTHONPATH")) if p)
        env[MARKER_ENV] = self.marker
        return {"args": self.command, "cwd": self.workdir, "env": env,
                "preexec_fn": self.limits.preexec(self.cpu)}

    def owns_connection(self, peer: tuple[str, int], server_port: int) -> bool:
        """True if one of this bot's processes holds the client socket of `peer` -> `server_port`
        (for a sandboxed bot: if `peer` came on its private socket)."""
        if self.sandboxed:
            return peer[0] == self.channel
        return connection_owner(peer, server_port, {self.marker: True}) is not None

    def exit_status(self) -> str | None:
        """None while the process runs, else how it ended ("exited with code 3", "killed by
        SIGSEGV"). The process is not reaped, so its group id stays valid for `stop()`."""
        if self._process is None:
            return "never started"
        code = self._process.returncode
        if code is None:
            try:
                info = os.waitid(os.P_PID, self._process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                code = self._process.poll()
            else:
                if info is None or info.si_pid == 0:
                    return None
                if info.si_code == os.CLD_EXITED:
                    return self._exited(info.si_status)
                return f"killed by {_signal_name(info.si_status)}"
        if code is None:
            return None
        return self._exited(code) if code >= 0 else _describe_returncode(code)

    def _exited(self, code: int) -> str:
        """How the bot ended, from its exit code (bwrap exits with 128 + the signal that killed the
        bot); says so when the kernel killed it for going over its memory limit."""
        if self.sandboxed and 128 < code < 128 + 65:
            text = f"killed by {_signal_name(code - 128)}"
        else:
            text = f"exited with code {code}"
        if self.cgroup is not None and self.cgroup.oom_kills():
            text += f" (over the {self.limits.memory_mb} MiB memory limit)"
        return text

    def stop(self, grace_s: float = 0.0) -> None:
        """Wait up to `grace_s` for the bot to exit by itself, then kill its whole process group
        (and close its private socket)."""
        process = self._process
        if process is None:
            if self.private is not None:
                self.private.close()
            return
        if self.suspended:
            self.resume()
        deadline = time.monotonic() + grace_s
        while self.exit_status() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        emptied = self.cgroup is not None and self.cgroup.kill()  # whatever session or environment
        cgroup_dirs = list(self.cgroup.dirs.values()) if emptied else []  # _release removes them
        if emptied and self.sandboxed:
            # no process of a sandbox can leave its cgroup, and that is empty: a scan of /proc for
            # the marker (every process's environment read, ms a bot on a busy machine) finds nothing
            signal_group(process.pid, signal.SIGKILL)
            unmarked = True
        else:
            unmarked = kill_marked(self.marker, process.pid)  # the group, then children that left it
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL does not fail
            pass
        self._release()
        if self._log is not None:  # what it printed last is kept
            self._log.close()
        if self.watchdog is not None:  # reaped: its group number may be reused; and what is known
            # empty (no process with its marker, its cgroup) its watchdog need not look into again
            self.watchdog.forget(process.pid, marker=self.marker if unmarked else None,
                                 cgroup_dirs=[str(d) for d in cgroup_dirs])
        if self.private is not None:
            self.private.close()

    def _release(self) -> None:
        """Give back what a sandboxed bot held: its cgroup and its user id."""
        if self.cgroup is not None:
            self.cgroup.remove()
        if self.uid is not None:
            self.uid.release()
            self.uid = None

    def usage(self) -> Usage | None:
        """CPU time and wait for a CPU so far: over its whole tree from its cgroup; without one, of
        its main process (threads and reaped children); None for a sandboxed bot without a cgroup
        (its processes are bwrap's grandchildren) or once it is gone."""
        if self.cgroup is not None:
            return self.cgroup.usage()
        if self._process is None or self.sandboxed:
            return None
        return process_usage(self._process.pid)

    @property
    def freezes(self) -> bool:
        """True if `suspend` freezes the bot's whole tree (its cgroup's freezer), False if it can
        only stop its process group (SIGSTOP), which a bot escapes by leaving the group."""
        return self.cgroup is not None

    def suspend(self, wait: bool = False) -> None:
        """Stop the bot (its whole cgroup with the freezer, else its process group with SIGSTOP):
        it cannot think on its opponent's time. The freeze completes on its own within
        milliseconds; `wait`: return only once it has (what the referee does before it sends the
        opponent its turn, having begun the freeze as soon as this bot's move came in)."""
        if self._process is None or self._process.returncode is not None:
            return
        if not self.suspended:
            if self.cgroup is not None:
                self.cgroup.freeze(wait=False)
            else:
                signal_group(self._process.pid, signal.SIGSTOP)
            self.suspended = True
        if wait and self.cgroup is not None:
            self.cgroup.wait_frozen()

    def resume(self) -> None:
        """Let a suspended bot run again."""
        if self._process is not None and self.suspended:
            if self.cgroup is not None:
                self.cgroup.thaw()
            else:
                signal_group(self._process.pid, signal.SIGCONT)
            self.suspended = False

    # --- the log file ---
    def log_size(self) -> int:
        """The log's size in bytes (before `start()`: what an earlier process of the bot left)."""
        if self._log is not None:
            return self._log.size()
        try:
            info = os.lstat(self.log_path)
        except OSError:
            return 0
        return info.st_size if stat.S_ISREG(info.st_mode) else 0

    def read_log(self, offset: int, max_chars: int) -> str:
        """What the bot wrote since `offset` (the last `max_chars` characters of it)."""
        return self._log.read(offset, max_chars) if self._log is not None else ""

    def cap_log(self) -> bool:
        """Cut the log back to its last half if it is over the cap; True if it was cut."""
        return self._log.cap() if self._log is not None else False


def _mib(value: int | None) -> int | None:
    return None if value is None else value << 20


def _first(before: Any, then: Any) -> Any:
    """A preexec function that runs `before()`, then `then()`."""

    def both() -> None:
        before()
        then()

    return both


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _describe_returncode(code: int | None) -> str | None:
    if code is None:
        return None
    if code < 0:
        return f"killed by {_signal_name(-code)}"
    return f"exited with code {code}"
