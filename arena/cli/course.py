"""`arena course ...`: a course server's commands (argument parsing only; the work is
arena.course's). `init DIR --game GAME` writes the templates; `status DIR` prints every student's
submissions, active version and last status; `serve DIR` runs the server; `invite DIR`, `staff add
DIR NAME` and `token DIR ID` make sign-in links and API tokens; `submit URL FILE` is the students'
upload from the terminal; `final DIR --start|--publish|--status` plays, publishes or shows the
final tournament (`--rerun --yes` plays it again), `grades DIR` writes grades.csv and grades.json,
`disqualify DIR ID --reason TEXT [--undo]` takes a student's points to 0; `clock DIR set TIME |
advance BY | real` sets, advances or ends a rehearsal clock (the course's "now", for rehearsing a
season on a copy of the course)."""
from __future__ import annotations

import argparse
import os
import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from arena.cell.sandbox import SandboxUnavailable
from arena.cli.common import EXIT_OK, BadInput, guard
from arena.course.client import SubmitError
from arena.course.config.course_toml import CourseError
from arena.course.db.accounts import AccountError
from arena.course.season.archives import Refused
from arena.course.season.final import FinalError
from arena.course_web.serve_lock import AlreadyServed
from arena.course_web.server import ServeError
from arena.tournament.config import TournamentError
from arena.tournament.store import StoreError

if TYPE_CHECKING:
    from arena.course.course import Course

_guard = guard("arena course", (CourseError, Refused, OSError, sqlite3.Error))
_final_guard = guard("arena course", (CourseError, Refused, OSError, sqlite3.Error, FinalError,
                                     TournamentError, StoreError, SandboxUnavailable))
_server_guard = guard("arena course", (CourseError, Refused, OSError, sqlite3.Error, BadInput, AccountError,
                                       ServeError, SubmitError, SandboxUnavailable, AlreadyServed))


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
    check = csub.add_parser("check", help="check DIR/course.toml (every section) and the roster without "
                                          "starting anything: one line per problem, or what was read")
    check.add_argument("directory", metavar="DIR", help="the course's directory")
    check.set_defaults(func=cmd_check)
    phases = csub.add_parser("phases", help="print who passed each phase of [[phases]], with the evidence "
                                            "(a score or move-generation check not run yet is shown queued "
                                            "or running: the server runs them; --wait waits for them)")
    phases.add_argument("directory", metavar="DIR", help="the course's directory")
    phases.add_argument("--wait", action="store_true",
                        help="first wait until every check due now is done, printing progress: the running "
                             "server's, or, when no server runs on DIR, run them here")
    phases.add_argument("--recheck", metavar="ID", default=None,
                        help="drop the verdicts of the student's checks (of the versions the phases "
                             "judge) so that they run again (in the audit log, with the old verdicts)")
    phases.add_argument("--phase", metavar="NAME", default=None,
                        help="with --recheck: that phase's checks only (as course.toml names it)")
    phases.add_argument("--unsafe-no-sandbox", action="store_true",
                        help="run students' bots unsandboxed where bubblewrap cannot isolate them (trusted "
                             "code only)")
    phases.set_defaults(func=cmd_phases)
    clock = csub.add_parser("clock", help="rehearse a season on a copy of the course: set the course's time "
                                          "(set TIME), move it ahead (advance BY) or back to real time "
                                          "(real); without ACTION, print what it is")
    clock.add_argument("directory", metavar="DIR", help="the course's directory")
    clock.add_argument("action", metavar="ACTION", nargs="?", choices=("set", "advance", "real"),
                       help="set, advance or real")
    clock.add_argument("value", metavar="VALUE", nargs="?", default=None,
                       help="set: a time with its zone (2026-03-01T12:00:00Z); advance: a duration (2h, "
                            "1d 12h, 90m)")
    clock.set_defaults(func=cmd_clock)
    add_final_parsers(csub)
    add_server_parsers(csub)
    add_ladder_parsers(csub)
    return csub


@_guard
def cmd_init(args: argparse.Namespace) -> int:
    """arena course init DIR --game GAME"""
    from arena.course.config import course_toml as config

    for path in config.init(Path(args.directory), args.game):
        print(f"wrote {path}")
    directory = Path(args.directory)
    print(f"next: fill in {directory / config.ROSTER_NAME}, check {directory / config.CONFIG_NAME}")
    return EXIT_OK


@_guard
def cmd_check(args: argparse.Namespace) -> int:
    """arena course check DIR: every problem of course.toml and the roster, one line each (exit 2),
    or what was read (exit 0). Opens no database and starts nothing."""
    import sys

    from arena.course.config import course_toml as config

    problems: list[str] = []
    loaded = config.load(Path(args.directory))  # its problems, all of them, the season's sections' too
    try:
        students = config.read_roster(loaded.roster)
    except CourseError as exc:
        problems.append(str(exc))
        students = None
    if students is not None:
        problems += loaded.roster_problems({s.id for s in students})
    if problems:
        raise CourseError("\n".join(problems))
    assert students is not None
    sections = ", ".join(f"[{name}]" for name in config.SEASON_SECTIONS if name in loaded.sections) or "none"
    print(f"{loaded.path}: ok: {loaded.game} ({', '.join(f'{k}={v}' for k, v in loaded.params.items())}), "
          f"time {loaded.time_control}, season sections: {sections}")
    print(f"{loaded.roster}: ok: {len(students)} student{'s' * (len(students) != 1)}")
    if loaded.accounts.weak_hashing_for_tests:  # a test course's cheap password hashes: never left unnoticed
        from arena.course_web.signin import weak_hashing_warning

        print(f"{loaded.path}: {weak_hashing_warning(loaded.accounts)}", file=sys.stderr)
    return EXIT_OK


@_guard
def cmd_status(args: argparse.Namespace) -> int:
    """arena course status DIR"""
    from arena.course.course import Course

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
    versions = sum(r.versions for r in rows)
    print(f"{len(rows)} student{'s' * (len(rows) != 1)}, {versions} submission{'s' * (versions != 1)}, "
          f"{pending} to build or test")
    rehearsal = course.clock.warning()
    if rehearsal:
        print(rehearsal)
    return EXIT_OK


@_guard
def cmd_clock(args: argparse.Namespace) -> int:
    """arena course clock DIR [set TIME | advance BY | real]: the course's rehearsal clock (in the
    audit log)."""
    from arena.course.course import Course
    from arena.course.db.accounts import Accounts
    from arena.course.db.clock import ClockError, offset_text, parse_advance, parse_moment

    course = Course(Path(args.directory))
    clock = course.clock
    if args.action in ("set", "advance") and args.value is None:
        example = "2026-03-01T12:00:00Z" if args.action == "set" else "2h"
        raise ClockError(f"clock {args.action}: needs a value, e.g. `arena course clock DIR {args.action} "
                         f"{example}`")
    if args.action is None:
        if args.value is not None:
            raise ClockError(f"clock: {args.value!r} is no action: set, advance or real")
        print(clock.describe())
        return EXIT_OK
    if args.action == "real":
        if args.value is not None:
            raise ClockError(f"clock real: takes no value, got {args.value!r}")
        try:
            ended = clock.rehearsal()
            was = "" if ended is None else f" (it was real time {offset_text(ended.offset)})"
        except ClockError as exc:  # a clock.json arena did not write: removed all the same
            was = f" ({exc})"
        if not clock.real():
            print("the course runs on real time (no rehearsal clock was set)")
            return EXIT_OK
        Accounts(course.directory).audit("(terminal)", "ended the rehearsal clock", "", was.strip(" ()"))
        print(f"real time again: the rehearsal clock is ended{was}")
        return EXIT_OK
    if args.action == "set":
        clock.set(parse_moment(args.value))
    else:
        clock.advance(parse_advance(args.value))
    rehearsal = clock.rehearsal()
    assert rehearsal is not None
    done = "set" if args.action == "set" else "advanced"
    detail = (f"{args.action} {args.value}: the course's time is {clock.now():%Y-%m-%dT%H:%M:%SZ}, real time "
              f"{offset_text(rehearsal.offset)}")
    Accounts(course.directory).audit("(terminal)", f"{done} the rehearsal clock", "", detail)
    print(f"{clock.describe()}\n`arena course clock {args.directory} real` returns to real time")
    return EXIT_OK


@_server_guard
def cmd_phases(args: argparse.Namespace) -> int:
    """arena course phases DIR [--wait] [--recheck ID [--phase NAME]]"""
    import sys

    from arena.course.course import Course
    from arena.course.db.accounts import TERMINAL, Accounts
    from arena.course.season import phase_checks, phases

    if args.phase is not None and args.recheck is None:
        raise BadInput("--phase NAME goes with --recheck ID")
    course = Course(Path(args.directory), sandbox="off" if args.unsafe_no_sandbox else "on")
    season = course.config.season
    if not season.phases:
        print(f"{course.config.path}: no [[phases]] (docs/course.md, \"Phases\")")
        return EXIT_OK
    if args.recheck is not None:
        accounts = Accounts(course.directory)
        for dropped in phase_checks.recheck(course, args.recheck, args.phase):
            accounts.audit(TERMINAL, phase_checks.RECHECKED, args.recheck, dropped.detail())
            print(f"{args.recheck}: checked again: {dropped.detail()}", file=sys.stderr)
    if args.wait:
        wait_for_checks(course, sys.stderr)
    results = phases.phase_results(course)
    for phase in season.phases:
        mine = [r for r in results if r.phase == phase.name]
        passed = [r for r in mine if r.passed]
        checking = [r for r in mine if r.pending]
        state = " (so far)" if any(r.provisional for r in mine) else ""
        print(f"{phase.name}: deadline {phase.deadline.isoformat()}; needs {phase.requirements()}")
        names = ", ".join(r.student_id for r in passed) or "-"
        more = f" ({len(checking)} still being checked)" if checking else ""
        print(f"  passed{state}: {len(passed)} of {len(mine)}{more}: {names}")
        for r in mine:
            word = "PASS" if r.passed else "WAIT" if r.pending else "FAIL"
            print(f"  {word}  {r.student_id}  {r.evidence}")
            if r.game_ids:
                print(f"        games: {', '.join(r.game_ids)}")
            for wire, missing, extra in r.disagreements[:SHOWN_DISAGREEMENTS]:
                board = " / ".join(wire.get("board", [])) if isinstance(wire.get("board"), list) else wire
                print(f"        disagrees: seat {wire.get('seat')} to move, board {board}: left out "
                      f"{', '.join(missing) or '-'}; not legal {', '.join(extra) or '-'}")
    due = len(phase_checks.due(course))
    if due:
        print(f"{due} check{'s' * (due != 1)} not run yet (WAIT): the server runs them (arena course serve), "
              f"or `arena course phases {args.directory} --wait` here")
    return EXIT_OK


WAIT_POLL_S = 1.0
"""How often `phases --wait` looks at the checks a server runs."""
SERVER_GONE_S = 60.0
"""How long `phases --wait` waits for a server that stopped to be back before it gives up."""


def wait_for_checks(course: Course, out: TextIO) -> None:
    """Block until no phase check is due, printing progress to `out`: run them here while holding
    DIR/serve.lock when no server runs on DIR, else watch the server's (BadInput if it stops for
    good)."""
    from arena.cell import sandbox
    from arena.course.season import phase_checks
    from arena.course.season.jobs import hide_from_bots
    from arena.course_web import serve_lock

    try:
        lock = serve_lock.hold(course.directory, "arena course phases --wait (running the phase checks)")
    except AlreadyServed:
        lock = None
    if lock is not None:
        try:
            sandbox.decide(course.config.limits.sandbox)  # refuse before any bot runs
            hide_from_bots(course.directory)
            phase_checks.cut_short(course.store)
            print("no server runs on this course: running the phase checks here", file=out, flush=True)
            phase_checks.run_pending(course, told=lambda line: print(line, file=out, flush=True))
        finally:
            os.close(lock)
        return
    shown, gone = "", None
    while True:
        due = phase_checks.due(course)
        if not due:
            return
        running = phase_checks.progress(course.store)
        now = [f"{c}: {running[c.submission_id, c.key].text(c.kind)}" for c in due
               if (c.submission_id, c.key) in running]
        line = f"waiting for the server's phase checks: {len(due)} to run"
        line += f" ({'; '.join(now)})" if now else ""
        if line != shown:
            print(line, file=out, flush=True)
            shown = line
        if serve_lock.holder_alive(course.directory):
            gone = None
        elif gone is None:
            gone = time.monotonic()
        elif time.monotonic() - gone > SERVER_GONE_S:
            raise BadInput(f"the server on {course.directory} stopped with {len(due)} phase checks to run: "
                           "start it again, or run `arena course phases DIR --wait` without it")
        time.sleep(WAIT_POLL_S)


SHOWN_DISAGREEMENTS = 3
"""Disagreeing positions `arena course phases` prints per student (the staff page shows all)."""


def add_server_parsers(csub: argparse._SubParsersAction) -> None:
    """Register the server's commands on `arena course`: serve, invite, staff add, token, submit."""
    from arena.course import client
    from arena.course_web import server

    serve = csub.add_parser("serve", help="run the course server: the web app and the workers that build and "
                                          "qualify (one process tree; Ctrl-C or SIGTERM stops it)")
    serve.add_argument("directory", metavar="DIR", help="the course's directory")
    serve.add_argument("--host", default=server.DEFAULT_HOST,
                       help=f"the address to listen on (default {server.DEFAULT_HOST}: this machine only; "
                            "put a reverse proxy with HTTPS in front to open it to students)")
    serve.add_argument("--port", type=int, default=server.DEFAULT_PORT,
                       help=f"the port (default {server.DEFAULT_PORT}; 0 takes a free one, named in the "
                            "first line printed)")
    serve.add_argument("--concurrency", type=_positive, default=1, metavar="N",
                       help="submissions built and qualified at a time (default 1)")
    serve.add_argument("--cluster", metavar="ADDRESS", default=None,
                       help="play the games on a Dask cluster (an address, or local:N) instead of the "
                            "local pool, as `arena tournament run --cluster` does; its workers must see the "
                            "course's directory at the same path (builds are made there)")
    serve.add_argument("--unsafe-no-sandbox", action="store_true",
                       help="run students' code without the sandbox where bubblewrap cannot isolate it "
                            "(trusted code only; without it the server refuses to start there)")
    serve.add_argument("--https-cookies", action="store_true",
                       help="mark the session cookie Secure (the server is reached through HTTPS)")
    serve.add_argument("--trusted-proxy", metavar="IP[,IP...]", default=None,
                       help="the reverse proxy's address: its X-Forwarded-For names the client whose "
                            "sign-in tries are counted (default: none trusted, the client is the peer)")
    # defaults: arena/course_web/bounds.py (not imported here: it brings the web stack)
    serve.add_argument("--header-timeout", type=_positive_seconds, default=None, metavar="S",
                       help="close a connection whose request line and headers are not whole S seconds "
                            "after its first byte (default 5)")
    serve.add_argument("--body-idle-timeout", type=_positive_seconds, default=None, metavar="S",
                       help="close a connection whose request body sends nothing for S seconds (default 20)")
    serve.set_defaults(func=cmd_serve)

    invite = csub.add_parser("invite", help="write DIR/invites.csv: id, email and a one-time sign-in link "
                                            "per student, for your own mail merge")
    invite.add_argument("directory", metavar="DIR", help="the course's directory")
    invite.add_argument("--url", default=DEFAULT_URL,
                        help=f"the server's address as students reach it (default {DEFAULT_URL})")
    invite.add_argument("--only", nargs="+", metavar="ID", default=None,
                        help="these students only (a new link replaces a student's old one)")
    invite.set_defaults(func=cmd_invite)

    staff = csub.add_parser("staff", help="staff accounts")
    ssub = staff.add_subparsers(dest="staff_command", metavar="COMMAND")
    ssub.required = True
    add = ssub.add_parser("add", help="add a staff account and print its one-time sign-in link")
    add.add_argument("directory", metavar="DIR", help="the course's directory")
    add.add_argument("name", metavar="NAME", help="the staff member's sign-in name (letters, digits, . _ -)")
    add.add_argument("--url", default=DEFAULT_URL,
                     help=f"the server's address as staff reach it (default {DEFAULT_URL})")
    add.set_defaults(func=cmd_staff_add)

    token = csub.add_parser("token", help="issue a student's API token for `arena course submit` (printed "
                                          "once; the old one stops working)")
    token.add_argument("directory", metavar="DIR", help="the course's directory")
    token.add_argument("student", metavar="ID", help="the student's id in the roster")
    token.set_defaults(func=cmd_token)

    sign_out = csub.add_parser("sign-out", help="end every session of a student or staff member (their "
                                                "cookies open nothing after; in the audit log)")
    sign_out.add_argument("directory", metavar="DIR", help="the course's directory")
    sign_out.add_argument("account", metavar="ID", help="a student's id or a staff name")
    sign_out.set_defaults(func=cmd_sign_out)

    submit = csub.add_parser("submit", help="upload a bot to a course server (a student's command)")
    submit.add_argument("url", metavar="URL", help="the course server's address, e.g. https://bots.example.org")
    submit.add_argument("file", metavar="FILE", help="the bot: a .py file, a stdio program's source, or a "
                                                     ".zip/.tar.gz with build.sh")
    submit.add_argument("--token", default=None,
                        help=f"your API token (default: ${client.TOKEN_ENV}); ask staff for one")
    submit.add_argument("--protocol", choices=("v1", "stdio"), default="v1",
                        help="v1 (ZeroMQ: the SDK and the kits; default) or stdio (the text protocol)")
    submit.add_argument("--wait", action="store_true",
                        help="wait for the final status and print it; exit 0 only if qualified")
    submit.add_argument("--timeout", type=float, default=None, metavar="S",
                        help="with --wait, give up after S seconds (exit 1)")
    submit.add_argument("--insecure-http", action="store_true",
                        help="allow a plain http:// URL to another machine (the token then crosses the "
                             "network unencrypted); without it only https://, or http:// to this machine")
    submit.add_argument("--report", default=None, metavar="FILE",
                        help="also hand in FILE (.pdf or .md) as your report for the phase --phase names")
    submit.add_argument("--phase", default=None, metavar="NAME",
                        help="with --report: the phase the report is for (as course.toml names it)")
    submit.set_defaults(func=cmd_submit)

    report = csub.add_parser("report", help="hand in a report for a phase, on its own (your code and the "
                                            "ladder are not touched; a student's command)")
    report.add_argument("url", metavar="URL", help="the course server's address, e.g. https://bots.example.org")
    report.add_argument("file", metavar="FILE", help="the report: a .pdf or .md file")
    report.add_argument("--phase", required=True, metavar="NAME",
                        help="the phase the report is for (as course.toml names it)")
    report.add_argument("--token", default=None,
                        help=f"your API token (default: ${client.TOKEN_ENV}); ask staff for one")
    report.add_argument("--insecure-http", action="store_true",
                        help="allow a plain http:// URL to another machine (the token then crosses the "
                             "network unencrypted)")
    report.set_defaults(func=cmd_report)


DEFAULT_URL = "http://127.0.0.1:8000"


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds above 0, got {text}")
    return value


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


@_server_guard
def cmd_serve(args: argparse.Namespace) -> int:
    """arena course serve DIR [--host H] [--port P] [--concurrency N] [--unsafe-no-sandbox] ..."""
    from arena.course_web import server

    return server.serve(Path(args.directory), args.host, args.port, args.concurrency, args.unsafe_no_sandbox,
                        https_cookies=args.https_cookies, cluster=args.cluster,
                        trusted_proxy=args.trusted_proxy, header_timeout_s=args.header_timeout,
                        body_idle_s=args.body_idle_timeout)


@_server_guard
def cmd_invite(args: argparse.Namespace) -> int:
    """arena course invite DIR [--url URL] [--only ID...]"""
    from arena.course.course import Course
    from arena.course.db.accounts import Accounts, write_invites

    course = Course(Path(args.directory))
    students = course.students()
    if args.only is not None:
        known = {s.id for s in students}
        unknown = [sid for sid in args.only if sid not in known]
        if unknown:
            raise BadInput(f"--only: {', '.join(unknown)} not in the roster {course.config.roster}")
        students = [s for s in students if s.id in args.only]
    path = course.directory / INVITES_NAME
    count = write_invites(Accounts(course.directory), [(s.id, s.email) for s in students], args.url, path)
    print(f"wrote {count} one-time sign-in link{'s' if count != 1 else ''} to {path} (id,email,link; "
          "private: send each student its own)")
    return EXIT_OK


INVITES_NAME = "invites.csv"


@_server_guard
def cmd_staff_add(args: argparse.Namespace) -> int:
    """arena course staff add DIR NAME [--url URL]"""
    from arena.course.course import Course
    from arena.course.db.accounts import Accounts, sign_in_link

    course = Course(Path(args.directory))
    if course.student(args.name) is not None:
        raise BadInput(f"{args.name!r} is a student's id in the roster; choose another staff name")
    secret = Accounts(course.directory).add_staff(args.name)
    print(f"staff account {args.name}: sign in once with this link, then with your password:")
    print(sign_in_link(args.url, secret))
    return EXIT_OK


@_server_guard
def cmd_token(args: argparse.Namespace) -> int:
    """arena course token DIR ID"""
    from arena.course.course import Course
    from arena.course.db.accounts import Accounts

    course = Course(Path(args.directory))
    if course.student(args.student) is None:
        raise BadInput(f"no student {args.student!r} in the roster {course.config.roster}")
    print(Accounts(course.directory).new_token(args.student))
    return EXIT_OK


@_server_guard
def cmd_sign_out(args: argparse.Namespace) -> int:
    """arena course sign-out DIR ID"""
    from arena.course.config.course_toml import load
    from arena.course.db.accounts import TERMINAL, Accounts

    accounts = Accounts(load(Path(args.directory)).directory)
    if accounts.get(args.account) is None:
        raise BadInput(f"no account {args.account!r} (a student's id with a sign-in link, or a staff name)")
    ended = accounts.end_sessions(args.account)
    accounts.audit(TERMINAL, "ended sessions", args.account, f"{ended} session{'s' if ended != 1 else ''}")
    print(f"{args.account}: {ended} session{'s' if ended != 1 else ''} ended")
    return EXIT_OK


@_server_guard
def cmd_submit(args: argparse.Namespace) -> int:
    """arena course submit URL FILE [--token TOKEN] [--wait] [--protocol stdio] [--insecure-http]"""
    from arena.course import client

    return client.submit(args.url, args.file, client.token_from(args.token), args.protocol, args.wait,
                         args.timeout, insecure_http=args.insecure_http, report_path=args.report,
                         phase=args.phase)


@_server_guard
def cmd_report(args: argparse.Namespace) -> int:
    """arena course report URL FILE --phase NAME [--token TOKEN] [--insecure-http]"""
    from arena.course import client

    return client.report(args.url, args.file, client.token_from(args.token), args.phase,
                         insecure_http=args.insecure_http)


def add_ladder_parsers(csub: argparse._SubParsersAction) -> None:
    """Register `arena course ladder` and `arena course similarity` (issue 25: the ladder, the
    copying check)."""
    ladder = csub.add_parser("ladder", help="print the ladder's table: every active bot and reference bot, "
                                            "best first by ordinal (mu - 3 sigma)")
    ladder.add_argument("directory", metavar="DIR", help="the course's directory")
    ladder.set_defaults(func=cmd_ladder)
    similarity = csub.add_parser("similarity", help="compare every student's active sources with every "
                                                    "other's and with the shipped reference bots (the kits' "
                                                    "code subtracted) and print the flagged pairs, grouped "
                                                    "into clusters, with their matching lines")
    similarity.add_argument("directory", metavar="DIR", help="the course's directory")
    similarity.add_argument("--threshold", type=_share, default=None, metavar="X",
                            help="the least score (0 to 1) of a pair printed (default: [similarity] "
                                 "threshold, else 0.5)")
    similarity.set_defaults(func=cmd_similarity)


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number from 0 to 1, got {text!r}") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be a number from 0 to 1, got {text!r}")
    return value


@_guard
def cmd_ladder(args: argparse.Namespace) -> int:
    """arena course ladder DIR"""
    from arena.course.course import Course
    from arena.course.season.ladder import Ladder

    ladder = Ladder(Course(Path(args.directory)))
    table = [("rank", "bot", "name", "ordinal", "mu ± sigma", "games", "")]
    for row in ladder.table():
        table.append((str(row.rank), row.bot, row.name if row.student_id else "(reference bot)",
                      f"{row.ordinal:.1f}", f"{row.mu:.1f} ± {row.sigma:.1f}", str(row.games),
                      "" if row.placed else "placing"))
    widths = [max(len(line[i]) for line in table) for i in range(len(table[0]))]
    for line in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip())
    _, why = ladder.status()
    if why:  # paused or ended: said after the table, which scripts read
        print(f"\n{why}")
    return EXIT_OK


@_guard
def cmd_similarity(args: argparse.Namespace) -> int:
    """arena course similarity DIR [--threshold X]"""
    from arena.course.course import Course
    from arena.course.season import similarity

    course = Course(Path(args.directory))
    pairs = similarity.similar_pairs(course, args.threshold)  # None: course.toml's [similarity]
    names = {s.id: s.name for s in course.students()}
    print(similarity.format_pairs(pairs, names), end="")
    return EXIT_OK


def add_final_parsers(csub: argparse._SubParsersAction) -> None:
    """Register `arena course final` and `arena course grades`."""
    final = csub.add_parser("final", help="the final tournament: play it (--start), show where it stands "
                                          "(--status) or publish its results (--publish)")
    final.add_argument("directory", metavar="DIR", help="the course's directory")
    what = final.add_mutually_exclusive_group(required=True)
    what.add_argument("--start", action="store_true",
                      help="play the final here until every game is played (resumes an interrupted one; "
                           "the server starts it by itself once the last deadline has passed)")
    what.add_argument("--rerun", action="store_true",
                      help="play the final again from the start (a new run; needs --yes: grades follow the "
                           "published run until the new one is published)")
    what.add_argument("--status", action="store_true", help="print its state and standings")
    what.add_argument("--publish", action="store_true",
                      help="publish the finished final: its standings and website (DIR/final/site/)")
    final.add_argument("--concurrency", type=_positive, default=None, metavar="N",
                       help="games played at a time (default: [final] concurrency, else 1)")
    final.add_argument("--unsafe-no-sandbox", action="store_true",
                       help="run the bots without the sandbox where bubblewrap cannot isolate them "
                            "(trusted code only)")
    final.add_argument("--yes", action="store_true", help="confirm --rerun (it cannot be undone)")
    final.set_defaults(func=cmd_final)
    out = csub.add_parser("disqualify", help="disqualify a student (0 points in grades.csv, with the reason; "
                                             "audit-logged), or --undo it")
    out.add_argument("directory", metavar="DIR", help="the course's directory")
    out.add_argument("student", metavar="ID", help="the student's id in the roster")
    out.add_argument("--reason", default=None, metavar="TEXT", help="why (shown to staff and in grades.csv)")
    out.add_argument("--undo", action="store_true", help="reinstate the student")
    out.set_defaults(func=cmd_disqualify)
    grades = csub.add_parser("grades", help="write DIR/grades.csv: each student's final rank, points, bonus, "
                                            "time forfeits, penalty and phases passed ([grading])")
    grades.add_argument("directory", metavar="DIR", help="the course's directory")
    grades.set_defaults(func=cmd_grades)


@_final_guard
def cmd_final(args: argparse.Namespace) -> int:
    """arena course final DIR --start | --rerun | --status | --publish"""
    import sys

    from arena.course.course import Course
    from arena.course.season import final

    course = Course(Path(args.directory), sandbox="auto" if args.unsafe_no_sandbox else "on")
    if args.rerun and not args.yes:
        raise FinalError(f"{final.rerun_warning(course)}; add --yes to rerun it")
    if args.start or args.rerun:
        status = final.run_final(course, rerun=args.rerun, concurrency=args.concurrency, progress=sys.stderr)
    elif args.publish:
        status = final.publish_final(course)
    else:
        status = final.final_status(course)
    print(final.status_text(status))
    if (args.start or args.rerun) and status.state == final.RUNNING:
        return 1  # some games could not be played (the log says why): --start again resumes
    return EXIT_OK


@_guard
def cmd_disqualify(args: argparse.Namespace) -> int:
    """arena course disqualify DIR ID --reason TEXT | --undo"""
    from arena.course.course import Course
    from arena.course.db.accounts import Accounts
    from arena.course.season import disqualify

    course = Course(Path(args.directory))
    if args.undo:
        undone = disqualify.reinstate(course, args.student)
        Accounts(course.directory).audit("(terminal)", "reinstated", args.student, f"was: {undone.reason}")
        print(f"{args.student} is no longer disqualified (was: {undone.reason})")
        return EXIT_OK
    if args.reason is None:
        raise Refused("a disqualification needs its reason: --reason TEXT (or --undo)")
    done = disqualify.disqualify(course, args.student, args.reason, "(terminal)")
    Accounts(course.directory).audit("(terminal)", "disqualified", args.student, done.reason)
    print(f"{args.student} disqualified: 0 points in grades.csv ({done.reason}); --undo reverses it")
    return EXIT_OK


@_final_guard
def cmd_grades(args: argparse.Namespace) -> int:
    """arena course grades DIR"""
    from arena.course.course import Course
    from arena.course.season import grades

    course = Course(Path(args.directory))
    path = grades.write_csv(course)
    print(f"wrote {path}")
    pending = grades.pending_checks(course)
    if pending:
        print(f"provisional: {pending} phase check{'s' * (pending != 1)} not run yet, so \"phases passed\" "
              f"may still grow (\"phases pending\" names them); `arena course phases {args.directory} "
              "--wait` waits for them")
    return EXIT_OK
