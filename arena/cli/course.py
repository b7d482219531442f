"""`arena course ...`: a course server's commands (argument parsing only; the work is
arena.course's). `init DIR --game GAME` writes the templates; `status DIR` prints every student's
submissions, active version and last status."""
from __future__ import annotations

import argparse
import sqlite3
from pathlib import Path

from arena.cli.common import EXIT_OK, guard
from arena.course.archives import Refused
from arena.course.config import CourseError

_guard = guard("arena course", (CourseError, Refused, OSError, sqlite3.Error))


def add_course_parsers(subparsers: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """Register `course init` and `course status` on `arena`'s subparsers; returns the `course`
    command's own subparsers, for the server's commands to join."""
    import rules

    course = subparsers.add_parser("course", help="a course server: students submit bots, the server builds "
                                                  "and qualifies them (docs/course.md)")
    csub = course.add_subparsers(dest="course_command", metavar="COMMAND")
    csub.required = True
    init = csub.add_parser("init", help="write DIR/course.toml and DIR/roster.csv as commented templates")
    init.add_argument("directory", metavar="DIR", help="the course's directory (made if missing)")
    init.add_argument("--game", required=True, choices=rules.names(), help="the course's game")
    init.set_defaults(func=cmd_init)
    status = csub.add_parser("status", help="print every student's submissions, active version and last "
                                            "status")
    status.add_argument("directory", metavar="DIR", help="the course's directory")
    status.set_defaults(func=cmd_status)
    return csub


@_guard
def cmd_init(args: argparse.Namespace) -> int:
    """arena course init DIR --game GAME"""
    from arena.course import config

    for path in config.init(Path(args.directory), args.game):
        print(f"wrote {path}")
    directory = Path(args.directory)
    print(f"next: fill in {directory / config.ROSTER_NAME}, check {directory / config.CONFIG_NAME}")
    return EXIT_OK


@_guard
def cmd_status(args: argparse.Namespace) -> int:
    """arena course status DIR"""
    from arena.course.service import Course

    course = Course(Path(args.directory))
    rows = course.rows()
    table = [("student", "name", "group", "versions", "active", "last", "status")]
    for row in rows:
        versions = {s.id: s.version for s in course.submissions(row.student.id)} if row.versions else {}
        last = row.last
        status = "-" if last is None else last.status + (f" ({last.reason})" if last.reason else "")
        table.append((row.student.id + (" (disabled)" if row.disabled else ""), row.student.name,
                      row.student.group or "-", str(row.versions),
                      f"v{versions[row.active_id]}" if row.active_id is not None else "-",
                      f"v{last.version} #{last.id} {last.created}" if last is not None else "-", status))
    widths = [max(len(line[i]) for line in table) for i in range(len(table[0]))]
    for line in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip())
    pending = course.store.pending()
    print(f"{len(rows)} students, {sum(r.versions for r in rows)} submissions, {pending} to build or test")
    return EXIT_OK
