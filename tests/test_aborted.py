"""Issue 21: a game whose worker process keeps dying is `aborted`, charged to nobody, left out of the
standings and Elo, listed for the staff with what both bots printed, and played again only with
`arena tournament run --retry-aborted`. Shown with a real bot that kills its worker (SIGKILL) during
its opponent's turn, through the real `arena` command (what follows that run, in this process:
arena.cli.main, the same commands without an interpreter's start-up)."""
from __future__ import annotations

import re
import sys

from conftest import ROOT, call_arena, run_arena

from arena.match.records import GameRecord
from arena.tournament.standings import compute, scored_records
from arena.tournament.store import DB_NAME, Store

BROKEN = ROOT / "tests" / "bots" / "broken.py"
KILLER = '''import os, signal, sys, time
from arena.match.protocol import BotClient
with BotClient(os.environ["ARENA_ENDPOINT"]) as client:
    client.send({"type": "hello", "token": os.environ["ARENA_TOKEN"], "name": "killer", "protocol": 1})
    while True:
        message = client.receive(10.0)
        if message is None or message["type"] == "bye":
            break
        if message["type"] == "turn":
            client.send({"type": "move", "game_id": message["game_id"], "ply": message["ply"],
                         "move": message["legal"][0]})
            if not os.path.exists(sys.argv[1]):  # the opponent's turn has begun: kill the referee
                print(f"killer: striking at ply {message['ply'] + 1}", flush=True)
                time.sleep(0.1)
                os.kill(os.getppid(), signal.SIGKILL)
'''


def test_a_bot_that_kills_its_worker_on_the_opponents_turn_gets_the_game_aborted_then_retried(tmp_path):
    (tmp_path / "killer.py").write_text(KILLER)
    peace = tmp_path / "peace"
    (tmp_path / "t.toml").write_text(
        'name = "t"\ngame = "domineering"\ntime = "2"\ngames_per_pairing = 2\ngames_per_task = 2\n'
        '[params]\nrows = 5\ncols = 5\n'
        '[limits]\nsandbox = "off"\n'  # a sandboxed bot cannot see its worker, let alone kill it
        f'[[bots]]\nname = "killer"\ncommand = ["{sys.executable}", "killer.py", "{peace}"]\n'
        f'[[bots]]\nname = "ann"\ncommand = ["{sys.executable}", "{BROKEN}", "sleep", "0.3"]\n'
        )
    done = run_arena("tournament", "run", "t.toml", "-j", "2", cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    db = tmp_path / "results" / "t" / DB_NAME
    with Store(db, create=False) as store:
        games = store.games()
        fingerprint = store.fingerprint()
    records = {g.record.game_id: g.record for g in games}
    aborted = sorted(r.game_id for r in records.values() if r.is_aborted())
    assert aborted == ["killer-vs-ann-g0", "killer-vs-ann-g1"]
    for game_id in aborted:
        record = records[game_id]
        killer = record.players.index("killer")
        assert record.reason == "aborted" and record.winner is None and record.forfeit is None
        assert record.result() == "*" and record.points(0) == record.points(1) == 0.0
        assert record.aborted["seat"] == 1 - killer, record.aborted  # killed on its opponent's turn...
        assert f"with {record.players[1 - killer]} (seat {1 - killer}) to move" in record.aborted["detail"]
        assert "killer: striking" in record.logs[str(killer)]  # ...and what it printed is kept
        assert GameRecord.from_json(record.to_json()) == record
    # out of the standings and Elo: the killer has no game, its opponents lost nothing
    result = compute(fingerprint, games)
    table = result.tables[0].frame.set_index("bot")
    assert table.loc["killer", "games"] == 0 and table.loc["ann", "games"] == 0
    assert table.loc["ann", "forfeits"] == 0 and table.loc["ann", "points"] == 0
    assert len(scored_records(games)) == 0
    assert result.crosstable.frame().loc["killer"].isna().all() and result.played == 0
    # listed for the staff with both bots' output: the run's report, and `arena standings`
    for text in (done.stdout, call_arena("standings", "t", cwd=tmp_path).stdout):
        assert "2 games aborted, not scored" in text and "--retry-aborted" in text
        assert "killer-vs-ann-g1: the worker process playing this game died 2 times" in text
        assert "killer: striking at ply" in text and "ann (seat 0) printed nothing" in text
    assert "2 of them aborted" in done.stderr
    # the killer's page on the published site: each aborted game "*", worth 0 points (not a draw's 0.5)
    published = call_arena("publish", "t.toml", cwd=tmp_path)
    assert published.returncode == 0, published.stderr
    page = (tmp_path / "results" / "t" / "site" / "bots" / "killer.html").read_text()
    for game_id in aborted:
        row = re.search(rf"{game_id}</a></td>.*?</tr>", page, re.S)
        assert row and re.search(r"<td>\*</td><td>0</td>", row.group(0)), row and row.group(0)
    again = call_arena("tournament", "run", "t.toml", cwd=tmp_path)  # not played again
    assert again.returncode == 0 and "nothing to play" in again.stderr
    # on request, played again: the aborted records are kept aside
    peace.touch()
    retry = call_arena("tournament", "run", "t.toml", "--retry-aborted", "--quiet", cwd=tmp_path)
    assert retry.returncode == 0, retry.stderr
    assert "2 aborted games played again" in retry.stderr
    with Store(db, create=False) as store:
        games = store.games()
        retried = store.retried()
        fingerprint = store.fingerprint()
    assert sorted(g.record.game_id for g in retried) == aborted
    assert all(g.record.is_aborted() for g in retried)
    assert len(games) == 2 and not any(g.record.is_aborted() for g in games)
    assert compute(fingerprint, games).tables[0].frame.set_index("bot").loc["killer", "games"] == 2


def test_a_database_from_before_aborted_games_still_reads_and_gets_the_table_on_its_next_run(tmp_path):
    import json
    import sqlite3

    from arena.tournament import store as store_module

    db = tmp_path / DB_NAME
    old_schema = store_module._SCHEMA.split("CREATE TABLE IF NOT EXISTS retried_games")[0]
    with sqlite3.connect(db) as con:  # what an arena without aborted games made
        con.executescript(old_schema)
        con.execute("INSERT INTO meta VALUES ('schema', '1')")
    old = GameRecord("a-vs-b-g0", "domineering", {}, ["a", "b"], "1", winner=0, reason="no legal move")
    data = old.to_dict()
    del data["aborted"]  # a record written before the field existed
    with sqlite3.connect(db) as con:
        con.execute("INSERT INTO games (pairing, number, game_id, seat0, seat1, winner, reason, plies, "
                    "stored_at, record) VALUES ('a-vs-b', 0, 'a-vs-b-g0', 'a', 'b', 0, 'no legal move', 0, "
                    "0, ?)", (json.dumps(data),))
    with Store(db, create=False) as store:  # `arena standings` on it
        [game] = store.games()
        assert game.record == old and not game.record.is_aborted() and store.retried() == []
    with Store(db) as store:  # the next run
        assert store.retry_aborted() == [] and store.count() == 1
