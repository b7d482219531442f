"""`arena check-bot GAME COMMAND`: a bot's self-check before any tournament (arena.match.selfcheck),
printed as what is fine and what a student should fix; exit 0 when nothing needs fixing, 1 otherwise.

    arena check-bot GAME COMMAND [--param k=v] [--time SECONDS] [--games N] [--positions N] [--sandbox ...]
"""
from __future__ import annotations

import argparse
import sys

import rules
from arena.cell.limits import Limits
from arena.cli.common import (
    EXIT_OK,
    BadInput,
    add_sandbox_option,
    announce_isolation,
    error,
    parse_clock,
    parse_params,
)
from arena.match.clock import TimeControl

PREFIX = "arena check-bot"
EXIT_FIX = 1
"""Something needs fixing."""
MARKS = {"ok": "ok  ", "note": "note", "fix": "FIX "}


def add_check_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register `arena check-bot`."""
    p = subparsers.add_parser(
        "check-bot", help="check a bot against the rules before a tournament: what to fix",
        description="Play a few games of GAME against random from random openings, time the bot's first "
                    "move, and check its move generator through the `legal` request if it answers it; "
                    "print what is fine and what to fix (exit 1 when something needs fixing).")
    p.add_argument("game", metavar="GAME", help="the game: " + ", ".join(rules.names()))
    p.add_argument("command", metavar="COMMAND", help="the bot: a shipped bot or a command line in quotes, "
                   "e.g. \"python3 mybot.py\" or \"stdio+position:./bot\"")
    p.add_argument("--param", "-p", action="append", default=[], metavar="KEY=VALUE",
                   help="a game parameter, e.g. rows=6 (repeatable)")
    p.add_argument("--time", "-t", metavar="SECONDS|BASE+INC",
                   help="the clock (default: the game's per-move limit)")
    p.add_argument("--games", "-n", type=int, default=4, metavar="N", help="games against random (default 4)")
    p.add_argument("--positions", type=int, default=30, metavar="N",
                   help="positions for the `legal` request (default 30)")
    add_sandbox_option(p)
    p.set_defaults(func=cmd_check)


def cmd_check(args: argparse.Namespace) -> int:
    from arena.match import selfcheck

    try:
        if args.games < 1 or args.positions < 1:
            raise BadInput(f"--games and --positions must be at least 1, got {args.games}, {args.positions}")
        params = parse_params(args.param)
        rules.load(args.game, **params)  # a bad game or parameter: one line, before anything starts
        clock = parse_clock(args.time, TimeControl.for_game(args.game))
        limits = Limits.from_dict({"sandbox": args.sandbox})
        announce_isolation(args.sandbox, PREFIX)
        findings = selfcheck.check(args.game, args.command, params, games=args.games, time_control=clock,
                                   limits=limits, positions=args.positions)
    except (ValueError, OSError) as exc:
        return error(PREFIX, exc)
    for finding in findings:
        print(f"{MARKS[finding.level]} {finding.text}")
        if finding.output:
            print("  its last output:\n" + "\n".join(f"    {line}" for line in finding.output.splitlines()))
    fixes = sum(1 for f in findings if f.level == "fix")
    print(f"{fixes} thing{'s' * (fixes != 1)} to fix" if fixes else "nothing to fix", file=sys.stderr)
    return EXIT_FIX if fixes else EXIT_OK
