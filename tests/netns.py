"""A network namespace of a test's own, so that a bot run without the sandbox can never send a
packet off the machine, whatever a mistake in a test's controls: inside it there is only a
loopback interface (up), and no route out.

`enter()` moves the calling process into a new one (as root directly; otherwise through a new user
namespace that maps the caller's own ids, where the kernel allows it). Run it in a child process:
it cannot be undone. `unavailable_reason()` says why it cannot be done here, or None.
"""
from __future__ import annotations

import ctypes
import fcntl
import os
import socket
import struct
import subprocess
import sys

CLONE_NEWNET = 0x40000000
CLONE_NEWUSER = 0x10000000
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1
IFREQ_BYTES = 40
"""sizeof(struct ifreq) on Linux: the interface's name (16 bytes), then a union (here its flags)."""


def enter() -> None:
    """Leave the machine's network for a new namespace holding only loopback, brought up; OSError
    if the kernel refuses."""
    libc = ctypes.CDLL(None, use_errno=True)
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(CLONE_NEWNET) != 0:
        if libc.unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0:
            code = ctypes.get_errno()
            raise OSError(code, f"unshare(CLONE_NEWNET): {os.strerror(code)}")
        maps = (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1"))
        for name, text in maps:
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sh", b"lo", IFF_UP).ljust(IFREQ_BYTES, b"\0"))


_PROBE = "import sys; sys.path.insert(0, sys.argv[1]); import netns; netns.enter()"


def unavailable_reason() -> str | None:
    """None if `enter()` works here (tried in a child process), else the kernel's answer."""
    done = subprocess.run([sys.executable, "-c", _PROBE, os.path.dirname(os.path.abspath(__file__))],
                          capture_output=True, text=True, timeout=30)
    if done.returncode == 0:
        return None
    lines = done.stderr.strip().splitlines()
    return f"no network namespace of our own: {lines[-1] if lines else done.returncode}"
