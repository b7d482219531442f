"""Shared test helpers."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
"""The environment for a real `arena` process: this checkout first on the import path."""

CI = os.environ.get("CI", "").lower() == "true"
"""Under CI=true a missing compiler or library fails the test instead of skipping it."""


def require(condition: object, reason: str) -> None:
    """Skip the calling test with `reason` unless `condition` holds; under CI=true, fail instead
    (CI installs everything the tests need, so a skip there would hide a broken setup)."""
    if condition:
        return
    if CI:
        pytest.fail(f"CI=true but {reason}", pytrace=False)
    pytest.skip(reason)


def arena_cmd(*args: str) -> list[str]:
    """The real `arena` command line, as `python -m arena ARGS`."""
    return [sys.executable, "-m", "arena", *args]


def run_arena(*args: str, cwd: Path, env: dict[str, str] | None = None,
              timeout: float = 120) -> subprocess.CompletedProcess:
    """Run `arena ARGS` in `cwd` to its end, its output captured as text."""
    return subprocess.run(arena_cmd(*args), cwd=cwd, env=ENV if env is None else env, capture_output=True,
                          text=True, timeout=timeout)


def rss_bytes() -> int:
    """This process's resident memory (bytes), from /proc."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0
