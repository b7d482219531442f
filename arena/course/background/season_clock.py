"""The season clock: the server's thread that starts the final tournament
(arena.course.season.final) once the last deadline plus the longest extension has passed on the
course's clock, and resumes a final a stopped server left unfinished. A rehearsal clock moved
(`arena course clock`) wakes it at once (background/clock_watch.py)."""
from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING

from arena.course.background.loop import Loop
from arena.course.season import final

if TYPE_CHECKING:
    from arena.course.course import Course

log = logging.getLogger(__name__)

SEASON_TICK_S = 5.0
"""How often the season clock looks whether the final is due."""


class SeasonClock(Loop):
    """Starts (or resumes) the final when `final.due` says so, looking every `tick_s` seconds;
    `stop()` ends the thread (a final it started plays on in its own thread until the process ends,
    then resumes at the next start)."""

    def __init__(self, course: Course, tick_s: float = SEASON_TICK_S) -> None:
        super().__init__("season-clock", tick_s)
        self.course = course
        self.tick_s = tick_s
        self._told: str | None = None

    def stop(self, timeout_s: float | None = None) -> None:
        super().stop(self.tick_s + 1 if timeout_s is None else timeout_s)

    def run_once(self) -> None:
        """Start the final if it is due; a reason it cannot start is logged once."""
        if not final.due(self.course):
            return
        try:
            final.start_final(self.course)
            self._told = None
        except (ValueError, OSError) as exc:  # FinalError, a tournament file or store that refuses
            if str(exc) != self._told:
                log.warning("the final cannot start: %s", exc)
                print(f"arena course serve: the final cannot start: {exc}", file=sys.stderr, flush=True)
                self._told = str(exc)

    tick = run_once

    def thread_done(self) -> None:
        self.course.store.close()  # this thread's connection
