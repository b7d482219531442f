"""The sandbox (issue 12), shown with real attacking bots (tests/bots/attacks.py) and real processes.

With `sandbox = "on"` every read, write, network connection, token theft, signal to another
process, daemon and memory/process escape is denied, the honest opponent's games are unaffected,
the tournament records every game and no process of an attacker is left. With `sandbox = "off"`
the same attacker gets what docs/limits.md says `off` allows. The cgroup is tested on its own too.
Everything skips with the reason where bubblewrap or cgroups are missing, and fails instead under
CI=true.
"""
from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import netns
import pytest
from conftest import ENV, require, run_arena

from arena.cell import cgroup, sandbox, uids
from arena.cell.launcher import BotProcess, resolve_command
from arena.cell.limits import Limits
from arena.match.clock import TimeControl
from arena.match.players import Players
from arena.match.records import Forfeit, GameRecord
from arena.match.referee import run_match
from arena.match.spec import BotSpec, MatchSpec
from arena.tournament import runner
from arena.tournament.store import DB_NAME, Store

HERE = Path(__file__).resolve().parent
ATTACKS = HERE / "bots" / "attacks.py"
PARAMS = {"rows": 4, "cols": 4}
CLOCK = TimeControl(per_move=2.0)
TAG = f"t{secrets.token_hex(6)}"
"""In the command line of every attacker process of this run, so /proc shows any left behind."""


@pytest.fixture(autouse=True)
def _no_attacker_left():
    yield
    left = tagged()
    for pid in left:  # never leave them to the rest of the suite
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    assert left == [], f"attacker processes left: {[_cmdline(p) for p in left]}"


def needs_sandbox() -> None:
    reason = sandbox.unavailable_reason()
    require(reason is None, f"bots cannot be sandboxed here: {reason}")


def needs_cgroups() -> None:
    layout = cgroup.detect()
    require(layout.kind != "none", f"no usable cgroups: {layout.reason}")


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


def tagged(wait_s: float = 3.0) -> list[int]:
    """Live processes carrying TAG (after up to `wait_s` for the last ones to die)."""
    deadline = time.monotonic() + wait_s
    while True:
        found = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()
                 and TAG in _cmdline(int(p)) and _state(int(p)) not in ("Z", "X", "")]
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def _state(pid: int) -> str:
    return _stat_fields(pid)[0]


def attacker(mode: str, **options: str) -> BotSpec:
    args = [f"{k}={v}" for k, v in options.items()]
    return BotSpec(f"attack-{mode}", (sys.executable, str(ATTACKS), mode, f"tag={TAG}", *args))


def honest_bot(directory: Path) -> BotSpec:
    """An honest raw-protocol bot in a directory of its own (its source is a target)."""
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copy(HERE.parent / "examples" / "raw_bot.py", directory / "honest.py")
    return BotSpec("honest", (sys.executable, str(directory / "honest.py")))


def honest_kit(directory: Path) -> BotSpec:
    """tests/bots/honest.py in a kit folder of its own (a build.sh, its book.txt beside it)."""
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copy(HERE / "bots" / "honest.py", directory / "honest.py")
    (directory / "build.sh").write_text("#!/bin/sh\necho python3 honest.py\n")
    (directory / "book.txt").write_text("e4 e5\n")
    return BotSpec("honest", (sys.executable, str(directory / "honest.py")))


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def reports(records, name: str, key: str = "attacks") -> dict[str, str]:
    """What the attacker `name` said its attacks got (from the info of its first move); with
    key="uses", what the honest bot said it could use (from its last move)."""
    said = []
    for record in records:
        seat = record.players.index(name)
        said += [move.info[key] for move in record.moves if move.seat == seat and key in move.info]
    if not said:
        raise AssertionError(f"{name} made no move: {[r.forfeit for r in records]}")
    return said[0] if key == "attacks" else said[-1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- the whole tournament, sandbox on ---

def test_a_tournament_of_attackers_is_sealed_off(tmp_path):
    needs_sandbox()
    needs_cgroups()
    honest = honest_bot(tmp_path / "honest")
    course = tmp_path / "course"  # the attacker's own directory holds the tournament and its results
    course.mkdir()
    shutil.copy(ATTACKS, course / "attacks.py")
    tour_file = course / "sealed.toml"
    results = course / "results"
    db = results / "sealed" / DB_NAME
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        targets = ",".join(map(str, [honest.command[1], tour_file, db, victim]))
        data = {
            "name": "sealed", "game": "domineering", "time": "2", "games_per_pairing": 2, "params": PARAMS,
            "limits": {"sandbox": "on", "memory_mb": 256, "processes": 64},
            "bots": [
                {"name": "honest", "command": list(honest.command)},
                {"name": "attack-all", "command": [str(course / "attacks.py") if a == str(ATTACKS) else a
                                                    for a in attacker(
                    "all", read=targets, write=targets, pid=f"{os.getpid()},1",
                    port=str(server.getsockname()[1]), victim=str(victim), rootfs="1").command]},
                {"name": "attack-memory", "command": list(attacker("memory").command)},
            ],
        }
        tour_file.write_text("# the tournament file\n")
        before = {p: digest(p) for p in (Path(honest.command[1]), tour_file, victim)}
        tour = runner.from_dict(data, tour_file)
        summary = runner.run(tour, results, concurrency=2, progress=None)
    assert summary.failures == [] and summary.stored == 6
    with Store(db) as store:
        records = [g.record for g in store.games()]
    assert len(records) == 6
    assert {r.isolation for r in records} == {"sandbox"}
    assert {p: digest(p) for p in before} == before  # nothing read was changed, nothing deleted
    assert oct(db.stat().st_mode & 0o777) == "0o600" and oct(db.parent.stat().st_mode & 0o777) == "0o700"
    got = reports([r for r in records if "attack-all" in r.players], "attack-all")
    assert len(got) >= 17, got
    assert all(v.startswith("denied") for v in got.values()), got
    assert "unreachable" in got["route outside"], got  # no route out of its own network namespace
    assert "refused" in got["tcp referee host"], got  # the host's 127.0.0.1 is not its loopback
    assert "Read-only file system" in got["root tmpfs"], got  # nothing but its capped directories
    memory = reports([r for r in records if "attack-memory" in r.players], "attack-memory")
    assert all(v.startswith("denied") for v in memory.values()), memory
    for record in records:  # the honest bot never lost a game to anything but the game
        if "honest" in record.players and record.forfeit is not None:
            assert record.forfeit["seat"] != record.players.index("honest"), record.forfeit


# --- one match at a time: what can be watched from outside while it runs ---

def _bot_pids(word: str) -> list[int]:
    """The bot processes whose command line holds `word` (not bwrap, setpriv or the chown shell)."""
    return [p for p in (int(n) for n in os.listdir("/proc") if n.isdigit())
            if word in _cmdline(p) and not any(w in _cmdline(p) for w in ("bwrap", "setpriv", "chown"))
            and p != os.getpid()]


def _the_bot(word: str) -> int:
    """The bot itself among the processes `_bot_pids(word)` finds: not one of its own forks (the
    attacker's daemon keeps its command line until it execs with an empty environment), so the
    first of them to start, whose parent is none of them (pids wrap round: never the highest)."""
    pids = _bot_pids(word)
    roots = [p for p in pids if _parent(p) not in pids] or pids
    return min(roots, key=_started)


def _parent(pid: int) -> int:
    return int(_stat_fields(pid)[1] or 0)


def _started(pid: int) -> int:
    """Clock ticks from boot to the process's start (/proc/PID/stat's 22nd field)."""
    return int(_stat_fields(pid)[19] or 0)


def _stat_fields(pid: int) -> list[str]:
    """/proc/PID/stat's fields after the command's name (state first); '' for a gone process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].decode().split()
    except (OSError, IndexError):
        return [""] * 20


def _status(pid: int) -> dict[str, str]:
    text = Path(f"/proc/{pid}/status").read_text()
    return {k: v.strip() for k, v in (line.split(":", 1) for line in text.splitlines() if ":" in line)}


def test_a_sandboxed_bot_runs_as_a_user_of_its_own_without_privileges_filtered_with_a_clean_environment(
        tmp_path):
    needs_sandbox()
    port = free_port()
    seen = []

    def on_move(record, move, state):
        if seen:
            return
        attack, honest = _the_bot(f"attacks.py all tag={TAG}"), _the_bot(str(tmp_path / "h" / "honest.py"))
        fields, other = _status(attack), _status(honest)
        assert fields["CapEff"] == fields["CapPrm"] == "0" * 16, fields
        assert fields["NoNewPrivs"] == "1" and fields["Seccomp"] == "2", fields  # 2: a filter
        env = Path(f"/proc/{attack}/environ").read_bytes().split(b"\0")
        keys = sorted(item.split(b"=")[0].decode() for item in env if item)
        with socket.socket() as probe:
            probe.settimeout(0.5)
            reached = probe.connect_ex(("127.0.0.1", port)) == 0
        ids = [int(fields["Uid"].split()[1]), int(other["Uid"].split()[1]), int(fields["Gid"].split()[1])]
        seen.append((*ids, keys, reached))

    spec = MatchSpec("uid", "domineering", (attacker("all", listen=str(port)), honest_bot(tmp_path / "h")),
                     CLOCK, (0,), params=PARAMS, limits=Limits(sandbox="on"))
    record = run_match(spec, on_move=on_move)[0]
    assert record.forfeit is None and record.isolation == "sandbox"
    uid, other_uid, gid, keys, reached = seen[0]
    if os.geteuid() == 0:  # each bot a user of its own, from the configured range
        first, last = uids.parse_range(Limits().bot_uids)
        assert first <= uid <= last and first <= other_uid <= last and uid != other_uid and gid == uid
    assert uid != 0
    assert keys == ["ARENA_ENDPOINT", "ARENA_TOKEN", "HOME", "LANG", "PATH", "PWD",  # PWD: bwrap's
                    "PYTHONPATH", "PYTHONUNBUFFERED"]
    assert not reached  # its listening socket is in its own network namespace


def test_an_honest_bot_writes_its_directories_uses_tempfile_a_pool_and_inotify_and_reads_its_book(tmp_path):
    """What docs/limits.md promises a sandboxed bot, next to an attacker that hoards its own
    user's inotify instances (as root each bot is a user of its own, so that takes nothing from
    the honest bot) and tries the kernel's shared things."""
    needs_sandbox()
    spec = MatchSpec("honest", "domineering", (honest_kit(tmp_path / "kit"), attacker("all", inotify="1000")),
                     CLOCK, (0, 1), params=PARAMS, limits=Limits(sandbox="on"))
    records = run_match(spec)
    assert [r.forfeit for r in records] == [None, None]
    assert reports(records, "honest", "uses") == {
        "working directory": "ok", "/tmp": "ok", "tempfile": "ok", "multiprocessing": "ok", "book": "ok",
        "inotify": "ok"}
    got = reports(records, "attack-all")
    if os.geteuid() == 0:
        assert got["inotify"] == "holds 128 inotify instances", got  # all its user may have
    for what in ("session keyring", "user keyring", "user namespace", "io_uring", "machine cpu"):
        assert got[what].startswith("denied"), got


def test_a_writable_folder_is_all_a_sandboxed_command_may_write_with_no_socket_and_its_own_cwd(tmp_path):
    """bwrap_argv(write=..., chdir=..., socket_path=None): how a course builds a submission (its
    build.sh writes its own folder, seen at the same path, and nothing else)."""
    needs_sandbox()
    own, other = tmp_path / "build", tmp_path / "other"
    own.mkdir()
    other.mkdir(mode=0o777)
    if os.geteuid() == 0:  # the command runs as BOT_UID: the folder must be its
        os.chown(own, sandbox.BOT_UID, sandbox.BOT_UID)
    script = (f"pwd; echo made > made.txt && echo own-ok; (echo x > {other}/x) 2>/dev/null && echo OTHER; "
              f"ls {sandbox.SOCKET_INSIDE} 2>&1 || true")
    argv = sandbox.bwrap_argv(["/bin/sh", "-c", script], None, write=[str(own)], chdir=str(own))
    assert sandbox.SOCKET_INSIDE not in argv
    assert argv[argv.index("--bind"):][:3] == ["--bind", str(own), str(own)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30, env={"PATH": "/usr/bin:/bin"})
    lines = done.stdout.splitlines()
    assert lines[:2] == [str(own), "own-ok"], (done.stdout, done.stderr)
    assert "OTHER" not in lines and "No such file" in done.stdout
    assert (own / "made.txt").read_text() == "made\n" and not (other / "x").exists()


def test_bots_in_one_folder_see_only_their_own_files_and_a_kit_over_another_bot_is_refused(tmp_path):
    """The README's /srv/bots/alice.py layout: each file bot sees its file alone, so the attacker
    cannot read its neighbour. A bot whose sight would hold another bot's files (a kit folder
    around it, a `read` grant over the folder) is refused at load, naming both."""
    needs_sandbox()
    folder = tmp_path / "bots"
    honest = honest_bot(folder)
    shutil.copy(ATTACKS, folder / "alice.py")
    alice = BotSpec("alice", (sys.executable, str(folder / "alice.py"), "all", f"tag={TAG}",
                              f"read={honest.command[1]}"))
    record = run_match(MatchSpec("folder", "domineering", (alice, honest), CLOCK, (0,), params=PARAMS,
                                 limits=Limits(sandbox="on")))[0]
    assert record.forfeit is None
    got = reports([record], "alice")
    assert got["read 0"].startswith("denied") and "No such file" in got["read 0"], got
    data = {"name": "t", "game": "domineering", "time": "1", "params": PARAMS, "limits": {"sandbox": "auto"},
            "bots": [{"name": "alice", "command": list(alice.command)},
                     {"name": "honest", "command": list(honest.command)}]}
    assert runner.from_dict(data, tmp_path / "t.toml").bots  # side by side: accepted
    from arena.tournament.config import TournamentError
    with pytest.raises(TournamentError, match="bot 'alice' would see the files of bot 'honest'"):
        runner.from_dict({**data, "limits": {"sandbox": "on", "read": [str(folder)]}}, tmp_path / "t.toml")
    (folder / "build.sh").write_text("#!/bin/sh\necho python3 alice.py\n")  # alice's folder a kit
    with pytest.raises(TournamentError, match="would see the files of bot"):
        runner.from_dict(data, tmp_path / "t.toml")
    assert runner.from_dict({**data, "limits": {"sandbox": "off"}}, tmp_path / "t.toml").bots


def test_a_token_is_good_only_on_its_own_seat_socket(tmp_path):
    needs_sandbox()
    silent = BotSpec("silent", (sys.executable, str(HERE / "bots" / "broken.py"), "silent"))
    players = Players((silent, silent), tmp_path, Limits(sandbox="on"), 3.0, None)
    try:
        first, second = players.players
        waiting = threading.Thread(target=players.start, args=(players.players,))
        waiting.start()
        while not second.token:
            time.sleep(0.01)
        from arena.match.protocol import BotClient
        with BotClient(f"ipc://{second.process.private.path}") as thief:  # seat 1's socket, seat 0's token
            thief.send({"type": "hello", "token": first.token, "name": "thief", "protocol": 1})
            # until the referee has read it (after starting both bots: on a busy machine, later than
            # the owner's hello below would come, and read after it the thief's finds no one waiting)
            while waiting.is_alive() and "another socket" not in " ".join(first.notes):
                time.sleep(0.01)
            assert "another socket" in " ".join(first.notes) and first.identity is None, list(first.notes)
            with BotClient(f"ipc://{first.process.private.path}") as owner:  # the right socket binds
                owner.send({"type": "hello", "token": first.token, "name": "owner", "protocol": 1})
                waiting.join()
        assert first.identity is not None and first.failure is None
        assert second.failure is not None and second.failure[0] is Forfeit.NO_HELLO
    finally:
        players.close()


def test_suspend_freezes_the_whole_sandbox_setsid_children_included():
    needs_sandbox()
    needs_cgroups()
    samples = []

    def on_move(record, move, state):
        pids = [p for p in tagged(0) if f"burner-{TAG}" in _cmdline(p)]
        if pids:
            fields = Path(f"/proc/{pids[0]}/stat").read_text().rsplit(")", 1)[1].split()
            samples.append((move.seat, record.players[move.seat], (int(fields[11]) + int(fields[12]))
                            / os.sysconf("SC_CLK_TCK")))

    sleeper = BotSpec("sleeper", (sys.executable, str(HERE / "bots" / "broken.py"), "sleep", "0.3"))
    spec = MatchSpec("frz", "domineering", (attacker("burner"), sleeper), CLOCK, (0,), params=PARAMS,
                     limits=Limits(sandbox="on", suspend=True))
    record = run_match(spec, on_move=on_move)[0]
    assert record.forfeit is None
    # between the burner's move and the sleeper's (0.3 s of thinking) the burner's child is frozen
    gaps = [b[2] - a[2] for a, b in zip(samples, samples[1:], strict=False) if b[1] == "sleeper"]
    assert gaps and max(gaps) < 0.1, samples


# --- sandbox off: what it allows ---

_OFF_MATCH = """
import json, socket, sys
sys.path.insert(0, sys.argv[1])
import netns
netns.enter()  # only loopback from here on: nothing this match does can leave the machine
import ctypes, platform
from arena.cell import seccomp
seccomp.keyring_joiner()()  # a session keyring of this process's own, holding a secret key
add_key = seccomp.SYS_ADD_KEY[platform.machine()]
assert ctypes.CDLL(None).syscall(add_key, b"user", b"referee-secret", b"k", 1, -3) > 0
from arena.cell.limits import Limits
from arena.match.clock import TimeControl
from arena.match.referee import run_match
from arena.match.spec import BotSpec, MatchSpec
attacker, honest, params = json.loads(sys.argv[2])
with socket.socket() as server:  # the host's loopback, as the bot sees it without a sandbox
    server.bind(("127.0.0.1", 0))
    server.listen()
    attacker = [*attacker, f"port={server.getsockname()[1]}"]
    bots = (BotSpec("attack-all", tuple(attacker)), BotSpec("honest", tuple(honest)))
    spec = MatchSpec("off", "domineering", bots,
                     TimeControl(per_move=2.0), (0,), params=params, limits=Limits(sandbox="off"))
    print(run_match(spec)[0].to_json())
"""


def test_with_the_sandbox_off_the_same_attacker_reads_and_lingers_but_the_log_link_is_refused(tmp_path):
    """Run in a network namespace of the test's own (tests/netns.py), where the host's loopback is
    the referee's, so the attacker shows it reaches a listener there while no packet can leave."""
    require(netns.unavailable_reason() is None, str(netns.unavailable_reason()))
    secret = tmp_path / "tournament.toml"
    secret.write_text("secret")
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    bots = [list(attacker("all", read=str(secret), victim=str(victim)).command),
            list(honest_bot(tmp_path / "h").command), PARAMS]
    done = subprocess.run([sys.executable, "-c", _OFF_MATCH, str(HERE), json.dumps(bots)], cwd=HERE.parent,
                          env=ENV, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    record = GameRecord.from_json(done.stdout.strip().splitlines()[-1])
    got = reports([record], "attack-all")
    assert record.isolation == "none: sandbox = off"
    from arena.tournament.standings import isolation_note
    from arena.tournament.store import StoredGame
    assert isolation_note([StoredGame("off", 0, record)]) == \
        "; bots were NOT isolated in 1 of 1 games (none: sandbox = off)"
    assert got["read 0"].startswith("SUCCEEDED") and got["processes"].startswith("SUCCEEDED"), got
    assert got["other logs"].startswith("SUCCEEDED") and got["tokens"].startswith("SUCCEEDED"), got
    assert got["tcp referee host"].startswith("SUCCEEDED"), got  # the listener on 127.0.0.1
    assert got["name servers"].startswith("SUCCEEDED"), got  # it could read /etc/resolv.conf...
    assert "unreachable" in got["route outside"], got  # ...but the test's namespace has no way out
    assert "referee-secret" in got["session keyring"], got  # the referee's keys
    for what in ("user keyring", "user namespace", "io_uring", "machine cpu"):
        assert got[what].startswith("SUCCEEDED"), got
    assert got["log link"].startswith("SUCCEEDED")  # it could replace its log by a link...
    assert victim.read_text() == "keep me\n"  # ...but the referee never follows it
    daemons = [p for p in tagged(0) if f"daemon-{TAG}" in _cmdline(p)]
    assert daemons, "with the sandbox off, a daemon with a cleared environment survives the match"
    for pid in daemons:
        os.kill(pid, signal.SIGKILL)


# --- the pieces ---

def test_modes_say_what_they_do_and_on_refuses_without_bubblewrap(monkeypatch, tmp_path):
    assert sandbox.decide("off") == sandbox.Isolation(False, "none: sandbox = off")
    assert sandbox.decide("off").warning() is None
    with pytest.raises(ValueError, match="sandbox must be one of auto, on, off, got 'maybe'"):
        sandbox.decide("maybe")
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on it
    try:
        assert sandbox.unavailable_reason(refresh=True) == "bwrap not installed"
        with pytest.raises(sandbox.SandboxUnavailable, match="apt-get install bubblewrap"):
            sandbox.decide("on")
        auto = sandbox.decide("auto")
        assert auto == sandbox.Isolation(False, "none: bwrap not installed")
        assert "NOT isolated" in auto.warning() and "bwrap not installed" in auto.warning()
        with pytest.raises(ValueError, match="bwrap not installed"):  # before any bot starts
            run_match(MatchSpec("x", "domineering", (honest_bot(tmp_path / "a"), honest_bot(tmp_path / "b")),
                                CLOCK, (0,), params=PARAMS, limits=Limits(sandbox="on")))
        from arena.tournament.cluster import check_bots  # what every Dask worker runs at start-up
        refused = check_bots([honest_bot(tmp_path / "c")], "domineering", PARAMS, sys.executable, 5.0, "on")
        assert len(refused) == 1 and refused[0][0] == "" and "apt-get install bubblewrap" in refused[0][1]
    finally:
        monkeypatch.undo()
        sandbox.unavailable_reason(refresh=True)


def test_a_log_replaced_by_a_link_is_never_followed(tmp_path):
    workdir = tmp_path / "bot"
    workdir.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    (workdir / "bot.log").symlink_to(victim)
    process = BotProcess(resolve_command("random"), workdir, limits=Limits(sandbox="off"))
    with pytest.raises(OSError):
        process.start("tcp://127.0.0.1:1", "t")
    assert process.read_log(0, 100) == "" and not process.cap_log()
    assert victim.read_text() == "keep me\n"


def test_a_cgroup_holds_memory_processes_cpu_freezing_and_killing_over_the_whole_tree():
    needs_cgroups()
    group = cgroup.Cgroup.create(memory_bytes=64 << 20, pids_max=16)
    try:
        import subprocess
        hog = subprocess.run([sys.executable, "-c", "import os\nfor _ in range(2):\n  os.fork()\n"
                              "b = bytearray(40 << 20)\nfor i in range(0, len(b), 4096): b[i] = 1\n"],
                             preexec_fn=group.join_in_child, capture_output=True, timeout=30)
        assert group.oom_kills() >= 1, hog  # 4 processes x 40 MiB > 64 MiB over the tree
        forks = subprocess.run(["sh", "-c", "for i in $(seq 40); do sleep 2 & done; wait"],
                               preexec_fn=group.join_in_child, capture_output=True, timeout=30)
        assert b"fork" in forks.stderr.lower() or b"resource" in forks.stderr.lower(), forks
        spinner = subprocess.Popen(["sh", "-c", f"setsid {sys.executable} -c 'while True: pass' & wait"],
                                   preexec_fn=group.join_in_child)
        time.sleep(0.5)
        group.freeze()
        frozen_at = group.cpu_seconds()
        time.sleep(0.3)
        assert group.cpu_seconds() - frozen_at < 0.02 and frozen_at > 0.01
        group.thaw()
        group.kill()
        assert group.pids() == []
        spinner.wait(5)
    finally:
        group.remove()
    assert group.dirs == {}


# --- submit: checked inside the sandbox ---

NEEDY_BOT = '''import os, sys
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "book.txt")) as f:
    f.read()
sys.argv[1:] = []
exec(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "raw_bot.py")).read())
'''


def _submit(tmp_path: Path, limits: str) -> subprocess.CompletedProcess:
    (tmp_path / "t.toml").write_text(
        'name = "t"\ngame = "domineering"\ntime = "2"\n[params]\nrows = 4\ncols = 4\n'
        f'[limits]\n{limits}\n[[bots]]\nname = "a"\ncommand = "random"\n'
        '[[bots]]\nname = "b"\ncommand = "greedy"\n')
    return subprocess.run([sys.executable, "-m", "arena", "submit", "t.toml", "needy", sys.executable,
                           "needy/bot.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120)


def test_submit_refuses_a_bot_that_needs_what_the_sandbox_denies_and_read_grants_it(tmp_path):
    needs_sandbox()
    (tmp_path / "needy").mkdir()
    (tmp_path / "needy" / "bot.py").write_text(NEEDY_BOT)
    shutil.copy(HERE.parent / "examples" / "raw_bot.py", tmp_path / "needy" / "raw_bot.py")
    (tmp_path / "book.txt").write_text("e4 e5\n")  # beside its directory, not in it
    refused = _submit(tmp_path, 'sandbox = "on"')
    assert refused.returncode == 2, refused.stderr
    assert "rejected" in refused.stderr and "checked in the sandbox" in refused.stderr
    assert "book.txt" in refused.stderr and "Traceback" not in refused.stderr.splitlines()[0]
    alone = _submit(tmp_path, 'sandbox = "on"\nread = ["book.txt"]')  # a file bot sees itself only...
    assert alone.returncode == 2 and "raw_bot.py" in alone.stderr, alone.stderr
    (tmp_path / "needy" / "build.sh").write_text("#!/bin/sh\necho python3 bot.py\n")
    granted = _submit(tmp_path, 'sandbox = "on"\nread = ["book.txt"]')  # ...a kit its whole folder
    assert granted.returncode == 0, granted.stderr


def test_nothing_of_a_sandboxed_bot_outlives_a_referee_killed_with_sigkill(tmp_path):
    needs_sandbox()
    needs_cgroups()
    script = (
        "import sys\n"
        "from arena.match.clock import TimeControl\n"
        "from arena.cell.limits import Limits\n"
        "from arena.match.referee import run_match\n"
        "from arena.match.spec import BotSpec, MatchSpec\n"
        f"bots = (BotSpec('a', {attacker('all').command!r}), BotSpec('b', {attacker('burner').command!r}))\n"
        "spec = MatchSpec('k', 'domineering', bots, TimeControl(per_move=60.0), tuple(range(50)),\n"
        f"                 params={PARAMS!r}, limits=Limits(sandbox='on'))\n"
        "run_match(spec)\n"
    )
    referee = subprocess.Popen([sys.executable, "-c", script], cwd=HERE.parent)
    try:
        deadline = time.monotonic() + 20
        while not any(f"daemon-{TAG}" in _cmdline(p) for p in tagged(0)):  # its daemon is up
            assert time.monotonic() < deadline and referee.poll() is None, "the attacker never started"
            time.sleep(0.05)
        assert _bot_cgroups(referee.pid)
        os.kill(referee.pid, signal.SIGKILL)
        referee.wait(5)
        assert tagged(5.0) == []  # bots, the daemon and the setsid burner: all gone
        deadline = time.monotonic() + 5
        while _bot_cgroups(referee.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _bot_cgroups(referee.pid) == []  # the watchdog removed the bots' cgroups
    finally:
        if referee.poll() is None:
            referee.kill()
            referee.wait()


def _bot_cgroups(referee: int) -> list[str]:
    """The cgroups of the bots started by the referee process `referee` (named after its pid)."""
    return [str(p) for parent in cgroup.detect().parents.values() for p in parent.glob(f"arena-{referee}-*")]


def _frozen(path: Path) -> bool:
    for name, frozen in (("freezer.state", "FROZEN"), ("cgroup.freeze", "1")):
        try:
            return (path / name).read_text().strip() == frozen
        except OSError:
            continue
    return False


def _freezer_state(path: Path) -> str:
    """A bot cgroup's freezer state and the processes it holds (alive or not), or that it is gone."""
    if not path.exists():
        return "gone"
    try:
        procs = [int(p) for p in (path / "cgroup.procs").read_text().split()]
    except OSError as exc:
        return f"unreadable ({exc})"
    return f"frozen={_frozen(path)} procs={[(pid, _alive(pid)) for pid in procs]}"


@pytest.mark.loads_machine  # alone: another worker's referee, sweeping dead referees' cgroups at
# its start, ended the trapped bots during the test's second of watching them (a busy full run)
def test_a_bot_frozen_when_its_referee_and_watchdog_are_killed_is_ended_by_the_next_referee():
    """The suite's lost bots (issue 35): a sandboxed bot frozen while its opponent moves (the
    default, `suspend`), its referee and the referee's watchdog both killed. Its SIGKILL, and
    --die-with-parent's, wait for a thaw no one does: the bot and both its bwrap processes (all in
    its cgroup) stay, frozen, under the nearest reaper. The next referee's first cgroup ends them."""
    needs_sandbox()
    needs_cgroups()
    # Moves of 5 s: a bot stays frozen for seconds once seen frozen, so the kill lands in the
    # freeze, not in a turn change (with 0.2 s moves a busy machine saw none frozen after the kill).
    sleeper = (sys.executable, str(HERE / "bots" / "broken.py"), "sleep", "5")
    script = (
        "from arena.match.clock import TimeControl\n"
        "from arena.cell.limits import Limits\n"
        "from arena.match.referee import run_match\n"
        "from arena.match.spec import BotSpec, MatchSpec\n"
        f"bots = (BotSpec('a', {sleeper!r}), BotSpec('b', {sleeper!r}))\n"
        "spec = MatchSpec('k', 'domineering', bots, TimeControl(per_move=60.0), tuple(range(50)),\n"
        "                 params={'rows': 8, 'cols': 8}, limits=Limits(sandbox='on'))\n"
        "run_match(spec)\n"
    )
    referee = subprocess.Popen([sys.executable, "-c", script], cwd=HERE.parent)
    held: list[int] = []
    try:
        deadline = time.monotonic() + 30
        frozen = []
        while not frozen:
            assert time.monotonic() < deadline and referee.poll() is None, "no bot was frozen"
            time.sleep(0.02)
            # stopped, the referee thaws nothing between the look and the kill (a test descheduled
            # on a busy machine could otherwise kill it as the turn changes and the bot thaws)
            os.kill(referee.pid, signal.SIGSTOP)
            while not _stopped(referee.pid):
                time.sleep(0.001)
            frozen = [Path(p) for p in _bot_cgroups(referee.pid) if _frozen(Path(p))]
            if not frozen:
                os.kill(referee.pid, signal.SIGCONT)
        watchdogs = [pid for pid in _children(referee.pid) if "watchdog.py" in _cmdline(pid)]
        assert watchdogs, "the referee has no watchdog"
        seen = {path: _freezer_state(path) for path in frozen}
        # the watchdogs first, dead before the referee is killed: a watchdog outliving its referee
        # by a moment sweeps (thaws and kills) the bots the test means to see trapped, as a slow
        # host once let one do between the two kills (the cgroups seen thawed and empty, not removed)
        for pid in watchdogs:
            os.kill(pid, signal.SIGKILL)
        _wait_ended(watchdogs)
        os.kill(referee.pid, signal.SIGKILL)
        referee.wait(5)
        time.sleep(0.5)  # what the kills were ending has ended (a process killed as it froze)
        frozen = [Path(p) for p in _bot_cgroups(referee.pid) if _frozen(Path(p))]  # as the kill left them
        held = [int(p) for path in frozen for p in (path / "cgroup.procs").read_text().split()]
        time.sleep(1.0)
        # the trap: nothing else will end them (once a busy run saw none held: say what was where)
        assert held and all(_alive(pid) for pid in held), (
            f"held {held}; frozen before the kills: {seen}; after them: "
            f"{ {path: _freezer_state(path) for path in seen} }; the referee's bot cgroups now: "
            f"{_bot_cgroups(referee.pid)}")
        script = ("from arena.cell import cgroup\n"
                  "cgroup.Cgroup.create(64 << 20, 16).remove()\n")
        done = subprocess.run([sys.executable, "-c", script], cwd=HERE.parent, capture_output=True,
                              text=True, timeout=30)
        assert done.returncode == 0, done.stderr
        _wait_ended(held)
        assert [(pid, _cmdline(pid)[:80]) for pid in held if _alive(pid)] == []
        assert _bot_cgroups(referee.pid) == []
    finally:
        if referee.poll() is None:
            referee.kill()
            referee.wait()
        for path in _bot_cgroups(referee.pid):  # on failure: nothing of the test left frozen
            for name, value in (("freezer.state", "THAWED"), ("cgroup.freeze", "0")):
                if Path(path, name).is_file():
                    Path(path, name).write_text(value)
        for pid in held:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def _children(pid: int) -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit() and _parent(int(name)) == pid]


def _stopped(pid: int) -> bool:
    """Every thread of the process stopped (state T in /proc), or the process gone or a zombie."""
    try:
        states = set()
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/stat", "rb") as f:
                states.add(f.read().rsplit(b")", 1)[1].split()[0])
    except (OSError, IndexError):
        return True
    return states <= {b"T", b"Z", b"X"}


def _alive(pid: int) -> bool:
    from arena.cell.limits import process_exists

    return process_exists(pid)


def _wait_ended(pids: list[int], timeout_s: float = 5.0) -> None:
    """Wait until none of `pids` is alive, or until `timeout_s` has passed."""
    deadline = time.monotonic() + timeout_s
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.01)


def test_cgroups_left_by_a_referee_killed_with_its_watchdog_are_removed_by_the_next():
    """A referee and its watchdog both killed leave bot cgroups behind; the next process to make
    one removes those of dead referees, killing what they still hold (a frozen process too), and
    leaves a live referee's alone."""
    needs_cgroups()
    layout = cgroup.detect()
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    stale = [parent / f"arena-{gone.pid}-0badc0ffee00" for parent in layout.parents.values()]
    live = [parent / f"arena-{os.getppid()}-0badc0ffee01" for parent in layout.parents.values()]
    busy = [parent / f"arena-{gone.pid}-0badc0ffee02" for parent in layout.parents.values()]
    for path in stale + live + busy:
        path.mkdir()
    sleeper = subprocess.Popen(["sleep", "60"])  # a process still in a dead referee's cgroup, frozen
    for path in busy:
        (path / "cgroup.procs").write_text(str(sleeper.pid))
    for path in busy:
        for name, value in (("freezer.state", "FROZEN"), ("cgroup.freeze", "1")):
            if (path / name).is_file():
                (path / name).write_text(value)
    try:
        script = ("from arena.cell import cgroup\n"
                  "group = cgroup.Cgroup.create(64 << 20, 16)\n"
                  "group.remove()\n"
                  "print(cgroup.reap_stale(cgroup.detect()))\n")  # once a process: nothing more
        done = subprocess.run([sys.executable, "-c", script], cwd=HERE.parent, capture_output=True,
                              text=True, timeout=30)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "[]"
        assert [p for p in stale + busy if p.exists()] == []
        assert sleeper.wait(5) == -signal.SIGKILL  # thawed and killed: it held its dead referee's cgroup
        assert all(p.exists() for p in live)  # its referee (this test's parent) still runs
    finally:
        for path in busy:
            for name, value in (("freezer.state", "THAWED"), ("cgroup.freeze", "0")):
                if (path / name).is_file():
                    (path / name).write_text(value)
        sleeper.kill()
        sleeper.wait()
        for path in stale + live + busy:
            while path.exists():  # the killed sleeper leaves its cgroup a moment later
                try:
                    path.rmdir()
                except OSError:
                    time.sleep(0.01)


# --- links: a path is shown only resolved, and only where it stays in the bot's own folder ---

PEEKING_BOT = '''import sys
print("PEEK:" + open(sys.argv[1]).read(), file=sys.stderr, flush=True)
'''


def _kits_with_a_link(tmp_path: Path) -> tuple[Path, Path]:
    """`mine` (a bot that prints the file its command names, then plays; as in the audit, no
    build.sh left) holding `a1 -> ../theirs`, and the kit `theirs` with a secret."""
    mine, theirs = tmp_path / "kits" / "mine", tmp_path / "kits" / "theirs"
    for kit in (mine, theirs):
        kit.mkdir(parents=True)
    (theirs / "build.sh").write_text("#!/bin/sh\necho python3 bot.py\n")
    (theirs / "secret.txt").write_text("THEIR-SECRET-SOURCE\n")
    (mine / "bot.py").write_text(PEEKING_BOT + (HERE.parent / "examples" / "raw_bot.py").read_text())
    (mine / "a1").symlink_to("../theirs")
    return mine, theirs


def test_arena_match_refuses_a_bot_naming_a_link_out_of_its_folder_and_the_bot_forfeits(tmp_path):
    """`a1 -> ../theirs` in a bot's kit, named on its command line: the bot does not start (the
    game is forfeited, naming the path), the secret behind the link is never read, and the match
    ends normally (the referee unharmed)."""
    needs_sandbox()
    mine, _ = _kits_with_a_link(tmp_path)
    done = run_arena("match", "domineering", "random", f"python3 {mine}/bot.py {mine}/a1/secret.txt",
                     "--games", "1", "--time", "1", "--param", "rows=4", "--param", "cols=4",
                     "--sandbox", "on", "--out", "out", cwd=tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr
    [directory] = (tmp_path / "out" / "matches").iterdir()
    record = GameRecord.from_json((directory / "games.jsonl").read_text().splitlines()[0])
    forfeit = record.forfeit
    assert forfeit is not None and forfeit["reason"] == Forfeit.CRASHED.value, forfeit
    assert f"{mine}/a1/secret.txt" in forfeit["detail"], forfeit
    assert "passes through a link into another bot's folder" in forfeit["detail"]
    written = [p.read_text() for p in directory.iterdir() if p.is_file()]
    everything = done.stdout + done.stderr + "".join(written)
    assert "THEIR-SECRET" not in everything


def test_a_link_inside_the_bots_own_folder_is_shown_and_a_link_out_is_refused_naming_it(tmp_path):
    """bwrap_argv binds resolved paths: a link that stays inside the kit works (the bot reads its
    target), one leading out (by the link itself or through a linked folder), or a file bot that is
    a link to another file, is BindRefused naming the path as the command gave it."""
    needs_sandbox()
    mine, theirs = _kits_with_a_link(tmp_path)
    (mine / "build.sh").write_text("#!/bin/sh\necho python3 bot.py\n")
    (mine / "book.txt").write_text("MY-BOOK\n")
    (mine / "book-link").symlink_to("book.txt")
    argv = sandbox.bwrap_argv(["/bin/cat", str(mine / "book-link")], None)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30, env={"PATH": "/usr/bin:/bin"})
    assert done.stdout == "MY-BOOK\n", done.stderr
    for named in (mine / "a1" / "secret.txt", mine / "a1"):
        with pytest.raises(sandbox.BindRefused, match=f"^{named} is .*a link leading out of its own folder "
                                                      f"{mine}:"):
            sandbox.bwrap_argv(["/bin/cat", str(named)], None)
    (theirs / "build.sh").unlink()
    (tmp_path / "alone.py").symlink_to(theirs / "secret.txt")
    with pytest.raises(sandbox.BindRefused, match=f"^{tmp_path}/alone.py is a link to another file"):
        sandbox.bwrap_argv(["/bin/cat", str(tmp_path / "alone.py")], None)
    argv = sandbox.bwrap_argv(["/bin/cat", str(tmp_path / "alone.py")], None, read=[str(theirs)])  # granted
    assert str(theirs / "secret.txt") in argv


def test_no_sandbox_ever_binds_a_courses_own_files(tmp_path, monkeypatch):
    """Defence in depth, whatever user the server runs as: a bind inside a course directory but
    outside its build folders, one holding a private path, or one of the paths of
    ARENA_PRIVATE_PATHS is refused; a build folder is bound."""
    needs_sandbox()
    course = tmp_path / "course"
    (course / "builds" / "7").mkdir(parents=True)
    (course / "course.toml").write_text('game = "domineering"\n')
    (course / "session.key").write_text("KEY\n")
    (course / "builds" / "7" / "bot.py").write_text("print(1)\n")
    build = str(course / "builds" / "7")
    assert build in sandbox.bwrap_argv(["/bin/cat"], None, write=[build])
    for named in (course / "session.key", course / "builds", course):
        with pytest.raises(sandbox.BindRefused, match=f"^{named} lies in a course's directory"):
            sandbox.bwrap_argv(["/bin/cat", str(named)], None)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "key").write_text("KEY\n")
    monkeypatch.setenv(sandbox.PRIVATE_ENV, str(elsewhere / "key"))
    for named in (elsewhere / "key", elsewhere):
        with pytest.raises(sandbox.BindRefused, match=f"^{named} is, holds or lies in a file of the server"):
            sandbox.bwrap_argv(["/bin/cat", str(named)], None)


MAIN_JAVA = """import java.io.*;
public class Main {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            String[] w = line.split(" ");
            if (w[0].equals("turn")) { System.out.println("move " + Moves.first(w)); System.out.flush(); }
            else if (w[0].equals("bye")) break;
        }
    }
}
"""
MOVES_JAVA = """public class Moves {
    public static String first(String[] words) {
        for (int i = 0; i < words.length; i++) if (words[i].equals("legal")) return words[i + 1];
        return "?";
    }
}
"""


def test_a_text_protocol_java_bot_sees_every_folder_of_its_class_path(tmp_path):
    """`stdio:java -cp A:B Main`: the adapter runs the command, and the sandbox shows both class-path
    folders (it showed neither: the joined entry, read as one word behind the adapter, is no path)."""
    require(shutil.which("javac") and shutil.which("java"), "javac/java not installed (default-jdk)")
    reason = sandbox.unavailable_reason()
    require(reason is None, f"bots cannot be sandboxed here: {reason}")
    for folder, name, source in (("a", "Main", MAIN_JAVA), ("b", "Moves", MOVES_JAVA)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / f"{name}.java").write_text(source)
    subprocess.run(["javac", "-d", str(tmp_path / "b"), str(tmp_path / "b" / "Moves.java")], check=True)
    subprocess.run(["javac", "-cp", str(tmp_path / "b"), "-d", str(tmp_path / "a"),
                    str(tmp_path / "a" / "Main.java")], check=True)
    classpath = f"{tmp_path / 'a'}{os.pathsep}{tmp_path / 'b'}"
    done = run_arena("match", "domineering", f"stdio:java -cp {classpath} Main", "random", "--games", "2",
                     "--time", "5", "-p", "rows=4", "-p", "cols=4", "--out", "out", "--sandbox", "on",
                     cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    [games] = (tmp_path / "out").glob("matches/*/games.jsonl")
    records = [json.loads(line) for line in games.read_text().splitlines()]
    assert [r["forfeit"] for r in records] == [None, None], [r["logs"] for r in records]


def test_a_sandboxed_bot_is_stopped_by_its_cgroup_without_a_scan_of_proc(tmp_path, monkeypatch):
    """A sandboxed bot whose cgroup is emptied is not looked for by its marker in every process's
    environment (no process of a sandbox can leave its cgroup); the attacker's daemon, which left
    its session and cleared its environment, is gone all the same. Unsandboxed bots still are."""
    needs_sandbox()
    needs_cgroups()
    from arena.cell import launcher

    scans: list[str] = []
    real = launcher.kill_marked

    def counted(marker: str, *args: object, **kwargs: object) -> int:
        scans.append(marker)
        return real(marker, *args, **kwargs)

    monkeypatch.setattr(launcher, "kill_marked", counted)
    forgotten: list[tuple] = []
    real_forget = launcher.Watchdog.forget

    def forget(watchdog, pgid, marker=None, cgroup_dirs=None):
        forgotten.append((marker, cgroup_dirs))
        real_forget(watchdog, pgid, marker, cgroup_dirs)

    monkeypatch.setattr(launcher.Watchdog, "forget", forget)
    honest = honest_bot(tmp_path / "honest")
    sealed = MatchSpec("scan-on", "domineering", (honest, attacker("all", victim=str(tmp_path / "v"))),
                       TimeControl(per_move=5), (0,), params=PARAMS,
                       limits=Limits(sandbox="on", memory_mb=256, processes=64))
    assert run_match(sealed)[0].isolation == "sandbox"
    assert scans == [] and _bot_pids(TAG) == [], scans  # its daemon too (the fixture checks again)
    # and its watchdog is told to forget what is known empty: its marker and its cgroup's directories
    assert forgotten and all(marker and dirs for marker, dirs in forgotten), forgotten
    bare = MatchSpec("scan-off", "domineering", (honest, BotSpec("other", honest.command)),
                     TimeControl(per_move=5), (0,), params=PARAMS, limits=Limits(sandbox="off"))
    assert run_match(bare)[0].isolation.startswith("none")
    assert len(scans) == 2, scans


def test_the_watchdog_sweeps_the_cgroups_it_knows_of_and_leaves_those_it_forgot():
    """When its pipe closes the watchdog kills what a registered cgroup holds and removes it; a
    cgroup the referee told it to forget (its bot stopped and the cgroup emptied) it leaves alone."""
    needs_cgroups()
    from arena.cell.limits import Watchdog

    kept, forgotten = cgroup.Cgroup.create(64 << 20, 16), cgroup.Cgroup.create(64 << 20, 16)
    kept_dirs, forgotten_dirs = ([str(d) for d in g.dirs.values()] for g in (kept, forgotten))
    try:
        watchdog = Watchdog()
        watchdog.register_cgroup(kept_dirs)
        watchdog.register_cgroup(forgotten_dirs)
        watchdog.forget(None, cgroup_dirs=forgotten_dirs)
        watchdog.close(wait_s=10)
        assert not any(Path(d).exists() for d in kept_dirs), kept_dirs
        assert all(Path(d).exists() for d in forgotten_dirs), forgotten_dirs
    finally:
        forgotten.remove()
        kept.remove()
