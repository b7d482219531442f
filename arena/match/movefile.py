"""Move files: a game as one move per line, `//` (or `#`) comments; Santorini's is the assignment's.

`read_move_file` gives the moves to start a match from (checked by playing them, each turned into
the canonical legal form); `write_move_file` writes a finished game's moves. For Santorini the
written file is `rules.santorini.write_game_file`'s, which `read_game_file` reads back.

A written file starts with comment lines naming the game and its parameters, then the players and
the result:

    // game: domineering (rows=5, cols=5, first=vertical)
    // random (seat 0) vs greedy (seat 1): greedy wins (no legal move)

`read_move_file` refuses a file whose `game:` line names another game or other parameters than the
match's (and files written before that line, whose first line was `// domineering rows=5 cols=5
first=vertical`, alike); a file without either line is read as it is.
"""
from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import rules
from arena.match.records import GameRecord
from arena.match.spec import params_text


class MoveFileError(ValueError):
    """A move file that cannot be read or played; the message names the file and line."""


GAME_LINE = re.compile(r"^\s*//\s*game:\s*(?P<game>\S+)\s*(?:\((?P<params>[^()]*)\))?\s*$")
"""A move file's `// game: NAME (k=v, k=v)` line."""
_OLD_GAME_LINE = re.compile(r"^\s*//\s*(?P<game>[a-z]+)(?P<params>(?:\s+[a-z_]+=\S+)*)\s*$")
"""The first line of the move files written before the `game:` line: `// NAME k=v k=v`."""


def game_line(game: str, params: dict) -> str:
    """The `game: NAME (k=v, ...)` header line's text (without `// `), parameters in the game's order."""
    shown = params_text(game, params)
    return f"game: {game}" + (f" ({shown})" if shown else "")


def header_game(text: str) -> tuple[str, dict[str, str]] | None:
    """The game and parameters a move file's header names (the `game:` line, or the first line of
    an older file), or None when it names none."""
    lines = text.splitlines()
    for line in lines:
        found = GAME_LINE.match(line)
        if found:
            pairs = [p.strip() for p in (found["params"] or "").split(",") if p.strip()]
            return found["game"], dict(p.partition("=")[::2] for p in pairs)
    old = _OLD_GAME_LINE.match(lines[0]) if lines else None
    if old and old["game"] in rules.names():
        return old["game"], dict(p.partition("=")[::2] for p in old["params"].split())
    return None


def check_header(text: str, game: rules.Game, source: str) -> None:
    """MoveFileError if the file's header names another game, or other parameters, than `game`."""
    named = header_game(text)
    if named is None:
        return
    name, given = named
    try:
        theirs = rules.load(name, **given)
    except (ValueError, TypeError):
        theirs = None
    if theirs is not None and theirs.name == game.name and theirs.params == game.params:
        return
    wanted = f"{name} ({', '.join(f'{k}={v}' for k, v in given.items())})" if given else name
    ours = game_line(game.name, game.params).removeprefix("game: ")
    fix = ""
    if theirs is not None and theirs.name == game.name:
        fix = "; add " + " ".join(f"--param {k}={v}" for k, v in given.items()
                                  if theirs.params.get(k) != game.params.get(k))
    raise MoveFileError(f"{source} is a game of {wanted}, not of {ours}{fix}")


def resolve_move(state: rules.State, text: str) -> str:
    """The legal move (canonical, one of `state.legal_moves()`) that `text` means in `state`.

    Accepts the game's human forms (`game.parse_move`), any spelling the rules play, and Santorini
    placements in either order. InvalidMoveError/IllegalMoveError say why not.
    """
    text = text.strip()
    legal = state.legal_moves()
    if text in legal:
        return text
    canonical = state.game.parse_move(text)
    if state.game.name == "santorini" and state.ply < 2:  # as read_game_file: placements in any order
        canonical = " ".join(sorted(canonical.split()))
    if canonical in legal:
        return canonical
    after = state.play(canonical)  # raises IllegalMoveError with the rules' reason
    for move in legal:
        if state.play(move) == after:
            return move
    raise rules.IllegalMoveError(f"{text!r} is not a legal move here")


def parse_moves(text: str, game: rules.Game, source: str = "move file") -> tuple[str, ...]:
    """The moves of a move file's text, in canonical form; MoveFileError names the bad line."""
    state = game.start()
    moves = []
    for number, line in enumerate(text.splitlines(), 1):
        move = without_comment(line)
        if not move:
            continue
        if state.outcome is not None:
            raise MoveFileError(f"{source}, line {number}: {move!r}: the game is already over "
                                f"({state.outcome.reason})")
        try:
            move = resolve_move(state, move)
        except ValueError as exc:
            raise MoveFileError(f"{source}, line {number}: {move!r}: {exc}") from None
        state = state.play(move)
        moves.append(move)
    return tuple(moves)


def read_move_file(path: str | Path, game: rules.Game) -> tuple[str, ...]:
    """The moves of the file at `path`, for starting a game; MoveFileError if it cannot start one."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise MoveFileError(f"cannot read --from file {str(path)!r}: {exc}") from None
    check_header(text, game, str(path))
    moves = parse_moves(text, game, str(path))
    state = game.replay(moves)
    if state.outcome is not None:
        raise MoveFileError(f"{path}: the game is already over after these moves ({state.outcome.reason})")
    return moves


def format_moves(game: str, moves: list[str], header: str = "") -> str:
    """A move file for `moves` from the start: Santorini's game file, else one move a line."""
    comments = "".join(f"// {line}\n" for line in header.splitlines())
    if game == "santorini":  # the assignment's game file: it takes `//` comments too
        return comments + importlib.import_module("rules.santorini").write_game_file(moves)
    return comments + "".join(move + "\n" for move in moves)


def record_header(record: GameRecord) -> str:
    """Comment lines naming a record's game and parameters (the `game:` line), players and result."""
    if record.is_double_forfeit():
        result = "no winner, both bots forfeit"
    else:
        result = "draw" if record.winner is None else f"{record.players[record.winner]} wins"
    return (f"{game_line(record.game, record.params)}\n{record.players[0]} (seat 0) vs {record.players[1]} "
            f"(seat 1): {result} ({record.reason})")


def write_move_file(path: str | Path, record: GameRecord) -> Path:
    """Write `record`'s moves (start moves included) as a move file at `path`."""
    path = Path(path)
    path.write_text(format_moves(record.game, record.move_list(), record_header(record)), encoding="utf-8")
    return path


def save_record(directory: Path, number: int, record: GameRecord) -> None:
    """Write a finished game's record under `directory`: a line of games.jsonl and g<number>.json
    (its move file, g<number>.txt, is `write_move_file`'s)."""
    with open(directory / "games.jsonl", "a", encoding="utf-8") as f:
        f.write(record.to_json() + "\n")
    (directory / f"g{number}.json").write_text(json.dumps(record.to_dict(), indent=1, sort_keys=True))


def without_comment(line: str) -> str:
    """A line of a move file (or an openings file) without its `//` or `#` comment, stripped."""
    return line.split("//", 1)[0].split("#", 1)[0].strip()
