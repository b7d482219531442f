"""`arena play`, `arena watch` and `arena replay`: a person at the board, a bot game move by move,
a recorded game stepped through. Play and watch record their game like `arena match` does, under
DIR/play/<id>/ or DIR/watch/<id>/: g0.json (the record), games.jsonl and g0.txt (the move file).

    arena play GAME [--bot NAME] [--seat 0|1] [--param k=v] [--time T] [--bot-time T] [--from FILE]
    arena watch GAME BOT_A BOT_B [--step] [--name A [--name B]] [--param k=v] [--time T] [--from FILE]
    arena replay RECORD [--game N]
"""
from __future__ import annotations

import argparse
import math
from pathlib import Path

import rules
from arena.cell.launcher import display_name, resolve_command
from arena.cell.limits import Limits
from arena.cli.common import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    add_clock_kind,
    add_names_option,
    add_sandbox_option,
    announce_isolation,
    bot_specs,
    error,
    new_run_dir,
    params_suffix,
    parse_clock,
    parse_params,
    with_clock_kind,
)
from arena.match.clock import TimeControl
from arena.match.movefile import read_move_file
from arena.match.records import GameRecord
from arena.match.spec import BotSpec, MatchSpec
from arena.terminal import screen

UNLIMITED = TimeControl(per_move=math.inf)
"""A person's clock unless --time sets one."""


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("game", metavar="GAME", help="the game: " + ", ".join(rules.names()))
    p.add_argument("--param", "-p", action="append", default=[], metavar="KEY=VALUE",
                   help="a game parameter, e.g. rows=6 (repeatable)")
    p.add_argument("--from", dest="from_file", metavar="FILE",
                   help="start after the moves in FILE: one move a line, // comments "
                        "(a Santorini game file works as it is)")
    p.add_argument("--seed", type=int, default=0, help="the seed sent to the bots (default 0)")
    p.add_argument("--out", default="results", metavar="DIR",
                   help="the game is recorded under DIR/play/ or DIR/watch/ (default results)")
    add_sandbox_option(p)


def add_play_parsers(subparsers: argparse._SubParsersAction) -> None:
    """Register `play`, `watch` and `replay` on `arena`'s subparsers."""
    p = subparsers.add_parser("play", help="play a game at the terminal, against a bot or a person",
                              description="Play GAME at the terminal against BOT (or, without --bot, "
                                          "two people at one terminal). Type moves in the game's "
                                          "notation; ? lists the legal moves; quit resigns.")
    _common(p)
    p.add_argument("--bot", "-b", metavar="NAME", help="the opponent: a shipped bot or a command line "
                   "(default: none, two people take turns)")
    p.add_argument("--seat", type=int, choices=(0, 1), default=0,
                   help="your seat against a bot: 0 moves first (default), 1 second")
    p.add_argument("--time", "-t", metavar="SECONDS|BASE+INC",
                   help="your clock (default: unlimited)")
    p.add_argument("--bot-time", metavar="SECONDS|BASE+INC",
                   help="the bot's clock (default: the game's per-move limit)")
    add_clock_kind(p)
    p.add_argument("--name", default="", help="your name in the record (default: human)")
    p.set_defaults(func=cmd_play)

    w = subparsers.add_parser("watch", help="watch two bots play, move by move with their search info",
                              description="Show a game between BOT_A (seat 0) and BOT_B move by move: "
                                          "the board, the time used and each bot's info.")
    _common(w)
    w.add_argument("bot_a", metavar="BOT_A", help="seat 0: a shipped bot or a command line")
    w.add_argument("bot_b", metavar="BOT_B", help="seat 1")
    w.add_argument("--step", "-s", action="store_true", help="wait for Enter after every move")
    add_names_option(w)
    w.add_argument("--time", "-t", metavar="SECONDS|BASE+INC",
                   help="the bots' clock (default: the game's per-move limit)")
    add_clock_kind(w)
    w.set_defaults(func=cmd_watch)

    r = subparsers.add_parser("replay", help="step through a recorded game, forwards and backwards",
                              description="Step through a game record: Enter or n next, p previous, "
                                          "a number jumps to that ply, q quits.")
    r.add_argument("record", metavar="RECORD", help="a record: g<N>.json, records/<id>.json, a "
                   "games.jsonl, or a match directory")
    r.add_argument("--game", "-g", type=int, default=0, metavar="N",
                   help="which game of a games.jsonl or match directory (default 0)")
    r.set_defaults(func=cmd_replay)


def _setup(args: argparse.Namespace) -> tuple[rules.Game, tuple[str, ...]]:
    game = rules.load(args.game, **parse_params(args.param))
    start = read_move_file(args.from_file, game) if args.from_file else ()
    return game, start


def _error(command: str, exc: BaseException) -> int:
    return error(f"arena {command}", exc)


def cmd_play(args: argparse.Namespace) -> int:
    """`arena play`: one game with a person (or two) at this terminal."""
    from arena.terminal.play import TerminalPlay
    from arena.terminal.watch import save_game

    try:
        game, start = _setup(args)
        mine = parse_clock(args.time, UNLIMITED)
        name = args.name.strip() or "human"
        if args.bot is None:
            people = [BotSpec(f"{name}-1", (), external=True, time_control=mine),
                      BotSpec(f"{name}-2", (), external=True, time_control=mine)]
            bots = people
        else:
            bot_name = display_name(args.bot)
            bot = BotSpec(bot_name if bot_name != name else f"{bot_name}-bot", resolve_command(args.bot))
            person = BotSpec(name, (), external=True, time_control=mine)
            bots = [person, bot] if args.seat == 0 else [bot, person]
        bot_clock = with_clock_kind(parse_clock(args.bot_time, TimeControl.for_game(args.game)), args)
        if args.bot is not None:
            announce_isolation(args.sandbox, "arena play")
        directory = new_run_dir(Path(args.out) / "play", args.game, [b.name for b in bots])
    except (ValueError, OSError) as exc:
        return _error("play", exc)
    spec = MatchSpec(match_id=directory.name, game=args.game, bots=(bots[0], bots[1]), time_control=bot_clock,
                     game_numbers=(0,), params=game.params, seed=args.seed, start_moves=start,
                     limits=Limits(sandbox=args.sandbox))
    clocks = ", ".join(f"{b.name} {screen.describe_clock(b.time_control or bot_clock)}" for b in bots)
    print(screen.escape_controls(f"{args.game}{params_suffix(args.game, game.params)}: {bots[0].name} "
                                 f"(seat 0) vs {bots[1].name} (seat 1); clocks: {clocks}"))
    session = TerminalPlay(spec, on_game=lambda record: save_game(directory, record))
    try:
        records = session.run()
    except KeyboardInterrupt:
        _report(directory, session.records)
        return EXIT_INTERRUPTED
    except ValueError as exc:  # run_match refused the match before it started
        return _error("play", exc)
    _report(directory, records)
    return EXIT_OK


def _report(directory: Path, records: list[GameRecord]) -> None:
    if records:
        print(f"record: {directory / 'g0.json'}\nmove file: {directory / 'g0.txt'}")
    else:
        print(f"no game finished; nothing recorded in {directory}")


def cmd_watch(args: argparse.Namespace) -> int:
    """`arena watch`: a bot game shown move by move, optionally one Enter at a time."""
    from arena.terminal.watch import Watch

    try:
        game, start = _setup(args)
        clock = with_clock_kind(parse_clock(args.time, TimeControl.for_game(args.game)), args)
        bots = bot_specs(args.bot_a, args.bot_b, args.names)
        announce_isolation(args.sandbox, "arena watch")
        directory = new_run_dir(Path(args.out) / "watch", args.game, [b.name for b in bots])
    except (ValueError, OSError) as exc:
        return _error("watch", exc)
    spec = MatchSpec(match_id=directory.name, game=args.game, bots=bots, time_control=clock,
                     game_numbers=(0,), params=game.params, seed=args.seed, start_moves=start,
                     limits=Limits(sandbox=args.sandbox))
    print(screen.escape_controls(f"{args.game}{params_suffix(args.game, game.params)}: {bots[0].name} "
                                 f"(seat 0) vs {bots[1].name} (seat 1), {screen.describe_clock(clock)}"))
    try:
        record = Watch(spec, game, directory, args.step, _ask).run()
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except ValueError as exc:
        return _error("watch", exc)
    if record is not None:
        _report(directory, [record])
    return EXIT_OK


def _ask(prompt: str) -> str | None:
    """A stripped, lower-case answer from the terminal; None at the end of input."""
    try:
        return input(prompt).strip().lower()
    except EOFError:
        print()
        return None


def cmd_replay(args: argparse.Namespace) -> int:
    """`arena replay`: step through a recorded game."""
    from arena.terminal.replay import load_record, replay_states, step_through

    try:
        record = load_record(Path(args.record), args.game)
        states = replay_states(record)
    except (ValueError, OSError) as exc:
        return _error("replay", exc)
    step_through(record, states, _ask)
    return EXIT_OK

