"""The phase checks' runner: the server's thread that plays the score games and runs the
move-generation checks the phases need (arena.course.season.phase_checks.due), one check at a
time, nearest deadline first, so that no page or command ever plays a game.

It runs a round when started (checks a stopped server cut short run again), when woken (a
submission's job ended, staff asked for a check again: `Course.phase_listeners`; a rehearsal clock
moved: background/clock_watch.py), at each phase's deadline and each deadline plus an extension
(on the course's clock), and every `poll_s` seconds. Submissions come first:
while one waits to be built or qualified (a deadline's rush) no check starts, so that the checks
take neither the game player's places nor the machine from the students waiting for a status. A round is
`phase_checks.run_pending`, which `arena course phases DIR --wait` runs itself when no server
runs.
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from arena.course.background.loop import Loop
from arena.course.season import phase_checks
from arena.course.season.phase_checks import run_pending

if TYPE_CHECKING:
    from arena.course.course import Course

log = logging.getLogger(__name__)

PHASE_POLL_S = 10.0
"""How often the runner looks for checks due even when not woken (a check dropped by
`arena course phases --recheck` from another process)."""
DEADLINE_MARGIN_S = 0.5
"""How long after a deadline the runner looks (the version judged is then the one kept)."""


def next_deadline(course: Course, now: datetime) -> datetime | None:
    """The first moment after `now` at which a phase's deadline passes for some student (its
    deadline, or its deadline plus an extension), None after the last."""
    season = course.config.season
    shifts = {timedelta(0), *season.extensions.values()}
    ahead = [p.deadline + shift for p in season.phases for shift in shifts if p.deadline + shift > now]
    return min(ahead, default=None)


class PhaseChecks(Loop):
    """Runs the phase checks due through the course's game player (`Course.play`); see the
    module's docstring for when. `stop()` ends it after the check under way, or at once when the
    game player stops (its check then runs again at the next start)."""

    def __init__(self, course: Course, poll_s: float = PHASE_POLL_S,
                 clock: Callable[[], datetime] | None = None) -> None:
        super().__init__("phase-checks", poll_s)
        self.course = course
        self.poll_s = poll_s
        self.clock = clock or course.clock.now
        self.ran = 0
        """Checks this runner ran."""

    def start(self) -> None:
        cut = phase_checks.cut_short(self.course.store)
        if cut:
            log.info("%d phase check%s a stopped server cut short: queued again", cut, "s" * (cut != 1))
        if self.wake not in self.course.phase_listeners:
            self.course.phase_listeners.append(self.wake)
        super().start()

    def stop(self, timeout_s: float | None = None) -> None:
        """Stop after the check under way (wait up to `timeout_s` for it)."""
        if self.wake in self.course.phase_listeners:
            self.course.phase_listeners.remove(self.wake)
        super().stop(timeout_s)

    def run_once(self) -> int:
        """Run what is due now, while no submission waits for its job; then wait until the next
        deadline passes, at most `poll_s` (the last job's end wakes it)."""
        store = self.course.store
        ran = run_pending(self.course, self.clock, lambda: self.stopping or store.pending() > 0)
        self.ran += ran
        now = self.clock()
        upcoming = next_deadline(self.course, now)
        wait_s = self.poll_s
        if upcoming is not None:
            wait_s = min(wait_s, (upcoming - now).total_seconds() + DEADLINE_MARGIN_S)
        self.interval_s = max(wait_s, DEADLINE_MARGIN_S)
        return ran

    def thread_done(self) -> None:
        self.course.store.close()  # this thread's connection
