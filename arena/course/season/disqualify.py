"""Disqualification (issue 33): staff take a student's grade to 0 points for copying, with the
reason, shown in grades.csv, on the grades page and on the staff pages; reversible.

Kept in course.db's table `disqualifications` (db/schema.py, version 3: one row a disqualified
student, its reason, when and by whom). `arena course disqualify DIR ID --reason TEXT [--undo]`
calls `disqualify` / `reinstate` and writes the audit log.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from arena.course.db.store import iso
from arena.course.season.archives import Refused

if TYPE_CHECKING:
    from arena.course.course import Course

MAX_REASON_CHARS = 500


@dataclass(frozen=True)
class Disqualification:
    """A disqualified student: why, when (ISO 8601 UTC) and by whom."""

    student_id: str
    reason: str
    at: str
    actor: str


def disqualify(course: Course, student_id: str, reason: str, actor: str) -> Disqualification:
    """Disqualify a student of the roster (0 points) for `reason`; Refused for an unknown student
    or an empty or over-long reason. Disqualifying again replaces the reason."""
    reason = " ".join(reason.split())
    if not reason:
        raise Refused("a disqualification needs its reason (--reason TEXT)")
    if len(reason) > MAX_REASON_CHARS:
        raise Refused(f"the reason is {len(reason)} characters, at most {MAX_REASON_CHARS}")
    if course.student(student_id) is None:
        raise Refused(f"no student {student_id!r} in the roster")
    found = Disqualification(student_id, reason, iso(course.clock.now()), actor)
    with course.store.write() as db:
        db.execute("INSERT OR REPLACE INTO disqualifications (student_id, reason, at, actor) "
                   "VALUES (?, ?, ?, ?)",
                   (found.student_id, found.reason, found.at, found.actor))
    return found


def reinstate(course: Course, student_id: str) -> Disqualification:
    """Undo a student's disqualification; Refused where it is not disqualified. The undone one."""
    found = disqualified(course).get(student_id)
    if found is None:
        raise Refused(f"{student_id!r} is not disqualified")
    with course.store.write() as db:
        db.execute("DELETE FROM disqualifications WHERE student_id = ?", (student_id,))
    return found


def disqualified(course: Course) -> dict[str, Disqualification]:
    """Student id -> its disqualification (none before any)."""
    rows = course.store.rows("SELECT student_id, reason, at, actor FROM disqualifications")
    return {r["student_id"]: Disqualification(r["student_id"], r["reason"], r["at"], r["actor"])
            for r in rows}
