"""The server's background threads (arena/course/background): the one loop they share (a round
when woken, not only at the interval; a round that raises does not end the loop; every thread
ends and releases what it holds), and the wiring they get from the Course, not from module
globals: each course's games go through its own workers' game player, and a ladder game a student
asks for wakes the runner of that course."""
from __future__ import annotations

import shlex
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from arena.cell.launcher import resolve_command
from arena.course.background.ladder import LadderRunner
from arena.course.background.loop import Loop
from arena.course.background.submissions import Workers
from arena.course.course import Course
from arena.course.season.ladder import Ladder
from arena.match.clock import TimeControl
from arena.match.records import GameRecord
from arena.match.spec import BotSpec, MatchSpec
from arena.tournament.backends import LocalPool

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


class Rounds(Loop):
    """A loop that notes the time of each round; its first `failures` rounds raise."""

    def __init__(self, interval_s: float, threads: int = 1, failures: int = 0) -> None:
        super().__init__("rounds", interval_s, threads)
        self.times: list[float] = []
        self.failures = failures
        self.done = 0
        self._lock = threading.Lock()

    def run_once(self) -> None:
        with self._lock:
            self.times.append(time.monotonic())
            if self.failures:
                self.failures -= 1
                raise RuntimeError("a bug in one round")

    def thread_done(self) -> None:
        with self._lock:
            self.done += 1


def wait_for(condition, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_a_loop_runs_a_round_when_woken_not_only_at_its_interval():
    loop = Rounds(interval_s=3600)
    loop.start()
    try:
        wait_for(lambda: len(loop.times) == 1)  # the first round, at once
        time.sleep(0.2)
        assert len(loop.times) == 1  # then it waits: an hour, unless woken
        loop.wake()
        wait_for(lambda: len(loop.times) == 2, timeout_s=10)
    finally:
        loop.stop(10)
    assert not loop.alive() and loop.done == 1


def test_a_round_that_raises_is_logged_and_the_loop_goes_on(caplog):
    loop = Rounds(interval_s=0.01, failures=2)
    loop.start()
    try:
        wait_for(lambda: len(loop.times) >= 4)
    finally:
        loop.stop(10)
    failed = [r for r in caplog.records if r.exc_info and "a bug in one round" in str(r.exc_info[1])]
    assert len(failed) == 2, caplog.text
    assert not loop.alive()


def test_stop_ends_every_thread_of_a_loop_and_each_releases_what_it_holds():
    loop = Rounds(interval_s=3600, threads=3)
    loop.start()
    wait_for(lambda: len(loop.times) == 3)
    began = time.monotonic()
    loop.stop(10)
    assert time.monotonic() - began < 5, "stop waited for the interval"
    assert not loop.alive() and loop.done == 3


def make_course(directory: Path, students: int = 2, ladder: str = "") -> Course:
    """A Domineering 4x4 course of students s1..sN, a `[ladder]` of `ladder`'s lines, no sandbox."""
    directory.mkdir()
    (directory / "course.toml").write_text(
        'game = "domineering"\ntime = 1.0\nupload_interval_s = 0\n[params]\nrows = 4\ncols = 4\n'
        + (f"[ladder]\n{ladder}\n" if ladder else ""))
    lines = "".join(f"s{n},Student {n},s{n}@example.org,\n" for n in range(1, students + 1))
    (directory / "roster.csv").write_text("id,name,email,group\n" + lines)
    return Course(directory, sandbox="off")


class Recording(LocalPool):
    """A local pool that notes the match id of every spec it is handed."""

    def __init__(self, seen: list[str]) -> None:
        super().__init__(concurrency=1, reuse=False)
        self.seen = seen

    def submit(self, spec: MatchSpec) -> None:
        self.seen.append(spec.match_id)
        super().submit(spec)


def a_game(match_id: str) -> MatchSpec:
    random = resolve_command("random")
    return MatchSpec(match_id=match_id, game="domineering", bots=(BotSpec("a", random), BotSpec("b", random)),
                     time_control=TimeControl(per_move=2.0), game_numbers=(0,), params={"rows": 4, "cols": 4})


def test_each_course_plays_its_games_through_its_own_workers(tmp_path):
    """Two courses in one process: stopping the second's workers leaves the first's game player in
    place (it was a module global every course shared)."""
    first, second = make_course(tmp_path / "a"), make_course(tmp_path / "b")
    seen_first: list[str] = []
    seen_second: list[str] = []
    workers_first = Workers(first, make_backend=lambda: Recording(seen_first))
    workers_second = Workers(second, make_backend=lambda: Recording(seen_second))
    workers_first.start()
    try:
        workers_second.start()
        assert first.player is workers_first.player and second.player is workers_second.player
        workers_second.stop(10)
        assert second.player is None
        [record] = first.play([a_game("first-course")])
        assert record.winner is not None and seen_first == ["first-course"] and seen_second == []
    finally:
        workers_second.stop(10)
        workers_first.stop(10)
    assert first.player is None
    [record] = first.play([a_game("here")])  # no workers: played in this thread
    assert record.winner is not None and seen_first == ["first-course"]


def decided(specs: list[MatchSpec]) -> list[GameRecord]:
    """Both games of a ladder pair, seat 0 winning each (no processes)."""
    [spec] = specs
    return [GameRecord(game_id=spec.game_id(n), game=spec.game, params=spec.params,
                       players=[b.name for b in spec.seats(n)], time_control="1", winner=0, scores=[1, 0],
                       reason="no moves") for n in spec.game_numbers]


def test_a_ladder_game_a_student_asks_for_wakes_the_runner_of_that_course(tmp_path):
    course = make_course(tmp_path / "c", ladder='reference = ["random"]\nplacement_games = 0\n')
    for student in ("s1", "s2"):
        sub = course.submit(student, "bot.py", b"print('bot')\n", now=T0)
        course.store.set_command(sub.id, shlex.join([sys.executable, "-m", "bots", "random"]))
        course.store.finish(sub.id, "qualified")
    runner = LadderRunner(course, interval_s=3600, play=decided, clock=lambda: T0)
    runner.start()
    try:
        time.sleep(0.5)  # its first round: nothing is due (the entrants are new, placement none)
        assert runner.played == 0
        asked = Ladder(course).request("s1", "s2", now=T0)
        wait_for(lambda: runner.played == 1, timeout_s=10)  # not an hour later
    finally:
        runner.stop(10)
    assert runner.wake not in course.ladder_listeners
    game = next(g for g in Ladder(course).games() if g.id == asked)
    assert (game.state, game.rated, game.requested_by, game.score) == ("done", False, "s1", 1.0)
