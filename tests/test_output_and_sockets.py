"""Issue 21: a bot's output goes through a pipe the referee reads and caps, and a bot's private socket
accepts one peer; shown with real attacking bots (tests/bots/attacks.py) and real processes."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import rss_bytes
from test_sandbox import TAG, attacker, honest_bot, needs_sandbox, reports, tagged  # noqa: F401

from arena.cell.launcher import LOG_CAP_BYTES, LOG_NAME
from arena.cell.limits import Limits
from arena.match.clock import TimeControl
from arena.match.protocol import MAX_PRIVATE_CONNECTIONS, BotClient, RefereeEndpoint
from arena.match.referee import LOG_TAIL_CHARS, run_match
from arena.match.spec import BotSpec, MatchSpec
from arena.tournament import runner
from arena.tournament.store import DB_NAME, Store

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "bots"))
import attacks  # noqa: E402  (the attack itself, tried on a plain file to show it is real)

PARAMS = {"rows": 6, "cols": 6}
CLOCK = TimeControl(per_move=2.0)
MIB = 1 << 20


def _disk_bytes(path: Path) -> int:
    return path.stat().st_blocks * 512


# --- output: a pipe, not a file the bot holds ---

def test_fallocate_on_a_file_reserves_disk_the_size_does_not_show(tmp_path):
    """The attack is real: on a file held as stdout, 64 MiB are reserved while its size stays 0."""
    path = tmp_path / "bot.log"
    with open(path, "wb") as f:
        got = attacks.fallocate(f.fileno(), 64 * MIB)
    assert path.stat().st_size == 0 and _disk_bytes(path) >= 64 * MIB, got


@pytest.mark.parametrize("mode", ["on", "off"])
def test_a_bot_cannot_reserve_disk_through_its_stdout(mode, tmp_path):
    if mode == "on":
        needs_sandbox()
    spec = MatchSpec("fa", "domineering", (attacker("fallocate", mb="256"), honest_bot(tmp_path / "h")),
                     CLOCK, (0, 1), params=PARAMS, limits=Limits(sandbox=mode))
    records = run_match(spec, workdir=tmp_path / "work")
    got = reports(records, "attack-fallocate")
    assert set(got) == {"stdout", "stderr"}
    for value in got.values():  # fallocate on a pipe: ESPIPE
        assert value.startswith("denied: OSError") and "ESPIPE" in value, got
    for record in records:
        assert record.forfeit is None
    logs = list((tmp_path / "work").glob(f"*/{LOG_NAME}"))
    assert len(logs) == 2 and all(_disk_bytes(p) < MIB for p in logs)


def test_a_bot_printing_100_mib_is_capped_and_does_not_slow_its_opponent(tmp_path):
    before = rss_bytes()
    thinker = BotSpec("thinker", (sys.executable, str(HERE / "bots" / "broken.py"), "sleep", "0.1"))
    spec = MatchSpec("pr", "domineering", (attacker("print", mb="100"), thinker),  # printing on its
                     CLOCK, (0, 1), params={"rows": 8, "cols": 8}, limits=Limits(suspend=False))  # turns too
    records = run_match(spec, workdir=tmp_path / "work")
    growth = rss_bytes() - before
    printed = reports(records[1:], "attack-print")["print"]
    assert printed.startswith("SUCCEEDED: printed 100 MiB in"), printed  # the pipe took it all
    for record in records:  # printed while its opponent thought: 0.1 s a move, as without it
        assert record.forfeit is None, record.forfeit
        seat = record.players.index("thinker")
        assert max(m.time_s for m in record.moves if m.seat == seat) < 0.5, record.moves
        assert len(record.logs.get(str(1 - seat), "")) <= LOG_TAIL_CHARS + 3
    [log] = (tmp_path / "work").glob(f"bot0-*/{LOG_NAME}")
    assert log.stat().st_size <= LOG_CAP_BYTES and _disk_bytes(log) <= 2 * LOG_CAP_BYTES
    assert log.read_bytes().startswith(b"[... arena: log cut")
    assert growth < 64 * MIB, growth


def test_what_a_bot_prints_just_before_it_exits_is_in_its_log(tmp_path):
    crash = BotSpec("crash", (sys.executable, "-c", "import sys; print('x' * 5000); "
                              "print('last words', file=sys.stderr); sys.exit(3)"))
    record = run_match(MatchSpec("lw", "domineering", (crash, honest_bot(tmp_path / "h")), CLOCK, (0,),
                                 params=PARAMS), startup_timeout_s=5.0)[0]
    assert record.forfeit["reason"] == "crashed" and "last words" in record.forfeit["detail"]
    assert record.logs["0"].rstrip().endswith("last words")


# --- the private socket: one peer ---

def last_report(records, name: str) -> dict[str, str]:
    """What the attacker `name` said its attacks got at its last move."""
    seen = {}
    for record in records:
        seat = record.players.index(name)
        seen.update(next((m.info["attacks"] for m in reversed(record.moves) if m.seat == seat), {}))
    return seen


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


FLOOD = """import socket, sys, time
held = []
for _ in range(int(sys.argv[2])):
    held.append(socket.socket(socket.AF_UNIX))
    held[-1].connect(sys.argv[1])
time.sleep(60)
"""


def test_a_private_socket_takes_one_peer_and_refuses_the_rest():
    with tempfile.TemporaryDirectory(prefix="arena-test-ipc-") as directory, RefereeEndpoint() as endpoint:
        path = f"{directory}/p.sock"
        channel = endpoint.bind_private(path)
        baseline = _open_fds()
        flooder = subprocess.Popen([sys.executable, "-c", FLOOD, path, "3000"])
        most = 0
        while flooder.poll() is None:  # it holds every connection it made until it is killed
            endpoint.receive(0.01)
            most = max(most, _open_fds() - baseline)
            if endpoint.surplus_dropped >= 3000 - MAX_PRIVATE_CONNECTIONS:
                break
        for _ in range(20):
            endpoint.receive(0.01)
            most = max(most, _open_fds() - baseline)
        flooder.kill()
        flooder.wait()
        assert endpoint.surplus_dropped == 3000 - MAX_PRIVATE_CONNECTIONS
        assert most < 1000, most  # those dropped but not yet closed: never the 3000
        assert _open_fds() - baseline <= MAX_PRIVATE_CONNECTIONS, most
        for _ in range(20):
            endpoint.receive(0.01)
        with BotClient(f"ipc://{path}") as bot:  # the bot's own connection, then its hello
            bot.send({"type": "hello", "token": "t", "name": "b", "protocol": 1})
            got = endpoint.receive(5.0)
            assert got is not None and endpoint.channel_of(got[0]) == channel
            endpoint.bind(got[0])
            with socket.socket(socket.AF_UNIX) as late:
                uid = os.geteuid()
                try:
                    if uid == 0:  # root passes file modes: try as the sandbox's user would
                        os.seteuid(65534)
                    with pytest.raises(PermissionError):
                        late.connect(path)
                finally:
                    os.seteuid(uid)
            bot.send({"type": "hello", "token": "t", "name": "b", "protocol": 1})
            assert endpoint.receive(5.0)[0] == got[0]  # the bound connection still works
        endpoint.unbind_private(channel)


def test_thousands_of_connections_to_its_socket_in_a_tournament_harm_nobody(tmp_path):
    needs_sandbox()
    honest = honest_bot(tmp_path / "honest")
    data = {
        "name": "sockets", "game": "domineering", "time": "2", "games_per_pairing": 2, "params": PARAMS,
        "limits": {"sandbox": "on"},
        "bots": [
            {"name": "honest", "command": list(honest.command)},
            {"name": "attack-sockets", "command": list(attacker("sockets", n="30000", procs="2").command)},
            {"name": "random", "command": "random"},
        ],
    }
    tour = runner.from_dict(data, tmp_path / "sockets.toml")
    summary = runner.run(tour, tmp_path / "results", concurrency=2, progress=None)
    assert summary.failures == [] and summary.stored == 6
    with Store(tmp_path / "results" / "sockets" / DB_NAME) as store:
        records = [g.record for g in store.games()]
    assert len(records) == 6
    got = last_report([r for r in records if "attack-sockets" in r.players], "attack-sockets")
    assert got["connections"].startswith("denied: 0 connections, then PermissionError"), got
    for record in records:
        if "honest" in record.players:
            assert record.forfeit is None, record.forfeit
