"""`arena`: the command line, argument parsing only; each command hands over to its room
(`arena.match`, `arena.tournament`, `arena.site`, `arena.terminal`). Nothing imports this package.

Each command registers itself with an `add_<command>_parser(subparsers)` function and sets `func`
(parsed arguments -> exit code). Exit codes: 0 done, 2 bad input (one line naming it, never a
traceback), 130 interrupted.

    arena match GAME BOT_A BOT_B [--games N] [--time SECONDS|BASE+INC] [--param k=v] [--seed N]
                                 [--from FILE] [--out DIR] [--pin-cpus] [--suspend]
                                 [--memory MIB] [--cpu-seconds S]
                                 [--sprt elo0=0 elo1=10 alpha=0.05 beta=0.05]
"""
from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import logging
import math
import re
import sys
from datetime import datetime
from pathlib import Path

import rules
from arena import __version__
from arena.match.clock import DEFAULT_MARGIN_S, TimeControl
from arena.match.launcher import display_name, resolve_command
from arena.match.limits import Limits
from arena.match.movefile import read_move_file, save_record, write_move_file
from arena.match.records import GameRecord
from arena.match.referee import run_match
from arena.match.spec import BotSpec, MatchSpec
from arena.match.sprt import Sprt, SprtConfig, Verdict
from arena.terminal.screen import result_text

EXIT_OK, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 2, 130

EXTRA_COMMANDS = [
    ("arena.cli.tournament", "add_tournament_parsers"),  # tournament run, standings, publish, submit
    ("arena.cli.play", "add_play_parsers"),  # play, watch, replay
]
"""Commands written in other modules: (module, function registering them); skipped if absent."""


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
    p.add_argument("--param", "-p", action="append", default=[], metavar="KEY=VALUE",
                   help="a game parameter, e.g. rows=6 (repeatable)")
    p.add_argument("--seed", type=int, default=0, help="the match seed sent to the bots (default 0)")
    p.add_argument("--from", dest="from_file", metavar="FILE",
                   help="start after the moves in FILE: one move a line, // or # comments "
                        "(a Santorini game file works as it is)")
    p.add_argument("--out", default="results", metavar="DIR",
                   help="records go to DIR/matches/<match id>/ (default results)")
    p.add_argument("--quiet", "-q", action="store_true", help="only the final score")
    p.add_argument("--sprt", nargs="*", metavar="KEY=VALUE", default=None,
                   help="play pairs of games (seats swapped) until a sequential probability ratio test "
                        "decides whether BOT_A is stronger than BOT_B by elo1 (H1) or by at most elo0 "
                        "(H0); settings elo0=0 elo1=10 alpha=0.05 beta=0.05 by default "
                        "(docs/tournaments.md); put it last, or end its settings with --")
    limits = p.add_argument_group("limits and fairness (docs/limits.md)")
    limits.add_argument("--pin-cpus", action="store_true", help="pin each bot to its own CPU")
    limits.add_argument("--suspend", action="store_true",
                        help="stop the bot not to move (SIGSTOP) while its opponent thinks")
    limits.add_argument("--memory", type=int, metavar="MIB", default=Limits.memory_mb,
                        help=f"memory per bot process, 0 for none (default {Limits.memory_mb})")
    limits.add_argument("--cpu-seconds", type=int, metavar="S", default=Limits.cpu_s,
                        help=f"CPU seconds per bot process, 0 for none (default {Limits.cpu_s})")
    p.set_defaults(func=cmd_match)


class _BadInput(ValueError):
    pass


SPRT_MAX_GAMES = 1000
"""The most games `arena match --sprt` plays without --games."""


class _SprtDone(Exception):
    """Raised from on_game when the SPRT has decided: the match stops there."""


def _parse_params(items: list[str]) -> dict[str, str]:
    params = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise _BadInput(f"bad --param {item!r}: use KEY=VALUE, e.g. rows=6")
        params[key.strip()] = value.strip()
    return params


def read_moves_file(path: Path, game: rules.Game) -> tuple[str, ...]:
    """The moves of a start-position file (arena.movefile), checked by playing them; errors name the line."""
    return read_move_file(path, game)


def _bot_specs(text_a: str, text_b: str) -> tuple[BotSpec, BotSpec]:
    commands = (resolve_command(text_a), resolve_command(text_b))
    names = [display_name(text_a), display_name(text_b)]
    if names[0] == names[1]:
        names = [f"{names[0]}-1", f"{names[1]}-2"]
    return BotSpec(names[0], commands[0]), BotSpec(names[1], commands[1])


def _match_dir(out: Path, game: str, bots: tuple[BotSpec, BotSpec]) -> tuple[str, Path]:
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    base = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{game}-{bots[0].name}-vs-{bots[1].name}-{stamp}")
    (out / "matches").mkdir(parents=True, exist_ok=True)
    for suffix in [""] + [f"-{i}" for i in range(2, 1000)]:
        try:
            (out / "matches" / (base + suffix)).mkdir()
        except FileExistsError:
            continue
        return base + suffix, out / "matches" / (base + suffix)
    raise _BadInput(f"cannot make a new match directory under {out / 'matches'}")


def build_match(args: argparse.Namespace) -> tuple[MatchSpec, rules.Game]:
    """The MatchSpec for `arena match` arguments (without its directory); _BadInput/ValueError say why."""
    params = _parse_params(args.param)
    game = rules.load(args.game, **params)
    if args.games is None:
        args.games = 2 if args.sprt is None else SPRT_MAX_GAMES
    if args.games < 1:
        raise _BadInput(f"--games must be at least 1, got {args.games}")
    if args.sprt is not None:
        try:
            SprtConfig.parse(args.sprt)
        except ValueError as exc:
            raise _BadInput(f"--sprt: {exc}") from None
        if args.games % 2:
            raise _BadInput(f"--games must be even with --sprt (games come in pairs, seats swapped), "
                            f"got {args.games}")
    if args.margin < 0:
        raise _BadInput(f"--margin must not be negative, got {args.margin}")
    if not math.isfinite(args.margin):
        raise _BadInput(f"--margin must be a number of seconds, got {args.margin}")
    if args.time is None:
        clock = dataclasses.replace(TimeControl.for_game(args.game), margin=args.margin)
    else:
        clock = TimeControl.parse(args.time, margin=args.margin)
        if not all(math.isfinite(v) for v in (clock.per_move or 0, clock.base or 0, clock.increment)):
            raise _BadInput(f"bad time control {args.time!r}: the seconds must be finite")
    start_moves = read_moves_file(Path(args.from_file), game) if args.from_file else ()
    bots = _bot_specs(args.bot_a, args.bot_b)
    spec = MatchSpec(match_id="", game=args.game, bots=bots, time_control=clock,
                     game_numbers=tuple(range(args.games)), params=game.params, seed=args.seed,
                     start_moves=start_moves, limits=_limits(args))
    return spec, game


def _limits(args: argparse.Namespace) -> Limits:
    """The Limits of `arena match` options; _BadInput for a bad value."""
    table = {"pin_cpus": args.pin_cpus, "suspend": args.suspend, "memory_mb": args.memory,
             "cpu_s": args.cpu_seconds}
    try:
        return Limits.from_dict(table)
    except ValueError as exc:
        raise _BadInput(str(exc).replace("memory_mb", "--memory").replace("cpu_s", "--cpu-seconds")) from None


def _describe_clock(clock: TimeControl) -> str:
    if clock.per_move is not None:
        return f"{clock.per_move:g} s a move (+{clock.margin:g} s margin)"
    return f"{clock.base:g} s a game + {clock.increment:g} s a move (+{clock.margin:g} s margin)"


def cmd_match(args: argparse.Namespace) -> int:
    """`arena match`: play, print each result and the score, write the records."""
    try:
        spec, game = build_match(args)
        match_id, directory = _match_dir(Path(args.out), args.game, spec.bots)
    except (ValueError, OSError) as exc:  # _BadInput, LaunchError, rules' and TimeControl's errors
        print(f"arena match: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    spec = dataclasses.replace(spec, match_id=match_id)
    names = [b.name for b in spec.bots]
    points = dict.fromkeys(names, 0.0)
    total = len(spec.game_numbers)
    done: list[GameRecord] = []
    say = (lambda *a, **k: None) if args.quiet else print
    summary = {
        "match_id": match_id, "game": spec.game, "params": spec.params,
        "bots": [{"name": b.name, "command": list(b.command)} for b in spec.bots],
        "time_control": str(spec.time_control), "margin_s": spec.time_control.margin,
        "seed": spec.seed, "games": total, "start_moves": list(spec.start_moves),
    }
    say(f"{spec.game} {game.params}: {names[0]} vs {names[1]}, {total} game{'s' * (total > 1)}, "
        f"{_describe_clock(spec.time_control)}, seed {spec.seed}")
    say(f"records: {directory}")
    live = sys.stderr.isatty() and not args.quiet
    sprt = Sprt(SprtConfig.parse(args.sprt)) if args.sprt is not None else None
    pair_points = [0.0]

    def on_move(record: GameRecord, move, state) -> None:
        sys.stderr.write(f"\r  game {len(done) + 1}/{total}: ply {move.ply + 1} {move.move:<12}")
        sys.stderr.flush()

    def on_game(record: GameRecord) -> None:
        number = spec.game_numbers[len(done)]
        done.append(record)
        save_record(directory, number, record)
        try:
            write_move_file(directory / f"g{number}.txt", record)
        except Exception as exc:  # a rules bug must not lose the other records
            print(f"arena match: warning: no move file for game {number}: {exc}", file=sys.stderr)
        for seat, name in enumerate(record.players):
            points[name] += record.points(seat)
        if live:
            sys.stderr.write("\r\033[K")
        say(f"game {len(done)}/{total}: {record.players[0]} vs {record.players[1]}: {result_text(record)}, "
            f"{len(record.moves)} plies, {record.duration_s:.2f} s   "
            f"[{names[0]} {points[names[0]]:g} - {points[names[1]]:g} {names[1]}]")
        if sprt is not None:
            pair_points[0] += record.points(record.players.index(names[0]))
            if len(done) % 2 == 0:
                sprt.add_pair(pair_points[0])
                pair_points[0] = 0.0
                print(sprt.line(), flush=True)
                if sprt.verdict() is not Verdict.CONTINUE:
                    raise _SprtDone

    try:
        run_match(spec, on_game=on_game, on_move=on_move if live else None)
    except _SprtDone:
        pass
    except KeyboardInterrupt:
        print(f"\narena match: interrupted after {len(done)} of {total} games; records in {directory}",
              file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        summary["played"] = len(done)
        summary["score"] = points
        if sprt is not None:
            summary["sprt"] = {**dataclasses.asdict(sprt.config), "pentanomial": sprt.counts,
                               "llr": round(sprt.llr(), 4), "bounds": list(sprt.config.bounds()),
                               "verdict": str(sprt.verdict())}
        (directory / "match.json").write_text(json.dumps(summary, indent=1))
    print(f"score: {names[0]} {points[names[0]]:g} - {points[names[1]]:g} {names[1]}")
    if sprt is not None:
        print(_sprt_verdict(sprt, names))
    return EXIT_OK


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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="arena", description="Bots play board games under a referee.")
    parser.add_argument("--version", action="version", version=f"arena {__version__}")
    parser.add_argument("--verbose", "-v", action="count", default=0,
                        help="log the referee's decisions (-vv: every message on the wire)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    add_match_parser(subparsers)
    for module_name, function in EXTRA_COMMANDS:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue
        getattr(module, function)(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.verbose:
        logging.basicConfig(level=logging.INFO if args.verbose == 1 else logging.DEBUG,
                            format="%(name)s: %(message)s")
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
