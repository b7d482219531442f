"""`python -m bots NAME [KEY=VALUE ...]`: run the shipped bot NAME against the referee that started it."""
from __future__ import annotations

import argparse
import sys

from bots import NAMES, load


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bots",
        description="Run a shipped bot. The arena referee starts it with ARENA_ENDPOINT and ARENA_TOKEN set.",
    )
    parser.add_argument("name", help=f"the bot to run: {', '.join(sorted(NAMES))}")
    parser.add_argument("options", nargs="*", metavar="KEY=VALUE", help="options passed to the bot class")
    args = parser.parse_args(argv)
    try:
        cls = load(args.name)
    except ValueError as exc:
        parser.exit(2, f"python -m bots: error: {exc}\n")
    options = {}
    for item in args.options:
        key, sep, value = item.partition("=")
        if not sep or not key:
            parser.exit(2, f"python -m bots: error: bad option {item!r}: use KEY=VALUE\n")
        options[key] = value
    try:
        bot = cls(**options)
    except (TypeError, ValueError) as exc:
        parser.exit(2, f"python -m bots: error: bad options for {args.name!r}: {exc}\n")
    return bot.run()


if __name__ == "__main__":
    sys.exit(main())
