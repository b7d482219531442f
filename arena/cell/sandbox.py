"""The sandbox: each bot sealed off from the files, the network and the processes of everyone else.

A sandboxed bot runs under bubblewrap (`bwrap`, Debian package `bubblewrap`) in new user, mount,
PID, network, IPC, UTS and cgroup namespaces. Inside it sees:
- a read-only system: /usr, /lib*, /bin, /sbin, /etc with its secrets (shadow...) and its name
  servers (resolv.conf) hidden;
- read-only, its own program: the files and directories named on its command line, the
  environment of its interpreter (a venv and the Python it was made from), for Python bots the
  project's `bots`, `rules` and `arena` packages (the SDK), and the tournament's `read` paths;
  each bound resolved (`resolved`: a link leading out of the bot's own folder is refused, naming
  it), never a server's own file (`check_private`);
- a private, size-capped, writable working directory (its HOME), /tmp and /dev/shm, owned by its
  user; everything else read-only (the sandbox's own root included);
- its own /proc (only its own processes; the machine's CPU and load figures, /proc/stat and the
  like, empty), a minimal /dev, no network but loopback;
- a seccomp filter (arena/cell/seccomp.py: no keyrings, namespaces, io_uring, ptrace, mounts...)
  and a fresh, empty session keyring;
- the referee's socket for its own process only, at `SOCKET_INSIDE` (an `ipc://` endpoint);
- a clean environment: ARENA_ENDPOINT, ARENA_TOKEN, PATH, HOME, LANG (and PYTHONPATH,
  PYTHONUNBUFFERED for Python bots).
Without root, bwrap makes a user namespace and the bot has no capabilities and no_new_privs. When
the referee runs as root, bwrap builds the sandbox as root and the bot's command is started
through `setpriv` as a user id of its own (arena/cell/uids.py: leased from `Limits.bot_uids`, so
no two running bots share a user) with no capabilities and no_new_privs, so no process of a bot is
host root.

`decide(mode)` says whether bots will be isolated for `sandbox = "auto" | "on" | "off"`, with the
reason and the fix when they will not; `bwrap_argv(...)` builds the command line for one bot.
"""
from __future__ import annotations

import functools
import os
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from arena.cell import cgroup, interpreters, seccomp

MODES = ("auto", "on", "off")
"""The values of the `sandbox` option: isolate where possible, always (or refuse), never."""

BOT_UID = 65534
"""The host user (and group) the sandbox probe runs as when the referee is root: nobody (a bot
gets a user id of its own, arena/cell/uids.py)."""

SOCKET_INSIDE = "/run/arena/referee.sock"
"""Where the referee's socket for the bot's process appears inside its sandbox."""
HOME_INSIDE = "/home/bot"
"""The bot's private writable working directory inside its sandbox (also its HOME)."""

PROC_HIDDEN = ("/proc/stat", "/proc/loadavg", "/proc/uptime", "/proc/schedstat", "/proc/pressure",
               "/proc/interrupts", "/proc/softirqs", "/proc/diskstats")
"""Figures of the whole machine that a PID namespace's /proc still shows: with them a bot could
watch its opponent's CPU use turn by turn. Emptied (a file reads as empty, a directory is empty)."""
KIT_MARK = "build.sh"
"""A folder holding this file is a bot's own (a starter kit, an unpacked submission): a bot whose
program lies in it sees the whole folder; any other program file is seen alone."""

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
"""The read-only system every bot sees (symlinks, as on merged-/usr systems, are recreated)."""
SECRETS = ("/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers",
           "/etc/sudoers.d", "/etc/ssh", "/etc/ssl/private", "/etc/security/opasswd")
"""Files and directories of /etc hidden from bots (replaced by an empty file or directory)."""
NETWORK_FILES = ("/etc/resolv.conf",)
"""Files of /etc that name the network's servers: emptied too (a bot has no network but loopback).
Only a regular file is covered; a link (to /run/...) already leads nowhere in the sandbox."""

COURSE_MARK = "course.toml"
"""A folder holding this file (and a `builds` folder) is a course's: of it a sandbox may show only
what lies inside one build folder (`builds/<id>/`), never its database, keys, uploads or invites."""
COURSE_BUILDS = "builds"
PRIVATE_ENV = "ARENA_PRIVATE_PATHS"
"""Host paths (joined by os.pathsep) no sandbox ever binds, nor any folder holding one: a course
server sets it to its directory's private files, and the processes it starts inherit it."""

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SDK_PACKAGES = ("bots", "rules", "arena")
"""The project's packages a Python bot may import (the bot SDK and the rules)."""

INSTALL_FIX = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap)"
PROBE_TIMEOUT_S = 10.0


class BindRefused(ValueError):
    """A path a bot's command (or a grant) names that the sandbox will not show: a link leading out
    of the bot's own folder, or a file of the server's own; the message names the path as given."""


class SandboxUnavailable(ValueError):
    """`sandbox = "on"` on a machine where bots cannot be isolated; the message gives the reason
    and the fix."""


@dataclass(frozen=True)
class Isolation:
    """What a run will do: `sandboxed` or not, and the `label` recorded in each game record
    ("sandbox", or "none: <why>")."""

    sandboxed: bool
    label: str

    def warning(self) -> str | None:
        """The one line `auto` prints when bots are NOT isolated; None when they are, or when
        the user turned the sandbox off."""
        if self.sandboxed or self.label == "none: sandbox = off":
            return None
        return f"warning: bots are NOT isolated from each other or from your files ({self.label[6:]})"


def check_mode(mode: str) -> str:
    """`mode` if it is one of MODES; ValueError naming it otherwise."""
    if mode not in MODES:
        raise ValueError(f"sandbox must be one of {', '.join(MODES)}, got {mode!r}")
    return mode


def decide(mode: str) -> Isolation:
    """Whether bots run sandboxed for `mode`; SandboxUnavailable for "on" where they cannot."""
    check_mode(mode)
    if mode == "off":
        return Isolation(False, "none: sandbox = off")
    reason = unavailable_reason()
    if reason is None:
        if mode == "on":
            cgroup_reason = cgroup.detect().reason
            if cgroup_reason:  # isolated, but no memory, process or freezing limit over its tree
                raise SandboxUnavailable(f"sandbox = on, but bots cannot have cgroups here: {cgroup_reason}; "
                                         f"fix: {cgroup.FIX}, or use sandbox = auto/off")
        return Isolation(True, "sandbox")
    if mode == "on":
        raise SandboxUnavailable(f"sandbox = on, but bots cannot be isolated here: {reason}; "
                                 f"fix: {fix_for(reason)}, or use sandbox = auto/off")
    return Isolation(False, f"none: {reason}")


def fix_for(reason: str) -> str:
    if "not installed" in reason:
        return INSTALL_FIX
    if "namespace" in reason or "bwrap failed" in reason:
        return ("allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 or "
                "kernel.apparmor_restrict_unprivileged_userns=0)")
    return "run arena on Linux with bubblewrap"


_probed: dict[str, str | None] = {}


def unavailable_reason(refresh: bool = False) -> str | None:
    """None if bwrap can sandbox a bot on this machine, else why not (probed once per process by
    starting /bin/true in a sandbox like a bot's)."""
    if "reason" in _probed and not refresh:
        return _probed["reason"]
    reason: str | None
    if not sys.platform.startswith("linux"):
        reason = f"no Linux namespaces on {sys.platform}"
    elif shutil.which("bwrap") is None:
        reason = "bwrap not installed"
    elif os.geteuid() == 0 and shutil.which("setpriv") is None:
        reason = "setpriv not installed (needed to run bots as a user of their own when arena runs as root)"
    elif seccomp.available_reason() is not None:
        reason = seccomp.available_reason()
    else:
        fd = seccomp.filter_fd()
        argv = ["bwrap", *namespace_args(), *system_args(), "--seccomp", str(fd), "--", *drop_root_argv(),
                "/bin/true"]
        try:
            done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, pass_fds=(fd,),
                                  stderr=subprocess.PIPE, timeout=PROBE_TIMEOUT_S, close_fds=True)
        except (OSError, subprocess.TimeoutExpired) as exc:
            reason = f"bwrap could not run ({exc})"
        else:
            lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
            error = lines[-1] if lines else f"exit code {done.returncode}"
            reason = None if done.returncode == 0 else f"bwrap failed: {error} (user namespaces not allowed?)"
        finally:
            os.close(fd)
    _probed["reason"] = reason
    return reason


def drop_root_argv(uid: int = BOT_UID) -> list[str]:
    """When the referee is root, the bot's command is prefixed with setpriv: bwrap (root) builds
    the sandbox, then the bot runs as `uid` (group: the same number) with no other groups, no
    capabilities (none inheritable, an empty bounding set) and no_new_privs, so no process of a
    bot is host root."""
    if os.geteuid() != 0:
        return []
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all",
            "--bounding-set=-all", "--no-new-privs", "--"]


def namespace_args(new_session: bool = True) -> list[str]:
    """New namespaces, killed with the referee, no controlling terminal; without root, also a
    new user namespace with no capabilities. `new_session=False` keeps the bot in bwrap's process
    group, so that SIGSTOP to the group suspends it where no cgroup freezer can."""
    args = ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--hostname", "bot", "--die-with-parent"]
    if new_session:
        args.append("--new-session")
    if os.geteuid() != 0:
        args = ["--unshare-user", *args, "--cap-drop", "ALL"]
    return args


def system_args() -> list[str]:
    """The read-only system, secrets hidden, a fresh /proc and /dev."""
    args: list[str] = []
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for secret in SECRETS:
        args += _hide(secret)
    for path in NETWORK_FILES:
        if os.path.isfile(path) and not os.path.islink(path):
            args += ["--ro-bind", "/dev/null", path]
    args += ["--proc", "/proc", "--dev", "/dev"]
    for path in PROC_HIDDEN:  # /dev/null reads as an empty file (a device bind, as Docker masks /proc)
        if os.path.isdir(path):
            args += ["--tmpfs", path, "--remount-ro", path]
        elif os.path.exists(path):
            args += ["--dev-bind", "/dev/null", path]
    return args


def _hide(path: str) -> list[str]:
    """Arguments that hide `path` (an empty directory or file over it), nothing if it is absent."""
    if os.path.isdir(path) and not os.path.islink(path):
        return ["--tmpfs", path, "--remount-ro", path]
    if os.path.lexists(path):
        return ["--ro-bind", "/dev/null", path]
    return []


def _is_system(path: str) -> bool:
    return any(path == d or path.startswith(d + "/") for d in SYSTEM_DIRS)


PYTHON_PROBE_TIMEOUT_S = 10.0
_PYTHON_NAMES = ("python", "pypy")


def _is_python(program: str) -> bool:
    return Path(program).name.startswith(_PYTHON_NAMES)


@functools.cache
def python_facts(program: str) -> tuple[str, tuple[str, ...]] | None:
    """(sys.executable, (sys.prefix, sys.base_prefix)) of the Python that `program` runs, asked of
    it once (a pyenv shim or a wrapper script resolves to the real interpreter); None if it does not
    answer."""
    located = shutil.which(program)
    if located is None:
        return None
    if os.path.abspath(located) == os.path.abspath(sys.executable):
        return sys.executable, (sys.prefix, sys.base_prefix)
    script = "import sys; print(sys.executable); print(sys.prefix); print(sys.base_prefix)"
    try:
        done = subprocess.run([located, "-I", "-c", script], capture_output=True, text=True,
                              timeout=PYTHON_PROBE_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = done.stdout.splitlines()
    if done.returncode != 0 or len(lines) != 3 or not all(os.path.isabs(x) for x in lines):
        return None
    return lines[0], (lines[1], lines[2])


def host_program(program: str) -> str:
    """The program the bot's command names, as the host resolves it (on the referee's PATH): the
    sandbox then runs exactly what would run without it; for Python, the real interpreter."""
    if _is_python(program):
        facts = python_facts(program)
        if facts is not None:
            return facts[0]
    located = shutil.which(program)
    return os.path.abspath(located) if located else program


def interpreter_dirs(program: str) -> list[str]:
    """The directories an interpreter named on a command line needs: its venv (the directory
    holding `bin/` and `pyvenv.cfg`) and the installation it resolves to (the parent of its real
    `bin/`; for Python, sys.prefix and sys.base_prefix), unless they are part of the system."""
    found: list[str] = []
    located = shutil.which(program)
    if located is None:
        return found
    if _is_python(program):
        facts = python_facts(program)
        if facts is not None:
            found += list(facts[1])
    path = os.path.abspath(located)
    bin_dir = os.path.dirname(path)
    prefix = os.path.dirname(bin_dir)
    if os.path.isfile(os.path.join(prefix, "pyvenv.cfg")):
        found.append(prefix)
        try:
            for line in Path(prefix, "pyvenv.cfg").read_text().splitlines():
                key, _, value = line.partition("=")
                if key.strip() == "home" and value.strip():
                    found.append(os.path.dirname(os.path.realpath(value.strip())))
        except OSError:
            pass
    real = os.path.realpath(path)
    real_bin = os.path.dirname(real)
    found.append(os.path.dirname(real_bin) if os.path.basename(real_bin) == "bin" else real_bin)
    return [d for d in dict.fromkeys(found) if not _is_system(d) and d != "/"]


def program_paths(argv: tuple[str, ...] | list[str]) -> list[str]:
    """What a bot may read of the host besides the system: the environment its program runs in
    (`runtime_dirs`), its own program (`own_paths`), and for a Python bot the project's SDK packages."""
    paths = runtime_dirs(argv[0]) if argv else []
    paths += own_paths(argv)
    if argv and _is_python(argv[0]):
        paths += [str(PROJECT_ROOT / p) for p in SDK_PACKAGES if (PROJECT_ROOT / p).is_dir()]
    return [p for p in dict.fromkeys(paths) if not _is_system(p) and p != "/"]


def runtime_dirs(program: str) -> list[str]:
    """The directories the first word of a command needs to run: an interpreter's (`python`,
    `java`: interpreter_dirs); for a program of the bot's own, the interpreter its `#!` line names
    and, for a script of a venv's `bin/`, that venv. Never the program's own folder: that is
    `own_paths`' to decide."""
    path = _own_program(program)
    if path is None:
        return interpreter_dirs(program) if shutil.which(program) else []
    first = read_head(path, 256).split(b"\n", 1)[0]
    words = first[2:].decode("utf-8", "replace").split() if first.startswith(b"#!") else []
    return interpreter_dirs(words[0]) if words and os.path.isabs(words[0]) else []


def read_head(path: str, size: int) -> bytes:
    """The first `size` bytes of the regular file `path`; b"" for anything else (a FIFO, a device, a
    socket, a folder: never waited on) or a file that cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError:
        return b""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return b""
        return os.read(fd, size)
    except OSError:
        return b""
    finally:
        os.close(fd)


def _own_program(program: str) -> str | None:
    """The first word of a command as a file of the bot's own (a compiled bot, a script run
    directly), where the host finds it; None for an interpreter, a script of a venv's `bin/` (an
    installed tool) or a program that is not there."""
    located = shutil.which(program)
    if located is None or interpreters.interpreter(program) is not None:
        return None
    path = os.path.abspath(located)
    if os.path.isfile(os.path.join(os.path.dirname(os.path.dirname(path)), "pyvenv.cfg")):
        return None
    return path


def kit_folder(path: str) -> str | None:
    """The nearest folder above `path` that holds KIT_MARK (a regular file), if any (outside the system)."""
    kits = kits_above(path)
    return kits[0] if kits else None


def kits_above(path: str) -> list[str]:
    """Every folder above `path` holding KIT_MARK as a regular file, nearest first (outside the system)."""
    found = []
    for parent in Path(path).parents:
        if parent == Path("/") or _is_system(str(parent)):
            break
        if _regular(parent / KIT_MARK):
            found.append(str(parent))
    return found


def _regular(path: str | Path) -> bool:
    """`path` is a regular file itself (never a link, a FIFO or a device)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def resolved(path: str, allowed: tuple[str, ...] | list[str] = ()) -> str:
    """`path` (absolute, as a command names it) with every link resolved (os.path.realpath): what
    the sandbox binds, so what the bot is shown is exactly what was checked. BindRefused, naming
    `path`, when a link on the way leads out of the bot's own: a path in a course's build folder
    must resolve inside that folder (`course_build_folder`); else it must resolve inside every kit
    folder around it (a linked folder is no kit of its own), into no other kit folder, and, with no
    kit around it, be no link itself. Always accepted: a result in the system or in `allowed`
    (resolved paths: the interpreter's folders, the SDK, `read` grants)."""
    real = os.path.realpath(path)
    if _is_system(real) or any(_inside(real, area) for area in allowed):
        return real
    build = course_build_folder(path)
    own = [build] if build is not None else [k for k in kits_above(path) if not os.path.islink(k)]
    outside = next((kit for kit in own if not _inside(real, os.path.realpath(kit))), None)
    if outside is not None:
        raise BindRefused(f"{path} is (or passes through) a link leading out of its own folder {outside}: "
                          "a bot may use only its own files")
    if build is not None:
        return real
    theirs = next((kit for kit in kits_above(real) if kit not in {os.path.realpath(k) for k in own}), None)
    if theirs is not None:
        raise BindRefused(f"{path} passes through a link into another bot's folder ({theirs}): a bot may use "
                          "only its own files")
    if not own and real != os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path)):
        raise BindRefused(f"{path} is a link to another file or folder: a bot may use only its own files "
                          "(name the file itself, or grant it with `read`)")
    return real


def course_build_folder(path: str) -> str | None:
    """The course build folder (`<course>/builds/<id>`, the course's folder holding COURSE_MARK)
    that `path` lies in as written, links not followed in its last parts; None for any other path."""
    for folder in [Path(path), *Path(path).parents]:
        if folder.parent.name == COURSE_BUILDS and _regular(folder.parent.parent / COURSE_MARK):
            return str(folder)
    return None


def private_paths(extra: tuple[str, ...] | list[str] = ()) -> list[str]:
    """The host paths no sandbox binds, nor any folder holding one (resolved): `extra` and those
    of the environment's PRIVATE_ENV (a course server's own files)."""
    listed = [*extra, *os.environ.get(PRIVATE_ENV, "").split(os.pathsep)]
    return [os.path.realpath(p) for p in dict.fromkeys(listed) if p and os.path.isabs(p)]


def check_private(source: str, shown: str, private: list[str]) -> None:
    """BindRefused (naming `shown`, the path as the command gave it) when the resolved `source`
    equals, holds or lies inside a path of `private`, or lies in a course's directory (it holds
    COURSE_MARK and a `builds` folder) anywhere but inside one of its build folders: whatever user
    the server runs as, none of its own files is ever shown to a bot or a build."""
    for path in private:
        if _inside(source, path) or _inside(path, source):
            raise BindRefused(f"{shown} is, holds or lies in a file of the server's own: never shown "
                              "to a bot")
    for parent in [Path(source), *Path(source).parents]:
        if _regular(parent / COURSE_MARK) and (parent / COURSE_BUILDS).is_dir():
            parts = Path(source).relative_to(parent).parts
            if len(parts) < 2 or parts[0] != COURSE_BUILDS:
                raise BindRefused(f"{shown} lies in a course's directory outside its build folders: never "
                                  "shown to a bot")
            return


def own_paths(argv: tuple[str, ...] | list[str]) -> list[str]:
    """The bot's own program as the sandbox shows it: each directory `named_paths` finds seen
    whole; each file seen alone, or with its whole folder when that is a kit (it holds KIT_MARK).
    Other files beside it, other bots' among them, stay out of its sight."""
    paths = [p if os.path.isdir(p) else kit_folder(p) or p for p in named_paths(argv)]
    return [p for p in dict.fromkeys(paths) if not _is_system(p) and p != "/"]


ADAPTER_MODULES = ("arena.match.stdio", "arena.cell.relay")
"""Modules of arena that run the rest of their command line as the bot (`python -m MODULE CMD...`):
the text protocol's adapter and Java's relay; CMD is read as a command line of its own."""


def named_paths(argv: tuple[str, ...] | list[str]) -> list[str]:
    """The existing files and directories a command line names as absolute paths (each entry of a
    class path, arena.cell.interpreters), and its first word when that is a program of its own,
    not an interpreter; behind an adapter (ADAPTER_MODULES), those of the command it runs too."""
    if len(argv) > 3 and _is_python(argv[0]) and argv[1] == "-m" and argv[2] in ADAPTER_MODULES:
        return list(dict.fromkeys([*named_paths(argv[:3]), *named_paths(argv[3:])]))
    try:
        kinds = interpreters.words(argv)
    except interpreters.MissingValue:
        kinds = []
    paths: list[str] = []
    for i, arg in enumerate(argv):
        kind, prefix = kinds[i] if i < len(kinds) else (None, "")
        if i == 0:
            values = [p for p in [_own_program(arg)] if p]
        elif kind is interpreters.Word.CLASSPATH:  # `-cp a.jar:classes:lib/*`: each entry
            values = [v[:-2] if v.endswith("/*") else v
                      for v in interpreters.classpath_entries(arg[len(prefix):])]
        else:
            values = [arg.split("=", 1)[1] if arg.startswith("-") and "=" in arg else arg]
        paths += [os.path.abspath(v) for v in values if v.startswith("/") and os.path.exists(v)]
    return [p for p in dict.fromkeys(paths) if not _is_system(p) and p != "/"]


def _inside(path: str, area: str) -> bool:
    return path == area or path.startswith(area.rstrip("/") + "/")


def shared_sight(commands: dict[str, tuple[str, ...] | list[str]],
                 read: tuple[str, ...] | list[str] = ()) -> tuple[str, str, str] | None:
    """The first (bot, other bot, path) where sandboxed `bot` would see `path`, a file or folder of
    `other`'s own program, in its own folder or a `read` grant; None when every bot sees only its
    own. Bots that run the same program (the same files, other arguments) are one bot here."""
    own = {name: [os.path.realpath(p) for p in own_paths(command)] for name, command in commands.items()}
    named = {name: [os.path.realpath(p) for p in named_paths(command)] for name, command in commands.items()}
    grants = [os.path.realpath(p) for p in read]
    for name, paths in own.items():
        for other, theirs in named.items():
            if other == name or theirs == named[name]:  # the same program, other arguments
                continue
            for path in theirs:
                if any(_inside(path, area) for area in [*paths, *grants]):
                    return name, other, path
    return None


TCP_ONLY_PROGRAMS = ("java",)
"""Programs whose usual ZeroMQ cannot connect to an `ipc://` socket (JeroMQ emulates ipc over TCP):
in the sandbox they reach their private socket through arena.cell.relay, on a port of the
sandbox's own loopback."""


def sandboxed_command(command: tuple[str, ...] | list[str]) -> list[str]:
    """What the sandbox runs for `command`: its program as the host resolves it; for a program of
    TCP_ONLY_PROGRAMS, behind `python -m arena.cell.relay`."""
    if not command:
        return []
    command = [host_program(command[0]), *command[1:]]
    if Path(command[0]).name in TCP_ONLY_PROGRAMS:
        return [host_program(sys.executable), "-m", "arena.cell.relay", *command]
    return command


def bwrap_argv(command: tuple[str, ...] | list[str], socket_path: str | Path | None, *,
               workdir_mb: int = 64, tmp_mb: int = 64, read: tuple[str, ...] | list[str] = (),
               hide: tuple[str, ...] | list[str] = (), new_session: bool = True,
               seccomp_fd: int | None = None, uid: int | None = None,
               write: tuple[str, ...] | list[str] = (), chdir: str | None = None,
               private: tuple[str, ...] | list[str] = ()) -> list[str]:
    """The argv that runs `command` sandboxed, reaching the referee at `socket_path` (a host
    path, bind-mounted on SOCKET_INSIDE; None: no socket, e.g. for a build). `read`: extra host
    paths the bot may read; `hide`: host paths it must not see even where they lie inside a
    directory it may read (the tournament file, the results directory, the referee's working
    directory). `write`: host directories it may write, at the same place (a submission's build
    folder, where its `build.sh` compiles it; as root they must belong to `uid`); nothing it reads
    of them is left read-only. `chdir`: its working directory (default its private HOME_INSIDE).
    `seccomp_fd`: a descriptor to read the seccomp filter from (arena/cell/seccomp.py), passed on
    to bwrap. `uid`: when arena runs as root, the user (and group) the bot runs as (default
    BOT_UID); its working directory, /tmp and /dev/shm are its own. `private`: host paths never
    bound, nor any folder holding one (with PRIVATE_ENV's: `check_private`).

    Every path is bound resolved (`resolved`: a link leading out of the bot's own folder is
    refused), at the place the command names it; BindRefused names a path refused."""
    inner = [host_program(command[0]), *command[1:]] if command else []
    command = sandboxed_command(command)
    args = ["bwrap", *namespace_args(new_session), *system_args(),
            "--perms", "0755", "--dir", os.path.dirname(HOME_INSIDE),  # enterable by the bot's user
            "--size", str(workdir_mb << 20), "--perms", "0700", "--tmpfs", HOME_INSIDE,  # before the
            "--size", str(tmp_mb << 20), "--perms", "1777", "--tmpfs", "/tmp",  # binds, which may lie
            "--size", str(tmp_mb << 20), "--perms", "1777", "--tmpfs", "/dev/shm"]  # under /tmp
    writable = [os.path.abspath(p) for p in write]
    readable = program_paths(command) + [os.path.abspath(p) for p in read]
    if command != inner:  # behind the relay: what the bot's own command line names too
        readable += program_paths(inner)
    readable = [p for p in dict.fromkeys(readable)
                if not any(p != q and p.startswith(q.rstrip("/") + "/") for q in readable)
                and not any(_inside(p, w) for w in writable)]  # bound writable below
    allowed = _allowed(command, read)
    never = private_paths(private)
    for path in dict.fromkeys([*named_paths(command), *named_paths(inner)]):
        check_private(resolved(path, allowed), path, never)  # the very files named, not only their folders
    made: set[str] = set()
    for path in [*readable, *writable]:
        source = resolved(path, allowed)
        check_private(source, path, never)
        for parent in reversed(Path(path).parents[:-1]):  # traversable by the bot's user
            if str(parent) not in made and not _is_system(str(parent)):
                made.add(str(parent))
                args += ["--perms", "0755", "--dir", str(parent)]
        args += ["--bind", source, path] if path in writable else _bind_readable(source, path)
    for path in hide:
        path = os.path.abspath(path)
        if any(path == r or path.startswith(r.rstrip("/") + "/") for r in [*readable, *writable]):
            args += _hide(path)
    if socket_path is not None:
        args += ["--perms", "0755", "--dir", os.path.dirname(SOCKET_INSIDE),
                 "--ro-bind", str(socket_path), SOCKET_INSIDE]
    args += ["--remount-ro", "/",  # nothing but its own tmpfs directories (and `write`) is writable
             "--chdir", chdir or HOME_INSIDE]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    return args + ["--", *own_dirs_argv(uid), *drop_root_argv(uid or BOT_UID), *command]


def _allowed(command: list[str], read: tuple[str, ...] | list[str]) -> list[str]:
    """Where a named path may resolve to besides the bot's own folder (resolved): its interpreter's
    folders, the SDK (for Python bots) and the `read` grants."""
    areas = [*interpreter_dirs(command[0]), *runtime_dirs(command[0])] if command else []
    if command and _is_python(command[0]):
        areas += [str(PROJECT_ROOT / p) for p in SDK_PACKAGES]
    return [os.path.realpath(p) for p in dict.fromkeys([*areas, *read])]


def own_dirs_argv(uid: int | None) -> list[str]:
    """As root, the bot's writable directories are made its own user's before it starts (bwrap
    makes them root's); a shell does it, then runs the rest of the command line. Nothing without
    root (bwrap's user namespace already makes them the user's)."""
    if os.geteuid() != 0 or uid is None:
        return []
    return ["/bin/sh", "-c", f'chown "$0:$0" {HOME_INSIDE} /tmp /dev/shm && exec "$@"', str(uid)]


MAX_ENTRIES_BOUND = 256
"""A directory the bot's user cannot enter (e.g. a 0700 temporary directory) is recreated in the
sandbox with its entries bound one by one, up to this many."""


def _bind_readable(source: str, path: str) -> list[str]:
    """Bind `source` (resolved) read-only at `path`. When arena runs as root the bot is a user of its
    own, who cannot enter a directory without permission for others (mkdtemp's and pytest's are
    0700): such a directory is made afresh (0755) and its entries bound into it, each with its own
    mode; a link among them is made again as a link (it then leads only to what the sandbox shows),
    and a FIFO, socket or device is left out."""
    try:
        st = os.stat(source)
    except OSError:
        return []
    if os.geteuid() != 0 or not stat.S_ISDIR(st.st_mode) or st.st_mode & 0o005 == 0o005:
        return ["--ro-bind", source, path]
    try:
        entries = sorted(os.listdir(source))[:MAX_ENTRIES_BOUND]
    except OSError:
        return ["--ro-bind", source, path]
    args = ["--perms", "0755", "--dir", path]
    for name in entries:
        entry = os.path.join(source, name)
        try:
            mode = os.lstat(entry).st_mode
            target = os.readlink(entry) if stat.S_ISLNK(mode) else ""
        except OSError:
            continue
        if stat.S_ISLNK(mode):
            args += ["--symlink", target, os.path.join(path, name)]
        elif stat.S_ISREG(mode) or stat.S_ISDIR(mode):
            args += ["--ro-bind", entry, os.path.join(path, name)]
    return args


def bot_env(command: tuple[str, ...] | list[str], token: str) -> dict[str, str]:
    """The whole environment of a sandboxed bot (bwrap passes it on): nothing of the referee's.
    Given to bwrap as its environment, not on its command line, so the token is not in any
    /proc/PID/cmdline."""
    command = sandboxed_command(command)
    bins = [os.path.join(d, "bin") for d in interpreter_dirs(command[0])] if command else []
    env = {
        "ARENA_ENDPOINT": f"ipc://{SOCKET_INSIDE}",
        "ARENA_TOKEN": token,
        "PATH": ":".join([*bins, "/usr/local/bin", "/usr/bin", "/bin"]),
        "HOME": HOME_INSIDE,
        "LANG": "C.UTF-8",
    }
    if command and _is_python(command[0]):
        env["PYTHONPATH"] = str(PROJECT_ROOT)
        env["PYTHONUNBUFFERED"] = "1"
    return env
