"""The course's clock: what "now" is for the season's logic (the deadlines, the freeze, the
ladder's pace and end, the final's start, the times the store records).

It is real time unless staff rehearse a season (`arena course clock DIR set|advance|real`, on a
copy of their course before term): `DIR/clock.json` then holds the rehearsal clock's offset from
real time, and the clock runs at the real pace from the moment it was set. Every process on the
course (the server and its threads, each command, the pages) reads the file on each look (a
`stat`, the file read again only when it changed), so they all agree, and a server notices a
change within `background/clock_watch.py`'s look. Real time (`utc_now`) stays where the real moment
matters: sign-in sessions, the audit log.

    clock = CourseClock(directory)
    clock.set(datetime(2026, 3, 1, 12, tzinfo=UTC)); clock.advance(timedelta(hours=2))
    clock.now()        # 2026-03-01 14:00 and the seconds since
    clock.real()       # back to real time: clock.json removed
"""
from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from arena.course.config import checks
from arena.course.config.course_toml import CourseError
from arena.course.db.files import fsync_dir, write_atomically

CLOCK_NAME = "clock.json"


def utc_now() -> datetime:
    """Real time (UTC): what a course's clock is when no rehearsal clock is set."""
    return datetime.now(UTC)


class ClockError(CourseError):
    """A rehearsal clock that cannot be set or read: one line naming the value or the file."""


@dataclass(frozen=True)
class Rehearsal:
    """A rehearsal clock: the course's time is real time plus `offset`; `changed` is the real time
    (ISO 8601 UTC) it was last set or advanced."""

    offset: timedelta
    changed: str

    def now(self, real: datetime) -> datetime:
        return real + self.offset


class CourseClock:
    """The clock of the course in `directory` (its `clock.json`); `real` gives real time."""

    def __init__(self, directory: Path, real: Callable[[], datetime] = utc_now) -> None:
        self.path = Path(directory) / CLOCK_NAME
        self.real_now = real
        self._seen: tuple[tuple[int, int, int], Rehearsal] | None = None
        """The file's identity (inode, mtime, size) when last read, and what it held."""

    def now(self) -> datetime:
        """The course's time: real time, or the rehearsal clock's."""
        real = self.real_now()
        rehearsal = self.rehearsal()
        return real if rehearsal is None else rehearsal.now(real)

    def rehearsal(self) -> Rehearsal | None:
        """The rehearsal clock set on the course, None on real time; ClockError (naming the file)
        for a clock.json arena did not write."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        key = (st.st_ino, st.st_mtime_ns, st.st_size)
        seen = self._seen
        if seen is not None and seen[0] == key:
            return seen[1]
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            found = Rehearsal(timedelta(seconds=float(data["offset_s"])), str(data["changed"]))
        except FileNotFoundError:  # ended between the stat and the read
            return None
        except (OSError, ValueError, KeyError, TypeError, OverflowError) as exc:
            raise ClockError(f"{self.path}: not a rehearsal clock arena wrote ({type(exc).__name__}: "
                             f"{exc}); `arena course clock {self.path.parent} real` removes it") from None
        self._seen = (key, found)
        return found

    def set(self, moment: datetime) -> Rehearsal:
        """Set the course's time to `moment` (it runs on from there at the real pace)."""
        real = self.real_now()
        return self._write(moment - real, real)

    def advance(self, by: timedelta) -> Rehearsal:
        """Move the course's time `by` ahead (from real time if no rehearsal clock was set)."""
        real = self.real_now()
        rehearsal = self.rehearsal()
        return self._write((rehearsal.offset if rehearsal is not None else timedelta(0)) + by, real)

    def real(self) -> bool:
        """Back to real time: clock.json removed (a bad one too); whether there was one."""
        try:
            self.path.unlink()
        except FileNotFoundError:
            return False
        fsync_dir(self.path.parent)
        return True

    def _write(self, offset: timedelta, real: datetime) -> Rehearsal:
        changed = real.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        text = json.dumps({"offset_s": offset.total_seconds(), "changed": changed})
        write_atomically(self.path, text + "\n")
        return Rehearsal(offset, changed)

    def describe(self) -> str:
        """A line saying what the clock is: "real time", or the rehearsal clock's time and offset."""
        rehearsal = self.rehearsal()
        if rehearsal is None:
            return "real time"
        now = rehearsal.now(self.real_now())
        return (f"REHEARSAL CLOCK: the course's time is {now:%Y-%m-%dT%H:%M:%SZ}, real time "
                f"{offset_text(rehearsal.offset)} (the deadlines, the freeze, the ladder and the final "
                "follow it)")

    def warning(self) -> str | None:
        """The loud line the server and `arena course status` print while a rehearsal clock is set
        (or clock.json is bad), None on real time."""
        try:
            if self.rehearsal() is None:
                return None
            said = self.describe()
        except ClockError as exc:
            return f"WARNING: {exc}"
        return (f"WARNING: {said}; not for a real season: `arena course clock {self.path.parent} real` "
                "returns to real time")


def offset_text(offset: timedelta) -> str:
    """An offset as "+ 3d 4h 5m" or "- 20m 5s" (to the second)."""
    seconds = round(offset.total_seconds())
    sign, seconds = ("-", -seconds) if seconds < 0 else ("+", seconds)
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if seconds >= size or (unit == "s" and not parts):
            parts.append(f"{seconds // size}{unit}")
            seconds %= size
    return f"{sign} {' '.join(parts)}"


def parse_moment(text: str) -> datetime:
    """`arena course clock DIR set TIME`'s TIME: ISO 8601 with its zone; ClockError naming it."""
    try:
        return checks.moment(text).astimezone(UTC)
    except ValueError as exc:
        raise ClockError(f"clock set {text!r}: {exc}") from None


def parse_advance(text: str) -> timedelta:
    """`arena course clock DIR advance BY`'s BY: a duration ("2h", "1d 12h"); ClockError naming it."""
    try:
        return checks.duration(text)
    except ValueError as exc:
        raise ClockError(f"clock advance {text!r}: {exc}") from None
