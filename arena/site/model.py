"""What the pages show, as plain data: the tournament, standings, crosstable, bots and games.

Everything a template needs is computed here from the stored game records, so the templates only
lay it out. Fields that other versions of the record add (`errors`, `isolation`, a double
forfeit's `both`) are read defensively: missing means not shown, or "unknown".
"""
from __future__ import annotations

import dataclasses
import fcntl
import json
import math
import os
import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import rules
from arena.match.clock import TimeControl
from arena.match.movefile import format_moves, record_header
from arena.match.records import Forfeiture, GameRecord
from arena.tournament.runner import LOCK_NAME, PLAYING_DIR
from arena.tournament.store import StoredGame

MAX_INFO_ITEMS = 8
"""Candidates shown per move (best first), like the terminal replay."""
MAX_PV_MOVES = 12
MAX_TEXT_CHARS = 300
"""Longest one-line string of a bot's info kept on a game page."""
MAX_TRACE_CHARS = 8000
"""Longest traceback kept on a game page (an info's `error`, shown once however many moves raised
it; a bot's log of the game): its last characters, where the exception is."""
MAX_LINES_CHARS = 2000
"""Longest info string of several lines kept on a game page, newlines kept (one per move: a
chatty bot must not make the page huge)."""
PRINTED = "; it printed:\n"
"""What the referee puts between a forfeit's reason and the last lines the bot printed."""
TRACEBACK_START = "Traceback (most recent call last):"
LOG_TAIL_LINES = 20
"""Lines of a bot's log shown per game on its page."""
DOUBLE_FORFEIT = "double_forfeit"

ELO_NOTE = ("Elo: a rating fitted to all games at once (maximum likelihood, draws as half points, "
            "centred on 1500); 200 points more means about a 76% expected score. ± is the 95% interval.")
SB_NOTE = ("SB (Sonneborn-Berger): the sum over opponents of the points scored against each opponent "
           "times that opponent's total points; it breaks ties in points.")


def safe_name(name: str) -> str:
    """A file name for a bot or game id (they are already restricted; this is a second fence)."""
    return "".join(c if c.isalnum() or c in "-_.+" else "_" for c in name) or "_"


# --- one game's result, read defensively ---

def winner_seat(record: GameRecord) -> int | None:
    """The winning seat, None for a draw or a double forfeit."""
    method = getattr(record, "winner_seat", None)
    if callable(method):
        return method()
    if record.winner in (0, 1):
        return record.winner
    forfeit = _forfeiture(record)
    if forfeit is not None and forfeit.seat is not None and not is_double_forfeit(record):
        return 1 - forfeit.seat
    return None


def _forfeiture(record: GameRecord) -> Forfeiture | None:
    """The record's forfeit as a typed value (a record of any age: its `forfeit` JSON form)."""
    forfeit = getattr(record, "forfeit", None)
    return Forfeiture.from_dict(forfeit) if isinstance(forfeit, dict) and forfeit else None


def is_double_forfeit(record: GameRecord) -> bool:
    forfeit = _forfeiture(record)
    return record.reason == DOUBLE_FORFEIT or forfeit is not None and (
        forfeit.reason == DOUBLE_FORFEIT or forfeit.seat is None)


def result(record: GameRecord) -> str:
    """"1-0", "0-1", "1/2-1/2", or "0-0" for a double forfeit (issue 13's GameRecord.result)."""
    method = getattr(record, "result", None)
    if callable(method):
        return method()
    if is_double_forfeit(record):
        return "0-0"
    w = winner_seat(record)
    return "1/2-1/2" if w is None else ("1-0" if w == 0 else "0-1")


def points(record: GameRecord, seat: int) -> float:
    """`seat`'s points in this game: GameRecord.points, the one place that says it (a double
    forfeit and an aborted game score 0 for both)."""
    return record.points(seat)


def errors(record: GameRecord) -> list[int]:
    """Moves per seat on which the bot's own code failed (issue 13); [0, 0] when not recorded."""
    value = getattr(record, "errors", None)
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, int) for v in value):
        return value
    return [0, 0]


def isolation(record: GameRecord) -> str:
    """"sandbox", "none: <why>", or "" when the record does not say (issue 12)."""
    value = getattr(record, "isolation", "")
    return value if isinstance(value, str) else ""


def moves_text(text: str) -> str:
    """A text of the referee's as the pages show it: "ply N" (counted from 0, as the record's `ply`)
    becomes "move N+1", the game page's count (its first move is move 1, as the rules' errors say)."""
    text = re.sub(r"\bno move for ply (\d+)\b", lambda m: f"no answer for move {int(m.group(1)) + 1}", text)
    return re.sub(r"\b(?:the move for )?ply (\d+)\b", lambda m: f"move {int(m.group(1)) + 1}", text)


def split_printed(detail: str) -> tuple[str, str]:
    """A forfeit's detail as (what happened, what the bot printed before it failed, or "")."""
    head, sep, printed = detail.partition(PRINTED)
    return (head, printed) if sep else (detail, "")


def forfeits(record: GameRecord) -> list[dict[str, Any]]:
    """Each forfeit of the game as {"seat", "bot", "reason", "detail"} (two for a double forfeit)."""
    forfeit = _forfeiture(record)
    if forfeit is None:
        return []
    return [{"seat": side.seat, "bot": record.players[side.seat] if side.seat is not None else "both",
             "reason": str(side.reason or "unknown"), "detail": side.detail} for side in forfeit.sides()]


def result_words(record: GameRecord) -> str:
    """The result in words: who won and why."""
    w = winner_seat(record)
    text = result(record)
    scores = f" {record.scores[0]}-{record.scores[1]}" if record.scores else ""
    if text == "0-0":
        return "double forfeit: both bots lose"
    if w is None:
        return f"draw{scores} ({record.reason})"
    return f"{record.players[w]} wins{scores} ({record.reason})"


# --- positions ---

def positions(record: GameRecord) -> tuple[list[dict[str, Any]], str]:
    """The wire state before the first move and after every move of `record` (start moves
    included), and "" or why the record stops being playable (then the list stops there)."""
    try:
        game = rules.load(record.game, **record.params)
    except (ValueError, TypeError) as exc:
        return [], f"cannot set up {record.game}: {exc}"
    moves = record.move_list()
    try:
        states, problem = game.positions(moves), ""
    except ValueError as exc:  # the rules name the first move that does not play, and its ply
        ply = getattr(exc, "ply", None)
        states = game.positions(moves[:ply - 1]) if isinstance(ply, int) else [game.start()]
        problem = str(exc)
    return [state.to_wire() for state in states], problem


def compact_info(info: Any) -> dict[str, Any]:
    """A bot's info for the page: pv and candidates shortened, long strings cut."""
    if not isinstance(info, dict):
        return {}
    out: dict[str, Any] = {}
    for key, value in info.items():
        key = str(key)[:40]
        if key == "pv" and isinstance(value, list):
            more = ["…"] if len(value) > MAX_PV_MOVES else []
            out[key] = [str(m)[:40] for m in value[:MAX_PV_MOVES]] + more
        elif key == "candidates":
            if isinstance(value, dict):
                value = [{"move": m, "score": s} for m, s in value.items()]
            if isinstance(value, list):
                good = [c for c in value if isinstance(c, dict) and "move" in c]
                good.sort(key=lambda c: -c["score"] if isinstance(c.get("score"), (int, float)) else math.inf)
                out[key] = [{"move": str(c["move"])[:40], "score": _plain(c.get("score"))}
                            for c in good[:MAX_INFO_ITEMS]]
                if len(good) > MAX_INFO_ITEMS:
                    out["more candidates"] = len(good) - MAX_INFO_ITEMS
        elif isinstance(value, str) and key == "error":
            out[key] = tail(value, MAX_TRACE_CHARS)
        elif isinstance(value, str) and "\n" in value.strip():
            out[key] = tail(value, MAX_LINES_CHARS)
        else:
            out[key] = _plain(value)
    return out


def tail(text: str, limit: int) -> str:
    """The last `limit` characters of `text` from a line start, "…" before when cut."""
    if len(text) <= limit:
        return text
    cut = text[-limit:]
    newline = cut.find("\n")
    return "…\n" + (cut[newline + 1:] if 0 <= newline < limit // 4 else cut)


def _plain(value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return round(value, 4) if math.isfinite(value) else str(value)
    return str(value)[:MAX_TEXT_CHARS]


def per_move_limit(time_control: str) -> float | None:
    """The per-move limit in seconds of a record's time control, None for BASE+INC or unreadable."""
    try:
        clock = TimeControl.parse(str(time_control).split(" / ")[0])
    except (ValueError, TypeError):
        return None
    if clock.per_move is None or math.isinf(clock.per_move):
        return None
    return clock.per_move


def describe_clock(time_control: str) -> str:
    try:
        clock = TimeControl.parse(str(time_control).split(" / ")[0])
    except (ValueError, TypeError):
        return str(time_control)
    if clock.per_move is not None:
        return "unlimited" if math.isinf(clock.per_move) else f"{clock.per_move:g} s a move"
    return f"{clock.base:g} s a game + {clock.increment:g} s a move"


def move_file_text(record: GameRecord) -> str | None:
    """The game's move file (Santorini's game file), or None when the moves do not make one."""
    try:
        return format_moves(record.game, record.move_list(), record_header(record))
    except (ValueError, ImportError, AttributeError):
        return None


# --- the pages' data ---

@dataclass
class GameRow:
    """One game as the tables show it."""

    game_id: str
    pairing: str
    number: int
    players: list[str]
    result: str
    winner: str
    reason: str
    plies: int
    forfeits: list[dict[str, Any]]
    errors: list[int]
    isolation: str
    time_s: list[float]
    max_move_s: list[float]
    started_at: str
    file: str
    clock: str = "wall"
    """What each move was charged: "wall" or "cpu" time."""
    cpu_s: list[float | None] | None = None
    """Per seat, the CPU seconds its moves used (None where unknown)."""
    loaded_moves: int = 0
    """Moves played while a bot was kept from a CPU (the game was played under load)."""


def game_row(stored: StoredGame) -> GameRow:
    r = stored.record
    used = [0.0, 0.0]
    longest = [0.0, 0.0]
    for m in r.moves:
        if m.seat in (0, 1):
            used[m.seat] += m.time_s
            longest[m.seat] = max(longest[m.seat], m.time_s)
    w = winner_seat(r)
    return GameRow(
        game_id=r.game_id, pairing=stored.pairing, number=stored.number, players=list(r.players),
        result=result(r), winner="" if w is None else r.players[w], reason=r.reason, plies=len(r.moves),
        forfeits=forfeits(r), errors=errors(r), isolation=isolation(r),
        time_s=[round(t, 3) for t in used], max_move_s=[round(t, 3) for t in longest],
        started_at=r.started_at, file=safe_name(r.game_id), clock=getattr(r, "clock", "wall"),
        cpu_s=[_cpu_total(r, seat) for seat in (0, 1)], loaded_moves=getattr(r, "loaded_moves", 0),
    )


def _cpu_total(record: GameRecord, seat: int) -> float | None:
    """The CPU seconds seat `seat`'s moves used, None where no move says."""
    cpus = [m.cpu_s for m in record.moves if m.seat == seat and m.cpu_s is not None]
    return round(sum(cpus), 3) if cpus else None


def game_page(stored: StoredGame) -> dict[str, Any]:
    """Everything the replay viewer needs, embedded in the game page as JSON.

    Plies are numbered as the viewer shows them: move n is `plies[n - 1]`, and `states[n]` the
    position after it. A move whose info carries an `error` (the bot's own exception) has `trace`,
    an index into `traces`: each distinct traceback once, with the moves that raised it."""
    r = stored.record
    states, problem = positions(r)
    limit = per_move_limit(r.time_control)
    plies: list[dict[str, Any]] = []
    traces: list[dict[str, Any]] = []
    seen: dict[tuple[int, str], int] = {}
    start = len(r.start_moves)
    for k, move in enumerate(r.start_moves):
        seat = states[k]["seat"] if k < len(states) else k % 2
        plies.append({"seat": seat, "move": move, "start": True})
    for m in r.moves:
        info = compact_info(m.info)
        entry: dict[str, Any] = {"seat": m.seat, "move": m.move, "time_s": round(m.time_s, 4), "info": info}
        error = info.pop("error", None)
        if error not in (None, "", False):
            key = (m.seat, str(error))
            if key not in seen:
                seen[key] = len(traces)
                traces.append({"seat": m.seat, "bot": r.players[m.seat], "text": str(error),
                               "last": last_line(str(error)), "moves": []})
            entry["trace"] = seen[key]
            traces[seen[key]]["moves"].append(len(plies) + 1)
        plies.append(entry)
    return {
        "game_id": r.game_id, "game": r.game, "params": r.params, "players": list(r.players),
        "result": result(r), "result_words": result_words(r), "reason": r.reason,
        "forfeits": [_shown_forfeit(f) for f in forfeits(r)], "limit_s": limit,
        "clock": describe_clock(r.time_control), "start_plies": start, "plies": plies, "traces": traces,
        "states": states, "problem": problem,
    }


def _shown_forfeit(f: dict[str, Any]) -> dict[str, Any]:
    """A forfeit as the game page shows it: the detail in the page's move numbers, what the bot
    printed apart (a block of its own), and that text's last line (the exception, typically)."""
    head, printed = split_printed(f["detail"])
    return {**f, "summary": moves_text(head), "printed": printed, "last": last_line(printed)}


def last_line(text: str) -> str:
    """The last non-empty line of `text`: a traceback's exception."""
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


def log_blocks(text: str) -> list[dict[str, Any]]:
    """A bot's log as blocks to show: each traceback a block of its own (ended by its exception
    line), the lines between them blocks of plain text; a traceback repeated later is shown once,
    where it first came, with its count."""
    blocks: list[dict[str, Any]] = []
    lines = text.splitlines()
    plain: list[str] = []
    by_text: dict[str, dict[str, Any]] = {}

    def flush() -> None:
        if any(line.strip() for line in plain):
            blocks.append({"text": "\n".join(plain).strip("\n"), "count": 1, "trace": False, "last": ""})
        plain.clear()

    i = 0
    while i < len(lines):
        if lines[i].strip() != TRACEBACK_START:
            plain.append(lines[i])
            i += 1
            continue
        flush()
        j = i + 1
        while j < len(lines) and (lines[j][:1].isspace() or not lines[j].strip()):
            j += 1
        j = min(j + 1, len(lines))  # the exception line
        trace = "\n".join(lines[i:j])
        if trace in by_text:
            by_text[trace]["count"] += 1
        else:
            by_text[trace] = {"text": trace, "count": 1, "trace": True, "last": last_line(trace)}
            blocks.append(by_text[trace])
        i = j
    flush()
    if len(blocks) > 1 and not blocks[0]["trace"]:  # a log kept from its end may start inside a traceback
        for block in blocks[1:]:
            if block["trace"] and _ends(block["text"], blocks[0]["text"]):
                block["count"] += 1
                blocks.pop(0)
                break
    return blocks


def _ends(trace: str, fragment: str) -> bool:
    """Whether `fragment` is the end of `trace`, its first line possibly cut (and marked "..." or "…")."""
    whole, part = trace.splitlines(), fragment.splitlines()
    if not part or len(part) > len(whole):
        return False
    first, start = part[0].lstrip(".…"), len(whole) - len(part)
    return bool(first) and whole[start].endswith(first) and whole[start + 1:] == part[1:]


def game_logs(record: GameRecord) -> list[dict[str, Any]]:
    """Each seat's log (stderr) of this game, whole up to MAX_TRACE_CHARS, as `log_blocks`."""
    out = []
    for seat in (0, 1):
        log = record.logs.get(str(seat)) if isinstance(record.logs, dict) else None
        if log and str(log).strip():
            text = str(log)
            kept = tail(text, MAX_TRACE_CHARS)
            out.append({"seat": seat, "bot": record.players[seat], "blocks": log_blocks(kept),
                        "cut": len(kept) < len(text)})
    return out


def neighbours(rows: list[GameRow]) -> dict[str, tuple[GameRow | None, GameRow | None]]:
    """game id -> (the previous game, the next game), `rows` in the games page's order."""
    return {row.game_id: (rows[i - 1] if i > 0 else None, rows[i + 1] if i + 1 < len(rows) else None)
            for i, row in enumerate(rows)}


@dataclass
class BotPage:
    """One bot's page: its standing, its results by opponent, its games, forfeits, time use and logs."""

    name: str
    command: str
    """"" when the tournament file's [site] show_commands is false."""
    row: dict[str, Any]
    """Its row of the standings as the site's tables hold it (build._table): "raw" values, "text"
    as `arena standings` prints them, and "table", a gauntlet's table title ("" for one table)."""
    opponents: list[dict[str, Any]] = field(default_factory=list)
    games: list[dict[str, Any]] = field(default_factory=list)
    forfeits: list[dict[str, Any]] = field(default_factory=list)
    times: dict[str, Any] = field(default_factory=dict)
    logs: list[dict[str, Any]] = field(default_factory=list)


def bot_page(name: str, command: str, row: dict[str, Any], opponents: list[tuple[str, Any]],
             games: list[StoredGame], limit: float | None) -> BotPage:
    """`opponents`: (opponent, its results against it: games, wins, draws, losses, points, pairing)
    from the standings (`Standings.opponents`), which this page shows and does not recount."""
    page = BotPage(name=name, command=command, row=row)
    page.opponents = [{"opponent": opp, "file": safe_name(opp), "games": s.games, "wins": s.wins,
                       "draws": s.draws, "losses": s.losses, "points": s.points, "pairing": s.pairing}
                      for opp, s in opponents]
    all_times: list[float] = []
    chart = []
    for g in games:
        r = g.record
        if name not in r.players:
            continue
        seat = r.players.index(name)
        opponent = r.players[1 - seat]
        times = [m.time_s for m in r.moves if m.seat == seat]
        cpus = [m.cpu_s for m in r.moves if m.seat == seat and m.cpu_s is not None]
        all_times += times
        median = statistics.median(times) if times else 0.0
        worst = max(times) if times else 0.0
        chart.append({"game_id": r.game_id, "file": safe_name(r.game_id), "median": median, "max": worst})
        page.games.append({"game_id": r.game_id, "file": safe_name(r.game_id), "seat": seat,
                           "opponent": opponent, "result": result(r), "points": points(r, seat),
                           "reason": r.reason, "plies": len(r.moves), "median_s": round(median, 4),
                           "max_s": round(worst, 4), "errors": errors(r)[seat],
                           "median_cpu_s": round(statistics.median(cpus), 4) if cpus else None,
                           "loaded": sum(1 for m in r.moves if m.seat == seat and m.under_load())})
        for f in forfeits(r):
            if f["seat"] == seat:
                _add_forfeit(page.forfeits, f, r.game_id)
        log = r.logs.get(str(seat)) if isinstance(r.logs, dict) else None
        if log and str(log).strip():
            lines = str(log).rstrip("\n").splitlines()
            page.logs.append({"game_id": r.game_id, "file": safe_name(r.game_id),
                              "text": "\n".join(lines[-LOG_TAIL_LINES:]),
                              "cut": max(0, len(lines) - LOG_TAIL_LINES)})
    page.times = time_chart(chart, all_times, limit)
    return page


CHART_WIDTH_PX = 640
CHART_HEIGHT_PX = 160
CHART_PAD_PX = 28


def _add_forfeit(shown: list[dict[str, Any]], item: dict[str, Any], game_id: str) -> None:
    """A bot page's forfeits: the same reason and detail (a bot that never starts fails every game
    alike) listed once, with its games and a count; plies said as the game page says them."""
    head, printed = split_printed(str(item.get("detail") or ""))
    detail = moves_text(head)
    for entry in shown:
        if entry["reason"] == item["reason"] and entry["detail"] == detail and entry["printed"] == printed:
            entry["games"].append({"game_id": game_id, "file": safe_name(game_id)})
            return
    game = {"game_id": game_id, "file": safe_name(game_id)}
    shown.append({**item, **game, "detail": detail, "printed": printed, "games": [game]})


def time_chart(per_game: list[dict[str, Any]], all_times: list[float], limit: float | None) -> dict[str, Any]:
    """Bars of the median and longest move time of each game, on a scale that shows the limit."""
    top = max([limit or 0.0, *(g["max"] for g in per_game), 1e-6])
    inner_w = CHART_WIDTH_PX - 2 * CHART_PAD_PX
    inner_h = CHART_HEIGHT_PX - 2 * CHART_PAD_PX
    slot = inner_w / max(1, len(per_game))
    bar = max(1.0, min(14.0, slot / 2 - 1))
    bars = []
    for i, g in enumerate(per_game):
        x = CHART_PAD_PX + i * slot + (slot - 2 * bar) / 2
        for kind, value, dx in (("median", g["median"], 0.0), ("max", g["max"], bar)):
            h = inner_h * value / top
            bars.append({"kind": kind, "x": round(x + dx, 1), "y": round(CHART_PAD_PX + inner_h - h, 1),
                         "w": round(bar, 1), "h": round(h, 1), "value": value, "game_id": g["game_id"],
                         "file": g["file"]})
    out: dict[str, Any] = {
        "width": CHART_WIDTH_PX, "height": CHART_HEIGHT_PX, "pad": CHART_PAD_PX, "bars": bars,
        "top": top, "base_y": CHART_PAD_PX + inner_h, "limit": limit, "moves": len(all_times),
    }
    if limit:
        out["limit_y"] = round(CHART_PAD_PX + inner_h * (1 - limit / top), 1)
    if all_times:
        out["median"] = statistics.median(all_times)
        out["max"] = max(all_times)
        if limit:
            out["max_share"] = round(100 * out["max"] / limit)
            out["near_limit"] = sum(1 for t in all_times if t >= 0.8 * limit)
    return out


HIDDEN_DIR = "…/"
"""What stands for a hidden directory in the published texts ([site] show_commands = false)."""


def hidden_directories(paths: list[str], base: str) -> list[str]:
    """The directories to leave out of the published texts: `base` (the tournament file's) and
    those of every path-like piece of `paths` (a bot's command words; `--opt=PATH` and
    `A:B` class paths split), relative ones read against `base`; each also as its real path
    (links resolved), longest first."""
    found = {base}
    for word in paths:
        for piece in re.split(r"[=:]", word):
            if "/" in piece:
                found.add(os.path.dirname(os.path.normpath(os.path.join(base, piece))))
    found |= {os.path.realpath(d) for d in found}
    return sorted((d for d in found if d not in ("", "/")), key=len, reverse=True)


def hide_paths(stored: StoredGame, directories: list[str]) -> StoredGame:
    """The game with every `directories` prefix in its texts (logs, forfeit details, the bots'
    info and tracebacks) written as HIDDEN_DIR."""
    def clean(value: Any) -> Any:
        if isinstance(value, str):
            for d in directories:
                value = value.replace(d.rstrip("/") + "/", HIDDEN_DIR)
            return value
        if isinstance(value, list):
            return [clean(v) for v in value]
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        return value

    return dataclasses.replace(stored, record=GameRecord.from_dict(clean(stored.record.to_dict())))


def isolation_summary(games: list[StoredGame]) -> str:
    """Whether the bots were isolated: "sandbox (all N games)", the reasons they were not, or unknown."""
    counts = Counter(isolation(g.record) for g in games)
    if not games:
        return "no games yet"
    if set(counts) == {""}:
        return "unknown (the records do not say)"
    if set(counts) == {"sandbox"}:
        return f"sandboxed (all {len(games)} games)"
    return "; ".join(f"{value or 'unknown'}: {n} game{'s' * (n != 1)}"
                     for value, n in sorted(counts.items()))


def forfeit_reasons(games: list[StoredGame]) -> list[tuple[str, int]]:
    counts = Counter(f["reason"] for g in games for f in forfeits(g.record))
    return sorted(counts.items())


# --- games in progress (arena serve) ---

def playing_files(results_dir: str | Path) -> list[Path]:
    """The files of the games a run is playing now (arena.tournament.runner.PLAYING_DIR); none when
    no run holds the results directory's lock (files a killed run left behind are not shown)."""
    return sorted((Path(results_dir) / PLAYING_DIR).glob("*.json")) if run_in_progress(results_dir) else []


def run_in_progress(results_dir: str | Path) -> bool:
    """Whether a run holds the lock of `results_dir` (the kernel drops it when the run dies)."""
    try:
        fd = os.open(Path(results_dir) / LOCK_NAME, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing drops a lock taken here
    return False


def playing_game(path: Path) -> dict[str, Any] | None:
    """A game in progress as the live view draws it: players, the last move and the positions
    before and after it (wire states); None if the file is gone, half written or does not play."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        moves = [str(m) for m in data["start_moves"]] + [str(m) for m in data["moves"]]
        players = [str(p) for p in data["players"]]
        game = rules.load(str(data["game"]), **data["params"])
        states = game.positions(moves)
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    return {"game_id": str(data["game_id"]), "game": str(data["game"]), "players": players,
            "files": [safe_name(p) for p in players], "ply": len(moves), "move": moves[-1] if moves else None,
            "before": states[-2].to_wire() if len(states) > 1 else None, "state": states[-1].to_wire(),
            "started_at": str(data.get("started_at", ""))}
