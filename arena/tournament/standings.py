"""Standings, crosstable and games table with pandas; text and markdown with tabulate; `publish`.

The only module of arena that imports pandas and tabulate.

Scoring: a win is 1 point, a draw 0.5, a loss 0 (a forfeit is a loss for the bot that broke the
arena's rules). Sonneborn-Berger of a bot = the sum over its opponents of (points it scored against
that opponent) x (that opponent's total points). Ranks are by points, then Sonneborn-Berger; bots
equal on both share a rank (1, 2, 2, 4). Elo comes from `arena.ratings.fit` (maximum likelihood).
"""
from __future__ import annotations

import html
import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from tabulate import tabulate

from arena.match.records import GameRecord
from arena.tournament.ratings import DEFAULT_PRIOR_DRAWS, fit
from arena.tournament.store import DB_NAME, Store, StoredGame

STANDINGS_COLUMNS = ["rank", "bot", "games", "wins", "draws", "losses", "points", "score %", "elo", "elo ±",
                     "SB", "forfeits", "forfeit reasons"]


def winner_seat(record: GameRecord) -> int | None:
    """The winning seat (None for a draw); a forfeit without a winner set goes to the opponent."""
    if record.winner in (0, 1):
        return record.winner
    if record.forfeit and record.forfeit.get("seat") in (0, 1):
        return 1 - record.forfeit["seat"]
    return None


def points(record: GameRecord) -> tuple[float, float]:
    """Points of (seat 0, seat 1) in this game."""
    w = winner_seat(record)
    return (0.5, 0.5) if w is None else ((1.0, 0.0) if w == 0 else (0.0, 1.0))


def _records(games: Iterable[GameRecord | StoredGame]) -> list[GameRecord]:
    return [g.record if isinstance(g, StoredGame) else g for g in games]


def standings(games: Iterable[GameRecord | StoredGame], bots: Sequence[str] | None = None,
              prior_draws: float = DEFAULT_PRIOR_DRAWS) -> pd.DataFrame:
    """One row per bot, best first: STANDINGS_COLUMNS, plus "score diff" when the game scores."""
    records = _records(games)
    names = list(dict.fromkeys([*(bots or []), *(p for r in records for p in r.players)]))
    row: dict[str, dict[str, Any]] = {
        n: {"games": 0, "wins": 0, "draws": 0, "losses": 0, "points": 0.0, "forfeits": 0, "reasons": {},
            "score diff": 0} for n in names
    }
    versus: dict[tuple[str, str], float] = {}
    scored = False
    results = []
    for r in records:
        pts = points(r)
        results.append((r.players[0], r.players[1], pts[0]))
        for seat in (0, 1):
            me, opp = r.players[seat], r.players[1 - seat]
            s = row[me]
            s["games"] += 1
            s["points"] += pts[seat]
            s["wins" if pts[seat] == 1 else "losses" if pts[seat] == 0 else "draws"] += 1
            versus[(me, opp)] = versus.get((me, opp), 0.0) + pts[seat]
            if r.scores is not None:
                scored = True
                s["score diff"] += r.scores[seat] - r.scores[1 - seat]
        if r.forfeit and r.forfeit.get("seat") in (0, 1):
            s = row[r.players[r.forfeit["seat"]]]
            s["forfeits"] += 1
            reason = str(r.forfeit.get("reason", "unknown"))
            s["reasons"][reason] = s["reasons"].get(reason, 0) + 1
    ratings = fit(results, players=names, prior_draws=prior_draws)
    table = []
    for n in names:
        s = row[n]
        sb = sum(p * row[opp]["points"] for (me, opp), p in versus.items() if me == n)
        rating = ratings.get(n)
        entry = {
            "bot": n, "games": s["games"], "wins": s["wins"], "draws": s["draws"], "losses": s["losses"],
            "points": s["points"],
            "score %": round(100.0 * s["points"] / s["games"], 1) if s["games"] else float("nan"),
            "elo": round(rating.elo, 1) if rating else float("nan"),
            "elo ±": round(rating.ci95, 1) if rating else float("nan"),
            "SB": sb, "forfeits": s["forfeits"],
            "forfeit reasons": ", ".join(f"{k} {v}" for k, v in sorted(s["reasons"].items())),
        }
        if scored:
            entry["score diff"] = s["score diff"]
        table.append(entry)
    columns = STANDINGS_COLUMNS[1:] + (["score diff"] if scored else [])
    df = pd.DataFrame(table, columns=columns)
    if df.empty:
        df.insert(0, "rank", pd.Series(dtype=int))
        return df
    df = df.sort_values(["points", "SB", "bot"], ascending=[False, False, True], kind="mergesort")
    df = df.reset_index(drop=True)
    ranks = []
    for i in range(len(df)):
        if i and (df.at[i, "points"], df.at[i, "SB"]) == (df.at[i - 1, "points"], df.at[i - 1, "SB"]):
            ranks.append(ranks[-1])
        else:
            ranks.append(i + 1)
    df.insert(0, "rank", ranks)
    return df


def crosstable(games: Iterable[GameRecord | StoredGame], order: Sequence[str] | None = None) -> pd.DataFrame:
    """Points of the row bot against the column bot (NaN on the diagonal and where none were played)."""
    records = _records(games)
    names = list(dict.fromkeys([*(order or []), *(p for r in records for p in r.players)]))
    df = pd.DataFrame(float("nan"), index=pd.Index(names, name="bot"), columns=names)
    for r in records:
        pts = points(r)
        for seat in (0, 1):
            me, opp = r.players[seat], r.players[1 - seat]
            current = df.at[me, opp]
            df.at[me, opp] = (0.0 if pd.isna(current) else current) + pts[seat]
    return df


def games_table(games: Iterable[StoredGame]) -> pd.DataFrame:
    """One row per game: pairing, number, players by seat, result, reason, forfeit, plies, time used."""
    rows = []
    for g in games:
        r = g.record
        w = winner_seat(r)
        used = [0.0, 0.0]
        for m in r.moves:
            if m.seat in (0, 1):
                used[m.seat] += m.time_s
        forfeit = r.forfeit or {}
        rows.append({
            "game_id": r.game_id, "pairing": g.pairing, "number": g.number,
            "seat0": r.players[0], "seat1": r.players[1],
            "result": "1/2-1/2" if w is None else ("1-0" if w == 0 else "0-1"),
            "winner": "" if w is None else r.players[w],
            "reason": r.reason,
            "forfeit": f"{r.players[forfeit.get('seat', 0)]}: {forfeit.get('reason', '')}" if forfeit else "",
            "plies": len(r.moves),
            "time0 s": round(used[0], 3), "time1 s": round(used[1], 3),
            "scores": "" if r.scores is None else "-".join(str(s) for s in r.scores),
            "duration s": round(r.duration_s, 3),
            "isolation": r.isolation,
        })
    columns = ["game_id", "pairing", "number", "seat0", "seat1", "result", "winner", "reason", "forfeit",
               "plies", "time0 s", "time1 s", "scores", "duration s", "isolation"]
    return pd.DataFrame(rows, columns=columns)


# --- text ---

def display_standings(df: pd.DataFrame) -> pd.DataFrame:
    """The standings with Elo as "1523 ± 45" and numbers printed as people read them."""
    out = df.copy()

    def elo_text(row: pd.Series) -> str:
        return "—" if pd.isna(row["elo"]) else f"{row['elo']:.0f} ± {row['elo ±']:.0f}"

    if len(out):
        out["elo"] = out.apply(elo_text, axis=1)
        out["points"] = out["points"].map(_num)
        out["SB"] = out["SB"].map(_num)
        out["score %"] = out["score %"].map(lambda v: "—" if pd.isna(v) else f"{v:.1f}")
    else:
        out["elo"] = pd.Series(dtype=str)
    return out.drop(columns=["elo ±"])


def display_crosstable(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy().astype(object)
    for me in out.index:
        for opp in out.columns:
            value = df.at[me, opp]
            out.at[me, opp] = "·" if me == opp else ("" if pd.isna(value) else _num(value))
    return out


def _num(value: float) -> str:
    return f"{value:g}"


_TEXT_COLUMNS = {"bot", "forfeit reasons"}


def standings_text(df: pd.DataFrame, fmt: str = "simple") -> str:
    shown = display_standings(df)
    align = tuple("left" if c in _TEXT_COLUMNS else "right" for c in shown.columns)
    return tabulate(shown, headers="keys", tablefmt=fmt, showindex=False, disable_numparse=True,
                    colalign=align)


def crosstable_text(df: pd.DataFrame, fmt: str = "simple") -> str:
    shown = display_crosstable(df)
    align = ("left",) + ("right",) * len(shown.columns)
    return tabulate(shown, headers="keys", tablefmt=fmt, showindex=True, disable_numparse=True,
                    colalign=align)


# --- from the database ---

def load(results_dir: str | Path) -> tuple[dict[str, Any], list[StoredGame]]:
    """The tournament's fingerprint and its stored games, read from results_dir/results.sqlite."""
    with Store(Path(results_dir) / DB_NAME, create=False) as store:
        fingerprint = store.fingerprint() or {}
        return fingerprint, store.games()


def summary_line(fingerprint: dict[str, Any], played: int) -> str:
    bots = [b["name"] for b in fingerprint.get("bots", [])]
    per = fingerprint.get("games_per_pairing", 0)
    total = len(bots) * (len(bots) - 1) // 2 * per
    params = ", ".join(f"{k}={v}" for k, v in sorted(fingerprint.get("params", {}).items()))
    return (f"{fingerprint.get('name', '?')}: {fingerprint.get('game', '?')}"
            f"{f' ({params})' if params else ''}, time {fingerprint.get('time_control', '?')} s, "
            f"{len(bots)} bots, {per} games a pairing: {played}/{total} games played")


def report(results_dir: str | Path, fmt: str = "simple") -> str:
    """The text `arena standings` prints: a summary line, the standings and the crosstable."""
    fingerprint, games = load(results_dir)
    order = [b["name"] for b in fingerprint.get("bots", [])]
    table = standings(games, order)
    cross = crosstable(games, list(table["bot"]))
    summary = summary_line(fingerprint, len(games)) + isolation_note(games)
    return "\n\n".join([summary, standings_text(table, fmt),
                        "Crosstable (points of the row bot against the column bot)",
                        crosstable_text(cross, fmt)])


def isolation_note(games: Sequence[StoredGame]) -> str:
    """"'; bots were NOT isolated in N of M games (why)' when some games ran without the sandbox
    (records from before the sandbox, with no `isolation`, are not counted); else ""."""
    open_games = [g.record.isolation for g in games if g.record.isolation not in ("", "sandbox")]
    if not open_games:
        return ""
    why = "; ".join(sorted(set(open_games)))
    return f"; bots were NOT isolated in {len(open_games)} of {len(games)} games ({why})"


def publish(results_dir: str | Path) -> list[Path]:
    """Write standings.md, standings.csv, crosstable.md, games.csv, records/ and index.html."""
    out = Path(results_dir)
    fingerprint, games = load(out)
    order = [b["name"] for b in fingerprint.get("bots", [])]
    table = standings(games, order)
    cross = crosstable(games, list(table["bot"]))
    gtable = games_table(games)
    summary = summary_line(fingerprint, len(games)) + isolation_note(games)
    written: list[Path] = []

    def write(name: str, text: str) -> None:
        path = out / name
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
        written.append(path)

    write("standings.md", f"# {fingerprint.get('name', 'tournament')}\n\n{summary}\n\n"
          + standings_text(table, "github") + "\n")
    write("standings.csv", table.to_csv(index=False))
    write("crosstable.md", "Points of the row bot against the column bot.\n\n"
          + crosstable_text(cross, "github") + "\n")
    write("games.csv", gtable.to_csv(index=False))
    records = out / "records"
    records.mkdir(exist_ok=True)
    writer = _santorini_writer() if fingerprint.get("game") == "santorini" else None
    for g in games:
        stem = _safe(g.record.game_id)
        write(f"records/{stem}.json", json.dumps(g.record.to_dict(), indent=1, sort_keys=True) + "\n")
        if writer is not None:
            try:
                text = writer([*g.record.start_moves, *(m.move for m in g.record.moves)])
            except ValueError:
                continue  # a record whose moves do not make a game file is still in its JSON
            write(f"records/{stem}.txt", text if text.endswith("\n") else text + "\n")
    write("index.html", _html(fingerprint, summary, table, cross, gtable))
    return written


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def _santorini_writer():
    try:
        from rules import santorini
    except ImportError:
        return None
    return getattr(santorini, "write_game_file", None)


_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th { background: #f0f0f0; }
td:nth-child(2), th:nth-child(2) { text-align: left; }
caption { text-align: left; font-weight: bold; padding: 0.3em 0; }
"""


def _html(fingerprint: dict[str, Any], summary: str, table: pd.DataFrame, cross: pd.DataFrame,
          gtable: pd.DataFrame) -> str:
    title = html.escape(str(fingerprint.get("name", "tournament")))
    parts = [
        "<!DOCTYPE html>", "<html lang=\"en\"><head><meta charset=\"utf-8\">",
        f"<title>{title} standings</title><style>{_CSS}</style></head><body>",
        f"<h1>{title}</h1>", f"<p>{html.escape(summary)}</p>",
        "<h2>Standings</h2>", display_standings(table).to_html(index=False, escape=True, border=0),
        "<h2>Crosstable</h2><p>Points of the row bot against the column bot.</p>",
        display_crosstable(cross).to_html(escape=True, border=0),
        "<h2>Games</h2>", gtable.to_html(index=False, escape=True, border=0),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"
