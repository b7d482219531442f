"""What the terminal modes print: a move with its time and the bot's info, the board, the result."""
from __future__ import annotations

import math
import re
from typing import Any

import rules
from arena.match.clock import TimeControl
from arena.match.records import Forfeit, GameRecord, MoveRecord

MAX_CANDIDATES = 8
"""How many of a bot's candidate moves are shown (best first)."""
MAX_PV = 12
"""How many moves of a principal variation are shown."""
LAST_OUTPUT_LINES = 12
"""How many of a crashed bot's last lines of output (its stack trace) are shown under the result."""

_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""Characters that steer a terminal rather than print: C0 and C1 controls (ESC starts every ANSI
sequence), DEL, and the bidirectional marks and overrides that reorder what follows."""


def escape_controls(text: Any, keep_newlines: bool = False) -> str:
    """`text` with every control character written as an escape (ESC as `\\x1b`), so that what a bot
    sends (its info, name, log, forfeit detail) cannot clear the screen, move the cursor or fake a
    line; `keep_newlines` keeps line breaks (a log or a traceback shown as lines)."""
    text = str(text)

    def escape(match: re.Match[str]) -> str:
        char = match[0]
        if keep_newlines and char == "\n":
            return char
        code = ord(char)
        return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"

    return _CONTROLS.sub(escape, text)


def describe_clock(clock: TimeControl, margin: bool = False) -> str:
    """A clock in words: "unlimited", "3 s a move" or "60 s a game + 1 s a move"; with `margin`,
    followed by " (+0.05 s margin)"."""
    if clock.per_move is not None:
        text = "unlimited" if math.isinf(clock.per_move) else f"{clock.per_move:g} s a move"
    else:
        text = f"{clock.base:g} s a game + {clock.increment:g} s a move"
    if clock.kind == "cpu":
        text += f" of CPU time (at most {clock.wall_factor:g}x in wall time)"
    return f"{text} (+{clock.margin:g} s margin)" if margin else text


def _number(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def info_lines(info: dict[str, Any]) -> list[str]:
    """The bot's `info` as lines: depth, score, nodes, pv, candidates (best first), comment, the rest.

    `candidates` may be a list of {"move", "score"} maps (docs/PROTOCOL.md) or a {move: score} map.
    """
    if not info:
        return []
    info = dict(info)
    lines = []
    mate = info.pop("mate", None)
    if isinstance(mate, int) and not isinstance(mate, bool) and mate != 0:  # a proven end: not the raw score
        info.pop("score", None)
        info["score"] = _mate_text(mate)
    head = [f"{key} {_number(info.pop(key))}" for key in ("depth", "score", "nodes") if key in info]
    if head:
        lines.append(", ".join(head))
    pv = info.pop("pv", None)
    if isinstance(pv, list) and pv:
        more = " ..." if len(pv) > MAX_PV else ""
        lines.append("pv " + " ".join(str(m) for m in pv[:MAX_PV]) + more)
    candidates = info.pop("candidates", None)
    if isinstance(candidates, dict):  # the shipped bots send {move: score}
        candidates = [{"move": move, "score": score} for move, score in candidates.items()]
    if isinstance(candidates, list) and candidates:
        good = [c for c in candidates if isinstance(c, dict) and "move" in c]
        good.sort(key=lambda c: -c["score"] if isinstance(c.get("score"), (int, float)) else math.inf)
        shown = ", ".join(f"{c['move']} {_candidate_score(c)}" for c in good[:MAX_CANDIDATES])
        more = f" (+{len(good) - MAX_CANDIDATES} more)" if len(good) > MAX_CANDIDATES else ""
        lines.append(f"candidates: {shown}{more}")
    comment = info.pop("comment", None)
    if comment:
        lines.append(f"comment: {comment}")
    lines += [f"{key}: {str(value)[:200]}" for key, value in info.items()]
    return [escape_controls(line) for line in lines]


def _mate_text(mate: int) -> str:
    """A proven end as words: "win in 3 plies", "loss in 1 ply"."""
    plies = abs(mate)
    return f"{'win' if mate > 0 else 'loss'} in {plies} pl{'y' if plies == 1 else 'ies'}"


def _candidate_score(candidate: dict[str, Any]) -> str:
    mate = candidate.get("mate")
    if isinstance(mate, int) and not isinstance(mate, bool) and mate != 0:
        return f"({_mate_text(mate)})"
    return str(_number(candidate.get("score", "?")))


def move_line(record: GameRecord, move: MoveRecord) -> str:
    """One line for a played move: ply, who played it, the move, the referee's measured time."""
    return escape_controls(f"ply {move.ply + 1}: {record.players[move.seat]} (seat {move.seat}) played "
                           f"{move.move} in {move.time_s:.3f} s")


def move_screen(record: GameRecord, move: MoveRecord, state: rules.State, info: bool = True) -> str:
    """A played move, the bot's info (indented) and the board after it with the move marked."""
    lines = [move_line(record, move)]
    if info:
        lines += ["    " + line for line in info_lines(move.info)]
    return "\n".join(lines) + "\n\n" + state.render(highlight=move.move) + "\n"


def result_text(record: GameRecord) -> str:
    """The result in words, on one line: who won, the score, and how it ended (a forfeit names its
    detail, a double forfeit both bots'); control characters from the bots are escaped."""
    return escape_controls(_result_words(record))


def result_block(record: GameRecord, head: str = "", tail: str = "") -> str:
    """`head`, the result and `tail` on one line, then the last lines a crashed bot printed (its
    stack trace), from the record's logs."""
    return "\n".join([head + result_text(record) + tail, *last_output_lines(record)])


def last_output_lines(record: GameRecord, count: int = LAST_OUTPUT_LINES) -> list[str]:
    """When a bot forfeited by crashing, the last `count` lines it printed (stdout and stderr, as the
    record keeps them: a C++ exception, a Java or Python stack trace) under a heading, indented;
    else nothing. Control characters from the bot are escaped."""
    forfeit = record.forfeiture
    if forfeit is None or forfeit.reason != Forfeit.CRASHED or forfeit.seat is None:
        return []
    seat = forfeit.seat
    lines = [line for line in str(record.logs.get(str(seat), "")).splitlines() if line.strip()]
    if not lines:
        return []
    more = f" (the last {count} of {len(lines)})" if len(lines) > count else ""
    head = f"  {record.players[seat]}'s last output{more}:"
    return [escape_controls(head)] + ["  | " + escape_controls(line) for line in lines[-count:]]


def _result_words(record: GameRecord) -> str:
    forfeit = record.forfeiture
    if record.is_double_forfeit() or forfeit is not None and forfeit.seat is None:
        reason, detail = (forfeit.reason, forfeit.detail) if forfeit else (Forfeit.DOUBLE_FORFEIT, "")
        return f"no winner, both bots forfeit ({reason}: {detail})"
    if forfeit is not None and forfeit.seat is not None:
        loser = record.players[forfeit.seat]
        if forfeit.reason == Forfeit.RESIGNED:
            text = f"{loser} resigned"
        else:
            text = f"{loser} forfeits ({forfeit.reason}: {forfeit.detail})"
        winner = record.winner_seat()
        return text if winner is None else f"{record.players[winner]} wins, {text}"
    scores = f" {record.scores[0]}-{record.scores[1]}" if record.scores else ""
    winner = record.winner_seat()
    if winner is None:
        return f"draw{scores} ({record.reason})"
    return f"{record.players[winner]} wins{scores} ({record.reason})"


def legal_list(moves: list[str], width: int = 78) -> str:
    """The legal moves, wrapped to `width` columns."""
    separator = ", " if any(" " in m for m in moves) else "  "  # Santorini's moves hold spaces
    lines = [f"{len(moves)} legal move{'s' * (len(moves) != 1)}:"]
    for i, move in enumerate(moves):
        item = move + (separator.rstrip() if i < len(moves) - 1 else "")
        if len(lines[-1]) + 1 + len(item) > width and lines[-1].strip():
            lines.append("   ")
        lines[-1] += (" " if lines[-1].endswith(":") or separator == ", " else "  ") + item
    return "\n".join(line.replace(":  ", ": ", 1) for line in lines)
