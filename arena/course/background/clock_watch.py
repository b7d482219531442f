"""The clock's watch: the server's thread that notices, within `CLOCK_LOOK_S`, that staff set,
advanced or ended a rehearsal clock (`arena course clock DIR ...`, another process: it writes
DIR/clock.json, db/clock.py), says so on stderr, and wakes the loops that wait for a moment on the
course's clock (the season clock, the phase checks, the ladder), so that each looks again at once
instead of at its next tick."""
from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from arena.course.background.loop import Loop
from arena.course.db.clock import ClockError, Rehearsal

if TYPE_CHECKING:
    from arena.course.course import Course

CLOCK_LOOK_S = 0.5
"""How often the watch looks at DIR/clock.json (a `stat`; the file is read only when it changed)."""


class ClockWatch(Loop):
    """Looks every `interval_s` whether the course's clock changed since the last look (or since
    it was made: what the server's first warning said); on a change prints the new state on `out`
    and calls each of `wakes`."""

    def __init__(self, course: Course, wakes: list[Callable[[], None]], interval_s: float = CLOCK_LOOK_S,
                 out: TextIO | None = None) -> None:
        super().__init__("clock-watch", interval_s)
        self.course = course
        self.wakes = wakes
        self.out = out
        self._seen: Rehearsal | str | None = self._look()
        self.changes = 0
        """Changes this watch saw (each woke the loops)."""

    def _look(self) -> Rehearsal | str | None:
        try:
            return self.course.clock.rehearsal()
        except ClockError as exc:  # a clock.json arena did not write: said, and the loops go on
            return str(exc)

    def run_once(self) -> bool:
        """Wake the loops if the clock changed; whether it did."""
        found = self._look()
        if found == self._seen:
            return False
        self._seen = found
        said = self.course.clock.warning() if found is not None else "the rehearsal clock ended: real time"
        print(f"arena course: {said}", file=self.out or sys.stderr, flush=True)
        self.changes += 1
        for wake in self.wakes:
            wake()
        return True
