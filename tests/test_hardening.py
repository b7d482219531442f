"""Hardening (issue 13), each with real bot processes: nothing a bot sends raises out of the referee
(deep `info`), connections that never say hello cannot starve an honest bot nor grow the referee,
the SDK reports choose()'s traceback and `arena submit` refuses such a bot showing it, a match that
kills its worker process is forfeited by the bot to move, two bots that cannot start are a double
forfeit whose records hold what they printed, and the issue's tournament of all of them completes.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from conftest import rss_bytes, run_arena

from arena.cell.launcher import resolve_command
from arena.match.clock import TimeControl
from arena.match.records import Forfeit, GameRecord
from arena.match.referee import run_match
from arena.match.spec import BotSpec, MatchSpec
from arena.tournament import runner as tmod
from arena.tournament.store import DB_NAME, Store

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BROKEN = HERE / "bots" / "broken.py"
RAISING = HERE / "bots" / "raising.py"
RANDOM = BotSpec("random", resolve_command("random"))
PARAMS = {"rows": 5, "cols": 5}
FAST = TimeControl(per_move=0.3, margin=0.05)
RSS_GROWTH_MAX = 64 << 20
"""How much the referee (this process) may grow while a mob of connections floods it (bytes)."""


def broken(mode: str, *args: object) -> BotSpec:
    return BotSpec(f"hostile-{mode}", (sys.executable, str(BROKEN), mode, *map(str, args)))


def match(bots, games=1, time_control=FAST) -> MatchSpec:
    return MatchSpec(match_id="hd", game="domineering", bots=tuple(bots), time_control=time_control,
                     game_numbers=tuple(range(games)), params=PARAMS)


arena = run_arena


@pytest.fixture(autouse=True)
def keep_this_process():
    """The killparent bot never kills this process, should it ever be its parent."""
    os.environ["ARENA_TEST_KEEP_PID"] = str(os.getpid())
    yield
    del os.environ["ARENA_TEST_KEEP_PID"]


@pytest.mark.parametrize("depth", [500, 990])
def test_a_deeply_nested_info_is_the_senders_malformed_message_forfeit(depth):
    records = run_match(match([broken("deepinfo", depth), RANDOM], games=2))
    for record in records:
        seat = record.players.index("hostile-deepinfo")
        assert record.forfeit == {"seat": seat, "reason": Forfeit.MALFORMED_MESSAGE.value,
                                  "detail": "'move' message nested deeper than 32 levels of maps and lists"}
        assert record.winner == 1 - seat
        assert GameRecord.from_json(record.to_json()) == record  # nothing in it recurses too deep


def test_arena_match_against_the_deep_info_bot_finishes_and_writes_its_records(tmp_path):
    done = arena("match", "domineering", "random", f"{sys.executable} {BROKEN} deepinfo 500", "--games", "2",
                 "--time", "0.5", "-p", "rows=5", "-p", "cols=5", "--out", "out", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr + done.stdout and "RecursionError" not in done.stderr
    assert done.stdout.count("malformed_message") == 2, done.stdout
    [directory] = (tmp_path / "out" / "matches").iterdir()
    records = [GameRecord.from_json(line) for line in (directory / "games.jsonl").read_text().splitlines()]
    assert [r.reason for r in records] == ["malformed_message"] * 2


def test_connections_that_never_say_hello_cannot_starve_an_honest_bot():
    # Ten connections of the mob bot send 440 KB messages without pause and never say hello. Before,
    # the honest bot timed out at its first move in every game and the referee grew by 800 MB.
    honest = broken("sleep", 0.05)
    start = rss_bytes()
    records = run_match(match([broken("mob", 10), honest], games=2))
    growth = rss_bytes() - start
    for record in records:
        seat = record.players.index(honest.name)
        assert record.forfeit_of(seat) is None, record.forfeit  # the honest bot never forfeits
        mob = record.forfeit_of(1 - seat)  # the mob, busy with its ten connections, may lose on time
        assert mob is None or mob.under_load, record.forfeit  # only where the machine's load made it
        assert all(m.time_s < FAST.per_move for m in record.moves if m.seat == seat)
    assert growth < RSS_GROWTH_MAX, growth


def test_the_sdk_sends_the_traceback_of_choose_as_info_error():
    record = run_match(match([BotSpec("raising", (sys.executable, str(RAISING))), RANDOM]))[0]
    own = [m for m in record.moves if m.seat == 0]
    assert own and record.forfeit is None
    for move in own:
        assert move.info["error"].startswith("Traceback (most recent call last):")
        assert "return 1 // 0" in move.info["error"] and "ZeroDivisionError" in move.info["error"]


def test_submit_refuses_a_bot_whose_choose_raises_and_shows_its_traceback(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('game = "domineering"\ntime = "0.5"\n[params]\nrows = 5\ncols = 5\n'
                    '[[bots]]\nname = "a"\ncommand = "random"\n[[bots]]\nname = "b"\ncommand = "random"\n')
    before = path.read_text()
    done = arena("submit", "s.toml", "careless", sys.executable, str(RAISING), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "rejected" in done.stderr and "choose() raised" in done.stderr
    first, second, *_ = done.stderr.splitlines()  # the headline (with where it was checked), then the trace
    sandboxed = " (checked in the sandbox: docs/limits.md says what a bot may use)"
    assert first.removesuffix(sandboxed).endswith("(the SDK played the first legal move instead)"), first
    assert second == "the first traceback:", second
    assert "return 1 // 0" in done.stderr
    assert "ZeroDivisionError: integer division or modulo by zero" in done.stderr
    assert path.read_text() == before


def test_a_match_that_kills_its_worker_is_aborted_and_charged_to_nobody(tmp_path):
    data = {"name": "killer", "game": "domineering", "time": "0.5", "games_per_pairing": 2,
            "games_per_task": 2, "params": PARAMS,
            "limits": {"sandbox": "off"},  # a sandboxed bot cannot see, let alone kill, its worker
            "bots": [{"name": "killer", "command": [sys.executable, str(BROKEN), "killparent"]},
                     {"name": "random", "command": "random"}, {"name": "random2", "command": "random"}]}
    tour = tmod.from_dict(data, tmp_path / "killer.toml")
    summary = tmod.run(tour, tmp_path / "results", concurrency=2, progress=None)
    assert summary.failures == [] and summary.stored == summary.planned == 6
    with Store(tour.results_dir(tmp_path / "results") / DB_NAME, create=False) as store:
        records = {g.record.game_id: g.record for g in store.games()}
    assert len(records) == 6
    for opponent in ("random", "random2"):
        for number, seat in ((0, 0), (1, 1)):  # in game 1 the opponent moves first
            record = records[f"killer-vs-{opponent}-g{number}"]
            assert record.players[seat] == "killer" and record.winner is None and record.forfeit is None
            assert record.reason == "aborted" and record.is_aborted() and record.result() == "*"
            assert f"died {tmod.WORKER_DEATHS_PER_GAME} times" in record.aborted["detail"]
            assert f"with killer (seat {seat}) to move" in record.aborted["detail"]
            assert record.aborted["seat"] == seat and record.aborted["deaths"] == tmod.WORKER_DEATHS_PER_GAME
            assert record.points(seat) == 0.0 and record.points(1 - seat) == 0.0
    innocent = [r for r in records.values() if "killer" not in r.players]
    assert len(innocent) == 2 and all(r.forfeit is None for r in innocent)
    json.dumps([r.to_dict() for r in records.values()])


def test_what_a_bot_printed_before_its_hello_is_in_the_record_and_the_forfeit_detail():
    records = run_match(match([broken("syntax"), RANDOM], games=2))
    for record in records:
        seat = record.players.index("hostile-syntax")
        assert record.forfeit["seat"] == seat and record.forfeit["reason"] == "crashed"
        detail = record.forfeit["detail"]
        assert detail.startswith("exited with code 1 before saying hello; it printed:\n"), detail
        assert detail.endswith("SyntaxError: '(' was never closed"), detail
        assert 'File "mybot.py", line 1' in detail
        assert "SyntaxError: '(' was never closed" in record.logs[str(seat)]
        assert record.points(seat) == 0.0 and record.result() == ("0-1" if seat == 0 else "1-0")


def test_two_bots_that_cannot_start_are_a_double_forfeit_and_score_nothing():
    records = run_match(match([broken("syntax"), broken("nohello")], games=2))
    for record in records:
        dead = {name: record.players.index(name) for name in ("hostile-syntax", "hostile-nohello")}
        assert record.winner is None and record.reason == "double_forfeit" == Forfeit.DOUBLE_FORFEIT
        forfeit = record.forfeit
        assert forfeit["seat"] is None and forfeit["reason"] == "double_forfeit"
        assert [f["seat"] for f in forfeit["both"]] == [0, 1]
        assert {f["reason"] for f in forfeit["both"]} == {"crashed"}
        syntax, nohello = forfeit["both"][dead["hostile-syntax"]], forfeit["both"][dead["hostile-nohello"]]
        assert syntax["detail"].endswith("SyntaxError: '(' was never closed")
        assert nohello["detail"] == ("exited with code 2 before saying hello; it printed:\n"
                                     "loading weights from weights.bin\nmybot: no such file: weights.bin")
        both = "; ".join(f"seat {f['seat']} crashed: {f['detail']}" for f in forfeit["both"])
        assert forfeit["detail"] == both
        assert record.result() == "0-0" and record.points(0) == record.points(1) == 0.0
        assert "SyntaxError" in record.logs[str(dead["hostile-syntax"])]
        assert "no such file: weights.bin" in record.logs[str(dead["hostile-nohello"])]
        assert GameRecord.from_json(record.to_json()) == record


def test_arena_match_shows_what_a_bot_printed_before_its_hello(tmp_path):
    done = arena("match", "domineering", "random", f"{sys.executable} {BROKEN} nohello", "--games", "1",
                 "--time", "0.5", "-p", "rows=5", "-p", "cols=5", "--out", "out", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "exited with code 2 before saying hello; it printed:" in done.stdout, done.stdout
    assert "mybot: no such file: weights.bin" in done.stdout


def test_the_referee_counts_the_moves_with_an_error_in_the_record():
    records = run_match(match([BotSpec("raising", (sys.executable, str(RAISING))), RANDOM], games=2))
    for record in records:
        seat = record.players.index("raising")
        own = [m for m in record.moves if m.seat == seat]
        assert own and record.errors[seat] == len(own) and record.errors[1 - seat] == 0
    old = json.loads(records[0].to_json())
    del old["errors"]  # a record written before the field existed
    assert GameRecord.from_dict(old).errors == [0, 0]


def test_submit_refuses_a_bot_that_dies_before_its_hello_showing_what_it_printed(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('game = "domineering"\ntime = "0.5"\n[params]\nrows = 5\ncols = 5\n'
                    '[[bots]]\nname = "a"\ncommand = "random"\n[[bots]]\nname = "b"\ncommand = "random"\n')
    done = arena("submit", "s.toml", "typo", sys.executable, str(BROKEN), "syntax", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "rejected: bot 'typo': crashed" in done.stderr
    assert "SyntaxError: '(' was never closed" in done.stderr


def test_the_issues_tournament_of_broken_bots_completes_with_every_game_stored(tmp_path):
    # A bot whose info is nested 990 deep, two bots that exit before their hello, and random.
    bots = {"deep": f"{sys.executable} {BROKEN} deepinfo 990", "typo": f"{sys.executable} {BROKEN} syntax",
            "noweights": f"{sys.executable} {BROKEN} nohello", "random": "random"}
    lines = ['game = "domineering"', 'time = "0.5"', "games_per_pairing = 2",
             "[params]", "rows = 5", "cols = 5"]
    lines += [f'[[bots]]\nname = "{name}"\ncommand = {json.dumps(command)}' for name, command in bots.items()]
    (tmp_path / "broken.toml").write_text("\n".join(lines) + "\n")
    done = arena("tournament", "run", "broken.toml", "-j", "2", cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    final = [line for line in done.stderr.splitlines() if "12/12 games (" in line][-1]
    assert "draws 0, forfeits 12)" in final, final  # every game a forfeit; a double one is no draw
    with Store(tmp_path / "results" / "broken" / DB_NAME, create=False) as store:
        records = [g.record for g in store.games()]
    assert len(records) == 12  # 6 pairings, 2 games each
    points = dict.fromkeys(bots, 0.0)
    for record in records:
        for seat, name in enumerate(record.players):
            points[name] += record.points(seat)
        if set(record.players) == {"typo", "noweights"}:
            assert record.reason == "double_forfeit" and record.result() == "0-0"
            typo, noweights = record.players.index("typo"), record.players.index("noweights")
            assert "SyntaxError: '(' was never closed" in record.logs[str(typo)]
            assert "mybot: no such file: weights.bin" in record.logs[str(noweights)]
        elif "deep" in record.players and "random" in record.players:
            assert record.forfeit["reason"] == "malformed_message"
            assert record.players[record.forfeit["seat"]] == "deep"
    assert points["typo"] == points["noweights"] == 0.0
    assert points["deep"] == 4.0 and points["random"] == 6.0  # deep beats the two that cannot start
