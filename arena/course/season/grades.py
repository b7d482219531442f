"""`[grading]`: the final's standings turned into the course's points (issue 25).

    [grading]
    bonus = [5, 3, 2]          # extra points for the 1st, 2nd, 3rd place of the final
    timeout_penalty = 2        # points taken for running out of time in the final
    penalty_per = "game"       # "game": per game lost on time; "student": once, if any

A student's rank is its place among the students in the final's standings (reference opponents
left out), so it follows the standings' documented tie-break order (arena/tournament/standings.py:
a round robin ranks by points, then head-to-head, then SB, then wins). Students level on every key
share the rank and split equally the bonuses of the places they cover (two sharing 2nd with
[5, 3, 2]: (3 + 2) / 2 = 2.5 each). `grades(course)` makes the rows, `write_csv` DIR/grades.csv,
a plain CSV (one header row, a line a student: what Moodle's and Canvas's imports take as it is),
and DIR/grades.json beside it: its provenance (which run, published or provisional, the rules).

Grades follow the last PUBLISHED run of the final; before any is published, the last run
(provisional). `total` = bonus - penalty, 0 for a disqualified student (season/disqualify.py,
its reason in `disqualified`). `phases pending` names the phases whose checks of the student's
version have not run yet (the background runs them): its `phases passed` may still grow.
`[grading] columns` names roster columns added at the end.
"""
from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.course.db.files import write_atomically
from arena.match.records import Forfeit, GameRecord

if TYPE_CHECKING:
    from arena.course.course import Course

GRADES_NAME = "grades.csv"
PROVENANCE_NAME = "grades.json"
COLUMNS = ("id", "name", "group", "final rank", "points", "score %", "bonus", "time forfeits", "penalty",
           "phases passed", "total", "disqualified", "phases pending")
"""grades.csv's columns, then those `[grading] columns` names."""


@dataclass(frozen=True)
class GradeRow:
    """A student's line of grades.csv. `rank`, `points`, `score_pct` are None for a student
    without a bot in the final; `shared`: how many students share its rank (1: none)."""

    student_id: str
    name: str
    group: str
    rank: int | None
    points: float | None
    score_pct: float | None
    bonus: float
    time_forfeits: int
    penalty: float
    phases_passed: list[str] = field(default_factory=list)
    shared: int = 1
    disqualified: str = ""
    """The reason a student was disqualified ("" if not): its total is 0."""
    phases_pending: list[str] = field(default_factory=list)
    """The phases whose checks of the student's version have not run yet (the background runs
    them): neither passed nor failed until they have."""

    @property
    def total(self) -> float:
        """The student's points from the final: bonus - penalty, 0 when disqualified."""
        return 0.0 if self.disqualified else self.bonus - self.penalty


def lost_on_time(record: GameRecord, player: str) -> bool:
    """`player` lost `record` on time (alone or with its opponent)."""
    if player not in record.players:
        return False
    side = record.forfeit_of(record.players.index(player))
    return side is not None and side.reason == Forfeit.TIMEOUT


def _phases(course: Course) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Student id -> the phases it passed, and student id -> the phases whose checks are still to
    run (arena.course.season.phases: nothing is played here)."""
    from arena.course.season.phases import phase_results

    passed: dict[str, list[str]] = {}
    pending: dict[str, list[str]] = {}
    for result in phase_results(course):
        if result.passed:
            passed.setdefault(result.student_id, []).append(result.phase)
        elif result.pending:
            pending.setdefault(result.student_id, []).append(result.phase)
    return passed, pending


def pending_checks(course: Course) -> int:
    """How many phase checks due have not run yet: while any has not, "phases passed" may grow."""
    from arena.course.season.phase_checks import due

    return len(due(course))


def grades(course: Course) -> list[GradeRow]:
    """Every student's grade line (best rank first; students without a bot in the final last) from
    the final's last run, finished or not (grades.csv's notes say which), and `[grading]`."""
    return _grades(course)[0]


def _grades(course: Course) -> tuple[list[GradeRow], list[str]]:
    """The rows, and the notes that grades.csv prints above them."""
    from arena.course.season import final
    from arena.course.season.disqualify import disqualified
    from arena.tournament import standings as st

    rules = course.config.grading
    published = final.published_run(course)
    status = final.final_status(course, published)  # the published run, else the last (provisional)
    latest = final.final_status(course) if published is not None else status
    passed, pending = _phases(course)
    out_of = disqualified(course)
    per_student: dict[str, tuple[int, int, float, float, int]] = {}  # rank, shared, points, score %, forfeits
    notes: list[str] = []
    if status.standings is not None and status.results_dir is not None:
        standings = status.standings
        table = standings.tables[0]
        if standings.format == "gauntlet":
            table = next(t for t in standings.tables if t.name == "challengers")
        _, games = st.load(status.results_dir)
        records = [g.record for g in st.counted(games)]
        students = status.students
        rows = [r for r in table.frame.to_dict("records") if r["bot"] in students]
        for row in rows:
            rank = 1 + sum(1 for other in rows if other["rank"] < row["rank"])
            shared = sum(1 for other in rows if other["rank"] == row["rank"])
            forfeits = sum(1 for r in records if lost_on_time(r, row["bot"]))
            per_student[students[row["bot"]]] = (rank, shared, float(row["points"]), float(row["score %"]),
                                                 forfeits)
        state = ("published " + str(status.published)) if status.published else (
            "finished, NOT published: provisional" if status.finished
            else f"NOT finished ({standings.played}/{standings.planned} games): provisional")
        notes.append(f"the final's run {status.run} ({status.results_dir.name}): {state}")
        if latest.run != status.run:
            notes.append(f"a newer run, {latest.run} ({latest.state}), is not published: these grades follow "
                         f"run {status.run} until it is")
        notes.append(f"final rank: the place among the students in the final's standings, ranked by "
                     f"{table.ranked_by} (arena/tournament/standings.py); students level on all of these "
                     "share a rank and split the bonuses of the places they cover")
    else:
        notes.append("the final has not been played: no ranks, no bonus")
    bonus_text = ", ".join(f"{b:g}" for b in rules.bonus)
    per = "game lost on time" if rules.penalty_per == "game" else "student who lost a game on time"
    notes.append(f"bonus = [{bonus_text}]; timeout_penalty = {rules.timeout_penalty:g} per {per}")
    if pending:
        students = f"{len(pending)} student{'s' * (len(pending) != 1)}"
        notes.append(f"phases pending: the checks of {students} have not "
                     "run yet (the server runs them; `arena course phases DIR --wait` waits for them): their "
                     "\"phases passed\" is provisional")
    out = []
    for student in course.students():
        found = per_student.get(student.id)
        if found is None:
            out.append(GradeRow(student.id, student.name, student.group, None, None, None, 0, 0, 0,
                                passed.get(student.id, []), disqualified=_why(out_of, student.id),
                                phases_pending=pending.get(student.id, [])))
            continue
        rank, shared, points, pct, forfeits = found
        places = range(rank, rank + shared)
        bonus = sum(rules.bonus[p - 1] for p in places if p <= len(rules.bonus)) / shared
        if rules.penalty_per == "game":
            penalty = rules.timeout_penalty * forfeits
        else:
            penalty = rules.timeout_penalty if forfeits else 0
        out.append(GradeRow(student.id, student.name, student.group, rank, points, pct, bonus, forfeits,
                            penalty, passed.get(student.id, []), shared, _why(out_of, student.id),
                            pending.get(student.id, [])))
    out.sort(key=lambda r: (r.rank is None, r.rank or 0, r.student_id))
    return out, notes


def _why(out_of: dict[str, Any], student_id: str) -> str:
    found = out_of.get(student_id)
    return found.reason if found is not None else ""


def provisional(course: Course) -> bool:
    """Whether the grades are provisional: no run of the final is published yet."""
    from arena.course.season import final

    return final.published_run(course) is None


def csv_text(course: Course) -> str:
    """grades.csv: one header row (COLUMNS, then `[grading] columns`), a line a student; a shared
    rank is written `2=`. Its provenance is in `provenance(course)` (grades.json)."""
    return _csv_and_notes(course)[0]


def _csv_and_notes(course: Course) -> tuple[str, list[str]]:
    from arena.course.config.course_toml import CourseError, roster_extras

    rows, notes = _grades(course)
    wanted = course.config.grading.columns
    extras: dict[str, dict[str, str]] = {}
    if wanted:
        columns, extras = roster_extras(course.config.roster)
        missing = [c for c in wanted if c not in columns]
        if missing:
            raise CourseError(f"grading.columns: {missing[0]!r} is not a column of the roster "
                              f"({', '.join(columns)})")
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([*COLUMNS, *wanted])
    for r in rows:
        rank = "" if r.rank is None else f"{r.rank}=" if r.shared > 1 else str(r.rank)
        writer.writerow([r.student_id, r.name, r.group, rank, _num(r.points),
                         "" if r.score_pct is None or math.isnan(r.score_pct) else f"{r.score_pct:.1f}",
                         _num(r.bonus), r.time_forfeits, _num(r.penalty), " ".join(r.phases_passed),
                         _num(r.total), r.disqualified, " ".join(r.phases_pending),
                         *(extras.get(r.student_id, {}).get(c, "") for c in wanted)])
    return buffer.getvalue(), notes


def provenance(course: Course, notes: list[str] | None = None) -> dict[str, Any]:
    """grades.json: which run the grades come from, published or provisional, the rules, and the
    notes that used to head grades.csv."""
    from arena.course.db.store import iso
    from arena.course.season import final

    rules = course.config.grading
    run = final.published_run(course)
    status = final.final_status(course, run)
    return {"file": GRADES_NAME, "written": iso(course.clock.now()), "run": status.run,
            "published": status.published, "provisional": run is None,
            "grading": {"bonus": list(rules.bonus), "timeout_penalty": rules.timeout_penalty,
                        "penalty_per": rules.penalty_per, "columns": list(rules.columns)},
            "total": "bonus - penalty; 0 for a disqualified student",
            "notes": notes if notes is not None else _grades(course)[1]}


def _num(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def write_csv(course: Course, path: Path | None = None) -> Path:
    """Write grades.csv (default DIR/grades.csv, staff's only: 0600) and grades.json beside it;
    the CSV's path."""
    import json

    path = path or course.directory / GRADES_NAME
    text, notes = _csv_and_notes(course)
    write_atomically(path.with_suffix(".json"), json.dumps(provenance(course, notes), indent=2) + "\n", 0o600)
    return write_atomically(path, text, 0o600)
