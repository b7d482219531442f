"""Standings, crosstable and games table with pandas; text and markdown with tabulate; `publish`
(the md and csv files; the website is arena.site's).

The only module of arena that imports pandas and tabulate.

Scoring (`GameRecord.points`): a win is 1 point, a draw 0.5, a loss 0; a forfeit is a loss for the
bot that broke the arena's rules, and a double forfeit (neither bot could play) scores 0 for both
and is left out of Elo. An aborted game counts for nothing (`scored_records`); `report` lists it.
Ranks, one sort: points, then head-to-head score (points against the other
bots level on points), then Sonneborn-Berger (the sum over its opponents of the points it scored
against each x that opponent's total), then wins; bots level on all four share a rank, shown `2=`
(ranks 1, 2=, 2=, 4). Elo comes from `arena.tournament.ratings.fit` (maximum likelihood).

A Swiss tournament (format = "swiss") adds a bye's points (a won pairing: 1 point a game of it) to
the bot that sat out, a "byes" column, and a "Buchholz" column (the sum of its opponents' points,
byes included; a bye adds nothing to the Buchholz of the bot that had it); its ranks are by points,
then Buchholz, then Sonneborn-Berger, then wins.
"""
from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from tabulate import tabulate

from arena.match.records import Forfeit, GameRecord
from arena.match.spec import params_text
from arena.tournament.aborted import aborted_note
from arena.tournament.formats import bye_points, swiss_rounds
from arena.tournament.pairs import pair_factor
from arena.tournament.ratings import DEFAULT_PRIOR_DRAWS, fit
from arena.tournament.store import DB_NAME, Store, StoredGame, pairing_results

STANDINGS_COLUMNS = ["rank", "bot", "games", "wins", "draws", "losses", "points", "score %", "elo", "elo ±",
                     "SB", "forfeits", "forfeit reasons", "errors"]
"""The standings' columns; "score diff" follows when the game keeps a score."""


def scored_records(games: Iterable[GameRecord | StoredGame]) -> list[GameRecord]:
    """The games the standings, the crosstable and Elo count: every one but the aborted ones
    (arena.tournament.aborted), which have no result. The one place they are left out."""
    records = [g.record if isinstance(g, StoredGame) else g for g in games]
    return [r for r in records if not r.is_aborted()]


@dataclass
class _Tally:
    """One bot's results so far."""

    name: str
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    points: float = 0.0
    forfeits: int = 0
    reasons: Counter = field(default_factory=Counter)
    errors: int = 0
    """Games in which the bot had at least one error of its own (record.errors)."""
    score_diff: int = 0
    byes: float = 0.0
    """Points of its byes (a Swiss), already in `points`."""
    versus: dict[str, float] = field(default_factory=dict)
    """Points scored against each opponent."""

    def add(self, opponent: str, pts: float) -> None:
        self.games += 1
        self.points += pts
        if pts == 1:
            self.wins += 1
        elif pts == 0.5:
            self.draws += 1
        else:
            self.losses += 1
        self.versus[opponent] = self.versus.get(opponent, 0.0) + pts

    def sonneborn_berger(self, tallies: dict[str, _Tally]) -> float:
        """The sum over opponents of (points scored against them) x (their total points)."""
        return sum(p * tallies[opp].points for opp, p in self.versus.items())

    def buchholz(self, tallies: dict[str, _Tally]) -> float:
        """The sum of its opponents' total points (a Swiss tie-break)."""
        return sum(tallies[opp].points for opp in self.versus)

    def head_to_head(self, group: set[str]) -> float:
        """Points scored against the other bots of `group` (the bots level with it on points)."""
        return sum(p for opp, p in self.versus.items() if opp in group and opp != self.name)


def _tally(records: list[GameRecord], names: list[str]) -> tuple[dict[str, _Tally], bool]:
    """Every bot's tally, and whether the game keeps a score."""
    tallies = {n: _Tally(n) for n in names}
    scored = False
    for r in records:
        double = r.is_double_forfeit()
        for seat in (0, 1):
            me, opp = r.players[seat], r.players[1 - seat]
            t = tallies[me]
            t.add(opp, r.points(seat))
            if r.scores is not None:
                scored = True
                t.score_diff += r.scores[seat] - r.scores[1 - seat]
            if seat < len(r.errors or []) and r.errors[seat]:
                t.errors += 1
            if double:
                t.forfeits += 1
                t.reasons[Forfeit.DOUBLE_FORFEIT.value] += 1
        if not double and r.forfeit and r.forfeit.get("seat") in (0, 1):
            t = tallies[r.players[r.forfeit["seat"]]]
            t.forfeits += 1
            t.reasons[str(r.forfeit.get("reason", "unknown"))] += 1
    return tallies, scored


def _ranked(tallies: dict[str, _Tally], swiss: bool = False) -> list[tuple[int, _Tally, float]]:
    """(rank, tally, SB) best first: by points, then head-to-head score among the bots level on
    points (a Swiss: Buchholz), then Sonneborn-Berger, then wins; bots level on all four share a
    rank (1, 2, 2, 4)."""
    sb = {n: t.sonneborn_berger(tallies) for n, t in tallies.items()}
    level: dict[float, set[str]] = {}
    for n, t in tallies.items():
        level.setdefault(t.points, set()).add(n)

    def key(t: _Tally) -> tuple[float, float, float, int]:
        second = t.buchholz(tallies) if swiss else t.head_to_head(level[t.points])
        return (t.points, second, sb[t.name], t.wins)

    order = sorted(tallies.values(), key=lambda t: (tuple(-k for k in key(t)), t.name))
    ranked: list[tuple[int, _Tally, float]] = []
    for i, t in enumerate(order):
        rank = ranked[-1][0] if i and key(t) == key(order[i - 1]) else i + 1
        ranked.append((rank, t, sb[t.name]))
    return ranked


def standings(games: Iterable[GameRecord | StoredGame], bots: Sequence[str] | None = None,
              prior_draws: float = DEFAULT_PRIOR_DRAWS, byes: dict[str, float] | None = None,
              paired: bool = False) -> pd.DataFrame:
    """One row per bot, best first: STANDINGS_COLUMNS, plus "score diff" when the game scores.

    `byes` (a Swiss: bot -> points of its byes, see `swiss_byes`) adds those points and the
    "byes" and "Buchholz" columns, and ranks by points, Buchholz, then Sonneborn-Berger.

    "rank" is a number; bots level on every tie-break share it, and the shown tables (text,
    markdown, html) write it `1=`. A double forfeit scores 0 for both and counts for no rating.
    `paired` (balanced openings): each bot's "elo ±" counts its game pairs, not its games, as the
    independent results (`paired_error_factors`).
    """
    games = list(games)
    records = scored_records(games)
    names = list(dict.fromkeys([*(bots or []), *(p for r in records for p in r.players)]))
    tallies, scored = _tally(records, names)
    results = [(r.players[0], r.players[1], r.points(0)) for r in records if not r.is_double_forfeit()]
    ratings = fit(results, players=names, prior_draws=prior_draws)
    factors = paired_error_factors(games) if paired else {}
    for n, extra in (byes or {}).items():
        if n in tallies:
            tallies[n].points += extra
            tallies[n].byes += extra
    table = []
    for rank, t, sb in _ranked(tallies, swiss=byes is not None):
        rating = ratings.get(t.name)
        entry = {
            "rank": rank, "bot": t.name, "games": t.games, "wins": t.wins, "draws": t.draws,
            "losses": t.losses, "points": t.points,
            "score %": round(100.0 * t.points / t.games, 1) if t.games else float("nan"),
            "elo": round(rating.elo, 1) if rating else float("nan"),
            "elo ±": round(rating.ci95 * factors.get(t.name, 1.0), 1) if rating else float("nan"),
            "SB": sb, "forfeits": t.forfeits,
            "forfeit reasons": ", ".join(f"{k} {v}" for k, v in sorted(t.reasons.items())),
            "errors": t.errors,
        }
        if scored:
            entry["score diff"] = t.score_diff
        if byes is not None:
            entry["byes"] = t.byes
            entry["Buchholz"] = t.buchholz(tallies)
        table.append(entry)
    swiss = ["byes", "Buchholz"] if byes is not None else []
    columns = STANDINGS_COLUMNS + (["score diff"] if scored else []) + swiss
    df = pd.DataFrame(table, columns=columns)
    if df.empty:
        df["rank"] = pd.Series(dtype=int)
    return df


def paired_error_factors(games: Iterable[GameRecord | StoredGame]) -> dict[str, float]:
    """With balanced openings (games 2k and 2k+1 of a pairing start from the same opening, seats
    swapped): bot -> the factor its Elo interval takes when its complete pairs, not its games, are
    the independent results, the pentanomial standard error of its score over the trinomial one
    (arena.tournament.pairs.pair_factor: below 1 when the openings favour a seat, above 1 when a
    pair's two games tend to go the same way). Pairs with a double forfeit are left out; a bot with
    no usable pair, or whose every game scored the same, has no factor."""
    pairs: dict[tuple[str, int], list[GameRecord | None]] = {}
    for g in games:
        if isinstance(g, StoredGame) and not g.record.is_double_forfeit() and not g.record.is_aborted():
            pairs.setdefault((g.pairing, g.number // 2), [None, None])[g.number % 2] = g.record
    by_bot: dict[str, list[tuple[float, float]]] = {}
    for first, second in pairs.values():
        if first is None or second is None:
            continue
        a, b = first.players  # a sits in seat 0 of the pair's first game, in seat 1 of its second
        points = (first.points(0), second.points(1))
        by_bot.setdefault(a, []).append(points)
        by_bot.setdefault(b, []).append((1.0 - points[0], 1.0 - points[1]))
    return {bot: factor for bot, pts in by_bot.items() if (factor := pair_factor(pts)) is not None}


def shown_ranks(ranks: pd.Series) -> pd.Series:
    """Ranks as people read them: `2=` where bots share rank 2, else `2`."""
    counts = ranks.value_counts()
    return ranks.map(lambda r: f"{r}=" if counts[r] > 1 else str(r))


def crosstable(games: Iterable[GameRecord | StoredGame], order: Sequence[str] | None = None) -> pd.DataFrame:
    """Points of the row bot against the column bot (NaN on the diagonal and where none were played)."""
    records = scored_records(games)
    names = list(dict.fromkeys([*(order or []), *(p for r in records for p in r.players)]))
    df = pd.DataFrame(float("nan"), index=pd.Index(names, name="bot"), columns=names)
    for r in records:
        for seat in (0, 1):
            me, opp = r.players[seat], r.players[1 - seat]
            current = df.at[me, opp]
            df.at[me, opp] = (0.0 if pd.isna(current) else current) + r.points(seat)
    return df


def games_table(games: Iterable[StoredGame]) -> pd.DataFrame:
    """One row per game: pairing, number, players by seat, result, reason, forfeit, plies, time used."""
    rows = []
    for g in games:
        r = g.record
        w = r.winner_seat()
        used = [0.0, 0.0]
        for m in r.moves:
            if m.seat in (0, 1):
                used[m.seat] += m.time_s
        rows.append({
            "game_id": r.game_id, "pairing": g.pairing, "number": g.number,
            "seat0": r.players[0], "seat1": r.players[1],
            "result": r.result(),
            "winner": "" if w is None else r.players[w],
            "reason": r.reason,
            "forfeit": _forfeit_text(r),
            "plies": len(r.moves),
            "time0 s": round(used[0], 3), "time1 s": round(used[1], 3),
            "scores": "" if r.scores is None else "-".join(str(s) for s in r.scores),
            "duration s": round(r.duration_s, 3),
            "isolation": r.isolation,
        })
    columns = ["game_id", "pairing", "number", "seat0", "seat1", "result", "winner", "reason", "forfeit",
               "plies", "time0 s", "time1 s", "scores", "duration s", "isolation"]
    return pd.DataFrame(rows, columns=columns)


def _forfeit_text(record: GameRecord) -> str:
    """Who forfeited and why: "bob: timeout", or for a double forfeit "ann: crashed; bob: no_hello"."""
    forfeit = record.forfeit or {}
    if record.is_double_forfeit():
        both = [f"{record.players[b['seat']]}: {b.get('reason', '')}" for b in forfeit.get("both", [])
                if isinstance(b, dict) and b.get("seat") in (0, 1)]
        return "; ".join(both) or f"both: {Forfeit.DOUBLE_FORFEIT}"
    if forfeit.get("seat") in (0, 1):
        return f"{record.players[forfeit['seat']]}: {forfeit.get('reason', '')}"
    return ""


# --- text ---

def display_standings(df: pd.DataFrame) -> pd.DataFrame:
    """The standings with Elo as "1523 ± 45" and numbers printed as people read them."""
    out = df.copy()

    def elo_text(row: pd.Series) -> str:
        return "—" if pd.isna(row["elo"]) else f"{row['elo']:.0f} ± {row['elo ±']:.0f}"

    if len(out):
        out["rank"] = shown_ranks(out["rank"])
        out["elo"] = out.apply(elo_text, axis=1)
        out["points"] = out["points"].map(_num)
        out["SB"] = out["SB"].map(_num)
        for column in ("byes", "Buchholz"):
            if column in out:
                out[column] = out[column].map(_num)
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


def swiss_byes(fingerprint: dict[str, Any], games: list[StoredGame]) -> dict[str, float] | None:
    """For a Swiss tournament, bot -> points of its byes in the rounds paired so far; else None."""
    if fingerprint.get("format") != "swiss":
        return None
    bots = [b["name"] for b in fingerprint.get("bots", [])]
    per = fingerprint.get("games_per_pairing", 2)
    try:
        rounds = swiss_rounds(bots, per, fingerprint.get("rounds", 1), pairing_results(games))
    except ValueError:
        return {}
    byes: dict[str, float] = {}
    for r in rounds:
        if r.bye is not None:
            byes[r.bye] = byes.get(r.bye, 0.0) + bye_points(per)
    return byes


def summary_line(fingerprint: dict[str, Any], played: int) -> str:
    bots = [b["name"] for b in fingerprint.get("bots", [])]
    per = fingerprint.get("games_per_pairing", 0)
    total = len(bots) * (len(bots) - 1) // 2 * per
    kind = ""
    if fingerprint.get("format") == "gauntlet":
        challengers = fingerprint.get("challengers", [])
        total = len(challengers) * (len(bots) - len(challengers)) * per
        kind = f"gauntlet of {', '.join(challengers)}, "
    elif fingerprint.get("format") == "swiss":
        total = fingerprint.get("rounds", 0) * (len(bots) // 2) * per
        kind = f"Swiss of {fingerprint.get('rounds', 0)} rounds, "
    params = params_text(str(fingerprint.get("game", "")), fingerprint.get("params", {}))
    return (f"{fingerprint.get('name', '?')}: {fingerprint.get('game', '?')}"
            f"{f' ({params})' if params else ''}, time {fingerprint.get('time_control', '?')} s, "
            f"{len(bots)} bots, {kind}{per} games a pairing: {played}/{total} games played")


def report(results_dir: str | Path, fmt: str = "simple") -> str:
    """The text `arena standings` prints: a summary line, the standings and the crosstable."""
    fingerprint, games = load(results_dir)
    order = [b["name"] for b in fingerprint.get("bots", [])]
    table = standings(games, order, byes=swiss_byes(fingerprint, games), paired="openings" in fingerprint)
    cross = crosstable(games, list(table["bot"]))
    summary = summary_line(fingerprint, len(games)) + isolation_note(games)
    aborted = aborted_note(g.record for g in games)
    return "\n\n".join([summary, standings_text(table, fmt),
                        "Crosstable (points of the row bot against the column bot)",
                        crosstable_text(cross, fmt), *([aborted] if aborted else [])])


def isolation_note(games: Sequence[StoredGame]) -> str:
    """"'; bots were NOT isolated in N of M games (why)' when some games ran without the sandbox
    (records from before the sandbox, with no `isolation`, are not counted); else ""."""
    open_games = [g.record.isolation for g in games if g.record.isolation not in ("", "sandbox")]
    if not open_games:
        return ""
    why = "; ".join(sorted(set(open_games)))
    return f"; bots were NOT isolated in {len(open_games)} of {len(games)} games ({why})"


def publish(results_dir: str | Path) -> list[Path]:
    """Write standings.md, standings.csv, crosstable.md, games.csv and records/ (the website is
    arena.site's, in its own directory)."""
    out = Path(results_dir)
    fingerprint, games = load(out)
    order = [b["name"] for b in fingerprint.get("bots", [])]
    table = standings(games, order, byes=swiss_byes(fingerprint, games), paired="openings" in fingerprint)
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
    return written


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def _santorini_writer():
    try:
        from rules import santorini
    except ImportError:
        return None
    return getattr(santorini, "write_game_file", None)
