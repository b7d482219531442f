"""What a killed referee leaves in /tmp is removed by the next one (issue 21), with real referees.

A referee playing a sandboxed match is killed with SIGKILL: its directories (bots' working
directories, private sockets) stay, named `arena-PID-KIND-...`. The next referee's start removes
them, and keeps those of a referee that still runs.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from conftest import ENV, arena_cmd, require

from arena.cell import sandbox, scratch

HERE = Path(__file__).resolve().parent
SLEEPER = f"{sys.executable} {HERE / 'bots' / 'broken.py'} sleep 0.5"
TMP = Path(tempfile.gettempdir())


def dirs_of(pid: int) -> list[Path]:
    return sorted(p for p in TMP.iterdir() if p.name.startswith(f"arena-{pid}-"))


def start_referee(out: Path) -> subprocess.Popen:
    """`arena match` with a slow bot, sandboxed, running until killed."""
    argv = arena_cmd("match", "domineering", "random", SLEEPER, "--games", "50", "--time", "5",
                     "--sandbox", "on", "--out", str(out), "-q")
    return subprocess.Popen(argv, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def wait_for_dirs(process: subprocess.Popen, kinds: set[str], timeout_s: float = 30.0) -> list[Path]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = dirs_of(process.pid)
        if {scratch.owner(p.name) and p.name.split("-")[2] for p in found} >= kinds:
            return found
        assert process.poll() is None, "the referee ended early"
        time.sleep(0.1)
    raise AssertionError(f"no {kinds} directories of pid {process.pid}: {dirs_of(process.pid)}")


def test_the_directories_of_a_referee_killed_with_sigkill_are_removed_by_the_next_a_live_ones_kept(tmp_path):
    reason = sandbox.unavailable_reason()
    require(reason is None, f"bots cannot be sandboxed here: {reason}")
    dead, live = start_referee(tmp_path / "dead"), start_referee(tmp_path / "live")
    try:
        left = wait_for_dirs(dead, {"work", "ipc"})
        kept = wait_for_dirs(live, {"work", "ipc"})
        os.kill(dead.pid, signal.SIGKILL)
        dead.wait(10)
        assert all(p.exists() for p in left)  # what kill -9 leaves
        done = subprocess.run(arena_cmd("match", "domineering", "random", "random", "--games", "1",
                                        "--sandbox", "on", "--out", str(tmp_path / "next"), "-q"),
                              env=ENV, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert not any(p.exists() for p in left), left
        assert all(p.exists() for p in kept), kept  # a live referee's: untouched
        assert live.poll() is None
    finally:
        for process in (dead, live):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGINT)  # a clean end: it removes its own directories
                process.wait(30)
    assert dirs_of(live.pid) == []


def test_only_directories_of_this_user_named_by_a_dead_pid_and_a_known_kind_are_removed(tmp_path):
    gone = subprocess.Popen(["true"])
    gone.wait()
    for name in (f"arena-{gone.pid}-work-x", f"arena-{os.getpid()}-work-x", f"arena-{gone.pid}-other-x",
                 "arena-hub-x", f"arena-{gone.pid}-ipc-chowned"):
        (tmp_path / name).mkdir()
    if os.geteuid() == 0:  # another user's: never removed
        os.chown(tmp_path / f"arena-{gone.pid}-ipc-chowned", 65534, 65534)
    (tmp_path / "target").mkdir()
    (tmp_path / "target" / "keep").write_text("x")
    (tmp_path / f"arena-{gone.pid}-hub-link").symlink_to(tmp_path / "target")
    removed = scratch.reap_stale(tmp_path, force=True)
    assert removed == [tmp_path / f"arena-{gone.pid}-work-x"]
    assert (tmp_path / "target" / "keep").exists()
    with pytest.raises(ValueError, match="unknown kind"):
        scratch.make("other")
