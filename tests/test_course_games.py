"""The course's games go through the tournament's backend (arena.course.season.games): threads that each need
games (the workers qualifying submissions, the ladder) share one local pool, each gets its own games
back, in order; a player stopped while games are in flight ends them at once and tells its callers
they were not played, so a job is played again at the next start instead of being judged."""
from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pytest

from arena.cell.launcher import resolve_command
from arena.cell.limits import Limits
from arena.course.season.games import GamePlayer, PlayerStopped
from arena.match.clock import TimeControl
from arena.match.spec import BotSpec, MatchSpec
from arena.tournament.backends import LocalPool

ROOT = Path(__file__).resolve().parents[1]
BROKEN = ROOT / "tests" / "bots" / "broken.py"
RANDOM = resolve_command("random")


def spec(match_id: str, games: int, opponent: BotSpec | None = None) -> MatchSpec:
    return MatchSpec(match_id=match_id, game="domineering",
                     bots=(BotSpec(f"{match_id}-bot", RANDOM), opponent or BotSpec("random", RANDOM)),
                     time_control=TimeControl(per_move=2.0), game_numbers=tuple(range(games)),
                     params={"rows": 4, "cols": 4}, limits=Limits(sandbox="off"))


def test_threads_sharing_one_pool_each_get_their_own_games_in_order():
    player = GamePlayer(lambda: LocalPool(concurrency=2, reuse=False))
    player.start()
    results: dict[str, list] = {}
    try:
        def ask(match_id: str, games: int) -> None:
            results[match_id] = player.play([spec(match_id, games)])

        threads = [threading.Thread(target=ask, args=(f"q{n}", 2 + n % 2)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
    finally:
        player.stop()
    assert sorted(results) == ["q0", "q1", "q2", "q3"]
    for match_id, records in results.items():
        expected = 2 + int(match_id[1]) % 2
        assert [r.game_id for r in records] == [f"{match_id}-g{n}" for n in range(expected)]
        assert all(f"{match_id}-bot" in r.players and r.winner is not None for r in records)


def test_stopping_the_player_mid_game_tells_the_caller_the_games_were_not_played():
    slow = BotSpec("sleeper", (sys.executable, str(BROKEN), "sleep", "1.5"))
    player = GamePlayer(lambda: LocalPool(concurrency=1, reuse=False))
    player.start()
    outcome: list[BaseException | list] = []

    def ask() -> None:
        try:
            outcome.append(player.play([spec("long", 2, slow)]))
        except BaseException as exc:  # what the caller sees is the point
            outcome.append(exc)

    thread = threading.Thread(target=ask)
    thread.start()
    time.sleep(2.0)  # the match has begun: the sleeper thinks for 1.5 s a move
    stopped = time.monotonic()
    player.stop()
    thread.join(30)
    assert time.monotonic() - stopped < 10, "the games in flight were waited for, not stopped"
    assert len(outcome) == 1 and isinstance(outcome[0], PlayerStopped), outcome
    with pytest.raises(PlayerStopped, match="not running"):
        player.play([spec("after", 1)])
