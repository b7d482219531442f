"""arena run by a user that is not root (issue 21), as a course server's service user would run it.

Real `arena match` runs as uid 65534 (nobody, through setpriv) with a real attacking bot
(tests/bots/attacks.py `memory`: 3 children of 120 MiB each, past a 256 MiB limit):
- without a delegated cgroup, `--sandbox on` refuses in one line naming what is missing, and
  `auto` says which limits are not enforced, and the attack gets through (the limit is real);
- with a cgroup delegated to that user (made here by root the way systemd's `Delegate=yes` does:
  subtrees chowned to the user, the process put in them), `on` runs and the attack is denied;
- alone in a delegated cgroup2 cgroup, the referee moves into a leaf of it and makes, freezes and
  removes its bots' cgroups beside that leaf.

The interpreter may lie where nobody cannot enter (a pyenv under /root): the run then goes through
a private mount namespace (bwrap, as root, nothing shared changed) in which only the interpreter's
own directory is shown under an otherwise empty, enterable tmpfs.
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import require

from arena.cell import cgroup, sandbox

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
NOBODY = 65534
MEMORY_ATTACK = f"{sys.executable} {HERE / 'bots' / 'attacks.py'} memory"


def _blocked(path: Path) -> Path | None:
    """The first directory above `path` that other users may not enter, None if there is none."""
    for parent in reversed(path.parents):
        if parent != Path("/") and not parent.stat().st_mode & 0o001:
            return parent
    return None


def _reveal_args() -> list[str]:
    """bwrap arguments showing the interpreter's directories to another user (see the docstring)."""
    args: list[str] = []
    covered: set[Path] = set()
    for path in {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve(), ROOT}:
        top = _blocked(path)
        if top is None:
            continue
        if top not in covered:
            covered.add(top)
            args += ["--perms", "0755", "--tmpfs", str(top)]
        for step in reversed(path.relative_to(top).parents[:-1]):
            args += ["--perms", "0755", "--dir", str(top / step)]
        args += ["--ro-bind", str(path), str(path)]
    return args


def as_nobody(*args: str, cwd: Path, join: list[str] = (),
              module: str = "arena") -> subprocess.CompletedProcess:
    """`python -m MODULE ARGS` (or `python ARGS` with module "") run as nobody in `cwd`, its process
    first put (by root) in the cgroups whose cgroup.procs files are `join`, alone there."""
    enter = 'for f in $JOIN; do echo $$ > "$f" || exit 99; done; unset JOIN; exec "$@"'
    argv = ["bwrap", "--dev-bind", "/", "/", *_reveal_args(), "--chdir", str(cwd), "--",
            "sh", "-c", enter, "sh", "setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
            "env", f"PYTHONPATH={ROOT}", f"HOME={cwd}", sys.executable,
            *(["-m", module] if module else []), *args]
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=180,
                          env={**os.environ, "JOIN": " ".join(join)})


@pytest.fixture
def home():
    require(os.geteuid() == 0, "not root: cannot make a user to run arena as")
    reason = sandbox.unavailable_reason()
    require(reason is None, f"bots cannot be sandboxed here: {reason}")
    directory = Path(tempfile.mkdtemp(prefix="arena-nonroot-"))
    os.chown(directory, NOBODY, NOBODY)
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


def memory_match(home: Path, mode: str, join: list[str] = ()) -> subprocess.CompletedProcess:
    return as_nobody("match", "domineering", MEMORY_ATTACK, "random", "--games", "1", "--time", "5",
                     "--memory", "256", "--sandbox", mode, "--out", "out", "-q", cwd=home, join=join)


def attack_report(home: Path) -> dict[str, str]:
    [games] = (home / "out").glob("matches/*/games.jsonl")
    record = json.loads(games.read_text().splitlines()[-1])
    return next(m["info"]["attacks"] for m in record["moves"] if m["seat"] == 0)


def test_not_root_without_a_delegated_cgroup_on_refuses_and_auto_says_what_is_not_enforced(home):
    done = as_nobody("--version", cwd=home)
    assert done.returncode == 0, f"arena cannot run as nobody here: {done.stderr}"
    refused = memory_match(home, "on")
    assert refused.returncode != 0
    [line] = refused.stderr.strip().splitlines()  # one line: what is missing, and the fix
    assert "sandbox = on, but bots cannot have cgroups here: not root and no cgroup delegated to uid " \
           f"{NOBODY}" in line
    assert "Delegate=yes" in line
    assert not (home / "out").exists()

    ran = memory_match(home, "auto")
    assert ran.returncode == 0, ran.stderr
    assert "NOT enforced: memory over each bot's process tree (tmpfs included), its process count, " \
           "freezing (suspend)" in ran.stderr
    assert attack_report(home)["3 x 120 MiB"].startswith("SUCCEEDED"), attack_report(home)  # it is real


def _delegate(name: str) -> list[Path]:
    """Cgroups `name` delegated to nobody (systemd Delegate=yes, by hand): in each v1 hierarchy a
    bot cgroup uses, or one v2 cgroup with the memory and pids controllers available."""
    layout = cgroup.detect()
    made = []
    if layout.kind == "v2":
        path = layout.parents["unified"] / name
        path.mkdir()
        made.append(path)
        for item in (path, *(path / f for f in ("cgroup.procs", "cgroup.subtree_control", "cgroup.threads"))):
            os.chown(item, NOBODY, NOBODY)
        return made
    parents = dict(layout.parents)
    if layout.cpuset is not None:
        parents["cpuset"] = layout.cpuset
    for controller, parent in parents.items():
        path = parent / name
        path.mkdir()
        made.append(path)
        if controller == "cpuset":
            for key in ("cpuset.cpus", "cpuset.mems"):
                (path / key).write_text((parent / key).read_text())
        for item in (path, path / "cgroup.procs", path / "tasks"):
            os.chown(item, NOBODY, NOBODY)
    return made


def test_not_root_in_a_delegated_cgroup_on_runs_and_the_memory_limit_holds_over_the_tree(home):
    layout = cgroup.detect()
    require(layout.kind != "none", f"no usable cgroups (as root) to delegate: {layout.reason}")
    delegated = _delegate(f"arena-test-delegated-{secrets.token_hex(4)}")
    try:
        ran = memory_match(home, "on", join=[str(d / "cgroup.procs") for d in delegated])
        assert ran.returncode == 0, ran.stderr
        assert "NOT enforced" not in ran.stderr
        report = attack_report(home)
        assert report["3 x 120 MiB"].startswith("denied"), report
        assert [p for d in delegated for p in d.iterdir() if p.is_dir()] == []  # bot cgroups removed
    finally:
        for path in delegated:
            for child in [p for p in path.iterdir() if p.is_dir()]:
                child.rmdir()
            path.rmdir()


DELEGATED_V2 = """
import json, subprocess, sys, time
from pathlib import Path
from arena.cell import cgroup
cgroup.V2_CONTROLLERS = tuple(sys.argv[1:])  # what this machine's cgroup2 offers
layout = cgroup.detect()
out = {"kind": layout.kind, "reason": layout.reason, "parent": str(layout.parents.get("unified")),
       "own": Path("/proc/self/cgroup").read_text().strip()}
if layout.kind == "v2":
    group = cgroup.Cgroup.create(None, None)
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"], preexec_fn=group.join_in_child)
    time.sleep(0.5)
    group.freeze()
    before = group.cpu_seconds()
    time.sleep(0.3)
    out.update(frozen=group.frozen(), frozen_cpu_s=group.cpu_seconds() - before, running_cpu_s=before,
               holds=group.pids() == [spinner.pid], bot=str(group.dirs["unified"]))
    group.remove()
    spinner.wait()
print(json.dumps(out))
"""


def test_not_root_alone_in_a_delegated_cgroup2_moves_into_a_leaf_and_freezes_its_bots_cgroups(home):
    """systemd's `Delegate=yes` for a `User=` service, by hand on the cgroup2 hierarchy: the cgroup
    and its cgroup.procs, cgroup.subtree_control and cgroup.threads chowned to the user, the
    service's process alone in it. On a hybrid machine whose cgroup2 has none of memory and pids
    (they are in the v1 hierarchies), the controller it does offer stands in for them."""
    lines = Path("/proc/self/mountinfo").read_text().splitlines()
    mounts = [line.split(" - ")[0].split()[4] for line in lines if " - cgroup2 " in line]
    require(mounts, "no cgroup2 hierarchy mounted")
    top = Path(mounts[0])
    offered = (top / "cgroup.controllers").read_text().split()
    wanted = [c for c in cgroup.V2_CONTROLLERS if c in offered] or offered[:1]
    require(wanted, f"the cgroup2 hierarchy at {top} offers no controller at all")
    enabled = (top / "cgroup.subtree_control").read_text().split()
    added = [c for c in wanted if c not in enabled]
    if added:
        (top / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in added))
    delegated = top / f"arena-test-delegated-{secrets.token_hex(4)}"
    delegated.mkdir()
    try:
        for item in (delegated, *(delegated / f for f in ("cgroup.procs", "cgroup.subtree_control",
                                                          "cgroup.threads"))):
            os.chown(item, NOBODY, NOBODY)
        done = as_nobody("-c", DELEGATED_V2, *wanted, cwd=home, join=[str(delegated / "cgroup.procs")],
                         module="")
        assert done.returncode == 0, done.stderr
        got = json.loads(done.stdout)
        assert got["kind"] == "v2", got
        assert got["parent"] == str(delegated)
        assert got["own"].endswith(f"{delegated.name}/{cgroup.LEAF}"), got  # moved into the leaf
        assert got["bot"].startswith(f"{delegated}/arena-"), got
        assert got["holds"] and got["frozen"] and got["running_cpu_s"] > 0.01, got
        assert got["frozen_cpu_s"] < 0.02, got
    finally:
        for child in [p for p in delegated.iterdir() if p.is_dir()]:
            child.rmdir()
        delegated.rmdir()
        if added:
            (top / "cgroup.subtree_control").write_text(" ".join(f"-{c}" for c in added))


def test_not_root_an_honest_bot_writes_its_directories_uses_tempfile_and_a_pool_and_reads_its_book(home):
    """What docs/limits.md promises a sandboxed bot holds for a service user too (tests/bots/honest.py
    in a kit folder of its own, in a cgroup delegated to the user)."""
    layout = cgroup.detect()
    require(layout.kind != "none", f"no usable cgroups (as root) to delegate: {layout.reason}")
    kit = home / "kit"
    kit.mkdir()
    shutil.copy(HERE / "bots" / "honest.py", kit / "honest.py")
    (kit / "build.sh").write_text("#!/bin/sh\necho python3 honest.py\n")
    (kit / "book.txt").write_text("e4 e5\n")
    for path in (kit, *kit.iterdir()):
        os.chown(path, NOBODY, NOBODY)
    delegated = _delegate(f"arena-test-delegated-{secrets.token_hex(4)}")
    try:
        ran = as_nobody("match", "domineering", f"{sys.executable} {kit / 'honest.py'}", "random",
                        "--games", "2", "--time", "5", "--sandbox", "on", "--out", "out", "-q", cwd=home,
                        join=[str(d / "cgroup.procs") for d in delegated])
        assert ran.returncode == 0, ran.stderr
        [games] = (home / "out").glob("matches/*/games.jsonl")
        records = [json.loads(line) for line in games.read_text().splitlines()]
        assert [r["forfeit"] for r in records] == [None, None]
        uses = [m["info"]["uses"] for r in records for m in r["moves"] if "uses" in m.get("info", {})]
        assert uses and all(set(u.values()) == {"ok"} for u in uses), uses
    finally:
        for path in delegated:
            for child in [p for p in path.iterdir() if p.is_dir()]:
                child.rmdir()
            path.rmdir()
