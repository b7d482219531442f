"""Tournaments: the file's checks, the runner's exactly-once bookkeeping, and real runs with real bot
processes (a round-robin finishes; resume after a real kill -9; a bot that crashes every game; a
changed file refused; submit)."""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import ENV, arena_cmd, call_arena, run_arena

from arena.match.records import GameRecord, MoveRecord
from arena.tournament import runner as tmod
from arena.tournament.store import DB_NAME, Store, StoreError, fingerprint_change

ROOT = Path(__file__).resolve().parents[1]
BROKEN = ROOT / "tests" / "bots" / "broken.py"


def write(path: Path, games=2, bots=("r1", "r2", "r3"), extra="", time_s="0.2", game="domineering",
          params='rows = 5\ncols = 5', per_task=None) -> Path:
    lines = [f'game = "{game}"', f'time = "{time_s}"', f"games_per_pairing = {games}", "seed = 7"]
    if per_task:
        lines.append(f"games_per_task = {per_task}")
    lines.append(extra)
    lines.append(f"[params]\n{params}")
    for bot in bots:
        name, command = bot if isinstance(bot, tuple) else (bot, "random")
        lines.append(f"[[bots]]\nname = \"{name}\"\ncommand = {json.dumps(command)}")
    path.write_text("\n".join(lines) + "\n")
    return path


arena = run_arena
"""`arena ARGS` as a real process: where the process is the point (a run that finishes, its exit code
and its one line of stderr, pipes, signals)."""
here = call_arena
"""`arena ARGS` in this process (the same commands, without an interpreter's start-up): the rest."""


def rows(db: Path) -> list[tuple]:
    con = sqlite3.connect(db)
    try:
        query = "SELECT pairing, number, game_id, record FROM games ORDER BY pairing, number"
        return con.execute(query).fetchall()
    finally:
        con.close()


# --- the tournament file ---

@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("game = 'domineering'\n[[bots]]\nname='a'\ncommand='random'\n[[bots]]\nname='b'\ncommand='random'\n"
         "games_per_pairing = 3", None),  # in [[bots]]: caught as an unknown bot key
        ("game = 'chess'", "game"),
        ("game = 'domineering'\n[params]\nrows = 'many'", "params"),
        ("game = 'domineering'\n[params]\nbogus = 1", "params"),
        ("game = 'domineering'\ntime = 'soon'", "time"),
        ("game = 'domineering'\ntime = 'inf'", "time: bad time control 'inf': the seconds must be finite"),
        ("game = 'domineering'\ntime = inf", "time: bad time control 'inf'"),
        ("game = 'domineering'\ntime = nan", "time: bad time control 'nan'"),
        ("game = 'domineering'\ntime = '0'", "time: bad time control '0'"),
        ("game = 'domineering'\ntime = -1.5", "time: bad time control '-1.5'"),
        ("game = 'domineering'\ntime = '1e999+1'", "time: bad time control '1e999+1'"),
        ("game = 'domineering'\ngames_per_pairing = 3", "games_per_pairing"),
        ("game = 'domineering'\ngames_per_paring = 2", "games_per_paring"),
        ("game = 'domineering'\n[[bots]]\nname = 'a'\ncommand = 'random'", "bots"),
        ("game = 'domineering'\n[[bots]]\nname='a'\ncommand='random'\n[[bots]]\nname='a'\ncommand='random'",
         "bots[2].name"),
        ("game = 'domineering'\n[[bots]]\nname='a'\ncommand='random'\n[[bots]]\nname='b'\n"
         "command='/no/such/bot --x'", "bots[2].command"),
        ("game = 'domineering'\n[[bots]]\nname='a b'\ncommand='random'", "bots[1].name"),
        ("game = ", "bad TOML"),
        ("", "game"),
    ],
)
def test_bad_files_are_named(tmp_path, text, named):
    path = tmp_path / "t.toml"
    path.write_text(text)
    with pytest.raises(tmod.TournamentError) as info:
        tmod.load(path)
    message = str(info.value)
    assert str(path) in message
    assert named is None or named in message
    assert "\n" not in message.strip() or named == "bad TOML"


def test_missing_file_is_named(tmp_path):
    with pytest.raises(tmod.TournamentError, match="no such tournament file"):
        tmod.load(tmp_path / "nope.toml")


def test_good_file_reads_with_defaults(tmp_path):
    t = tmod.load(write(tmp_path / "cup.toml", games=4, per_task=3))
    assert t.name == "cup" and t.game == "domineering"
    assert t.params == {"rows": 5, "cols": 5, "first": "vertical"}
    assert str(t.time_control) == "0.2"
    assert [b.name for b in t.bots] == ["r1", "r2", "r3"]
    assert t.bots[0].argv[1:] == ("-m", "bots", "random")
    assert t.total_games() == 12 and t.games_per_task == 3
    specs = tmod.plan(t, {"r1-vs-r2": {0, 2}})
    numbers = {}
    for s in specs:
        numbers.setdefault(s.match_id, []).extend(s.game_numbers)
        assert len(s.game_numbers) <= 3
    assert numbers == {"r1-vs-r2": [1, 3], "r1-vs-r3": [0, 1, 2, 3], "r2-vs-r3": [0, 1, 2, 3]}


@pytest.mark.parametrize(
    ("change", "allowed"),
    [
        ({}, True),
        ({"games_per_pairing": 4}, True),
        ({"bots": [{"name": "a", "command": "random"}, {"name": "b", "command": "x"},
                   {"name": "c", "command": "random"}]}, True),
        ({"games_per_pairing": 0}, False),
        ({"game": "morris"}, False),
        ({"params": {"rows": 6}}, False),
        ({"time_control": "0.5"}, False),
        ({"seed": 2}, False),
        ({"bots": [{"name": "b", "command": "x"}, {"name": "a", "command": "random"}]}, False),
        ({"bots": [{"name": "a", "command": "random"}]}, False),
        ({"bots": [{"name": "a", "command": "random"}, {"name": "b", "command": "y"}]}, False),
    ],
)
def test_which_changes_keep_exactly_once(change, allowed):
    old = {"game": "domineering", "params": {"rows": 5}, "time_control": "0.2", "seed": 1,
           "games_per_pairing": 2,
           "bots": [{"name": "a", "command": "random"}, {"name": "b", "command": "x"}]}
    reason = fingerprint_change(old, {**old, **change})
    assert (reason is None) == allowed, reason


# --- the runner's bookkeeping, with a fake task (no processes) ---

def fake_task(spec):
    """Plays nothing: seat 0 always wins in one ply."""
    out = []
    for n in spec.game_numbers:
        seats = [b.name for b in spec.seats(n)]
        out.append(GameRecord(game_id=spec.game_id(n), game=spec.game, params=spec.params, players=seats,
                              time_control=str(spec.time_control), winner=0, reason="no legal move",
                              moves=[MoveRecord(0, 0, "1A", 0.001)]).to_json())
    return out


def test_runner_stores_each_game_once_and_resumes(tmp_path):
    t = tmod.load(write(tmp_path / "fake.toml", games=4))
    calls = []

    def half_task(spec):  # the first run loses every odd game (as if a worker died mid-task)
        calls.append(spec.game_numbers)
        return [r for r in fake_task(spec) if json.loads(r)["game_id"][-1] in "02"]

    with ThreadPoolExecutor(2) as pool:
        first = tmod.run(t, tmp_path / "res", executor=pool, progress=None, task=half_task)
    assert first.stored == 6 and len(first.failures) == 6  # 6 games "did not come back"
    with ThreadPoolExecutor(2) as pool:
        second = tmod.run(t, tmp_path / "res", executor=pool, progress=None, task=fake_task)
    assert second.already == 6 and second.stored == 6 and not second.failures
    with Store(tmp_path / "res" / "fake" / DB_NAME) as store:
        assert store.stored_numbers() == {p: {0, 1, 2, 3} for p in ("r1-vs-r2", "r1-vs-r3", "r2-vs-r3")}
        assert not store.add_game("r1-vs-r2", 0, store.games()[0].record)  # never twice
    with ThreadPoolExecutor(1) as pool:
        third = tmod.run(t, tmp_path / "res", executor=pool, progress=None, task=fake_task)
    assert third.planned == 0 and third.stored == 0


def test_runner_survives_bad_worker_answers(tmp_path):
    t = tmod.load(write(tmp_path / "odd.toml"))

    def bad_task(spec):
        if spec.match_id == "r1-vs-r2":
            raise RuntimeError("referee exploded")
        if spec.match_id == "r1-vs-r3":
            return ["not json", {"game_id": "x"}, 42]
        good = fake_task(spec)
        wrong = json.loads(good[0])
        wrong["players"] = ["r1", "r2"]  # a record for other players must not be stored
        return [json.dumps(wrong), *good, *good]  # and a duplicate is stored once

    with ThreadPoolExecutor(2) as pool:
        summary = tmod.run(t, tmp_path / "res", executor=pool, progress=None, task=bad_task)
    assert summary.stored == 2  # r2-vs-r3's two games, once each; the wrong-players record is refused
    assert any("unexpected game 'r2-vs-r3-g0'" in f for f in summary.failures)
    with Store(tmp_path / "res" / "odd" / DB_NAME) as store:
        assert [(g.pairing, g.number, g.record.players) for g in store.games()] == [
            ("r2-vs-r3", 0, ["r2", "r3"]), ("r2-vs-r3", 1, ["r3", "r2"])]
    assert any("referee exploded" in f for f in summary.failures)
    assert any("unreadable" in f for f in summary.failures)


def test_refused_change_keeps_stored_results(tmp_path):
    path = write(tmp_path / "keep.toml")
    with ThreadPoolExecutor(1) as pool:
        tmod.run(tmod.load(path), tmp_path / "res", executor=pool, progress=None, task=fake_task)
    write(path, time_s="0.5")
    with pytest.raises(StoreError, match="time_control"):
        tmod.run(tmod.load(path), tmp_path / "res", progress=None, task=fake_task)
    with Store(tmp_path / "res" / "keep" / DB_NAME) as store:
        assert store.count() == 6


# --- real runs, real processes ---

@pytest.fixture(scope="module")
def round_robin(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """A small round-robin (3 random bots, 2 games a pairing, 5x5) played to its end once for the
    module by the real `arena tournament run`: (its directory, the run). The tests that only read it
    and those that change it alike work on a copy (copy_round_robin)."""
    where = tmp_path_factory.mktemp("rr")
    write(where / "rr.toml", bots=("a", "b", "c"), time_s="0.5")
    return where, arena("tournament", "run", "rr.toml", "--concurrency", "2", cwd=where)


def copy_round_robin(round_robin: tuple[Path, subprocess.CompletedProcess],
                     to: Path) -> subprocess.CompletedProcess:
    """The module's round-robin (its file and results) copied into `to`; its run."""
    where, done = round_robin
    assert done.returncode == 0, done.stderr
    shutil.copytree(where, to, dirs_exist_ok=True)
    return done


def test_small_round_robin_finishes(tmp_path, round_robin):
    done = copy_round_robin(round_robin, tmp_path)
    assert "Traceback" not in done.stderr
    assert "6/6 games" in done.stderr and "rank" in done.stdout
    games = rows(tmp_path / "results" / "rr" / DB_NAME)
    expected = [(p, n) for p in ("a-vs-b", "a-vs-c", "b-vs-c") for n in (0, 1)]
    assert [(p, n) for p, n, _, _ in games] == expected
    for pairing, number, game_id, record in games:
        data = json.loads(record)
        assert game_id == f"{pairing}-g{number}" == data["game_id"]
        a, b = pairing.split("-vs-")
        assert data["players"] == ([a, b] if number % 2 == 0 else [b, a])
        assert data["moves"] and data["winner"] in (0, 1)
    assert "domineering (rows=5, cols=5, first=vertical)" in done.stderr  # the game's order, not a dict
    shown = here("standings", "rr.toml", cwd=tmp_path)
    assert shown.returncode == 0 and "6/6 games played" in shown.stdout
    assert "domineering (rows=5, cols=5, first=vertical)" in shown.stdout
    # a rerun with nothing to play says so, with no progress bar and no "played in 0.0 s"
    again = here("tournament", "run", "rr.toml", "--concurrency", "999", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "all 6 games are already stored" in again.stderr
    assert "played in" not in again.stderr and "[#" not in again.stderr
    assert "rank" in again.stdout  # the standings are still shown
    # more workers than cores: the clocks are no longer fair, and the run says so
    assert "--concurrency 999 is more than the" in again.stderr and "no longer fair" in again.stderr
    published = here("publish", "rr", cwd=tmp_path)
    assert published.returncode == 0, published.stderr
    out = tmp_path / "results" / "rr"
    for name in ("standings.md", "standings.csv", "crosstable.md", "games.csv", "site/index.html"):
        assert (out / name).stat().st_size > 0
    assert len(list((out / "records").glob("*.json"))) == 6
    # a changed file is refused with a reason, and nothing stored is lost
    write(tmp_path / "rr.toml", bots=("a", "b", "c"), time_s="0.5", params="rows = 6\ncols = 5")
    refused = here("tournament", "run", "rr.toml", cwd=tmp_path)
    assert refused.returncode == 2
    assert "params" in refused.stderr and "Traceback" not in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert rows(tmp_path / "results" / "rr" / DB_NAME) == games


def test_resume_after_kill_9(tmp_path):
    """Kill a real run with SIGKILL mid-way; the next run finishes with every game exactly once."""
    # whole pairings per task (the default): games are committed as they end, not when a task returns;
    # bots kept between matches: 24 games of about 0.1 s; the run is killed 1 or 2 games after the 4th
    games, pairings = 4, ("a-vs-b", "a-vs-c", "a-vs-d", "b-vs-c", "b-vs-d", "c-vs-d")
    total = games * len(pairings)
    write(tmp_path / "k.toml", games=games, bots=("a", "b", "c", "d"))
    db = tmp_path / "results" / "k" / DB_NAME
    from arena.tournament import standings  # noqa: F401 (imported now, not while the run plays on)

    with open(tmp_path / "err", "w") as err:
        proc = subprocess.Popen(arena_cmd("tournament", "run", "k.toml"), cwd=tmp_path, env=ENV,
                                stdout=subprocess.DEVNULL, stderr=err)
    deadline = time.monotonic() + 60
    count = 0
    while time.monotonic() < deadline:
        if db.is_file():
            try:
                count = len(rows(db))
            except sqlite3.Error:
                count = 0
            if count >= 4:
                break
        time.sleep(0.05)
    during = here("standings", "k.toml", cwd=tmp_path)  # readers never block the running writer
    assert during.returncode == 0 and "games played" in during.stdout, during.stderr
    workers = _children(proc.pid)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    before = rows(db)
    assert 4 <= len(before) < total, "the run should be killed mid-way"
    # the orphaned worker notices its parent is gone, stops its match and exits
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in workers if _alive(pid)], "the orphaned worker outlived its run"
    said = (tmp_path / "err").read_text()  # also multiprocessing's resource tracker, left alone
    assert "leaked semaphore" not in said and "Traceback" not in said, said
    done = here("tournament", "run", "k.toml", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    after = rows(db)
    assert len(after) == total
    resumed = len(after) - len(before)  # the summary says what this run played and what was there
    assert f"k: all {total} games played: {resumed} this run in " in done.stderr, done.stderr
    assert f" s, {len(before)} stored by earlier runs" in done.stderr, done.stderr
    keys = [(p, n) for p, n, _, _ in after]
    assert keys == sorted({(p, n) for p in pairings for n in range(games)})
    assert len({g for _, _, g, _ in after}) == total
    assert set(before) <= set(after)  # nothing stored before the kill was lost or rewritten


def _children(pid: int) -> list[int]:
    """The child processes of `pid` (a run's workers and its resource tracker)."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                if int(f.read().rsplit(b")", 1)[1].split()[1]) == pid:
                    found.append(int(entry))
        except (OSError, IndexError, ValueError):
            continue
    return found


def _alive(pid: int) -> bool:
    """`pid` runs (it is not gone, nor a zombie)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except (OSError, IndexError):
        return False


def _tagged(tag: str) -> list[int]:
    """The live processes (not zombies) whose environment holds ARENA_TEST_TAG=`tag`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if f"ARENA_TEST_TAG={tag}".encode() not in f.read().split(b"\0"):
                    continue
            with open(f"/proc/{entry}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] != "Z":
                    found.append(int(entry))
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return found


def _arena_pid(tag: str) -> int | None:
    for pid in _tagged(tag):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if f.read().split(b"\0")[1:4] == [b"-m", b"arena", b"tournament"]:
                    return pid
        except (OSError, IndexError):
            continue
    return None


CTRL_C_TRIES = 10
"""Ctrl-Cs under tee in a row, each of which must end every process of the run."""


def test_ctrl_c_under_tee_stops_the_run_its_workers_and_bots_within_seconds(tmp_path):
    """Ctrl-C (SIGINT to the process group) of `arena tournament run ... | tee log` while bots play:
    every process of the run (arena, its workers, their bots, tee) is gone within 5 s, every one of
    CTRL_C_TRIES times; the run says it was interrupted, with no traceback. Once more, SIGINT to arena
    alone (`kill -INT`): its workers, not interrupted by anyone else, stop too. Bots run unsandboxed so that
    they keep the test's tag in their environment and are found."""
    write(tmp_path / "i.toml", games=60, bots=("a", "b", "c", "d"), extra='[limits]\nsandbox = "off"')
    arena_line = " ".join(arena_cmd("tournament", "run", "i.toml", "--concurrency", "2"))
    for attempt in range(CTRL_C_TRIES + 1):
        tag = f"{os.getpid()}-{attempt}"
        line = f"{arena_line} --results res{attempt} 2>err{attempt} | tee log{attempt}"
        shell = subprocess.Popen(["bash", "-c", line], cwd=tmp_path, env={**ENV, "ARENA_TEST_TAG": tag},
                                 stdout=subprocess.DEVNULL, start_new_session=True)
        try:
            deadline = time.monotonic() + 60
            # shell, tee, arena, its resource tracker, 2 workers and their bots (counted once: between
            # two matches a bot may be restarting, and a second count could miss it)
            while (playing := len(_tagged(tag))) < 8 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert playing >= 8, f"attempt {attempt}: the run never got its bots going"
            if attempt < CTRL_C_TRIES:
                os.killpg(shell.pid, signal.SIGINT)
            else:
                os.kill(_arena_pid(tag), signal.SIGINT)
            interrupted = time.monotonic()
            while _tagged(tag) and time.monotonic() - interrupted < 5:
                time.sleep(0.05)
            left = _tagged(tag)
            assert not left, f"attempt {attempt}: processes {left} still alive 5 s after Ctrl-C"
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(shell.pid, signal.SIGKILL)
            for pid in _tagged(tag):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            shell.wait()
        err = (tmp_path / f"err{attempt}").read_text()
        assert "interrupted with" in err and "Traceback" not in err, err
        db = tmp_path / f"res{attempt}" / "i" / DB_NAME
        assert len(rows(db)) < 360 if db.is_file() else True


def test_kill_9_of_the_runner_ends_its_workers_and_bots_within_two_seconds(tmp_path):
    """kill -9 of `arena tournament run` while its bots think (3 s a move): every worker and bot of
    the run is gone within 2 s (they lived on for 3-13 s). Unsandboxed, so the bots keep the test's tag."""
    slow = f"{sys.executable} {BROKEN} sleep 3"
    write(tmp_path / "k.toml", games=4, bots=(("a", slow), ("b", slow), ("c", slow)), time_s="5",
          extra='[limits]\nsandbox = "off"')
    tag = f"{os.getpid()}-kill9"
    run = subprocess.Popen(arena_cmd("tournament", "run", "k.toml", "--concurrency", "2"), cwd=tmp_path,
                           env={**ENV, "ARENA_TEST_TAG": tag}, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while len(_tagged(tag)) < 7 and time.monotonic() < deadline:  # arena, its resource tracker,
            time.sleep(0.05)  # 2 workers and their 4 bots
        assert len(_tagged(tag)) >= 7, "the run never got its bots going"
        time.sleep(0.5)  # the bots are thinking
        os.kill(run.pid, signal.SIGKILL)
        killed = time.monotonic()
        while _tagged(tag) and time.monotonic() - killed < 2:
            time.sleep(0.05)
        left = _tagged(tag)
        shown = {pid: Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")[:120] for pid in left}
        assert not left, f"processes {shown} still alive 2 s after kill -9 of the runner"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(run.pid, signal.SIGKILL)
        for pid in _tagged(tag):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        run.wait()


def test_bot_that_crashes_every_game_forfeits_and_the_tournament_finishes(tmp_path):
    crash = f"{sys.executable} {BROKEN} crash"
    write(tmp_path / "c.toml", games=2, bots=("a", ("crasher", crash), "b"), params="rows = 6\ncols = 6")
    done = here("tournament", "run", "c.toml", "--concurrency", "2", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    games = [json.loads(r) for _, _, _, r in rows(tmp_path / "results" / "c" / DB_NAME)]
    assert len(games) == 6
    crashed = [g for g in games if "crasher" in g["players"]]
    assert len(crashed) == 4
    for g in crashed:
        seat = g["players"].index("crasher")
        assert g["forfeit"]["seat"] == seat and g["forfeit"]["reason"] == "crashed"
        assert g["winner"] == 1 - seat
    from arena.tournament.standings import read
    row = read(tmp_path / "results" / "c").tables[0].frame.set_index("bot").loc["crasher"]
    assert row["forfeits"] == 4 and row["losses"] == 4 and row["forfeit reasons"] == "crashed 4"


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    # the first as a real process (its exit code, nothing else on its stderr), the rest in this one
    for call, args in ((arena, ("tournament", "run", "missing.toml")), (here, ("standings", "missing")),
                       (here, ("publish", "missing"))):
        done = call(*args, cwd=tmp_path)
        assert done.returncode == 2, (args, done.stderr)
        assert "missing" in done.stderr and "Traceback" not in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
    (tmp_path / "bad.toml").write_text("game = 'chess'\n")
    done = here("tournament", "run", "bad.toml", cwd=tmp_path)
    assert done.returncode == 2 and "chess" in done.stderr and "bad.toml" in done.stderr


def test_submit_checks_the_bot_before_adding_it(tmp_path):
    path = write(tmp_path / "s.toml", bots=("a", "b"))
    before = path.read_text()
    rejected = here("submit", "s.toml", "crasher", sys.executable, str(BROKEN), "crash", cwd=tmp_path)
    assert rejected.returncode == 2
    assert "rejected" in rejected.stderr and "crashed" in rejected.stderr
    assert path.read_text() == before
    missing = here("submit", "s.toml", "ghost", "/no/such/bot", cwd=tmp_path)
    assert missing.returncode == 2 and "/no/such/bot" in missing.stderr
    assert "Traceback" not in missing.stderr
    taken = here("submit", "s.toml", "a", "random", cwd=tmp_path)
    assert taken.returncode == 2 and "already" in taken.stderr
    ok = here("submit", "s.toml", "newbie", "random", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    t = tmod.load(path)
    assert [b.name for b in t.bots] == ["a", "b", "newbie"]
    assert path.read_text().startswith(before)


def test_submit_takes_a_script_by_relative_path(tmp_path):
    # The bot runs in its own working directory: `python mybot.py` given as several words must
    # still find mybot.py (made absolute), as a one-string command line does.
    path = write(tmp_path / "rel.toml", bots=("a", "b"))
    (tmp_path / "mybot.py").write_text(
        "import random\nfrom bots.sdk import Bot\n\n"
        "class MyBot(Bot):\n    def choose(self, state, time_left):\n"
        "        return random.choice(state.legal_moves())\n\nMyBot().run()\n")
    split = here("submit", "rel.toml", "split", sys.executable, "mybot.py", cwd=tmp_path)
    assert split.returncode == 0, split.stderr
    line = here("submit", "rel.toml", "line", f"{sys.executable} mybot.py", cwd=tmp_path)
    assert line.returncode == 0, line.stderr
    bots = tmod.load(path).bots  # read from another directory: the file holds absolute paths
    assert [b.name for b in bots] == ["a", "b", "split", "line"]
    assert bots[2].argv == bots[3].argv == (sys.executable, str(tmp_path / "mybot.py"))


def test_relative_paths_in_a_tournament_file_are_the_files_own(tmp_path):
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "mine.py").write_text("print('a bot')\n")
    path = write(tmp_path / "own.toml", bots=("a", "b"))
    path.write_text(path.read_text() + '\n[[bots]]\nname = "mine"\ncommand = "python bots/mine.py"\n'
                    '\n[[bots]]\nname = "listed"\ncommand = ["python", "bots/mine.py"]\n')
    bots = tmod.load(path).bots  # this test's directory is not tmp_path
    assert bots[2].argv[1] == bots[3].argv[1] == str(tmp_path / "bots" / "mine.py")


def test_a_second_run_at_once_is_refused(tmp_path):
    t = tmod.load(write(tmp_path / "twice.toml"))
    out = t.results_dir(tmp_path / "res")
    out.mkdir(parents=True)
    with tmod.exclusive(out / tmod.LOCK_NAME, t.name):
        with pytest.raises(StoreError, match="another run"):
            tmod.run(t, tmp_path / "res", progress=None, task=fake_task)
    with ThreadPoolExecutor(1) as pool:  # released: the next run goes ahead
        assert tmod.run(t, tmp_path / "res", executor=pool, progress=None, task=fake_task).stored == 6


@pytest.mark.parametrize("path", sorted((ROOT / "examples").glob("*.toml")), ids=lambda p: p.stem)
def test_every_example_reads(path):
    t = tmod.load(path)  # also checks every bot command resolves
    assert len(t.bots) >= 3 and t.games_per_pairing % 2 == 0
    assert t.results_dir() == Path("results") / path.stem


def test_a_script_missing_where_the_file_reads_it_is_refused_with_the_path_looked_at(tmp_path, monkeypatch):
    # The script exists relative to where the command is run from, but a tournament file's paths
    # are its own directory's: every game would forfeit, so the file is refused when read.
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "mine.py").write_text("print('a bot')\n")
    (tmp_path / "tour").mkdir()
    path = write(tmp_path / "tour" / "t.toml", bots=("a", ("mine", "python bots/mine.py")))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(tmod.TournamentError) as info:
        tmod.load(path)
    message = str(info.value)
    assert "bots[2].command" in message and "no file 'bots/mine.py'" in message
    assert f"looked for {tmp_path / 'tour' / 'bots' / 'mine.py'}" in message
    assert "\n" not in message
    write(path, bots=("a", ("mine", ["python", "-u", "missing.py"])))  # an argv list alike
    with pytest.raises(tmod.TournamentError, match=r"no file 'missing.py' \(looked for .*tour/missing.py\)"):
        tmod.load(path)
    done = here("tournament", "run", str(path), cwd=tmp_path)  # and from the command line: one line
    assert done.returncode == 2 and "looked for" in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(("command", "message"), [
    ("champoin", "no executable program on PATH 'champoin'"),
    ("minimax depth=2", "'minimax' is a shipped bot, which takes no options here: write just 'minimax'"),
    ("python missing.py", "no file 'missing.py' (looked for "),
    ("alice.py", "'alice.py' is not a program on PATH, but there is a file alice.py in "),
    ("./noshebang.py", "is a script without a '#!' first line"),
])
def test_plan_refuses_every_bot_command_that_run_refuses_in_the_same_one_line(tmp_path, command, message):
    (tmp_path / "alice.py").write_text("#!/usr/bin/env python3\nprint('alice')\n")
    (tmp_path / "noshebang.py").write_text("print('no first line')\n")
    os.chmod(tmp_path / "alice.py", 0o755)
    os.chmod(tmp_path / "noshebang.py", 0o755)
    write(tmp_path / "t.toml", bots=("a", ("b", command)))
    said = []
    for verb in ("plan", "run"):
        done = here("tournament", verb, "t.toml", cwd=tmp_path)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert len(done.stderr.splitlines()) == 1 and message in done.stderr, done.stderr
        said.append(done.stderr)
    assert said[0] == said[1]
    assert not (tmp_path / "results" / "t" / DB_NAME).exists()


def test_careless_inputs_get_one_clear_line(tmp_path, round_robin):
    """A Swiss without `rounds`; `arena standings | head`; `submit stdio:python3 bot.py` unquoted, and
    its rejection: the reason on one line, the bot's stack trace once, below it."""
    write(tmp_path / "s.toml", bots=("a", "b", "c", "d"), extra='format = "swiss"')
    swiss = here("tournament", "plan", "s.toml", cwd=tmp_path)
    assert swiss.returncode == 2 and len(swiss.stderr.splitlines()) == 1
    assert "s.toml: rounds: missing: a Swiss needs its number of rounds, from 1 to 3 for 4 bots" \
        in swiss.stderr
    copy_round_robin(round_robin, tmp_path)  # a round-robin played to its end
    standings = " ".join(arena_cmd("standings", "rr.toml"))
    for reader in ("head -1", "true"):  # `true` has left before arena writes: a broken pipe for sure
        piped = subprocess.run(["bash", "-c", f"set -o pipefail; {standings} | {reader}"], cwd=tmp_path,
                               env=ENV, capture_output=True, text=True, timeout=60)
        assert piped.stderr == "" and piped.returncode == 0, piped.stderr
    shutil.copy(ROOT / "tests" / "bots" / "stdio_bot.py", tmp_path / "mine.py")
    split = here("submit", "rr.toml", "mine", f"stdio:{sys.executable}", "mine.py", "first", cwd=tmp_path)
    assert split.returncode == 0, split.stderr
    assert tmod.load(tmp_path / "rr.toml").bots[-1].protocol == "stdio"
    rejected = here("submit", "rr.toml", "bad", sys.executable, str(BROKEN), "syntax", cwd=tmp_path)
    assert rejected.returncode == 2
    first, *rest = rejected.stderr.splitlines()
    assert first.startswith("arena: rejected: bot 'bad': crashed in game submit-bad-g0 after 0 plies (exited "
                            "with code 1 before saying hello)")
    assert rest[0] == "its last output:" and rest[-1] == "SyntaxError: '(' was never closed"
    assert rejected.stderr.count("SyntaxError") == 1


def test_results_are_found_from_another_directory(tmp_path):
    """Run from the tournament file's directory, then from elsewhere: the second run, standings and
    plan find the results beside the file (and say so) instead of starting over; the run names the
    absolute directory it writes to."""
    (tmp_path / "course").mkdir()
    write(tmp_path / "course" / "c.toml", games=2, bots=("a", "b"), time_s="0.3")
    first = here("tournament", "run", "c.toml", "--quiet", cwd=tmp_path / "course")
    assert first.returncode == 0, first.stderr
    assert f"-> {tmp_path / 'course' / 'results' / 'c'}" in first.stderr
    again = here("tournament", "run", "course/c.toml", "--quiet", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    beside = tmp_path / "course" / "results" / "c"
    assert f"the results of 'c' are beside its file, in {beside}" in again.stderr
    assert "all 2 games are already stored" in again.stderr
    assert not (tmp_path / "results").exists()
    shown = here("standings", "course/c.toml", cwd=tmp_path)
    assert shown.returncode == 0 and "2/2 games played" in shown.stdout
    elsewhere = here("tournament", "run", "course/c.toml", "--quiet", "--results", "mine", cwd=tmp_path)
    assert elsewhere.returncode == 0 and (tmp_path / "mine" / "c" / DB_NAME).is_file()  # --results rules



def test_a_results_database_appears_whole_to_a_reader(tmp_path):
    """A reader polling for results databases while another process makes them finds none or a whole
    one, never one without its schema: a course's grades page once read "results database schema
    None" from the database its final's rerun was making."""
    count = 150
    script = ("import sys\nfrom arena.tournament.store import DB_NAME, Store\n"
              "for i in range(int(sys.argv[2])):\n    Store(f'{sys.argv[1]}/{i}/{DB_NAME}').close()\n")
    maker = subprocess.Popen([sys.executable, "-c", script, str(tmp_path), str(count)], cwd=ROOT, env=ENV)
    problems = []
    try:
        while maker.poll() is None:
            for i in range(count):
                try:
                    Store(tmp_path / str(i) / DB_NAME, create=False).close()
                except StoreError as exc:
                    if "does not exist" not in str(exc):
                        problems.append(str(exc))
    finally:
        maker.wait()
    assert maker.returncode == 0 and problems[:3] == []
    for i in range(count):  # each made whole
        Store(tmp_path / str(i) / DB_NAME, create=False).close()
    assert list(tmp_path.glob("*/.*.part")) == []
