"""`arena course serve DIR`: the web app on uvicorn and the workers that build and qualify, in one
process tree.

The server refuses to run students' code unisolated: where bubblewrap cannot sandbox a bot it says
why and exits, unless `unsafe_no_sandbox` (for trusted code on a machine without it). It binds its
socket itself, so `--port 0` takes a free port and the first line printed names the address.
Where course.toml has a `[ladder]` section a LadderRunner thread plays the ladder's games
(arena/course/background/ladder.py); where it has `[[phases]]` a PhaseChecks thread runs their
score games and move-generation checks (arena/course/background/phase_checks.py). SIGTERM or
Ctrl-C stops it cleanly: uvicorn stops taking requests and finishes the ones under way, then the
ladder and the workers finish their games and jobs (a job or phase check cut short by a harder
kill is resumed on the next start: background/submissions.py, background/phase_checks.py).

The season clock (arena/course/background/season_clock.py) is a thread of the server that starts the
final tournament (arena.course.season.final) once the last deadline plus the longest extension has
passed, and resumes a final a stopped server left unfinished. All of them read "now" from the
course's clock (arena/course/db/clock.py): while staff rehearse a season on it (`arena course clock`)
the server says so loudly at its start and whenever it changes, and the clock's watch
(arena/course/background/clock_watch.py) wakes the loops waiting for a moment of it.

This module is the one place that wires the web front (arena.course_web.app) and the background
threads (arena.course.background) together, over one Course.
"""
from __future__ import annotations

import logging
import signal
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from arena.cell import sandbox
from arena.course_web import serve_lock

log = logging.getLogger(__name__)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
STOP_WAIT_S = 60.0
"""How long a stop waits for the workers' running jobs before leaving them to the next start."""


class _Stopped(Exception):
    """SIGTERM arrived (after uvicorn's own shutdown): the workers are stopped next."""


def _stop_signal(signum: int, frame: object) -> None:
    raise _Stopped


class ServeError(ValueError):
    """The server cannot start: one line saying why (and the fix)."""


def check_isolation(unsafe_no_sandbox: bool) -> str | None:
    """None where students' bots can be sandboxed; where they cannot, the warning to print with
    `unsafe_no_sandbox`, else ServeError (why, and the fix). With `unsafe_no_sandbox` a bot is
    still sandboxed wherever bubblewrap works."""
    reason = sandbox.unavailable_reason()
    if reason is None:
        return None
    if not unsafe_no_sandbox:
        raise ServeError(f"refusing to run students' bots unisolated: {reason}; fix: "
                         f"{sandbox.fix_for(reason)} (or --unsafe-no-sandbox, for trusted code only)")
    return f"warning: students' bots are NOT isolated ({reason}): --unsafe-no-sandbox"


RECEIVE_BUFFER_BYTES = 1024 * 1024
"""The kernel's receive buffer of each connection (SO_RCVBUF, which Linux doubles). Left alone it
grows to net.ipv4.tcp_rmem's maximum (32 MiB on some machines), all of it held for a client that
sends faster than the app reads (a body past its bound, or after the answer: bounds.py). At 1 MiB an
upload still moves at 20 MB/s over a 50 ms link."""


def listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket on host:port (port 0: a free one); ServeError if it cannot bind."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto named: asyncio turns Nagle off (TCP_NODELAY) only on sockets whose proto is IPPROTO_TCP,
    # and an accepted socket inherits 0 from a listener made without it: every response then waited
    # 40 ms for the client's delayed ACK between its headers and its body.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RECEIVE_BUFFER_BYTES)  # inherited when accepted
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ServeError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def _dask_backend(address: str) -> Callable[[], object]:
    """What makes the Workers' backend on the Dask cluster at `address` (checked here: ServeError)."""
    from arena.tournament.cluster import ClusterError, DaskBackend, parse_cluster

    try:
        parse_cluster(address)
    except ClusterError as exc:
        raise ServeError(f"--cluster {address}: {exc}") from None
    return lambda: DaskBackend(address)


def serve(directory: str | Path, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, concurrency: int = 1,
          unsafe_no_sandbox: bool = False, https_cookies: bool = False, out: TextIO = sys.stdout,
          cluster: str | None = None, trusted_proxy: str | None = None,
          header_timeout_s: float | None = None, body_idle_s: float | None = None) -> int:
    """Serve the course in `directory` until SIGTERM or SIGINT; returns the exit code (0).
    `cluster`: a Dask cluster's address (or local:N) to play the games on, instead of a local pool
    of `concurrency` workers. `trusted_proxy`: the address(es) of the reverse proxy whose
    X-Forwarded-For names the client (comma-separated); without it the client is the peer.
    `header_timeout_s`, `body_idle_s`: how long a request's headers may take and its body may stall
    before the connection is closed (None: bounds.HEADER_TIMEOUT_S, bounds.BODY_IDLE_S).
    ServeError, CourseError or SandboxUnavailable (one line each) when it cannot start."""
    import uvicorn  # the web stack is imported when a server starts, not by every `arena` command

    from arena.course.background.clock_watch import ClockWatch
    from arena.course.background.ladder import LadderRunner
    from arena.course.background.phase_checks import PhaseChecks
    from arena.course.background.season_clock import SeasonClock
    from arena.course.background.submissions import Workers
    from arena.course.course import Course
    from arena.course.db.accounts import Accounts
    from arena.course_web import bounds, signin
    from arena.course_web.app import create_app

    protocol = bounds.guarded_protocol(header_timeout_s, body_idle_s)
    warning = check_isolation(unsafe_no_sandbox)
    # --unsafe-no-sandbox: "auto", the sandbox wherever bubblewrap works (without a cgroup too)
    course = Course(Path(directory), sandbox="auto" if unsafe_no_sandbox else "on")
    course.clock.rehearsal()  # a clock.json arena did not write: ClockError (one line), nothing started
    lock = serve_lock.hold(course.directory)  # one server a directory: before any worker or clock
    workers = Workers(course, concurrency=concurrency,  # woken by the course on each upload
                      make_backend=_dask_backend(cluster) if cluster else None)
    # the ladder plays only where course.toml has a [ladder] section
    ladder = LadderRunner(course) if "ladder" in course.config.sections else None
    # the phases' score games and move-generation checks, in the background
    checks = PhaseChecks(course) if course.config.season.phases else None
    accounts = Accounts(course.config.directory, course.config.accounts,
                        database=course.store.db)  # one connection manager
    app = create_app(course, accounts, https_cookies=https_cookies)
    sock = listen(host, port)
    bound_host, bound_port = sock.getsockname()[:2]
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    serve_lock.tell_address(lock, f"http://{shown}:{bound_port}/")
    # the client's address counts sign-in tries: it is the peer's unless a proxy is trusted
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                            timeout_graceful_shutdown=10, http=protocol,
                            proxy_headers=bool(trusted_proxy), forwarded_allow_ips=trusted_proxy or None)
    server = uvicorn.Server(config)
    if warning:
        print(f"arena course: {warning}", file=sys.stderr)
    weak = signin.weak_hashing_warning(course.config.accounts)
    if weak:  # a test course's cheap password hashes: said at the start, never taken for a real course's
        print(f"arena course: {weak}", file=sys.stderr, flush=True)
    rehearsal = course.clock.warning()
    if rehearsal:  # never left on unnoticed: the server's first words, the staff pages' banner
        print(f"arena course: {rehearsal}", file=sys.stderr, flush=True)
    workers.start()
    if ladder is not None:
        ladder.start()
    if checks is not None:
        checks.start()
    season = SeasonClock(course)
    season.start()
    # a rehearsal clock set, advanced or ended meanwhile: the loops waiting for a moment look again
    watch = ClockWatch(course, [season.wake, *(loop.wake for loop in (checks, ladder) if loop is not None)])
    watch.start()
    workers_text = f"{concurrency} worker{'s' if concurrency != 1 else ''}"
    print(f"arena course serve: http://{shown}:{bound_port}/ ({course.config.game}, "
          f"{len(course.students())} students, {workers_text}; Ctrl-C stops)", file=out, flush=True)
    previous = signal.signal(signal.SIGTERM, _stop_signal)
    try:
        server.run(sockets=[sock])  # uvicorn raises the signal that stopped it again once it stopped
    except (_Stopped, KeyboardInterrupt):
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        watch.stop()
        if ladder is not None:
            ladder.stop(STOP_WAIT_S)
        if checks is not None:
            checks.stop(0)  # its games end when the workers' game player stops; it runs again at the start
        season.stop()
        workers.stop(STOP_WAIT_S)
        if checks is not None:
            checks.join(STOP_WAIT_S)  # a move-generation check under way: up to its end
        sock.close()
    print("arena course serve: stopped", file=out, flush=True)
    return 0
