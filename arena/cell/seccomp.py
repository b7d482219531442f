"""The system calls a sandboxed bot may not make: a seccomp filter in the spirit of Docker's default
profile, built once per process with libseccomp (`pyseccomp`, ctypes over Debian's libseccomp2) and
handed to bubblewrap (`bwrap --seccomp FD`), which loads it just before it runs the bot's command.

Refused with EPERM: the kernel's keyrings (`keyctl`, `add_key`, `request_key`: the session keyring
of whoever started arena may hold Kerberos or disk keys), new namespaces (`unshare`, `setns`, and
`clone` with any CLONE_NEW* flag: a user namespace would give the bot every capability inside it),
io_uring, bpf, perf events, ptrace and reading other processes' memory, mounting, module loading,
kexec, reboot, swap, the clocks, and the rest of Docker's list. `clone3`, whose flags a filter cannot
read, answers ENOSYS, so the C library falls back to `clone` (as under Docker). Everything else is
allowed: a bot is an ordinary program that computes, forks, threads and writes its own files.

Also here: `keyring_joiner()`, run in the child before bwrap, so the bot's process tree starts
in a fresh, empty session keyring instead of the referee's.
"""
from __future__ import annotations

import ctypes
import errno
import functools
import os
import platform
import tempfile
from collections.abc import Callable

DENIED = (
    "keyctl", "add_key", "request_key",
    "unshare", "setns",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "bpf", "perf_event_open", "userfaultfd", "fanotify_init", "lookup_dcookie",
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
    "mount", "umount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen",
    "fsconfig", "fsmount", "fspick", "mount_setattr", "open_by_handle_at", "name_to_handle_at",
    "init_module", "finit_module", "delete_module", "create_module", "get_kernel_syms",
    "query_module", "kexec_load", "kexec_file_load", "reboot",
    "swapon", "swapoff", "acct", "syslog", "quotactl", "quotactl_fd", "vhangup", "nfsservctl",
    "settimeofday", "stime", "clock_settime", "clock_adjtime", "adjtimex",
    "iopl", "ioperm", "uselib", "_sysctl", "sysfs", "ustat",
)
"""System calls refused with EPERM (names this architecture lacks are skipped)."""

CLONE_NEW_FLAGS = {
    "CLONE_NEWNS": 0x00020000, "CLONE_NEWCGROUP": 0x02000000, "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000, "CLONE_NEWUSER": 0x10000000, "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}
"""`clone` with any of these flags makes a new namespace: refused with EPERM."""

EXTRA_ARCHES = {"x86_64": ("X86", "X32"), "aarch64": ("ARM",)}
"""Other ABIs a bot's binary may use on this machine (a 32-bit program), filtered alike."""

KEYCTL_JOIN_SESSION_KEYRING = 1
SYS_KEYCTL = {"x86_64": 250, "aarch64": 219, "i686": 288, "armv7l": 311}
"""The keyctl system call's number (libc has no wrapper for it)."""
SYS_ADD_KEY = {"x86_64": 248, "aarch64": 217, "i686": 286, "armv7l": 309}


class SeccompUnavailable(RuntimeError):
    """libseccomp (or its Python binding) is missing; the message says what to install."""


@functools.cache
def filter_bpf() -> bytes:
    """The filter as the BPF program bwrap loads (built once per process); SeccompUnavailable
    when libseccomp cannot be used here."""
    try:
        import pyseccomp as seccomp
    except (ImportError, OSError) as exc:  # OSError: the binding found no libseccomp.so.2
        raise SeccompUnavailable(f"libseccomp is not usable ({exc}); install libseccomp2 (Debian/Ubuntu: "
                                 "apt-get install libseccomp2) and pip install pyseccomp") from exc
    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    for arch in EXTRA_ARCHES.get(platform.machine(), ()):
        try:
            rules.add_arch(getattr(seccomp.Arch, arch))
        except (AttributeError, RuntimeError, OSError, ValueError):  # not supported by this libseccomp
            pass
    refuse = seccomp.ERRNO(errno.EPERM)
    for name in DENIED:
        try:
            rules.add_rule(refuse, name)
        except (RuntimeError, OSError, ValueError):  # no such system call on this architecture
            pass
    for flag in CLONE_NEW_FLAGS.values():
        rules.add_rule(refuse, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    try:
        rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    except (RuntimeError, OSError, ValueError):
        pass
    with tempfile.TemporaryFile() as out:
        rules.export_bpf(out)
        out.seek(0)
        return out.read()


def available_reason() -> str | None:
    """None if the filter can be built here, else why not (with the fix)."""
    try:
        filter_bpf()
    except SeccompUnavailable as exc:
        return str(exc)
    return None


def filter_fd() -> int:
    """A fresh file descriptor to read the filter from (a pipe holding it, its writing end closed):
    bwrap reads it to the end, so every bot needs its own. The caller closes it once the bot is
    started."""
    data = filter_bpf()
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, data)  # far below a pipe's 64 KiB: never blocks
    finally:
        os.close(write_end)
    return read_end


def keyring_joiner() -> Callable[[], None]:
    """A function for the child (run before exec) that joins a new, empty, anonymous session
    keyring: nothing of the keyring of the session arena was started from is reachable. Made in
    the parent, so the child only makes the system call; without keyctl here, it does nothing."""
    number = SYS_KEYCTL.get(platform.machine())
    if number is None:
        return lambda: None
    syscall = _libc().syscall

    def join() -> None:
        syscall(number, KEYCTL_JOIN_SESSION_KEYRING, None)

    return join


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)
