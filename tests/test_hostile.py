"""Hostile bots, each a real process: every one ends in a forfeit with the right reason, the opponent
credited, and the referee, the tournament and the machine unharmed (no process left, memory bounded).

Every process started here carries SUITE_TAG in its environment (the referee copies its environment
to the bots, and bots to their children), so /proc tells whether any of them is still running.
"""
from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterable
from pathlib import Path

import pytest
from conftest import rss_bytes

from arena.cell.launcher import LOG_NAME, resolve_command
from arena.cell.limits import Limits, cpu_offset, process_exists
from arena.cell.watchdog import pids_with_env
from arena.match.clock import TimeControl
from arena.match.records import Forfeit
from arena.match.referee import LOG_TAIL_CHARS, run_match
from arena.match.spec import BotSpec, MatchSpec
from arena.tournament import runner as tmod

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RANDOM = BotSpec("random", resolve_command("random"))
PARAMS = {"rows": 6, "cols": 6}
FAST = TimeControl(per_move=0.3, margin=0.05)
EASY = TimeControl(per_move=5.0)
"""For the tests that check no clock: in a busy full run a 0.3 s move once ran out with its bot
neither running nor waiting for a CPU all along (the delay on the referee's side), a lost game."""
HOG_LIMITS = Limits(memory_mb=256)
"""The memory hog never runs unbounded: 256 MiB of private memory, then MemoryError."""
TAG_ENV = "ARENA_HOSTILE_SUITE"
SUITE_TAG = secrets.token_hex(8)
RSS_GROWTH_MAX = 64 << 20
"""How much the referee's (this process's) resident memory may grow over the suite (bytes)."""


def broken(mode: str, *args: object) -> BotSpec:
    command = (sys.executable, str(HERE / "bots" / "broken.py"), mode, *map(str, args))
    return BotSpec(f"hostile-{mode}", command)


def match(bots, games=1, time_control=FAST, **fields) -> MatchSpec:
    return MatchSpec(match_id=fields.pop("match_id", "h"), game="domineering", bots=tuple(bots),
                     time_control=time_control, game_numbers=tuple(range(games)), params=PARAMS, **fields)


def tagged_pids() -> list[int]:
    """Live processes of this suite (bots, their children, watchdogs), this one excluded, and so is
    the resource tracker that multiprocessing starts once for this process (it ends with it)."""
    found = []
    for pid in pids_with_env(TAG_ENV, SUITE_TAG):
        if process_exists(pid) and "multiprocessing.resource_tracker" not in _cmdline(pid):
            found.append(pid)
    return found


def wait_until_none_left(timeout_s: float = 5.0, pids: Iterable[int] = ()) -> list[str]:
    """The processes of this suite, and of `pids`, still running after `timeout_s`: "pid: command
    line". A killed process can take a while to die on a busy machine, and while it exits its
    environment (which `tagged_pids` reads) is gone already: `pids` are looked for by number."""
    deadline = time.monotonic() + timeout_s
    while True:
        left = sorted({*tagged_pids(), *(p for p in pids if process_exists(p))})
        if not left or time.monotonic() >= deadline:
            return [f"{pid}: {_cmdline(pid)}" for pid in left]
        time.sleep(0.05)


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "?"


@pytest.fixture(scope="module", autouse=True)
def suite_tag():
    """Tag every process started by this module; at the end, kill (and report) any left over."""
    os.environ[TAG_ENV] = SUITE_TAG
    try:
        yield
    finally:
        del os.environ[TAG_ENV]
        for pid in tagged_pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


@pytest.fixture(scope="module")
def rss_at_start(suite_tag):
    return rss_bytes()


def check_forfeit(record, name, reason, detail):
    loser = record.players.index(name)
    assert record.forfeit is not None, record
    assert record.forfeit["seat"] == loser
    assert record.forfeit["reason"] == reason.value == record.reason, record.forfeit
    assert detail in record.forfeit["detail"], record.forfeit
    assert record.winner == 1 - loser and record.points(1 - loser) == 1.0


def check_both_silent(record, name, detail):
    """A double forfeit where the hostile bot's half is its own (NO_HELLO, `detail`) and the honest
    bot's is only that it was slow to start (on a machine loaded by others it may miss its
    startup limit): never a wrong token of the honest bot's."""
    assert record.forfeit["reason"] == "double_forfeit", record.forfeit
    sides = {side["seat"]: side for side in record.forfeit["both"]}
    hostile, honest = sides[record.players.index(name)], sides[1 - record.players.index(name)]
    assert hostile["reason"] == Forfeit.NO_HELLO.value and detail in hostile["detail"], record.forfeit
    assert honest["reason"] == Forfeit.NO_HELLO.value and "token" not in honest["detail"], record.forfeit


def test_the_referee_memory_is_measured_first(rss_at_start):
    assert rss_at_start > 0


@pytest.mark.parametrize(
    "bot, limits, reason, detail",
    [
        (broken("onlywrong"), None, Forfeit.NO_HELLO, "a hello with a wrong token"),
        (broken("flood10k"), None, Forfeit.MALFORMED_MESSAGE, "more than 1000 unexpected messages"),
        (broken("huge"), None, Forfeit.MALFORMED_MESSAGE, "connection was dropped"),
        (broken("wrongply"), None, Forfeit.TIMEOUT, "messages for another game or ply dropped"),
        (broken("hog"), HOG_LIMITS, Forfeit.CRASHED, "exited with code 1"),
        (broken("busy"), None, Forfeit.TIMEOUT, "no move for ply"),
        (broken("busy"), Limits(cpu_s=1), Forfeit.CRASHED, "killed by SIGXCPU"),
        (broken("forker"), Limits(sandbox="off"), Forfeit.CRASHED, "exited with code 5"),  # markers
        (broken("spew"), None, Forfeit.TIMEOUT, "no move for ply"),
        (broken("crash"), None, Forfeit.CRASHED, "exited with code 3"),
        (broken("abort"), None, Forfeit.CRASHED, "killed by SIGABRT"),
        (broken("deepinfo", 990), None, Forfeit.MALFORMED_MESSAGE, "nested deeper than 32 levels"),
    ],
    ids=["wrong-token-only", "10k-messages-a-second", "100MB-message", "another-game-or-ply",
         "memory-hog", "busy-loop", "cpu-limit", "forks-children", "megabytes-of-output", "exits",
         "aborts", "info-nested-990-deep"],
)
def test_each_hostile_bot_forfeits_and_its_processes_are_gone(bot, limits, reason, detail, tmp_path):
    # Time to reach a limit, or to build and send 100 MB on a loaded machine: those forfeits come
    # from the limit or the dropped connection, never from the clock.
    slow = limits is not None or "huge" in bot.name
    clock = TimeControl(per_move=5.0) if slow else FAST
    # a bot that never says a good hello is waited for the whole startup: 3 s, so that on a busy
    # machine it has started and sent its wrong one (at 1 s, in a run beside two CPU hogs it had
    # not: the forfeit then said only "no hello within 1 s")
    startup = 3.0 if reason is Forfeit.NO_HELLO else 10.0
    records = run_match(match([bot, RANDOM], games=2, time_control=clock), limits=limits,
                        workdir=tmp_path, startup_timeout_s=startup)
    assert [r.game_id for r in records] == ["h-g0", "h-g1"]  # the match went on after the forfeit
    for record in records:
        if reason is Forfeit.NO_HELLO and record.forfeit and record.forfeit["seat"] is None:
            check_both_silent(record, bot.name, detail)  # a busy machine: random missed its startup too
        else:
            check_forfeit(record, bot.name, reason, detail)
        assert len(record.logs.get("0", "")) <= LOG_TAIL_CHARS + 3
        assert len(record.logs.get("1", "")) <= LOG_TAIL_CHARS + 3
    assert wait_until_none_left() == []
    for log_file in tmp_path.glob(f"*/{LOG_NAME}"):  # megabytes written, the log stays capped
        assert log_file.stat().st_size <= 2 * Limits().log_bytes
    if "hog" in bot.name:
        assert "MemoryError" in records[0].logs[str(records[0].players.index(bot.name))]
    for children in tmp_path.glob("*/children.txt"):  # every child that left the session is gone
        pids = [int(p) for p in children.read_text().split()]
        assert len(pids) == 3 and wait_until_none_left(pids=pids) == []


def test_a_wrong_token_is_ignored_and_the_real_bot_still_plays():
    bot = broken("wrongtoken")
    record = run_match(match([bot, RANDOM], games=1, time_control=EASY))[0]
    assert record.forfeit is None and record.moves
    assert record.reason == "no legal move"


@pytest.mark.timing  # the sleeper's first move timed to within 0.1 s
def test_a_flood_does_not_slow_the_opponent_and_the_flooder_forfeits():
    sleeper = broken("sleep", 0.05)  # seat 0: its first move is timed while the other floods
    flooder = broken("flood10k")
    record = run_match(match([sleeper, flooder], games=1, time_control=TimeControl(per_move=1.0)))[0]
    check_forfeit(record, "hostile-flood10k", Forfeit.MALFORMED_MESSAGE, "unexpected messages")
    first = record.moves[0]
    # timed at all (its 0.05 s sleep; the clock starts once the referee's send has returned, so a
    # busy machine once measured 0.0455 s), and not slowed by the flood
    assert first.seat == 0 and 0.025 <= first.time_s < 0.15, first


def test_a_move_after_the_game_is_over_is_dropped():
    records = run_match(match([broken("afterover"), RANDOM], games=2, time_control=EASY))
    assert all(r.forfeit is None and r.reason == "no legal move" for r in records)


def _process_of(name_part: str) -> int:
    for pid in tagged_pids():
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if name_part.encode() in f.read().replace(b"\0", b" "):
                    return pid
        except OSError:
            continue
    raise AssertionError(f"no process {name_part!r}")


def _state(pid: int) -> str:
    with open(f"/proc/{pid}/stat", "rb") as f:
        return f.read().rsplit(b")", 1)[1].split()[0].decode()


def test_suspend_stops_the_bot_not_to_move_and_pinning_gives_each_bot_a_cpu():
    sleeper = broken("sleep", 0.05)
    seen = []

    def on_move(record, move, state):
        if len(seen) < 4:
            waiting = _process_of("bots random" if move.seat == 0 else "broken.py")
            # SIGSTOP takes effect when the process next runs: on a busy machine a bot still
            # runnable after its move reads "R" for a moment; one the referee let run stays so
            deadline = time.monotonic() + 2.0
            while _state(waiting) != "T" and time.monotonic() < deadline:
                time.sleep(0.01)
            seen.append((move.seat, _state(waiting), os.sched_getaffinity(_process_of("broken.py")),
                         os.sched_getaffinity(_process_of("bots random"))))

    limits = Limits(suspend=True, pin_cpus=True, sandbox="off")  # SIGSTOP (the freezer: test_sandbox)
    record = run_match(match([sleeper, RANDOM], games=1, time_control=EASY), on_move=on_move,
                       limits=limits)[0]
    assert record.forfeit is None
    cpus = sorted(os.sched_getaffinity(0))
    first = cpu_offset()  # 0 unless ARENA_CPU_OFFSET says (the suite's second xdist worker: 1)
    for _seat, waiting_state, sleeper_cpus, random_cpus in seen:
        assert waiting_state == "T", seen  # the bot that was not to move was stopped
        assert sleeper_cpus == {cpus[first % len(cpus)]} and random_cpus == {cpus[(first + 1) % len(cpus)]}


def test_no_bot_outlives_a_referee_killed_with_sigkill(tmp_path):
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        from arena.match.clock import TimeControl
        from arena.match.spec import BotSpec, MatchSpec
        from arena.match.referee import run_match
        forker = BotSpec("forker", {broken("forker", 1).command!r})
        random = BotSpec("random", {RANDOM.command!r})
        from arena.cell.limits import Limits
        spec = MatchSpec("k", "domineering", (forker, random), TimeControl(per_move=60.0), (0,),
                         params={PARAMS!r}, limits=Limits(sandbox="off"))  # markers and watchdog
        run_match(spec, workdir=sys.argv[1])
    """)
    referee = subprocess.Popen([sys.executable, "-c", script, str(tmp_path)])
    try:
        deadline = time.monotonic() + 20
        children = tmp_path / "bot0-forker" / "children.txt"
        while not (children.exists() and len(children.read_text().split()) == 3):
            assert time.monotonic() < deadline and referee.poll() is None, "the forker never forked"
            time.sleep(0.05)
        pids = [int(p) for p in children.read_text().split()]
        assert all(process_exists(p) for p in pids)
        os.kill(referee.pid, signal.SIGKILL)
        referee.wait(5)
        assert wait_until_none_left(pids=pids) == []
    finally:
        if referee.poll() is None:
            referee.kill()
            referee.wait()


def test_a_tournament_with_the_worst_bots_records_every_game(tmp_path):
    bot = str(HERE / "bots" / "broken.py")
    data = {
        "name": "hostile", "game": "domineering", "time": "0.3", "games_per_pairing": 2,
        "params": PARAMS, "limits": {"memory_mb": 256},
        "bots": [{"name": "random", "command": "random"},
                 {"name": "forker", "command": [sys.executable, bot, "forker"]},
                 {"name": "hog", "command": [sys.executable, bot, "hog"]},
                 {"name": "flood", "command": [sys.executable, bot, "flood10k"]}],
    }
    tour = tmod.from_dict(data, tmp_path / "hostile.toml")
    assert tour.limits == Limits(memory_mb=256)
    summary = tmod.run(tour, tmp_path / "results", concurrency=2, progress=None)
    assert summary.failures == [] and summary.stored == summary.planned == tour.total_games() == 12
    from arena.tournament.store import DB_NAME, Store
    with Store(tour.results_dir(tmp_path / "results") / DB_NAME, create=False) as store:
        assert store.count() == 12
    assert wait_until_none_left() == []


@pytest.mark.parametrize("table, message", [
    ({"memory": 1}, "unknown key 'memory'"),
    ({"memory_mb": -1}, "memory_mb must be a whole number"),
    ({"suspend": "yes"}, "suspend must be true or false"),
    ({"memory_kind": "rss"}, "memory_kind"),
])
def test_a_bad_limits_table_is_refused(table, message, tmp_path):
    data = {"game": "domineering", "limits": table,
            "bots": [{"name": "a", "command": "random"}, {"name": "b", "command": "random"}]}
    with pytest.raises(tmod.TournamentError, match=message):
        tmod.from_dict(data, tmp_path / "t.toml")


def test_after_the_suite_no_process_is_left_and_the_referee_memory_stayed_bounded(rss_at_start):
    assert wait_until_none_left() == []
    assert rss_bytes() - rss_at_start < RSS_GROWTH_MAX, (rss_at_start, rss_bytes())
