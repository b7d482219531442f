"""`arena`: the command line, argument parsing only; each command hands over to its room
(`arena.match`, `arena.tournament`, `arena.site`, `arena.terminal`, `arena.course`). Nothing imports
this package.

Each command's module (`match`, `tournament`, `play`) registers it with an `add_..._parser(s)
(subparsers)` function and sets `func` (parsed arguments -> exit code); `common` holds what they
share. Exit codes (`common.EXIT_*`): 0 done, 1 games left to play (tournament run), 2 bad input (one
line naming it, never a traceback), 130 interrupted.
"""
from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys

from arena import __version__

COMMANDS = {
    "arena.cli.match": ("add_match_parser", ("match",)),
    "arena.cli.tournament": ("add_tournament_parsers",
                             ("tournament", "standings", "publish", "serve", "submit")),
    "arena.cli.play": ("add_play_parsers", ("play", "watch", "replay")),
    "arena.cli.course": ("add_course_parsers", ("course",)),
    "arena.cli.check": ("add_check_parser", ("check-bot",)),
}
"""The commands' modules: module -> (function registering its commands on the subparsers, the
commands it registers); a module that is absent (a partial install) is skipped."""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; given the `command` about to run (`match`, `course`...), only the
    module that registers it is imported: each costs 0.1-0.2 s of imports at every start."""
    parser = argparse.ArgumentParser(prog="arena", description="Bots play board games under a referee.")
    parser.add_argument("--version", action="version", version=f"arena {__version__}")
    parser.add_argument("--verbose", "-v", action="count", default=0,
                        help="log the referee's decisions (-vv: every message on the wire)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    known = any(command in names for _, names in COMMANDS.values())
    for module_name, (function, names) in COMMANDS.items():
        if known and command not in names:
            continue
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue
        getattr(module, function)(subparsers)
    return parser


def _command(argv: list[str]) -> str | None:
    """The command word of `argv` (the first that is not an option), None if there is none."""
    return next((word for word in argv if not word.startswith("-")), None)


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    parser = build_parser(_command(words))
    args = parser.parse_args(words)
    if args.verbose:
        logging.basicConfig(level=logging.INFO if args.verbose == 1 else logging.DEBUG,
                            format="%(name)s: %(message)s")
    umask = os.umask(0o077)  # results, records, logs and tournament files: the staff's user's only
    try:
        return args.func(args)
    except BrokenPipeError:  # the reader of the output left (`arena standings | head`): stop quietly
        _drop_output()
        return 0
    finally:  # called in-process (tests, scripts): what the caller creates afterwards is as before
        os.umask(umask)


def _drop_output() -> None:
    """Send what is still buffered for stdout (and later output) to /dev/null, so that Python's
    own flush at exit does not fail on the closed pipe again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no real stdout (called in-process): nothing to keep quiet
        pass


if __name__ == "__main__":
    sys.exit(main())
