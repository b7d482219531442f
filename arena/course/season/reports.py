"""A phase's report, handed in on its own (issue 32): a student uploads a report for a phase
(the web form of the season page, `arena course report`, `arena course submit --report`) and may
replace it until the phase's deadline plus the student's extension; the phase judges the latest
one uploaded by then, beside the version it judges. Uploading a report never touches the code,
the active bot or the ladder.

A report uploaded with the code, as before (table `reports`, one per submission), still counts:
for the phase that was current when it was uploaded (the first whose deadline, plus the
student's extension, was ahead), and only where no report was handed in for that phase on its
own. Reports handed in on their own are kept in table `phase_reports` (schema version 2), every
upload, the file content-addressed like the code.
"""
from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from arena.course.config import checks
from arena.course.season import phases
from arena.course.season.archives import Refused
from arena.course.season.phases import Report

if TYPE_CHECKING:
    from arena.course.course import Course


def phase_named(course: Course, name: str) -> phases.Phase:
    """The phase called `name`; Refused naming the phases that take a report otherwise."""
    season = course.config.season
    takes = [p.name for p in season.phases if p.report]
    found = next((p for p in season.phases if p.name == name), None)
    if found is None:
        raise Refused(f"no phase named {name[:100]!r}: the phases that take a report are "
                      f"{', '.join(repr(n) for n in takes) or 'none'}")
    if not found.report:
        raise Refused(f"the phase {name!r} takes no report: the phases that do are "
                      f"{', '.join(repr(n) for n in takes) or 'none'}")
    return found


def phase_deadline(course: Course, phase: phases.Phase, student_id: str) -> datetime:
    """The phase's deadline for the student: course.toml's plus the student's extension."""
    return phase.deadline + phases.extension_for(course.config, student_id)


def hand_in(course: Course, student_id: str, phase_name: str, filename: str, data: bytes,
            now: datetime | None = None) -> Report:
    """Keep `data` as the student's report for the phase (replacing, for the judging, any earlier
    one): Refused (one line for the student) for an unknown phase or one taking no report, past
    the phase's deadline plus the student's extension, a disabled student, a file that is no PDF
    or Markdown or is too big (the phase's `report_max_mb`), or past the storage cap."""
    from arena.course.db.store import iso

    now = now or course.clock.now()
    row = course.store.student_row(student_id)
    if row is None:
        raise Refused(f"no student {student_id!r} in the roster")
    if row["disabled"]:
        raise Refused("your submissions are disabled: ask the course staff")
    phase = phase_named(course, phase_name)
    own = phase_deadline(course, phase, student_id)
    if now >= own:
        text = f"the deadline of phase {phase.name!r} has passed: it was {phase.deadline.isoformat()}"
        extension = phases.extension_for(course.config, student_id)
        if extension:
            text += (f" (yours, with your extension of {checks.duration_text(extension)}, was "
                     f"{own.isoformat()})")
        raise Refused(text)
    name = phases.check_report(course.config, student_id, now, (filename, data), phase)
    cap, used = course.config.storage_bytes, course.store.stored_bytes(student_id)
    if used + len(data) > cap:
        raise Refused(f"storage full: your uploads and reports take {used:,} bytes of the {cap:,} bytes "
                      f"the server keeps for each student (storage_mb), and this report ({len(data):,} "
                      "bytes) does not fit: ask the course staff")
    sha = course.store.put_file(data)
    created = iso(now)
    with course.store.write() as db:
        cursor = db.execute("INSERT INTO phase_reports (student_id, phase, filename, sha256, size, created) "
                            "VALUES (?, ?, ?, ?, ?, ?)",
                            (student_id, phase.name, name, sha, len(data), created))
        report_id = int(cursor.lastrowid or 0)
    return Report(name, len(data), created, f"/reports/{report_id}", report_id=report_id)


def history(course: Course, student_id: str) -> list[dict]:
    """Every report the student handed in on its own, newest first (phase, file name, size, when, url)."""
    return [{"phase": r["phase"], "filename": r["filename"], "size": r["size"], "created": r["created"],
             "url": f"/reports/{r['id']}"}
            for r in course.store.rows("SELECT * FROM phase_reports WHERE student_id = ? ORDER BY id DESC",
                                       student_id)]


def report_file(course: Course, report_id: int) -> tuple[str, str, bytes] | None:
    """(student id, file name, bytes) of a report handed in on its own, None for an unknown id."""
    rows = course.store.rows("SELECT student_id, filename, sha256 FROM phase_reports WHERE id = ?", report_id)
    if not rows:
        return None
    return rows[0]["student_id"], rows[0]["filename"], course.store.read_file(rows[0]["sha256"])


def extension(course: Course, student_id: str) -> timedelta:
    """The student's extension (nothing without one)."""
    return phases.extension_for(course.config, student_id)
