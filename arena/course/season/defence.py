"""A student's defence sheet, for the oral exam after the deadline (`/staff/students/{sid}/defence`):
the phases with their evidence, the reports handed in, every version of the code with what changed
from the version before (a unified diff of the text files), the games lost on time, the copying
check's pairs that involve the student, and notable games.

Nothing here plays a game or changes a row: the phases are read with `phase_results(course,
evaluate=False)` (a requirement not checked yet says so), the similarity pairs with
`similarity.pairs_of` (the student against each other student, not all pairs; kept in memory per
set of active versions). Diffs are bounded (DIFF_LINES_PER_FILE, DIFF_LINES_PER_VERSION); binary
and large files are named, never shown.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from arena.course.season import archives, phases, reports
from arena.course.season.archives import Refused
from arena.course.season.student_games import QUALIFICATION, PlayedGame, student_games

if TYPE_CHECKING:
    from arena.course.config.course_toml import Student
    from arena.course.course import Course
    from arena.similarity.fingerprints import Pair

DIFF_LINES_PER_FILE = 400
"""A file's diff is cut after this many lines (the rest is counted, not shown)."""
DIFF_LINES_PER_VERSION = 1500
"""All files' diffs between two versions together: past this, further files are named only."""
DIFF_MAX_FILE_BYTES = archives.SHOWN_MAX_BYTES
"""A file larger than this is named with its sizes, not diffed."""
NOTABLE_GAMES = 10
"""At most this many games in each list of notable games."""


@dataclass(frozen=True)
class FileDiff:
    """What changed in one file from a version to the next: `change` is added, removed, changed
    or binary (named only); `lines` the unified diff's lines (bounded); `cut` lines left out."""

    path: str
    change: str
    lines: tuple[str, ...] = ()
    cut: int = 0
    note: str = ""


@dataclass(frozen=True)
class VersionDiff:
    """The diff from version `old` (None: the first upload, its files only named) to `new`;
    `unchanged`: files the same in both; `left_out`: files not diffed past DIFF_LINES_PER_VERSION."""

    old: int | None
    new: int
    files: tuple[FileDiff, ...]
    unchanged: int = 0
    left_out: tuple[str, ...] = ()
    problem: str = ""


@dataclass(frozen=True)
class Version:
    """One upload: its submission, version, when, file, status (with the reason it failed, the
    last line of the detail), whether it is the active bot, the report uploaded with it."""

    submission_id: int
    version: int
    created: str
    filename: str
    kind: str
    size: int
    status: str
    reason: str
    last_line: str
    active: bool
    report: tuple[str, str] | None = None
    """(file name, url) of the report uploaded with it."""


@dataclass
class DefenceSheet:
    """Everything the defence sheet shows for one student."""

    student: Student
    deadline: str | None
    extension: str
    phases: list[phases.PhaseResult]
    reports: list[dict[str, Any]]
    versions: list[Version]
    diffs: list[VersionDiff]
    games: int
    time_forfeits: list[PlayedGame]
    similarity: list[Pair]
    similarity_problem: str
    notable: dict[str, list[PlayedGame]] = field(default_factory=dict)
    disqualified: str = ""


def defence_sheet(course: Course, student_id: str) -> DefenceSheet | None:
    """The student's defence sheet (None for a student not on the roster); plays nothing."""
    from arena.course.config import checks
    from arena.course.season.disqualify import disqualified

    student = course.student(student_id)
    if student is None:
        return None
    config = course.config
    own = phases.deadline_for(config, student_id)
    extension = config.season.extensions.get(student_id)
    results = [r for r in phases.phase_results(course, evaluate=False) if r.student_id == student_id]
    versions = versions_of(course, student_id)
    games = student_games(course, student_id)
    pairs, problem = similarity_of(course, student_id)
    out = disqualified(course).get(student_id)
    return DefenceSheet(
        student=student, deadline=own.isoformat() if own else None,
        extension=checks.duration_text(extension) if extension else "", phases=results,
        reports=reports_of(course, student_id), versions=versions, diffs=version_diffs(course, student_id),
        games=len(games), time_forfeits=[g for g in games if g.lost_on_time], similarity=pairs,
        similarity_problem=problem, notable=notable_games(games),
        disqualified=getattr(out, "reason", "") if out is not None else "")


def versions_of(course: Course, student_id: str) -> list[Version]:
    """The student's uploads, oldest first."""
    subs = list(reversed(course.submissions(student_id)))
    with_reports = {r["submission_id"]: r["filename"] for r in course.store.rows(
        "SELECT r.submission_id, r.filename FROM reports r JOIN submissions s ON s.id = r.submission_id "
        "WHERE s.student_id = ?", student_id)}
    out = []
    for s in subs:
        lines = [line for line in (s.detail or "").splitlines() if line.strip()]
        report = (with_reports[s.id], f"/submissions/{s.id}/report") if s.id in with_reports else None
        out.append(Version(s.id, s.version, s.created, s.filename, s.kind, s.size, str(s.status),
                           s.reason or "", lines[-1].strip() if lines else "", s.active, report))
    return out


def reports_of(course: Course, student_id: str) -> list[dict[str, Any]]:
    """Every report the student handed in, oldest first: on its own for a phase (phase_reports)
    and with an upload (reports); each with its file name, size, when, how and its url."""
    found = [{"phase": r["phase"], "filename": r["filename"], "size": r["size"], "created": r["created"],
              "how": "handed in for the phase", "url": r["url"]}
             for r in reports.history(course, student_id)]
    for r in course.store.rows("SELECT s.id, s.version, s.created, r.filename, r.size FROM reports r "
                               "JOIN submissions s ON s.id = r.submission_id WHERE s.student_id = ?",
                               student_id):
        found.append({"phase": "", "filename": r["filename"], "size": r["size"], "created": r["created"],
                      "how": f"uploaded with v{r['version']}", "url": f"/submissions/{r['id']}/report"})
    return sorted(found, key=lambda r: r["created"])


# --- the code's versions and their diffs ---

def _files(course: Course, row: Any) -> dict[str, bytes]:
    """path -> bytes of a submission's upload: the file itself, or each member of an archive."""
    data = course.store.read_file(row["sha256"])
    if row["kind"] != "archive":
        return {row["filename"]: data}
    return {member.path: content for member, content in archives.read_members(row["filename"], data)}


def _text(data: bytes) -> str | None:
    """The file's text, None for a binary (not UTF-8, or holding NUL) or large one."""
    if len(data) > DIFF_MAX_FILE_BYTES:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return None if "\0" in text else text


def file_diff(path: str, old: bytes | None, new: bytes | None, old_path: str | None = None,
              budget: int = DIFF_LINES_PER_FILE) -> FileDiff:
    """One file's change as a unified diff (at most `budget` lines, at most DIFF_LINES_PER_FILE);
    a binary or large file is named with its sizes."""
    change = "added" if old is None else "removed" if new is None else "changed"
    old_text, new_text = _text(old or b""), _text(new or b"")
    if old_text is None or new_text is None:
        sizes = " → ".join(f"{len(d):,} bytes" for d in (old, new) if d is not None)
        kind = "large" if max(len(old or b""), len(new or b"")) > DIFF_MAX_FILE_BYTES else "binary"
        return FileDiff(path, "binary", note=f"{kind} file {change}: {sizes} (not shown)")
    lines = list(difflib.unified_diff(old_text.splitlines(), new_text.splitlines(),
                                      f"a/{old_path or path}" if old is not None else "/dev/null",
                                      f"b/{path}" if new is not None else "/dev/null", lineterm=""))
    limit = max(0, min(budget, DIFF_LINES_PER_FILE))
    return FileDiff(path, change, tuple(lines[:limit]), max(0, len(lines) - limit))


def diff_versions(old: dict[str, bytes] | None, new: dict[str, bytes], old_version: int | None,
                  new_version: int) -> VersionDiff:
    """What changed from the files `old` (None: nothing before) to `new`. Two single-file uploads
    are compared with each other whatever their names."""
    before = old or {}
    renamed: dict[str, str] = {}
    if len(before) == 1 and len(new) == 1 and set(before) != set(new):
        (was, data), (now_path,) = next(iter(before.items())), tuple(new)
        before = {now_path: data}
        renamed[now_path] = was
    files: list[FileDiff] = []
    left_out: list[str] = []
    unchanged = 0
    budget = DIFF_LINES_PER_VERSION
    for path in sorted(set(before) | set(new)):
        a, b = before.get(path), new.get(path)
        if a == b:
            unchanged += 1
            continue
        if budget <= 0:
            left_out.append(path)
            continue
        found = file_diff(path, a, b, renamed.get(path), budget)
        budget -= len(found.lines)
        files.append(found)
    return VersionDiff(old_version, new_version, tuple(files), unchanged, tuple(left_out))


def first_files(files: dict[str, bytes], version: int) -> VersionDiff:
    """The first upload: its files named with their lines (or sizes), not shown (its source page
    shows them)."""
    shown = []
    for path in sorted(files):
        text = _text(files[path])
        note = f"{len(text.splitlines()):,} lines" if text is not None else f"{len(files[path]):,} bytes"
        shown.append(FileDiff(path, "added" if text is not None else "binary", note=note))
    return VersionDiff(None, version, tuple(shown))


def version_diffs(course: Course, student_id: str) -> list[VersionDiff]:
    """Each version's diff from the one before it, oldest first (the first one's files named)."""
    rows = list(reversed(course.store.submission_rows(student_id)))
    out: list[VersionDiff] = []
    previous: dict[str, bytes] | None = None
    previous_version: int | None = None
    for row in rows:
        try:
            files = _files(course, row)
        except (Refused, OSError) as exc:
            out.append(VersionDiff(previous_version, row["version"], (), problem=f"cannot be read: {exc}"))
            previous, previous_version = None, row["version"]
            continue
        out.append(first_files(files, row["version"]) if previous is None
                   else diff_versions(previous, files, previous_version, row["version"]))
        previous, previous_version = files, row["version"]
    return out


# --- games and similarity ---

def notable_games(games: list[PlayedGame]) -> dict[str, list[PlayedGame]]:
    """The games worth asking about (each list newest first, at most NOTABLE_GAMES): wins against
    reference bots outside qualification (phase scores, the ladder, the final), losses on time,
    and the longest game."""
    wins = [g for g in games if g.reference and g.outcome == "win" and g.kind != QUALIFICATION]
    on_time = [g for g in games if g.lost_on_time]
    longest = max(games, key=lambda g: (g.plies, g.started), default=None)
    return {"wins against reference bots": wins[:NOTABLE_GAMES],
            "losses on time": on_time[:NOTABLE_GAMES],
            "the longest game": [longest] if longest is not None else []}


def similarity_of(course: Course, student_id: str) -> tuple[list[Pair], str]:
    """The copying check's pairs involving the student (its active sources), and a problem (a bad
    archive, say) as one line instead of pairs."""
    from arena.course.season.similarity import pairs_of

    try:
        return pairs_of(course, student_id), ""
    except (Refused, OSError, ValueError) as exc:
        return [], f"the copying check could not run: {exc}"
