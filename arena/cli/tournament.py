"""The tournament commands of `arena`: tournament run, tournament plan, standings, publish, serve, submit.

arena/cli/__init__.py registers them with `add_tournament_parsers(subparsers)`; each command's function takes
the parsed arguments and returns the exit code: 0 done, 1 games left to play (run it again),
2 bad input (the one-line message names it), 130 interrupted.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

from arena.cell.launcher import LaunchError
from arena.cell.limits import cores_per_match
from arena.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_INCOMPLETE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    BadInput,
    guard,
    params_suffix,
)
from arena.tournament import config
from arena.tournament import runner as tmod
from arena.tournament.store import DB_NAME, StoreError

SUBMIT_GAMES = 2
SUBMIT_OPPONENT = "random"

CommandError = BadInput
"""A bad input or a refused request: printed as one line, exit code 2."""

_guard = guard("arena", (BadInput, config.TournamentError, StoreError, LaunchError, OSError))
"""Bad input (and files that cannot be read or written) as one line and exit code 2."""


def add_tournament_parsers(subparsers: argparse._SubParsersAction) -> None:
    """Register `tournament run`, `standings`, `publish`, `serve` and `submit` on `arena`'s subparsers."""
    results_help = ("the directory holding every tournament's results (default: results, here; or the "
                    "results beside the tournament file, when only those hold this tournament's games)")
    which_help = "the tournament file, or its name under --results"
    port_help = "the port of the local web server (default 8000; 0 picks a free one)"

    tour = subparsers.add_parser("tournament", help="run a tournament (round-robin, gauntlet or Swiss) "
                                                    "from a TOML file")
    tsub = tour.add_subparsers(dest="tournament_command", metavar="COMMAND")
    tsub.required = True
    run = tsub.add_parser("run", help="play every game not yet played (resumes after an interruption)")
    run.add_argument("tournament", metavar="TOURNAMENT", help="the tournament file (.toml)")
    run.add_argument("--concurrency", "-j", type=int, default=None,
                     help="matches played at once (default 1; at most the number of cores)")
    run.add_argument("--cluster", metavar="ADDRESS", default=None,
                     help="play the matches on a Dask cluster: a scheduler address (tcp://HOST:8786), "
                          "or local:N for N local worker processes (needs, in arena's checkout: "
                          "pip install '.[dask]')")
    run.add_argument("--results", default=None, help=results_help)
    run.add_argument("--quiet", action="store_true", help="no progress bar and no standings at the end")
    run.add_argument("--serve", action="store_true",
                     help="serve the results site on http://127.0.0.1:PORT/ during the run and after it "
                          "(until Ctrl-C), as `arena serve` does")
    run.add_argument("--port", type=int, default=None, help=port_help)
    run.add_argument("--retry-aborted", action="store_true",
                     help="play the aborted games again (games whose worker process kept dying; the "
                          "aborted records are kept aside in the results database)")
    run.set_defaults(func=cmd_run)

    pl = tsub.add_parser("plan", help="print the number of games and matches and an estimate of the "
                                      "wall time, without playing")
    pl.add_argument("tournament", metavar="TOURNAMENT", help="the tournament file (.toml)")
    pl.add_argument("--concurrency", "-j", type=int, default=None,
                    help="matches played at once (default 1)")
    pl.add_argument("--cluster", metavar="ADDRESS", default=None,
                    help="local:N for N local Dask workers, or a scheduler address (its workers are counted)")
    pl.add_argument("--results", default=None, help=results_help)
    pl.add_argument("--quick", action="store_true",
                    help="time no bot before the first game is stored: the estimate is then the upper "
                         "bound of bots using their whole clock (default: a few moves of each bot are "
                         "timed first, a few seconds a bot)")
    pl.set_defaults(func=cmd_plan)

    st = subparsers.add_parser("standings", help="print a tournament's standings (also during a run)")
    st.add_argument("tournament", metavar="TOURNAMENT", help=which_help)
    st.add_argument("--results", default=None, help=results_help)
    st.add_argument("--markdown", action="store_true", help="print markdown tables")
    st.set_defaults(func=cmd_standings)

    pub = subparsers.add_parser("publish", help="write standings, crosstable, games and the results website")
    pub.add_argument("tournament", metavar="TOURNAMENT", help=which_help)
    pub.add_argument("--results", default=None, help=results_help)
    pub.add_argument("--out", metavar="DIR", default=None,
                     help="where the website goes (default: results/<name>/site/); copy it to any web host")
    pub.set_defaults(func=cmd_publish)

    srv = subparsers.add_parser("serve", help="serve the results website on localhost, kept current "
                                              "while the tournament runs")
    srv.add_argument("tournament", metavar="TOURNAMENT", help=which_help)
    srv.add_argument("--results", default=None, help=results_help)
    srv.add_argument("--port", type=int, default=None, help=port_help)
    srv.add_argument("--out", metavar="DIR", default=None,
                     help="where the website is written (default: results/<name>/site/)")
    srv.add_argument("--poll", type=float, default=None, metavar="S",
                     help="look for new games every S seconds (default 1; open pages ask every 1.5 S)")
    srv.set_defaults(func=cmd_serve)

    sub = subparsers.add_parser("submit",
                                help="check a bot against the random bot, then add it to a tournament")
    sub.add_argument("tournament", metavar="TOURNAMENT",
                     help="the tournament file (.toml) to append the bot to")
    sub.add_argument("name", metavar="NAME", help="the bot's name in the tournament")
    sub.add_argument("command", metavar="COMMAND", nargs=argparse.REMAINDER,
                     help="the bot: a shipped bot name or a command line (its own options included)")
    sub.add_argument("--games", type=int, default=SUBMIT_GAMES,
                     help=f"games of the check against {SUBMIT_OPPONENT} (default {SUBMIT_GAMES})")
    sub.set_defaults(func=cmd_submit)


def results_root(tour: config.Tournament, given: str | None) -> str:
    """Where the results of `tour` are (or go): --results when `given`; else `results` here, unless
    only the `results` beside the tournament file holds its games (the same tournament, run from
    its own directory before): then that one, said in one line on stderr."""
    if given is not None:
        return given
    here = Path(config.DEFAULT_RESULTS_ROOT)
    beside = tour.path.resolve().parent / config.DEFAULT_RESULTS_ROOT
    if beside.resolve() == here.resolve() or (tour.results_dir(here) / DB_NAME).is_file():
        return str(here)
    if (tour.results_dir(beside) / DB_NAME).is_file():
        print(f"arena: the results of {tour.name!r} are beside its file, in {tour.results_dir(beside)}",
              file=sys.stderr)
        return str(beside)
    return str(here)


def results_dir_of(arg: str, root: str | None) -> Path:
    """The results directory for TOURNAMENT: a tournament file, a results directory, or a name."""
    path = Path(arg)
    if path.is_file():
        tour = config.load(path, check_commands=False)
        return tour.results_dir(results_root(tour, root))
    root = config.DEFAULT_RESULTS_ROOT if root is None else root
    if (path / DB_NAME).is_file():
        return path
    if (Path(root) / arg / DB_NAME).is_file():
        return Path(root) / arg
    raise CommandError(f"{arg}: no such tournament file, and no results under {Path(root) / arg}")


@_guard
def cmd_run(args: argparse.Namespace) -> int:
    """arena tournament run TOURNAMENT [--concurrency N | --cluster ADDRESS]"""
    if args.concurrency is not None and args.concurrency < 1:
        raise CommandError(f"--concurrency must be at least 1, got {args.concurrency}")
    if args.cluster is not None:
        from arena.tournament import cluster

        if args.concurrency is not None:
            raise CommandError("--concurrency is for the local pool; with --cluster the workers play "
                               "(local:N for N local workers)")
        try:
            cluster.parse_cluster(args.cluster)
            cluster.require_dask()
        except cluster.ClusterError as exc:
            raise CommandError(str(exc)) from None
    if args.port is not None and not args.serve:
        raise CommandError("--port is the port of --serve; add --serve")
    tour = config.load(args.tournament)
    fits = max(1, cores() // cores_per_match(tour.limits.suspend))
    if tour.limits.pin_cpus and args.cluster is None and (args.concurrency or 1) > fits:
        each = "its own core" if cores_per_match(tour.limits.suspend) == 1 else "two cores of its own"
        raise CommandError(f"--concurrency {args.concurrency or 1}: with pin_cpus each running match gets "
                           f"{each}, so at most {fits} matches fit on the {cores()} cores here")
    args.results = results_root(tour, args.results)
    out = tour.results_dir(args.results)
    done_before = tmod.check_resumable(tour, args.results)
    server = _site_server(out, None, args.tournament, tour.fingerprint(), args.port) if args.serve else None
    plan = _estimate(tour, args.results, _workers(args))
    print(plan.text(), file=sys.stderr)
    cpu = (f" of CPU (at most {tour.time_control.wall_factor:g}x in wall time)"
           if tour.time_control.kind == "cpu" else "")
    print(f"{tour.name}: {tour.game}{params_suffix(tour.game, tour.params)}, "
          f"time {tour.time_control} s{cpu}, "
          f"{len(tour.bots)} bots, {_format(tour)}"
          f"{tour.games_per_pairing} games a pairing, {tour.total_games()} games "
          f"({done_before} already stored) -> {out.resolve()}", file=sys.stderr)
    nothing_to_play = done_before >= tour.total_games() and not args.retry_aborted
    _warn_over_cores(args.concurrency)
    progress = None if args.quiet or nothing_to_play else sys.stderr
    try:
        if args.cluster is not None:
            try:
                backend = cluster.DaskBackend(args.cluster, check=tour, progress=progress)
                summary = tmod.run(tour, args.results, progress=progress, retry_aborted=args.retry_aborted,
                                   backend=backend)
            except cluster.ClusterError as exc:
                raise CommandError(str(exc)) from None
        else:
            summary = tmod.run(tour, args.results, concurrency=args.concurrency or 1, progress=progress,
                               eta_s=plan.wall_s, retry_aborted=args.retry_aborted)
    except BaseException:
        if server is not None:
            server.stop()
        raise
    for failure in summary.failures:
        print(f"arena: warning: {failure}", file=sys.stderr)
    if summary.retried:
        print(f"{tour.name}: {summary.retried} aborted games played again", file=sys.stderr)
    if not args.quiet and not summary.interrupted:  # interrupted: stop now, `arena standings` shows them
        from arena.tournament.standings import report

        print(report(out))  # aborted games, with what their bots printed, at its end
    aborted = _aborted(out)
    if aborted and args.quiet:
        from arena.tournament.aborted import aborted_note

        print(aborted_note(aborted), file=sys.stderr)
    missing = tour.total_games() - _stored(out)
    if server is not None:
        if not summary.interrupted:
            server.live.refresh()
            with _ctrl_c_ends_the_wait() as pressed:
                print(f"the run is over; still serving {server.url}, Ctrl-C to stop", file=sys.stderr,
                      flush=True)
                _wait_for(pressed)
        server.stop()
    if summary.interrupted:
        print(f"arena: interrupted with {missing} games left; run the same command again to finish "
              f"(arena standings {args.tournament} shows the standings so far)", file=sys.stderr)
        return EXIT_INTERRUPTED
    if missing:
        print(f"arena: {missing} games not played; run the same command again to play them", file=sys.stderr)
        return EXIT_INCOMPLETE
    if nothing_to_play and not summary.stored:
        print(f"{tour.name}: all {tour.total_games()} games are already stored; nothing to play",
              file=sys.stderr)
    else:
        shown = (f", {len(aborted)} of them aborted (not scored; --retry-aborted plays them again)"
                 if aborted else "")
        total, stored = tour.total_games(), summary.stored
        before = f", {total - stored} stored by earlier runs" if stored < total else ""
        print(f"{tour.name}: all {total} game{'s' * (total != 1)} played: {stored} this run in "
              f"{summary.wall_s:.1f} s{before}{shown}{summary.load_note()}", file=sys.stderr)
    return EXIT_OK


@_guard
def cmd_plan(args: argparse.Namespace) -> int:
    """arena tournament plan TOURNAMENT [--concurrency N | --cluster ADDRESS]"""
    tour = tmod.load(args.tournament)  # every bot command checked, as `run` checks them
    args.results = results_root(tour, args.results)
    tmod.check_resumable(tour, args.results)
    _warn_over_cores(args.concurrency)  # the plan is for a run that would be unfair: say so here too
    print(_estimate(tour, args.results, _workers(args), sample=not args.quick).text())
    return EXIT_OK


def _warn_over_cores(concurrency: int | None) -> None:
    """The warning `run` and `plan` print when more matches would run at once than there are cores."""
    if concurrency is not None and concurrency > cores():
        print(f"arena: warning: --concurrency {concurrency} is more than the {cores()} cores of this "
              "machine: bots will wait for a core while their clock runs, so the clocks are no longer fair",
              file=sys.stderr)


def _workers(args: argparse.Namespace) -> int:
    """The number of workers of `--concurrency` or `--cluster` (a scheduler's are counted)."""
    if args.concurrency is not None and args.concurrency < 1:
        raise CommandError(f"--concurrency must be at least 1, got {args.concurrency}")
    if args.cluster is None:
        return args.concurrency or 1
    from arena.tournament import cluster

    if args.concurrency is not None:
        raise CommandError("--concurrency is for the local pool; with --cluster the workers play "
                           "(local:N for N local workers)")
    try:
        kind, value = cluster.parse_cluster(args.cluster)
        if kind == "local":
            return int(value)
        with cluster.connect(str(value)) as client:
            return cluster.worker_threads(client)
    except cluster.ClusterError as exc:
        raise CommandError(str(exc)) from None


def _estimate(tour: tmod.Tournament, root: str, workers: int, reuse: bool = True, sample: bool = False):
    """The plan's estimate, from the stored games if there are any, else, with `sample`, from a few
    moves of each bot timed now; `reuse`: bots kept between matches (the default pool and --cluster
    workers alike)."""
    from arena.tournament.plan import estimate, sample_bots
    from arena.tournament.store import Store

    db = tour.results_dir(root) / DB_NAME
    if db.is_file():
        with Store(db, create=False) as store:
            if store.count():
                return estimate(tour, workers, store, reuse=reuse)
    if sample:
        print(f"{tour.name}: timing a few moves of each of its {len(tour.bots)} bots "
              f"(--quick: none)...", file=sys.stderr, flush=True)
        return estimate(tour, workers, reuse=reuse, samples=sample_bots(tour, workers))
    return estimate(tour, workers, reuse=reuse)


def _aborted(out: Path) -> list:
    """The aborted games stored in the results database `out` (GameRecords)."""
    if not (out / DB_NAME).is_file():
        return []
    from arena.tournament.store import Store

    with Store(out / DB_NAME, create=False) as store:
        return [g.record for g in store.iter_games() if g.record.is_aborted()]


def _stored(out: Path) -> int:
    if not (out / DB_NAME).is_file():
        return 0
    from arena.tournament.store import Store

    with Store(out / DB_NAME, create=False) as store:
        return store.count()


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _format(tour: tmod.Tournament) -> str:
    if tour.format == "gauntlet":
        return f"gauntlet of {', '.join(tour.challengers)}, "
    if tour.format == "swiss":
        return f"Swiss of {tour.rounds} rounds, "
    return ""



@_guard
def cmd_standings(args: argparse.Namespace) -> int:
    """arena standings TOURNAMENT"""
    from arena.tournament.standings import report

    print(report(results_dir_of(args.tournament, args.results), "github" if args.markdown else "simple"))
    return EXIT_OK


@_guard
def cmd_publish(args: argparse.Namespace) -> int:
    """arena publish TOURNAMENT [--out DIR]"""
    from arena.site.build import SiteError, check_out, default_out, publish_site
    from arena.tournament.standings import publish

    out = results_dir_of(args.tournament, args.results)
    try:
        site = check_out(Path(args.out) if args.out else default_out(out), out)
    except SiteError as exc:
        raise CommandError(str(exc)) from None
    written = publish(out)
    publish_site(out, site, args.tournament if Path(args.tournament).is_file() else None)
    print(f"wrote {len(written)} files under {out}: " + ", ".join(
        sorted({str(p.relative_to(out)).split(os.sep)[0] for p in written})))
    print(f"website: {(site / 'index.html').resolve().as_uri()}")
    return EXIT_OK


def _site_server(results: Path, out: str | None, tournament: str, fingerprint: dict | None, port: int | None,
                 poll_s: float | None = None):
    """arena.site.serve.open_server, its errors as CommandError; prints the address."""
    from arena.site.build import SiteError
    from arena.site.serve import open_server

    try:
        file = tournament if Path(tournament).is_file() else None
        server = open_server(results, out, file, fingerprint, port, poll_s)
    except SiteError as exc:
        raise CommandError(str(exc)) from None
    print(f"serving {server.url} (the site in {server.live.builder.out}); Ctrl-C to stop", flush=True)
    return server


@contextlib.contextmanager
def _ctrl_c_ends_the_wait() -> Iterator[threading.Event]:
    """An event that Ctrl-C (SIGINT) sets from the moment the block begins, in place of raising
    KeyboardInterrupt: a Ctrl-C pressed as soon as "Ctrl-C to stop" is printed, before the wait
    began, stopped `arena tournament run --serve` with 130, as if its run had been interrupted.
    Off the main thread (no signal handler there), an event that Ctrl-C does not set."""
    pressed = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield pressed
        return
    previous = signal.signal(signal.SIGINT, lambda signum, frame: pressed.set())
    try:
        yield pressed
    finally:
        signal.signal(signal.SIGINT, previous)


def _wait_for(pressed: threading.Event) -> None:
    """Until `pressed` is set (Ctrl-C, `_ctrl_c_ends_the_wait`): the handler sets it, so no
    KeyboardInterrupt comes."""
    while not pressed.wait(1.0):
        pass


@_guard
def cmd_serve(args: argparse.Namespace) -> int:
    """arena serve TOURNAMENT [--port PORT] [--poll S]: the site, rebuilt as games are stored, to Ctrl-C."""
    path = Path(args.tournament)
    if path.is_file():
        tour = config.load(path, check_commands=False)
        results, fingerprint = tour.results_dir(results_root(tour, args.results)), tour.fingerprint()
    else:
        results, fingerprint = results_dir_of(args.tournament, args.results), None
    with _ctrl_c_ends_the_wait() as pressed:  # from before the address is printed
        server = _site_server(results, args.out, args.tournament, fingerprint, args.port, args.poll)
        try:
            _wait_for(pressed)
        finally:
            server.stop()
    return EXIT_OK


@_guard
def cmd_submit(args: argparse.Namespace) -> int:
    """arena submit TOURNAMENT NAME COMMAND..."""
    from arena.cell.launcher import PROTOCOL_STDIO, STDIO_PREFIX, resolve_command, shipped_bots

    path = Path(args.tournament)
    tour = config.load(path, check_commands=False)
    name = args.name
    if not config.NAME_RE.match(name):
        raise CommandError(f"bot name {name!r} is not usable (letters, digits, . _ + -, at most 64)")
    if any(b.name == name for b in tour.bots):
        raise CommandError(f"{path}: a bot named {name!r} is already in the tournament")
    if not args.command:
        raise CommandError("submit needs the bot's COMMAND")
    if args.games < 1:
        raise CommandError(f"--games must be at least 1, got {args.games}")
    # Paths on the command line are the user's (relative to here); the file gets them absolute,
    # since its own relative paths are read against the file's directory.
    given: str | list[str] = args.command[0] if len(args.command) == 1 else list(args.command)
    if isinstance(given, list) and given[0].startswith(STDIO_PREFIX):  # stdio:python3 bot.py, unquoted
        given = shlex.join([given[0][len(STDIO_PREFIX):], *given[1:]])
        given = STDIO_PREFIX + given
    argv = resolve_command(given)
    written: str | list[str] = given if isinstance(given, str) and given in shipped_bots() else list(argv)
    protocol = None
    if isinstance(given, str) and given.strip().startswith(STDIO_PREFIX):  # the file says protocol = "stdio"
        written, protocol = list(resolve_command(given.strip()[len(STDIO_PREFIX):])), PROTOCOL_STDIO
    reason = check_bot(tour, name, argv, args.games)
    if reason is not None:
        print(f"arena: rejected: {reason}", file=sys.stderr)
        return EXIT_BAD_INPUT
    append_bot(path, name, written, protocol)
    print(f"{name}: passed {args.games} games against {SUBMIT_OPPONENT} and was added to {path}")
    return EXIT_OK


def check_bot(tour: config.Tournament, name: str, argv: tuple[str, ...], games: int) -> str | None:
    """Play `games` games of the tournament's game and clock against the random bot, in the
    tournament's limits and sandbox (so a bot that needs a file outside its directory, or the
    network, is refused now rather than forfeited later); None if the bot said hello and answered
    every turn with a legal move in time without an error of its own (an exception in choose()
    that the SDK answered for it), else why not, with the bot's own error: the traceback it sent,
    or the last lines it printed."""
    import dataclasses

    from arena.cell.launcher import resolve_command
    from arena.match.referee import run_match
    from arena.match.spec import BotSpec, MatchSpec

    opponent = f"{SUBMIT_OPPONENT}-opponent" if name == SUBMIT_OPPONENT else SUBMIT_OPPONENT
    hide = (*tour.limits.hide, str(tour.path.resolve()), str(tour.results_dir().resolve()))
    spec = MatchSpec(
        match_id=f"submit-{name}", game=tour.game,
        bots=(BotSpec(name, tuple(argv)), BotSpec(opponent, resolve_command(SUBMIT_OPPONENT))),
        time_control=tour.time_control, game_numbers=tuple(range(games)), params=dict(tour.params),
        seed=tour.seed, limits=dataclasses.replace(tour.limits, hide=hide),
    )
    try:
        records = run_match(spec)  # in a directory of its own (arena.cell.scratch)
    except ValueError as exc:  # e.g. sandbox = on where bots cannot be isolated
        return str(exc)
    except Exception as exc:  # the referee should not fail; if it does, the bot is not admitted
        return f"the check match failed: {type(exc).__name__}: {exc}"
    reason = _check_records(records, name, games)
    if reason is None:
        return None
    where = " (checked in the sandbox: docs/limits.md says what a bot may use)" \
        if records and records[0].isolation == "sandbox" else ""
    first, newline, rest = reason.partition("\n")  # the bot's own output follows the first line
    return first + where + newline + rest


def _check_records(records: list, name: str, games: int) -> str | None:
    if len(records) != games:
        return f"the check match ended after {len(records)} of {games} games"
    for record in records:
        seat = record.players.index(name)
        failure = record.forfeit_of(seat)
        output = record.logs.get(str(seat), "").strip()
        if failure is not None:
            # a detail quoting what the bot printed before its hello: its first line here, the
            # lines once, below
            head, _, printed = failure.detail.partition("\n")
            head = head.strip().removesuffix("; it printed:")
            output = output or printed.strip()
            detail = f" ({head})" if head else ""
            shown = f"\nits last output:\n{_last_lines(output)}" if output else ""
            return (f"bot {name!r}: {failure.reason} in game {record.game_id} after "
                    f"{len(record.moves)} plies{detail}{shown}")
        errors = [m.info["error"] for m in record.moves
                  if m.seat == seat and isinstance(m.info.get("error"), str)]
        if errors or record.errors[seat]:
            count = max(len(errors), record.errors[seat])
            trace = errors[0].strip() if errors else "(not recorded)"
            return (f"bot {name!r}: its choose() raised an exception on {count} of its moves in game "
                    f"{record.game_id} (the SDK played the first legal move instead)\nthe first traceback:\n"
                    f"{trace}")
        if not any(m.seat == seat for m in record.moves) and not record.forfeit:
            return f"bot {name!r} made no move in game {record.game_id} ({record.reason})"
    return None


def _last_lines(text: str, lines: int = 15) -> str:
    """The last `lines` lines of what a bot printed (its traceback, typically)."""
    return "\n".join(text.splitlines()[-lines:])


def append_bot(path: Path, name: str, command: str | list[str], protocol: str | None = None) -> None:
    """Append a [[bots]] table to the tournament file, after checking the result still reads."""
    text = path.read_text(encoding="utf-8")
    value = json.dumps(command)  # a JSON string or list of strings is a valid TOML value
    addition = f'\n[[bots]]\nname = {json.dumps(name)}\ncommand = {value}\n'
    if protocol is not None:
        addition += f"protocol = {json.dumps(protocol)}\n"
    new_text = (text if text.endswith("\n") or not text else text + "\n") + addition
    import tomllib

    try:
        data = tomllib.loads(new_text)
        new = config.from_dict(data, path, check_commands=False)
    except (tomllib.TOMLDecodeError, ValueError) as exc:
        raise CommandError(f"{path}: cannot append [[bots]] to this file ({exc}); "
                           "add the bot by hand") from None
    if new.bots[-1].name != name:
        raise CommandError(f"{path}: the appended bot does not come last; add it by hand")
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(new_text, encoding="utf-8")
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    """`python -m arena.cli.tournament ...`: the same commands without the rest of `arena`."""
    parser = argparse.ArgumentParser(prog="arena")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    add_tournament_parsers(subparsers)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
