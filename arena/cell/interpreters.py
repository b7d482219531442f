"""How an interpreter's command line names its files: which word is the script, which option takes
a class path, which takes a value that is no file at all.

`java -cp lib/a.jar:classes Bot` runs the class `Bot` (not a file) from a class path of two
entries; `python -m bots random` runs a module; `java -jar bot.jar` runs an archive. The launcher
uses `words()` to make each path absolute and to refuse a missing one, naming it.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path


class Word(StrEnum):
    """What one word of a command line is."""

    PROGRAM = "program"  # argv[0]
    OPTION = "option"  # an option of the interpreter, with no value or its value attached
    VALUE = "value"  # an option's value that names no file (`-X dev`, `--add-modules m`)
    PATH = "path"  # an option's value that is a file or directory (`-I lib`)
    CLASSPATH = "classpath"  # paths joined by os.pathsep (`-cp a.jar:classes`)
    SCRIPT = "script"  # the program as a file (`bot.py`, `-jar bot.jar`, `bot.exe`)
    NAME = "name"  # the program as a name (`-m bots`, java's main class, `-c CODE`)
    ARGUMENT = "argument"  # what the program gets


@dataclass(frozen=True)
class Syntax:
    """The options of one interpreter that take the next word (or `--opt=value`, `-Ivalue`)."""

    values: frozenset[str] = frozenset()
    paths: frozenset[str] = frozenset()
    classpaths: frozenset[str] = frozenset()
    names: frozenset[str] = frozenset()
    """Options whose value is the program itself, not a file (`-m`, `-c`, `-e`)."""
    scripts: frozenset[str] = frozenset()
    """Options whose value is the program as a file (`-jar`)."""
    program_is_file: bool = True
    """The first word that is not an option: a script file (False: a class name, java)."""


def _set(*words: str) -> frozenset[str]:
    return frozenset(words)


INTERPRETERS: dict[str, Syntax] = {
    "python": Syntax(values=_set("-W", "-X", "--check-hash-based-pycs"), names=_set("-m", "-c")),
    "java": Syntax(
        classpaths=_set("-cp", "-classpath", "--class-path", "-p", "--module-path", "--upgrade-module-path"),
        values=_set("--add-modules", "--add-opens", "--add-exports", "--add-reads", "--limit-modules",
                    "--enable-native-access"),
        names=_set("-m", "--module"), scripts=_set("-jar"), program_is_file=False),
    "node": Syntax(values=_set("-r", "--require", "--import", "--loader", "--title", "--input-type"),
                   names=_set("-e", "--eval", "-p", "--print")),
    "ruby": Syntax(paths=_set("-I", "-C"), values=_set("-r", "-E"), names=_set("-e")),
    "perl": Syntax(paths=_set("-I"), values=_set("-M", "-m"), names=_set("-e", "-E")),
    "mono": Syntax(),
}
"""The interpreters whose command lines are read word by word; any other program's arguments are
plain arguments."""

_NAME = re.compile(r"^(?:(python|pypy)[\d.]*|(java)|(node)(?:js)?|(ruby)[\d.]*|(perl)[\d.]*|(mono))$")


def interpreter(program: str) -> Syntax | None:
    """The syntax of `program` (a name or a path: `python3.11`, `/usr/bin/java`), None for others."""
    match = _NAME.match(Path(program).name)
    if not match:
        return None
    family = next(group for group in match.groups() if group)
    return INTERPRETERS["python" if family == "pypy" else family]


def _option(arg: str, syntax: Syntax) -> tuple[str, str | None] | None:
    """(option, attached value or None) when `arg` is an option that takes a value."""
    takes = syntax.values | syntax.paths | syntax.classpaths | syntax.names | syntax.scripts
    if arg in takes:
        return arg, None
    if arg.startswith("--") and "=" in arg and arg.split("=", 1)[0] in takes:
        name, value = arg.split("=", 1)
        return name + "=", value
    if not arg.startswith("--") and len(arg) > 2 and arg[:2] in takes:
        return arg[:2], arg[2:]  # -Ilib, -mbots, -cCODE
    return None


def _kind(option: str, syntax: Syntax) -> Word:
    option = option.rstrip("=")
    for kinds, word in ((syntax.classpaths, Word.CLASSPATH), (syntax.paths, Word.PATH),
                        (syntax.scripts, Word.SCRIPT), (syntax.names, Word.NAME)):
        if option in kinds:
            return word
    return Word.VALUE


class MissingValue(ValueError):
    """An option at the end of the command line, without the value it needs."""


def words(argv: list[str] | tuple[str, ...]) -> list[tuple[Word, str]]:
    """Each word of `argv` as (what it is, the prefix to keep before the part that is a path or a
    value: `-I` for `-Ilib`, `--class-path=` for `--class-path=a:b`, else "")."""
    syntax = interpreter(argv[0]) if argv else None
    result: list[tuple[Word, str]] = [(Word.PROGRAM, "")]
    if syntax is None:
        return result + [(Word.ARGUMENT, "")] * (len(argv) - 1)
    i = 1
    while i < len(argv):
        arg = argv[i]
        taken = _option(arg, syntax)
        if taken is not None:
            option, attached = taken
            kind = _kind(option, syntax)
            if attached is not None:
                result.append((kind, option))
            else:
                if i + 1 >= len(argv):
                    raise MissingValue(f"option {arg} needs a value")
                result += [(Word.OPTION, ""), (kind, "")]
                i += 1
            i += 1
            if kind in (Word.SCRIPT, Word.NAME):
                break
            continue
        if arg.startswith("-") and arg != "-":
            result.append((Word.OPTION, ""))
            i += 1
            continue
        result.append((Word.SCRIPT if syntax.program_is_file else Word.NAME, ""))
        i += 1
        break
    return result + [(Word.ARGUMENT, "")] * (len(argv) - i)


def classpath_entries(value: str) -> list[str]:
    """The entries of a class path (empty ones dropped)."""
    return [entry for entry in value.split(os.pathsep) if entry]


def entry_exists(path: Path) -> bool:
    """A class-path entry is there: a file or directory, or for `dir/*` the directory."""
    if path.name == "*":
        return path.parent.is_dir()
    return path.exists()
