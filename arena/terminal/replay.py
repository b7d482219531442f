"""`arena replay`: a recorded game stepped through, forwards and backwards, at the terminal."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import rules
from arena.match.records import GameRecord
from arena.terminal import screen

PROMPT = "Enter/n: next, p: previous, NUMBER: go to that ply, q: quit> "


def load_record(path: Path, number: int = 0) -> GameRecord:
    """The game record in `path` (a record JSON, a games.jsonl, or a directory holding them)."""
    if path.is_dir():
        for candidate in (path / f"g{number}.json", path / "games.jsonl"):
            if candidate.is_file():
                return load_record(candidate, number)
        raise ValueError(f"{str(path)!r} holds no g{number}.json or games.jsonl")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read record {str(path)!r}: {exc}") from None
    try:
        if path.suffix == ".jsonl":
            lines = [line for line in text.splitlines() if line.strip()]
            if not 0 <= number < len(lines):
                raise ValueError(f"{path} has {len(lines)} games; there is no game {number}")
            data = json.loads(lines[number])
        else:
            data = json.loads(text)
        if not isinstance(data, dict) or "moves" not in data or "game" not in data:
            raise ValueError("not a game record (no 'game' and 'moves')")
        return GameRecord.from_dict(data)
    except (ValueError, TypeError, KeyError) as exc:
        raise ValueError(f"{path}: not a game record: {exc}") from None


def replay_states(record: GameRecord) -> list[rules.State]:
    """Every position of the game, from the start (index = plies played); ValueError names a bad move."""
    game = rules.load(record.game, **record.params)
    try:
        return game.positions(record.move_list())
    except ValueError as exc:
        ply, move, reason = exc.ply, exc.move, exc.reason  # type: ignore[attr-defined]
        raise ValueError(f"the record's move {ply} {move!r} cannot be played: {reason}") from None


def position_screen(record: GameRecord, states: list[rules.State], index: int) -> str:
    """Position `index`: the move that led to it (with time and info), the board, the result at the end."""
    last = len(states) - 1
    moves = record.move_list()
    starts = len(record.start_moves)
    head = screen.escape_controls(f"ply {index}/{last}  {record.players[0]} (seat 0) vs {record.players[1]} "
                                  "(seat 1)")
    lines = [head]
    if index == 0:
        lines.append("the start position")
    elif index <= starts:
        lines.append(screen.escape_controls(f"ply {index}: start move {moves[index - 1]}"))
    else:
        move = record.moves[index - starts - 1]
        lines.append(screen.move_line(record, move))
        lines += ["    " + line for line in screen.info_lines(move.info)]
    lines += ["", states[index].render(highlight=moves[index - 1] if index else None)]
    if index == last:
        lines.append(screen.result_block(record, "end of the record: "))
    return "\n".join(lines) + "\n"


def step_through(record: GameRecord, states: list[rules.State], ask: Callable[[str], str | None]) -> None:
    """Show positions as `ask` commands (None: end of input, quit)."""
    index, last = 0, len(states) - 1
    print(position_screen(record, states, index), flush=True)
    while True:
        answer = ask(PROMPT)
        if answer is None or answer in ("q", "quit"):
            return
        if answer in ("", "n", "next"):
            target = index + 1
        elif answer in ("p", "prev", "previous"):
            target = index - 1
        elif answer.isdigit():
            target = int(answer)
        else:
            print(f"unknown command {answer!r}: Enter or n, p, a ply number 0-{last}, q")
            continue
        if not 0 <= target <= last:
            print(f"no ply {target}: the record has plies 0-{last}")
            continue
        index = target
        print(position_screen(record, states, index), flush=True)
