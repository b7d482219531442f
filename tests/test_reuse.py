"""Bot processes kept from one match to the next (arena.match.reuse): real bots, real sockets."""
from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

from conftest import require

from arena.cell import sandbox
from arena.cell.launcher import resolve_command
from arena.cell.limits import Limits
from arena.match.clock import TimeControl
from arena.match.players import Players
from arena.match.protocol import BotClient
from arena.match.referee import run_match
from arena.match.reuse import BotHub
from arena.match.spec import BotSpec, MatchSpec
from arena.tournament import runner as tmod
from tests.test_tournament import write

ROOT = Path(__file__).resolve().parents[1]
BROKEN = ROOT / "tests" / "bots" / "broken.py"
CLOCK = TimeControl(per_move=0.5)
KEPT_TIME = "2"
"""The tournaments' clock here: a bot that loses a game is started again, so these tests, which
count the starts, need a clock no honest bot runs out of however busy the machine (at 0.2 s a
`random` once lost a move on time under load, marked so, and was started a fifth time)."""
SANDBOXED = Limits(sandbox="on")


def needs_sandbox() -> None:
    reason = sandbox.unavailable_reason()
    require(reason is None, f"bots cannot be sandboxed here: {reason}")


def spec(match_id: str, a: BotSpec, b: BotSpec, games=(0, 1), limits: Limits | None = None) -> MatchSpec:
    return MatchSpec(match_id=match_id, game="domineering", bots=(a, b), time_control=CLOCK,
                     game_numbers=games, params={"rows": 4, "cols": 4}, limits=limits)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as handle:  # a zombie is not alive
        return handle.read().rsplit(")", 1)[1].split()[0] != "Z"


def test_a_bot_is_kept_between_matches_and_stopped_with_the_hub():
    random_cmd = resolve_command("random")
    one, two, three = (BotSpec(n, random_cmd) for n in ("one", "two", "three"))
    hub = BotHub()
    try:
        first = run_match(spec("one-vs-two", one, two), hub=hub)
        assert hub.started == 2 and len(hub.idle) == 2
        pids = {p.spec.name: p.process.pid for p in hub.idle.values()}
        second = run_match(spec("one-vs-three", one, three), hub=hub)
        assert hub.started == 3 and hub.reused == 1  # "one" came from the hub, "three" was started
        assert {p.spec.name: p.process.pid for p in hub.idle.values()}["one"] == pids["one"]
        for record in first + second:
            assert record.forfeit is None and record.moves
        assert [r.players for r in second] == [["one", "three"], ["three", "one"]]
        kept = [p.process.pid for p in hub.idle.values()]
        assert all(alive(pid) for pid in kept)
    finally:
        hub.close()
    assert not any(alive(pid) for pid in kept)


def test_a_bot_that_crashed_is_not_kept_and_starts_afresh():
    crasher = BotSpec("crasher", (sys.executable, str(BROKEN), "crash"))
    other = BotSpec("random", resolve_command("random"))
    hub = BotHub()
    try:
        records = run_match(spec("c-vs-r", crasher, other, games=(0,)), hub=hub)
        assert records[0].forfeit["reason"] == "crashed"
        assert [p.spec.name for p in hub.idle.values()] == ["random"]
        again = run_match(spec("c-vs-r2", crasher, other, games=(0,)), hub=hub)
        assert again[0].forfeit["reason"] == "crashed"  # it played again: a new process was started
        assert hub.started == 3
    finally:
        hub.close()


def test_pinned_bots_are_not_reused():
    pinned = Limits(pin_cpus=True)
    a, b = (BotSpec(n, resolve_command("random")) for n in ("a", "b"))
    hub = BotHub()
    try:
        run_match(spec("a-vs-b", a, b, games=(0,), limits=pinned), hub=hub)
        assert not hub.idle
    finally:
        hub.close()


def test_a_tournament_worker_starts_each_bot_once(tmp_path):
    path = write(tmp_path / "r.toml", bots=("a", "b", "c", "d"), games=2, time_s=KEPT_TIME)
    summary = tmod.run(tmod.load(path), tmp_path / "res", concurrency=1, progress=None)
    assert summary.stored == 12 and not summary.failures
    # 6 matches of 2 bots: 12 starts without reuse; one worker keeps all four bots
    assert summary.bot_starts == 4


def test_a_swiss_keeps_its_worker_and_bots_from_round_to_round(tmp_path):
    path = write(tmp_path / "s.toml", bots=("a", "b", "c", "d"), games=2, time_s=KEPT_TIME,
                 extra='format = "swiss"\nrounds = 3')
    summary = tmod.run(tmod.load(path), tmp_path / "res", concurrency=1, progress=None)
    assert summary.stored == 3 * 2 * 2 and not summary.failures and summary.phases == 3
    assert summary.bot_starts == 4  # 6 matches, 12 seats: each bot started once for the 3 rounds


# --- sandboxed bots kept by the hub: each process keeps its own private socket, in any seat ---

def test_a_sandboxed_tournament_worker_starts_each_bot_once(tmp_path):
    needs_sandbox()
    path = write(tmp_path / "r.toml", bots=("a", "b", "c", "d"), games=2, time_s=KEPT_TIME,
                 extra='[limits]\nsandbox = "on"')
    tour = tmod.load(path)
    summary = tmod.run(tour, tmp_path / "res", concurrency=1, progress=None)
    assert summary.stored == 12 and not summary.failures
    assert summary.bot_starts == 4  # 12 seats, each bot started once, sandboxed
    from arena.tournament.store import DB_NAME, Store
    with Store(tour.results_dir(tmp_path / "res") / DB_NAME, create=False) as store:
        records = [g.record for g in store.games()]
    assert len(records) == 12 and {r.isolation for r in records} == {"sandbox"}
    assert all(r.forfeit is None for r in records)


def test_a_kept_sandboxed_bot_keeps_its_socket_in_another_seat_and_sockets_do_not_pile_up():
    needs_sandbox()
    one, two, three = (BotSpec(n, resolve_command("random")) for n in ("one", "two", "three"))
    crasher = BotSpec("crasher", (sys.executable, str(BROKEN), "crash"))
    hub = BotHub()
    try:
        run_match(spec("one-vs-two", one, two, games=(0,), limits=SANDBOXED), hub=hub)
        kept = next(p for p in hub.idle.values() if p.spec.name == "one")
        pid, private = kept.process.pid, kept.process.private
        assert private is not None and os.path.exists(private.path)
        again = run_match(spec("three-vs-one", three, one, games=(0, 1), limits=SANDBOXED), hub=hub)
        assert hub.reused == 1 and hub.started == 3  # "one" played seat 1 with its process and socket
        assert all(r.forfeit is None and r.isolation == "sandbox" for r in again)
        assert [r.players for r in again] == [["three", "one"], ["one", "three"]]
        kept = next(p for p in hub.idle.values() if p.spec.name == "one")
        assert kept.process.pid == pid and kept.process.private is private
        for number in range(3):  # a bot that crashes is restarted each time: its sockets are closed
            records = run_match(spec(f"crasher-{number}", crasher, two, games=(0,), limits=SANDBOXED),
                                hub=hub)
            assert records[0].forfeit["reason"] == "crashed"
        assert hub.endpoint.private_channels == len(hub.idle) == 3
        assert len(os.listdir(hub.private_dir())) == 3  # one socket file per kept bot
    finally:
        hub.close()
    assert hub.endpoint.private_channels == 0 and not os.path.exists(private.path)


def test_a_stolen_token_is_useless_from_a_kept_bots_socket():
    needs_sandbox()
    kept_spec = BotSpec("kept", resolve_command("random"))
    hub = BotHub()
    try:
        run_match(spec("kept-vs-other", kept_spec, BotSpec("other", resolve_command("random")), games=(0,),
                       limits=SANDBOXED), hub=hub)
        silent = BotSpec("silent", (sys.executable, str(BROKEN), "silent"))
        players = Players((silent, kept_spec), hub.workdir, SANDBOXED, 3.0, None, hub=hub)
        try:
            newcomer, kept = players.players
            assert kept.process is not None and kept.identity is not None  # taken from the hub
            waiting = threading.Thread(target=players.start, args=([newcomer],))
            waiting.start()
            while not newcomer.token or newcomer.process is None:
                time.sleep(0.01)
            with BotClient(f"ipc://{kept.process.private.path}") as thief:  # the kept bot's socket
                thief.send({"type": "hello", "token": newcomer.token, "name": "thief", "protocol": 1})
                # the referee reads the thief's hello before the owner's is sent: a busy machine
                # once took over 0.5 s, the owner's hello came first and the thief's was never read
                deadline = time.monotonic() + 30
                while "another socket" not in " ".join(newcomer.notes) and time.monotonic() < deadline:
                    time.sleep(0.01)
                assert newcomer.identity is None
                with BotClient(f"ipc://{newcomer.process.private.path}") as owner:  # its own binds
                    owner.send({"type": "hello", "token": newcomer.token, "name": "owner", "protocol": 1})
                    waiting.join()
            assert newcomer.identity is not None and newcomer.failure is None
            assert "another socket" in " ".join(newcomer.notes)
        finally:
            players.close()
    finally:
        hub.close()


def test_a_kept_sandboxed_bot_that_was_suspended_is_thawed_for_its_next_match():
    needs_sandbox()
    suspending = Limits(sandbox="on", suspend=True)
    a, b = (BotSpec(n, resolve_command("random")) for n in ("a", "b"))
    hub = BotHub()
    try:
        run_match(spec("a-vs-b", a, b, games=(0,), limits=suspending), hub=hub)
        assert len(hub.idle) == 2
        player = hub.take(a, suspending)  # as a match leaves a bot whose opponent was thinking
        player.process.suspend(wait=True)  # frozen for sure, as before the opponent's turn
        cgroup = player.process.cgroup
        assert cgroup is None or cgroup.frozen()
        assert hub.give_back(player, suspending)
        for player in hub.idle.values():
            assert not player.process.suspended
            assert player.process.cgroup is None or not player.process.cgroup.frozen()
        again = run_match(spec("b-vs-a", b, a, games=(0, 1), limits=suspending), hub=hub)
        assert hub.started == 2 and hub.reused == 3
        assert all(r.forfeit is None and r.moves for r in again)
    finally:
        hub.close()
