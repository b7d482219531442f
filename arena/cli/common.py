"""What every `arena` command shares: exit codes, the input error, one error guard, and the parsing
of the options several commands have (game parameters, clocks, two bots, a new run directory)."""
from __future__ import annotations

import argparse
import dataclasses
import functools
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from arena.cell import sandbox
from arena.cell.launcher import STDIO_PREFIX, display_name, resolve_command
from arena.cell.notices import notices
from arena.match.clock import CLOCK_KINDS, DEFAULT_WALL_FACTOR, TimeControl
from arena.match.spec import BotSpec, params_text, safe_name
from arena.tournament.config import NAME_RE

__all__ = [
    "EXIT_BAD_INPUT", "EXIT_INCOMPLETE", "EXIT_INTERRUPTED", "EXIT_OK", "MAX_RUN_DIRS", "BadInput",
    "add_clock_kind", "add_names_option", "add_sandbox_option", "announce_isolation", "bot_specs", "error",
    "guard", "new_run_dir", "parse_clock", "parse_params", "safe_name", "with_clock_kind",
]

EXIT_OK = 0
EXIT_INCOMPLETE = 1
"""`tournament run`: games are left to play (run it again)."""
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130
MAX_RUN_DIRS = 1000
"""How many directories with the same name and second `new_run_dir` tries (suffixes -2, -3...)."""

Command = Callable[..., int]


class BadInput(ValueError):
    """A bad input or a refused request: printed as one line naming it, exit code 2."""


def error(prefix: str, exc: BaseException) -> int:
    """Print `exc` as one line after `prefix` ("arena match"), a line each where it lists several
    problems, and return the bad-input exit code."""
    for line in str(exc).splitlines() or [""]:
        print(f"{prefix}: error: {line}", file=sys.stderr)
    return EXIT_BAD_INPUT


def guard(prefix: str, errors: tuple[type[BaseException], ...]) -> Callable[[Command], Command]:
    """A command decorator: `errors` (bad input) become one line on stderr and exit code 2, an
    interrupt becomes "interrupted" and exit code 130, never a traceback."""

    def decorate(command: Command) -> Command:
        @functools.wraps(command)
        def guarded(*args: object) -> int:
            try:
                return command(*args)
            except BrokenPipeError:  # the reader left (`arena standings | head`): main() ends quietly
                raise
            except errors as exc:
                return error(prefix, exc)
            except KeyboardInterrupt:
                print(f"{prefix}: interrupted", file=sys.stderr)
                return EXIT_INTERRUPTED

        return guarded

    return decorate


def add_sandbox_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """`--sandbox auto|on|off` (docs/limits.md)."""
    parser.add_argument("--sandbox", choices=sandbox.MODES, default="auto",
                        help="isolate each bot (bubblewrap): auto = where this machine can (default), "
                             "on = refuse to start otherwise, off = trusted bots only")


def announce_isolation(mode: str, prefix: str, suspend: bool | None = None) -> None:
    """Before a run: a line on stderr for what will not be enforced (bots NOT isolated, limits
    without a cgroup, no freezing by default: arena.cell.notices); SandboxUnavailable (a
    ValueError: one line, with the fix) for `on` where bots cannot be isolated or have no cgroup."""
    for line in notices(mode, suspend):
        print(f"{prefix}: {line}", file=sys.stderr)


def parse_params(items: list[str]) -> dict[str, str]:
    """`--param KEY=VALUE` options as a dict; BadInput names a bad one."""
    params = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise BadInput(f"bad --param {item!r}: use KEY=VALUE, e.g. rows=6")
        params[key.strip()] = value.strip()
    return params


def add_clock_kind(parser: argparse.ArgumentParser) -> None:
    """`--clock wall|cpu` and `--wall-factor F`: what a bot's move is charged (TimeControl.kind)."""
    parser.add_argument("--clock", choices=CLOCK_KINDS, default="wall",
                        help="what a bot's move is charged: wall time from turn to move (default, the "
                             "assignments' rule) or cpu, the CPU time its processes used (a busy "
                             "machine costs it nothing), under a ceiling of --wall-factor times the "
                             "limit in wall time")
    parser.add_argument("--wall-factor", type=float, default=DEFAULT_WALL_FACTOR, metavar="F",
                        help=f"with --clock cpu, how many times its limit a move may take in wall time "
                             f"(default {DEFAULT_WALL_FACTOR:g})")


def with_clock_kind(clock: TimeControl, args: argparse.Namespace) -> TimeControl:
    """`clock` charged as `--clock` and `--wall-factor` say; ValueError names a bad factor."""
    if args.clock == "wall" and args.wall_factor == DEFAULT_WALL_FACTOR:
        return clock
    try:
        return dataclasses.replace(clock, kind=args.clock, wall_factor=args.wall_factor)
    except ValueError as exc:
        raise ValueError(f"--wall-factor: {exc}") from None


def parse_clock(text: str | None, default: TimeControl, margin_s: float | None = None) -> TimeControl:
    """The clock of a `--time` option (`default` without one), with `margin_s` when given;
    ValueError for a bad time control (`TimeControl.parse` refuses inf, nan, 0 and negatives)."""
    if text is None:
        return default
    return TimeControl.parse(text) if margin_s is None else TimeControl.parse(text, margin=margin_s)


def add_names_option(parser: argparse.ArgumentParser) -> None:
    """`--name NAME`, once or twice: the names of BOT_A and BOT_B."""
    parser.add_argument("--name", action="append", default=[], metavar="NAME", dest="names",
                        help="a bot's name in the output and the records: the first --name is BOT_A's, "
                             "a second BOT_B's (default: the shipped bot's name, or the program's, "
                             "script's or class's, e.g. two kits' `bot` become bot-1 and bot-2)")


def bot_specs(text_a: str, text_b: str, given: list[str] | tuple[str, ...] = ()) -> tuple[BotSpec, BotSpec]:
    """Two bots given on the command line (shipped names or command lines), named by `given` (the
    --name options, BOT_A's first) or by their commands; the same name twice becomes NAME-1 and
    NAME-2. BadInput for an empty command (a kit whose build failed) or a bad name, LaunchError names a
    command that cannot run."""
    for which, text in (("BOT_A", text_a), ("BOT_B", text_b)):
        rest = text.strip().removeprefix(STDIO_PREFIX)
        if not rest.strip():
            raise BadInput(f"{which} is an empty command {text!r}: a starter kit's \"$(build.sh | tail -1)\" "
                           "is empty when its build failed (run that build.sh to see its errors)")
    if len(given) > 2:
        raise BadInput(f"--name is given {len(given)} times; at most twice (BOT_A's, then BOT_B's)")
    commands = (resolve_command(text_a), resolve_command(text_b))
    names = [display_name(text_a), display_name(text_b)]
    for i, name in enumerate(given):
        if not NAME_RE.match(name):
            raise BadInput(f"--name {name!r} is not usable (letters, digits, . _ + -, at most 64)")
        names[i] = name
    if names[0] == names[1]:
        if len(given) == 2:
            raise BadInput(f"--name {names[0]!r} is given to both bots; name them apart")
        names = [f"{names[0]}-1", f"{names[1]}-2"]
    return BotSpec(names[0], commands[0]), BotSpec(names[1], commands[1])


def new_run_dir(parent: Path, game: str, names: list[str], what: str = "directory") -> Path:
    """A new directory under `parent` named after the game, the two players and the time of day
    (suffix -2, -3... when it exists); BadInput ("cannot make a new `what` under ...") if none can be
    made."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    base = safe_name(f"{game}-{names[0]}-vs-{names[1]}-{stamp}", max_chars=None)
    parent.mkdir(parents=True, exist_ok=True)
    for suffix in [""] + [f"-{i}" for i in range(2, MAX_RUN_DIRS)]:
        try:
            (parent / (base + suffix)).mkdir()
        except FileExistsError:
            continue
        return parent / (base + suffix)
    raise BadInput(f"cannot make a new {what} under {parent}")


def params_suffix(game: str, params: dict) -> str:
    """" (rows=6, cols=6)" in the game's own order, or "" without parameters: what follows the
    game's name in every command's header line."""
    text = params_text(game, params)
    return f" ({text})" if text else ""
