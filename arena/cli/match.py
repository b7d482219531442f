"""`arena match`: the options of a match between two bots; the match is played by
`arena.match.referee`, recorded by `arena.match.recorder` and shown by `arena.terminal.progress`.

    arena match GAME BOT_A BOT_B [--games N] [--time SECONDS|BASE+INC] [--param k=v] [--seed N]
                                 [--name A [--name B]] [--from FILE | --openings random:N|FILE]
                                 [--out DIR] [--pin-cpus] [--[no-]suspend] [--clock wall|cpu]
                                 [--memory MIB] [--cpu-seconds S]
                                 [--sprt elo0=0 elo1=10 alpha=0.05 beta=0.05]
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import sys
from collections.abc import Callable
from pathlib import Path

import rules
from arena.cell.limits import Limits
from arena.cli.common import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    BadInput,
    add_clock_kind,
    add_names_option,
    add_sandbox_option,
    announce_isolation,
    bot_specs,
    error,
    new_run_dir,
    parse_clock,
    parse_params,
    with_clock_kind,
)
from arena.match.clock import DEFAULT_MARGIN_S, TimeControl
from arena.match.movefile import read_move_file
from arena.match.openings import parse_openings
from arena.match.recorder import MatchRecorder
from arena.match.records import GameRecord
from arena.match.referee import run_match
from arena.match.spec import MatchSpec
from arena.match.sprt import Sprt, SprtConfig, Verdict
from arena.terminal.progress import MatchProgress

PREFIX = "arena match"
"""How the command's error lines start."""
SPRT_MAX_GAMES = 1000
"""The most games `arena match --sprt` plays without --games."""


class _SprtDone(Exception):
    """Raised from on_game when the SPRT has decided: the match stops there."""


def add_match_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register `arena match`."""
    p = subparsers.add_parser(
        "match", help="play a match between two bots",
        description="Play GAMES games between BOT_A and BOT_B, seats alternating (BOT_A starts game 1). "
                    "A bot is the name of a shipped bot or a command line in quotes.",
    )
    p.add_argument("game", metavar="GAME", help="the game: " + ", ".join(rules.names()))
    p.add_argument("bot_a", metavar="BOT_A", help="a shipped bot (e.g. random) or a command, e.g. "
                   "\"python mybot.py\"")
    p.add_argument("bot_b", metavar="BOT_B", help="the other bot")
    p.add_argument("--games", "-n", type=int, default=None, metavar="N",
                   help=f"games to play (default 2; with --sprt, at most N, default {SPRT_MAX_GAMES})")
    p.add_argument("--time", "-t", metavar="SECONDS|BASE+INC",
                   help="0.5: half a second a move; 60+1: a minute a game plus a second a move "
                        "(default: the game's per-move limit from the rules)")
    p.add_argument("--margin", type=float, default=DEFAULT_MARGIN_S, metavar="SECONDS",
                   help=f"grace added to every deadline (default {DEFAULT_MARGIN_S})")
    add_clock_kind(p)
    p.add_argument("--param", "-p", action="append", default=[], metavar="KEY=VALUE",
                   help="a game parameter, e.g. rows=6 (repeatable)")
    p.add_argument("--seed", type=int, default=0, help="the match seed sent to the bots (default 0)")
    p.add_argument("--from", dest="from_file", metavar="FILE",
                   help="start after the moves in FILE: one move a line, // or # comments "
                        "(a Santorini game file works as it is)")
    p.add_argument("--openings", metavar="random:N|FILE",
                   help="balanced openings: games 2k and 2k+1 (seats swapped) both start after opening k, "
                        "N random plies (from --seed) or the next line of FILE (one opening a line, or a "
                        "folder of move files; docs/tournaments.md)")
    p.add_argument("--out", default="results", metavar="DIR",
                   help="records go to DIR/matches/<match id>/ (default results)")
    p.add_argument("--quiet", "-q", action="store_true", help="only the final score")
    add_names_option(p)
    p.add_argument("--sprt", nargs="*", metavar="KEY=VALUE", default=None,
                   help="play pairs of games (seats swapped) until a sequential probability ratio test "
                        "decides whether BOT_A is stronger than BOT_B by elo1 (H1) or by at most elo0 "
                        "(H0); settings elo0=0 elo1=10 alpha=0.05 beta=0.05 by default "
                        "(docs/tournaments.md); put it last, or end its settings with --")
    limits = p.add_argument_group("limits and fairness (docs/limits.md)")
    limits.add_argument("--pin-cpus", action="store_true", help="pin each bot to its own CPU")
    limits.add_argument("--suspend", action=argparse.BooleanOptionalAction, default=None,
                        help="freeze the bot not to move while its opponent thinks (default: wherever the "
                             "bots have a cgroup freezer; --suspend: also with SIGSTOP without one); "
                             "--no-suspend lets the bots think on each other's time")
    limits.add_argument("--memory", type=int, metavar="MIB", default=Limits.memory_mb,
                        help=f"memory per bot process, 0 for none (default {Limits.memory_mb})")
    limits.add_argument("--cpu-seconds", type=int, metavar="S", default=Limits.cpu_s,
                        help=f"CPU seconds per bot process, 0 for none (default {Limits.cpu_s})")
    add_sandbox_option(limits)
    p.set_defaults(func=cmd_match)


def build_match(args: argparse.Namespace) -> tuple[MatchSpec, rules.Game]:
    """The MatchSpec for `arena match` arguments (without its id); BadInput/ValueError say why."""
    game = rules.load(args.game, **parse_params(args.param))
    if args.games is None:
        args.games = 2 if args.sprt is None else SPRT_MAX_GAMES
    if args.games < 1:
        raise BadInput(f"--games must be at least 1, got {args.games}")
    if args.sprt is not None:
        try:
            SprtConfig.parse(args.sprt)
        except ValueError as exc:
            raise BadInput(f"--sprt: {exc}") from None
        if args.games % 2:
            raise BadInput(f"--games must be even with --sprt (games come in pairs, seats swapped), "
                           f"got {args.games}")
    if args.margin < 0:
        raise BadInput(f"--margin must not be negative, got {args.margin}")
    if not math.isfinite(args.margin):
        raise BadInput(f"--margin must be a number of seconds, got {args.margin}")
    default = dataclasses.replace(TimeControl.for_game(args.game), margin=args.margin)
    clock = with_clock_kind(parse_clock(args.time, default, margin_s=args.margin), args)
    if args.openings is not None and args.from_file:
        raise BadInput("--openings and --from both set where games start: give one of them")
    start_moves = read_move_file(Path(args.from_file), game) if args.from_file else ()
    openings = parse_openings(args.openings, game, Path(), "--openings") if args.openings else None
    bots = bot_specs(args.bot_a, args.bot_b, args.names)
    spec = MatchSpec(match_id="", game=args.game, bots=bots, time_control=clock,
                     game_numbers=tuple(range(args.games)), params=game.params, seed=args.seed,
                     start_moves=start_moves, limits=limits_of(args),
                     openings=openings.for_pairs(game, args.seed, (args.games + 1) // 2) if openings else ())
    return spec, game


def limits_of(args: argparse.Namespace) -> Limits:
    """The Limits of `arena match` options; BadInput names a bad value by its option."""
    table = {"pin_cpus": args.pin_cpus, "memory_mb": args.memory, "cpu_s": args.cpu_seconds,
             "sandbox": args.sandbox}
    if args.suspend is not None:
        table["suspend"] = args.suspend
    try:
        return Limits.from_dict(table)
    except ValueError as exc:
        raise BadInput(str(exc).replace("memory_mb", "--memory").replace("cpu_s", "--cpu-seconds")) from None


def cmd_match(args: argparse.Namespace) -> int:
    """`arena match`: play, print each result and the score, write the records."""
    try:
        spec, game = build_match(args)
        announce_isolation(args.sandbox, PREFIX, spec.limits.suspend)
        directory = new_run_dir(Path(args.out) / "matches", args.game, [b.name for b in spec.bots],
                                what="match directory")
    except (ValueError, OSError) as exc:  # BadInput, LaunchError, rules' and TimeControl's errors
        return error(PREFIX, exc)
    spec = dataclasses.replace(spec, match_id=directory.name)
    recorder = MatchRecorder(spec, directory)
    if args.openings:
        recorder.extra["openings"] = args.openings
    progress = MatchProgress(recorder, quiet=args.quiet,
                             warn=lambda text: print(f"{PREFIX}: warning: {text}", file=sys.stderr))
    progress.header(directory, game.params)
    sprt = Sprt(SprtConfig.parse(args.sprt)) if args.sprt is not None else None
    on_game = progress.on_game if sprt is None else _sprt_on_game(sprt, progress.on_game, recorder)
    try:
        run_match(spec, on_game=on_game, on_move=progress.on_move if progress.is_live else None)
    except _SprtDone:
        pass
    except KeyboardInterrupt:
        print(f"\n{PREFIX}: interrupted after {len(recorder.records)} of {len(spec.game_numbers)} games; "
              f"records in {directory}", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        recorder.finish()
    print(f"score: {progress.score()}")
    if sprt is not None:
        print(_sprt_verdict(sprt, [b.name for b in spec.bots]))
    return EXIT_OK


def _sprt_on_game(sprt: Sprt, show: Callable[[GameRecord], None],
                  recorder: MatchRecorder) -> Callable[[GameRecord], None]:
    """on_game for --sprt: show and record the game; after each pair, update the test, print its
    line, keep it in match.json, and stop the match (_SprtDone) once it has decided."""
    bot_a = recorder.spec.bots[0].name
    pair = [0.0]

    def on_game(record: GameRecord) -> None:
        show(record)
        pair[0] += record.points(record.players.index(bot_a))
        if len(recorder.records) % 2:
            return
        sprt.add_pair(pair[0])
        pair[0] = 0.0
        print(sprt.line(), flush=True)
        recorder.extra["sprt"] = {**dataclasses.asdict(sprt.config), "pentanomial": list(sprt.counts),
                                  "llr": round(sprt.llr(), 4), "bounds": list(sprt.config.bounds()),
                                  "verdict": str(sprt.verdict())}
        if sprt.verdict() is not Verdict.CONTINUE:
            raise _SprtDone

    return on_game


def _sprt_verdict(sprt: Sprt, names: list[str]) -> str:
    c = sprt.config
    verdict = sprt.verdict()
    if verdict is Verdict.H1:
        return (f"SPRT: H1 accepted after {sprt.pairs} pairs: {names[0]} is stronger than {names[1]} "
                f"(by elo1 = {c.elo1:g} or more; false positive rate alpha = {c.alpha:g})")
    if verdict is Verdict.H0:
        return (f"SPRT: H0 accepted after {sprt.pairs} pairs: {names[0]} is not stronger than {names[1]} "
                f"by elo1 = {c.elo1:g} (at most elo0 = {c.elo0:g}; false negative rate beta = {c.beta:g})")
    return f"SPRT: no decision after {sprt.pairs} pairs (LLR {sprt.llr():.2f}); play more games"
