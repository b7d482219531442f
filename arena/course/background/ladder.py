"""The ladder's runner: the server's thread that plays the ladder games due
(arena.course.season.ladder.Ladder.due: nothing while the ladder is paused or ended), one at a
time, and records them; a game lost on time under load is played again first (jobs.play_judged)."""
from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from arena.course.background.loop import Loop
from arena.course.season.games import PlayGames
from arena.course.season.jobs import play_judged
from arena.course.season.ladder import Ladder
from arena.match.records import GameRecord

if TYPE_CHECKING:
    from arena.course.course import Course

log = logging.getLogger(__name__)


class LadderRunner(Loop):
    """Every `interval_s` (default `[ladder] poll_s`), or at once when woken (a student asked for a
    game: `Course.ladder_listeners`; a rehearsal clock moved: background/clock_watch.py), asks
    `Ladder.due` for what is due and plays it one ladder game at a time through `play` (default:
    the course's game player, `Course.play`), recording each; a game lost on time under load is
    played again, as judged games are (jobs.play_judged, at most jobs.LOAD_REPLAYS times). A game
    that cannot be played is marked errored; nothing a bot does stops it. On `start()` games a
    stopped server left scheduled are given up (their entrants are owed them again)."""

    def __init__(self, course: Course, interval_s: float | None = None, play: PlayGames | None = None,
                 clock: Callable[[], datetime] | None = None) -> None:
        self.course = course
        self.ladder = Ladder(course)
        poll_s = interval_s if interval_s is not None else self.ladder.settings.poll_s
        super().__init__("course-ladder", poll_s)
        self.play = play or course.play
        self.clock = clock or course.clock.now
        self.played = 0
        """Ladder games (pairs) this runner played."""

    def start(self) -> None:
        self.ladder.abandon_scheduled()
        if self.wake not in self.course.ladder_listeners:
            self.course.ladder_listeners.append(self.wake)
        super().start()

    def stop(self, timeout_s: float | None = None) -> None:
        """Stop after the ladder game being played (up to `timeout_s`)."""
        if self.wake in self.course.ladder_listeners:
            self.course.ladder_listeners.remove(self.wake)
        super().stop(timeout_s)

    def run_once(self) -> int:
        """Play what is due now, one ladder game at a time (each asked of `due` after the last
        was recorded: a game a student asks for meanwhile goes next, and pairings see the newest
        ratings); how many ladder games were played. A game that could not be played ends the
        round (the next poll tries again), so a bot that cannot start does not spin the loop."""
        played = 0
        while not self.stopping:
            due = self.ladder.due(self.clock(), limit=1)
            if not due:
                break
            spec = due[0]
            replaced: list[GameRecord] = []
            try:
                records, _ = play_judged(spec, self.play, replaced)
            except Exception as exc:  # a bot that cannot start, a sandbox refused: that game only
                log.warning("ladder %s: %s", spec.match_id, exc)
                self.ladder.fail(spec.match_id, f"{type(exc).__name__}: {exc}".splitlines()[0])
                break
            self.ladder.record(records, self.clock(), replaced)
            played += 1
            if len(records) < len(spec.game_numbers):
                self.ladder.fail(spec.match_id, "not every game of the pair was played")
                break
        self.played += played
        return played

    def thread_done(self) -> None:
        self.course.store.close()  # this thread's connection
