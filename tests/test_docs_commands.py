"""Every `arena ...` command line printed in README.md, docs/*.md and the kits' README: a concrete
line must parse with the real command line (no unknown command or option, every value of the
right kind), and every option of a synopsis (`arena match GAME BOT_A BOT_B [--games N] ...`) or an
inline mention must be one the real `arena COMMAND --help` lists. The lines are checked, not run:
most play whole tournaments; the commands' own tests run them."""
from __future__ import annotations

import re
import shlex
from functools import cache
from pathlib import Path

import pytest
from conftest import run_arena

from arena.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "examples" / "kits" / "README.md"]
COMMANDS = {"match", "play", "watch", "replay", "standings", "publish", "serve", "submit", "check-bot"}
"""`arena`'s commands; `tournament` and `course` take a second word."""
TWO_WORDS = ("tournament", "course")
THREE_WORDS = (("course", "staff"),)
"""Commands whose second word takes a third: `arena course staff add`."""
_INLINE = re.compile(r"`(arena [^`]*)`")
_OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z-]*)")


def _lines() -> list[tuple[str, str]]:
    """(where, command line) for every `arena ...` line of a code block and every inline `arena ...`
    span; the output a doc shows (`arena play: error: ...`) is no command line."""
    found = []
    for path in DOCS:
        block = False
        for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            where = f"{path.relative_to(ROOT)}:{number}"
            if raw.strip().startswith("```"):
                block = not block
                continue
            text = raw.strip().removeprefix("$ ")
            code = block or raw.startswith("    ")
            if code and "arena " in text and (text.startswith("arena ") or "&& arena " in text):
                found.append((where, text[text.index("arena "):]))
            elif not code:
                found += [(where, span) for span in _INLINE.findall(raw)]
    return [(w, line) for w, line in found if not re.match(r"arena [a-z]+:", line)]


LINES = _lines()


def _command(words: list[str]) -> list[str]:
    """The command words after `arena`: ["match"], ["tournament", "run"], ["course", "init"]."""
    if words[1] in TWO_WORDS and len(words) > 2 and not words[2].startswith(("-", ".")):
        if tuple(words[1:3]) in THREE_WORDS and len(words) > 3 and not words[3].startswith("-"):
            return words[1:4]
        return words[1:3]
    return words[1:2]


@cache
def _help(command: tuple[str, ...]) -> str:
    done = run_arena(*command, "--help", cwd=ROOT, timeout=60)
    assert done.returncode == 0, f"arena {' '.join(command)} --help: {done.stderr}"
    return done.stdout


def _synopsis(line: str) -> bool:
    """A synopsis or a mention, not a line to type: brackets, or a placeholder such as GAME."""
    return "[" in line or "..." in line or bool(re.search(r"(?<![\w$-])[A-Z][A-Z_]{2,}(?![\w])", line))


def test_the_docs_print_command_lines():
    assert len(LINES) > 40
    assert any("tournament run examples/demo.toml" in line for _, line in LINES)


@pytest.mark.parametrize(("where", "line"), LINES, ids=[w for w, _ in LINES])
def test_every_printed_command_line_is_one_arena_takes(where, line):
    words = shlex.split(line, comments=True)
    words = words[:words.index("|")] if "|" in words else words  # `arena standings T | head`
    command = _command(words)
    assert command[0] in COMMANDS | set(TWO_WORDS), f"{where}: unknown command in {line!r}"
    if command[0] == "tournament":
        assert len(command) == 2 and command[1] in ("run", "plan"), f"{where}: {line!r}"
    shown = _help(tuple(command))
    for option in _OPTION.findall(line.split("#")[0]):
        assert re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", shown), \
            f"{where}: {option} is not an option of arena {' '.join(command)}: {line!r}"
    if _synopsis(line) or all(w.startswith("--") for w in words[1 + len(command):]):
        return  # a synopsis, or a mention (`arena serve`, `arena watch --step`): options checked above
    try:
        build_parser().parse_args(words[1:])
    except SystemExit as exc:
        pytest.fail(f"{where}: arena refuses {line!r} (exit {exc.code})")
