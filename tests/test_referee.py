"""The referee with real bot processes: whole matches, every forfeit reason, clocks, late replies."""
from __future__ import annotations

import json
import logging
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import rules
from arena.cell.launcher import LOG_CAP_BYTES, resolve_command
from arena.cell.limits import Limits
from arena.match.clock import TimeControl
from arena.match.records import Forfeit, GameRecord
from arena.match.referee import LOG_TAIL_CHARS, run_match
from arena.match.spec import BotSpec, MatchSpec

HERE = Path(__file__).resolve().parent
RANDOM = BotSpec("random", resolve_command("random"))
PARAMS = {"rows": 6, "cols": 6}
FAST = TimeControl(per_move=0.3, margin=0.05)


def broken(mode: str, *args: object) -> BotSpec:
    command = (sys.executable, str(HERE / "bots" / "broken.py"), mode, *map(str, args))
    return BotSpec(f"broken-{mode}", command)


def match(bots, games=2, time_control=FAST, **fields) -> MatchSpec:
    fields.setdefault("params", PARAMS)
    return MatchSpec(match_id=fields.pop("match_id", "t"), game="domineering", bots=tuple(bots),
                     time_control=time_control, game_numbers=tuple(range(games)), **fields)


def replay(record: GameRecord) -> rules.State:
    state = rules.load(record.game, **record.params).start()
    for move in record.move_list():
        state = state.play(move)
    return state


def seat_of(record: GameRecord, name: str) -> int:
    return record.players.index(name)


def test_a_match_between_real_processes_alternates_seats_and_records_every_move():
    other = BotSpec("random-2", RANDOM.command)
    seen = []
    moves_seen = []
    records = run_match(match([RANDOM, other], games=4), on_game=seen.append,
                        on_move=lambda record, move, state: moves_seen.append((record.game_id, move.ply)))
    assert seen == records
    assert [r.game_id for r in records] == ["t-g0", "t-g1", "t-g2", "t-g3"]
    assert [r.players for r in records] == [["random", "random-2"], ["random-2", "random"]] * 2
    for record in records:
        final = replay(record)
        assert final.outcome is not None and record.forfeit is None
        assert (record.winner, record.reason) == (final.outcome.winner, final.outcome.reason)
        assert [m.seat for m in record.moves] == [i % 2 for i in range(len(record.moves))]
        assert [m.ply for m in record.moves] == list(range(len(record.moves)))
        assert all(0 < m.time_s < 0.35 for m in record.moves)
        assert record.time_control == "0.3" and record.params == {"rows": 6, "cols": 6, "first": "vertical"}
        assert GameRecord.from_json(record.to_json()) == record
    assert len(moves_seen) == sum(len(r.moves) for r in records)


def test_same_seed_same_games():
    first = run_match(match([RANDOM, RANDOM], games=2, seed=5))
    again = run_match(match([RANDOM, RANDOM], games=2, seed=5))
    assert [r.move_list() for r in first] == [r.move_list() for r in again]


@pytest.mark.parametrize(
    "bot, reason, detail",
    [
        (broken("sleep", 1.0), Forfeit.TIMEOUT, "no move for ply"),
        (broken("illegal"), Forfeit.ILLEGAL_MOVE, "is illegal"),
        (broken("garbage"), Forfeit.MALFORMED_MESSAGE, "not a msgpack message"),
        (broken("nomove"), Forfeit.MALFORMED_MESSAGE, "'move' message without 'move'"),
        (broken("crash"), Forfeit.CRASHED, "exited with code 3"),
        (broken("silent"), Forfeit.NO_HELLO, "no hello within 1.5 s"),
        (broken("badproto"), Forfeit.MALFORMED_MESSAGE, "hello for protocol 99"),
        (BotSpec("missing", ("/nonexistent/bot",)), Forfeit.CRASHED, "could not start"),
    ],
    ids=lambda v: v.name if isinstance(v, BotSpec) else None,
)
def test_each_forfeit_credits_the_opponent_and_the_match_goes_on(bot, reason, detail):
    startup = 1.5 if reason is Forfeit.NO_HELLO else 10.0  # a loaded machine may start bots slowly
    records = run_match(match([bot, RANDOM], games=2, time_control=TimeControl(per_move=0.2, margin=0.05)),
                        startup_timeout_s=startup)
    assert len(records) == 2
    for record in records:
        loser = seat_of(record, bot.name)
        assert record.forfeit is not None, record
        assert record.forfeit["seat"] == loser
        assert record.forfeit["reason"] == reason.value == record.reason, record.forfeit
        assert detail in record.forfeit["detail"], record.forfeit
        assert record.winner == 1 - loser
        assert record.points(1 - loser) == 1.0
        json.loads(record.to_json())


def test_a_crashed_bot_is_restarted_for_the_next_game():
    records = run_match(match([broken("crash"), RANDOM], games=2))
    for record in records:
        loser = seat_of(record, "broken-crash")
        assert record.forfeit["reason"] == "crashed"
        assert sum(1 for m in record.moves if m.seat == loser) == 2  # a fresh process each game
        assert "exiting on purpose" in record.logs[str(loser)]


def test_a_late_answer_is_dropped_and_never_applied_to_a_later_turn(caplog):
    caplog.set_level(logging.INFO, logger="arena.match.referee")
    late = broken("late", 0.45)  # answers its first turn after 0.45 s: over 0.3 + 0.05
    keep = Limits(restart_on_forfeit=False)  # the same process answers late, then plays game 2
    records = run_match(match([late, RANDOM], games=2), limits=keep)
    assert records[0].forfeit["reason"] == "timeout" and records[0].forfeit["seat"] == 0
    second = records[1]
    assert second.forfeit is None and replay(second).outcome is not None
    state = rules.load("domineering", **PARAMS).start()
    late_seat = seat_of(second, "broken-late")
    for move in second.moves:
        if move.seat == late_seat:  # after the late answer, this bot always plays legal[-1]
            assert move.move == state.legal_moves()[-1]
        state = state.play(move.move)
    assert "dropped move message (game 't-g0'" in caplog.text


@pytest.mark.timing  # 0.1 s moves against a 0.35 s bank with a 0.02 s margin
@pytest.mark.parametrize("increment, forfeits", [(0.0, True), (0.1, False)])
def test_base_plus_increment_is_a_bank_per_seat(increment, forfeits):
    clock = TimeControl(base=0.35, increment=increment, margin=0.02)
    record = run_match(match([broken("sleep", 0.1), RANDOM], games=1, time_control=clock))[0]
    sleeper = [m for m in record.moves if m.seat == 0]
    banks = [float(m.info["comment"].split("=")[1]) for m in sleeper]
    assert banks[0] == 0.35
    # each turn's bank is the base, less the time the referee's clock charged for the seat's earlier
    # moves, plus an increment for each of them (exact bookkeeping, whatever the machine's load)
    expected = [0.35 + sum(increment - m.time_s for m in sleeper[:k]) for k in range(len(sleeper))]
    assert banks == pytest.approx(expected, abs=0.002)
    assert record.time_control == f"0.35+{increment:g}"
    # a busy machine (two hogs beside the suite) can keep the bot from a CPU: its bank may then run
    # out sooner, never later. The product marks a move under load from 0.05 s of waiting (a notable
    # part of the assignments' clocks of seconds); here the clock's 0.02 s margin is the slack, so
    # any wait past it counts (bursts of real-time hogs made waits of 0.02-0.04 s a move, unmarked)
    loaded = record.loaded_moves > 0 or record.lost_on_time_under_load() or \
        _cpu_wait_s(record, 0) >= clock.margin
    if forfeits:  # 0.35 -> 0.25 -> 0.15 -> 0.05: the fourth move cannot come in time
        assert record.forfeit is not None and record.forfeit["seat"] == 0, record.forfeit
        assert record.forfeit["reason"] == "timeout", record.forfeit
        assert len(sleeper) <= 3 if loaded else len(sleeper) == 3, (len(sleeper), record.forfeit)
        if not loaded:
            assert record.forfeit == {"seat": 0, "reason": "timeout", "detail": record.forfeit["detail"]}
    elif loaded:  # a timeout, if any, is the waiting bot's, its bank eaten by the load
        forfeit = record.forfeit
        assert forfeit is None or (forfeit["seat"], forfeit["reason"]) == (0, "timeout"), forfeit
    else:  # the increment pays back each move's 0.1 s: the bank stays near its base
        assert record.forfeit is None
        assert all(b > 0.2 for b in banks)


def _cpu_wait_s(record: GameRecord, seat: int) -> float:
    """How long the seat's bot waited for a CPU in the game: over its moves (`wait_s`), and in the
    move it timed out on (the forfeit's detail says how long, where the product could read it)."""
    waited = sum(m.wait_s or 0.0 for m in record.moves if m.seat == seat)
    forfeit = record.forfeit or {}
    detail = forfeit.get("detail", "") if forfeit.get("seat") == seat else ""
    found = re.search(r"waited ([0-9.]+) s", detail)
    return waited + (float(found.group(1)) if found else 0.0)


def test_info_is_recorded_json_safe():
    record = run_match(match([broken("info"), RANDOM], games=1))[0]
    info = record.moves[0].info
    assert info["depth"] == 3 and info["score"] == -12 and info["nested"] == {"a": [1, 2, {"b": None}]}
    assert info["pv"] == rules.load("domineering", **PARAMS).start().legal_moves()[:2]
    assert info["raw"] == repr(b"\x00\x01")
    assert GameRecord.from_json(record.to_json()).moves[0].info == info


def test_an_exception_in_choose_plays_the_first_legal_move_with_a_comment():
    raising = BotSpec("raising", (sys.executable, str(HERE / "bots" / "raising.py")))
    record = run_match(match([raising, RANDOM], games=1))[0]
    assert record.forfeit is None
    state = rules.load("domineering", **PARAMS).start()
    for move in record.moves:
        if move.seat == 0:
            assert move.move == state.legal_moves()[0]
            assert "ZeroDivisionError" in move.info["comment"]
        state = state.play(move.move)
    assert "ZeroDivisionError" in record.logs["0"]


def test_stray_messages_are_dropped_without_harm():
    record = run_match(match([broken("flood"), RANDOM], games=1))[0]
    assert record.forfeit is None and replay(record).outcome is not None


def test_a_chatty_bot_has_its_log_file_capped(tmp_path):
    record = run_match(match([broken("chatty"), RANDOM], games=1), workdir=tmp_path)[0]
    assert record.forfeit is None
    [log_file] = tmp_path.glob("bot0-*/bot.log")
    assert log_file.stat().st_size <= LOG_CAP_BYTES
    assert log_file.read_text().startswith("[... arena: log cut")
    assert 0 < len(record.logs["0"]) <= LOG_TAIL_CHARS + 3


def test_start_moves_are_played_before_the_bots_move():
    record = run_match(match([RANDOM, RANDOM], games=1, start_moves=("3B",)))[0]
    assert record.start_moves == ["3B"] and record.moves[0].ply == 1 and record.moves[0].seat == 1
    assert replay(record).outcome is not None


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"game": "chess"}, "unknown game 'chess'"),
        ({"params": {"rows": 0}}, "rows"),
        ({"params": {"colour": 1}}, "unknown parameter 'colour'"),
        ({"start_moves": ("3B", "3B")}, "start move 2 '3B'"),
    ],
)
def test_a_bad_spec_is_refused_before_any_bot_starts(fields, message):
    spec = match([RANDOM, RANDOM], games=1, **{k: v for k, v in fields.items() if k != "game"})
    if "game" in fields:
        spec = MatchSpec("t", fields["game"], spec.bots, spec.time_control)
    with pytest.raises(ValueError, match=message):
        run_match(spec)


def test_a_bot_process_is_one_object_stopped_on_leaving_its_block(tmp_path):
    import time

    from arena.cell.launcher import BotProcess
    from arena.cell.limits import Watchdog, process_exists

    watchdog = Watchdog()
    try:
        with BotProcess((sys.executable, "-c", "import time; print('up', flush=True); time.sleep(60)"),
                        tmp_path / "bot", watchdog=watchdog) as process:
            process.start("tcp://127.0.0.1:1", "token")
            pid = process.pid
            assert pid is not None and process.exit_status() is None
            for _ in range(500):  # the interpreter starts in well under 5 s
                if "up" in process.read_log(0, 100):
                    break
                time.sleep(0.01)
            process.suspend()
            assert process.suspended
            process.resume()
            assert not process.suspended
        assert process.exit_status() is not None and not process_exists(pid)
        assert "up" in process.read_log(0, 100)
    finally:
        watchdog.close()


def test_the_watchdog_kills_the_marked_processes_it_knows_of_and_leaves_those_it_forgot():
    """The watchdog's last sweep: a process carrying a registered marker, out of every group, is
    killed when the watchdog's pipe closes; one whose marker the referee told it to forget (its
    bot stopped by the referee itself) is not looked for."""
    from arena.cell.limits import Watchdog, process_exists
    from arena.cell.watchdog import MARKER_ENV

    marked = {}
    for name in ("kept", "forgotten"):
        marked[name] = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                                        env={**os.environ, MARKER_ENV: f"{os.getpid()}-{name}"},
                                        start_new_session=True)
    watchdog = Watchdog()
    try:
        watchdog.register(None, f"{os.getpid()}-kept")
        watchdog.register(None, f"{os.getpid()}-forgotten")
        watchdog.forget(None, f"{os.getpid()}-forgotten")
        watchdog.close(wait_s=10)
        assert marked["kept"].wait(10) == -signal.SIGKILL
        assert process_exists(marked["forgotten"].pid) and marked["forgotten"].poll() is None
    finally:
        for process in marked.values():
            process.kill()
            process.wait()


def test_a_bot_that_never_says_hello_is_started_once_a_game(tmp_path):
    """The start-up limit is a game's: a bot that never says hello is started for the match and
    forfeits game 1 (not started again for the same game, which doubled the wait), then is started
    again for game 2: two starts, two waits of the limit."""
    starts = tmp_path / "starts.txt"
    silent = BotSpec("silent", ("/bin/sh", "-c", f"echo started >> {starts}; exec sleep 3600"))
    unsandboxed = Limits(sandbox="off")  # its start is written where the test reads it
    began = time.monotonic()
    records = run_match(match([silent, RANDOM], games=2, limits=unsandboxed), startup_timeout_s=2.0)
    elapsed = time.monotonic() - began
    assert len(records) == 2 and all("no hello within 2 s" in r.forfeit["detail"] for r in records)
    assert starts.read_text().splitlines() == ["started", "started"]
    assert elapsed >= 4.0
