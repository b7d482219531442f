"""The standings of a tournament: one `Standings` value, computed here and only here (`compute`)
from the stored games and the tournament's fingerprint (its format: round robin, gauntlet, Swiss
with byes), and rendered here as text and markdown (tabulate) and csv. `arena standings`, the md
and csv files of `publish` and the website (arena.site) all render that one value; none of them
ranks or counts anything itself.

The only module of arena that imports pandas and tabulate.

Which games count: `counted` (every stored game today); the standings, crosstable, rounds and
Elo are made of those games only.

Scoring (`GameRecord.points`): a win is 1 point, a draw 0.5, a loss 0; a forfeit is a loss for the
bot that broke the arena's rules, and a double forfeit (neither bot could play) scores 0 for both
and is left out of Elo. Elo comes from `arena.tournament.ratings.fit` (maximum likelihood, all
counted games at once). SB (Sonneborn-Berger) is the sum over a bot's opponents of the points it
scored against each x that opponent's total.

Ranks, by format (bots level on every key share a rank, shown `2=`: ranks 1, 2=, 2=, 4):
- round robin: points, then head-to-head score (points against the other bots level on points),
  then SB, then wins.
- Swiss (format = "swiss"): points, then Buchholz (the sum of its opponents' points, byes
  included), then SB, then wins. The bot that sits a round out has a bye: a won pairing, 1 point
  for each game of a pairing, which counts in `score %` as the games it stands for (so score %
  never exceeds 100); the `byes` column counts byes, and a bye is not a game (`games`) and adds
  nothing to Buchholz. `rounds` holds the rounds paired so far, round by round.
- gauntlet (format = "gauntlet"): two tables, the challengers' and the field's (the bots they
  challenge), each ranked by score %, then SB, then wins: a challenger plays every field bot, a
  field bot only the challengers, so their points are not comparable. The crosstable has a row
  per challenger and a column per field bot.
"""
from __future__ import annotations

import json
import math
import os
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from tabulate import tabulate

from arena.match.records import Forfeit, GameRecord
from arena.match.spec import params_text
from arena.tournament.aborted import aborted_note
from arena.tournament.formats import bye_points, swiss_rounds, total_games
from arena.tournament.pairs import pair_factor
from arena.tournament.ratings import DEFAULT_PRIOR_DRAWS, fit
from arena.tournament.store import DB_NAME, Store, StoredGame, pairing_results

STANDINGS_COLUMNS = ["rank", "bot", "games", "wins", "draws", "losses", "points", "score %", "elo", "elo ±",
                     "SB", "forfeits", "forfeit reasons", "errors"]
"""The standings' columns; "score diff" follows when the game keeps a score, "byes" and
"Buchholz" in a Swiss."""


def counted(games: Iterable[StoredGame]) -> list[StoredGame]:
    """The stored games that count for the standings, the crosstable, the rounds and Elo: every
    one but the aborted ones (arena.tournament.aborted), which have no result. The one place that
    decides it."""
    return [g for g in games if not g.record.is_aborted()]


def scored_records(games: Iterable[GameRecord | StoredGame]) -> list[GameRecord]:
    """The records of the games that count (`counted`), from stored games or bare records."""
    records = [g.record if isinstance(g, StoredGame) else g for g in games]
    return [r for r in records if not r.is_aborted()]


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


@dataclass
class Score:
    """Games played, wins, draws, losses and points: a bot's against one opponent (a crosstable
    cell) or in all (byes not included)."""

    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    points: float = 0.0
    pairing: str = ""
    """A crosstable cell's pairing (the name its games are stored under); "" for a total."""

    def add(self, pts: float) -> None:
        """One more game in which the bot scored `pts` (a double forfeit's 0 is a loss)."""
        self.games += 1
        self.points += pts
        if pts == 1:
            self.wins += 1
        elif pts == 0.5:
            self.draws += 1
        else:
            self.losses += 1


@dataclass
class _Tally:
    """One bot's results so far."""

    name: str
    total: Score = field(default_factory=Score)
    forfeits: int = 0
    reasons: Counter = field(default_factory=Counter)
    errors: int = 0
    """Games in which the bot had at least one error of its own (record.errors)."""
    score_diff: int = 0
    byes: int = 0
    """Byes it had (a Swiss)."""
    bye_points: float = 0.0
    bye_games: int = 0
    """The games its byes stand for (a bye is a won pairing of games_per_pairing games)."""
    versus: dict[str, Score] = field(default_factory=dict)
    """Its results against each opponent."""

    @property
    def points(self) -> float:
        return self.total.points + self.bye_points

    @property
    def score_pct(self) -> float:
        """Points per game (byes as the games they stand for), in percent; NaN before any."""
        games = self.total.games + self.bye_games
        return round(100.0 * self.points / games, 1) if games else math.nan

    def add(self, opponent: str, pairing: str, pts: float) -> None:
        self.total.add(pts)
        self.versus.setdefault(opponent, Score(pairing=pairing)).add(pts)

    def add_bye(self, games: int) -> None:
        self.byes += 1
        self.bye_games += games
        self.bye_points += bye_points(games)

    def sonneborn_berger(self, tallies: dict[str, _Tally]) -> float:
        """The sum over opponents of (points scored against them) x (their total points)."""
        return sum(s.points * tallies[opp].points for opp, s in self.versus.items())

    def buchholz(self, tallies: dict[str, _Tally]) -> float:
        """The sum of its opponents' total points (a Swiss tie-break)."""
        return sum(tallies[opp].points for opp in self.versus)

    def head_to_head(self, group: set[str]) -> float:
        """Points scored against the other bots of `group` (the bots level with it on points)."""
        return sum(s.points for opp, s in self.versus.items() if opp in group and opp != self.name)


def _tally(games: list[StoredGame], names: list[str]) -> tuple[dict[str, _Tally], bool]:
    """Every bot's tally, and whether the game keeps a score."""
    tallies = {n: _Tally(n) for n in names}
    scored = False
    for g in games:
        r = g.record
        double = r.is_double_forfeit()
        for seat in (0, 1):
            me, opp = r.players[seat], r.players[1 - seat]
            t = tallies[me]
            t.add(opp, g.pairing, r.points(seat))
            if r.scores is not None:
                scored = True
                t.score_diff += r.scores[seat] - r.scores[1 - seat]
            if seat < len(r.errors or []) and r.errors[seat]:
                t.errors += 1
            if double:
                t.forfeits += 1
                t.reasons[Forfeit.DOUBLE_FORFEIT.value] += 1
        forfeit = r.forfeiture
        if not double and forfeit is not None and forfeit.seat is not None:
            t = tallies[r.players[forfeit.seat]]
            t.forfeits += 1
            t.reasons[str(forfeit.reason or "unknown")] += 1
    return tallies, scored


RankKey = Callable[[_Tally], tuple[float, ...]]


def _round_robin_key(tallies: dict[str, _Tally], group: list[str]) -> RankKey:
    """Points, head-to-head among the bots of `group` level on points, SB, wins."""
    level: dict[float, set[str]] = {}
    for n in group:
        level.setdefault(tallies[n].points, set()).add(n)
    return lambda t: (t.points, t.head_to_head(level[t.points]), t.sonneborn_berger(tallies), t.total.wins)


def _swiss_key(tallies: dict[str, _Tally], group: list[str]) -> RankKey:
    """Points (byes included), Buchholz, SB, wins."""
    return lambda t: (t.points, t.buchholz(tallies), t.sonneborn_berger(tallies), t.total.wins)


def _gauntlet_key(tallies: dict[str, _Tally], group: list[str]) -> RankKey:
    """Score % (a bot without games last), SB, wins."""
    return lambda t: (-1.0 if math.isnan(t.score_pct) else t.score_pct, t.sonneborn_berger(tallies),
                      t.total.wins)


_RANKING: dict[str, tuple[Callable[[dict[str, _Tally], list[str]], RankKey], str]] = {
    "round_robin": (_round_robin_key, "points, then head-to-head, then SB, then wins"),
    "swiss": (_swiss_key, "points (byes included), then Buchholz, then SB, then wins"),
    "gauntlet": (_gauntlet_key, "score %, then SB, then wins"),
}
"""Per format: the sort key of a table's bots (made from the tallies and the table's bots), and
the order in words."""


def _ranked(tallies: dict[str, _Tally], group: list[str], key: RankKey) -> list[tuple[int, _Tally]]:
    """(rank, tally) of the bots of `group`, best first; bots level on the whole key share a rank."""
    order = sorted((tallies[n] for n in group), key=lambda t: (tuple(-k for k in key(t)), t.name))
    ranked: list[tuple[int, _Tally]] = []
    for i, t in enumerate(order):
        rank = ranked[-1][0] if i and key(t) == key(order[i - 1]) else i + 1
        ranked.append((rank, t))
    return ranked


# --- the value ---

@dataclass(frozen=True)
class Table:
    """One ranked table of the standings."""

    name: str
    """"standings"; a gauntlet's two are "challengers" and "field"."""
    title: str
    ranked_by: str
    """The order in words: "points, then head-to-head, then SB, then wins"."""
    frame: pd.DataFrame
    """One row per bot, best first: STANDINGS_COLUMNS (+ "score diff", "byes", "Buchholz");
    "rank" is a number, shared by bots level on every key (`display_standings` writes it `2=`)."""


@dataclass(frozen=True)
class Crosstable:
    """Results of each row bot against each column bot (the same bots in both, in the standings'
    order; a gauntlet's rows are the challengers, its columns the field)."""

    rows: tuple[str, ...]
    columns: tuple[str, ...]
    cells: dict[tuple[str, str], Score]
    """(bot, opponent) -> the bot's results against that opponent, for every pair that played."""

    def frame(self) -> pd.DataFrame:
        """Points of the row bot against the column bot (NaN on the diagonal and where none were
        played)."""
        df = pd.DataFrame(math.nan, index=pd.Index(list(self.rows), name="bot"), columns=list(self.columns))
        for me in self.rows:
            for opp in self.columns:
                cell = self.cells.get((me, opp))
                if cell is not None:
                    df.at[me, opp] = cell.points
        return df


@dataclass(frozen=True)
class RoundPairing:
    """One pairing of a Swiss round and how far it has been played."""

    pairing: str
    a: str
    b: str
    games: int
    played: int
    points_a: float
    points_b: float


@dataclass(frozen=True)
class Round:
    """One Swiss round as paired from the stored games: its pairings and its bye."""

    number: int
    pairings: tuple[RoundPairing, ...]
    bye: str | None
    bye_points: float

    @property
    def played(self) -> int:
        return sum(p.played for p in self.pairings)

    @property
    def games(self) -> int:
        return sum(p.games for p in self.pairings)


@dataclass(frozen=True)
class Standings:
    """A tournament's results as every table shows them, made by `compute`."""

    name: str
    """The tournament's name ("" when the fingerprint has none)."""
    game: str
    params: str
    """The game's parameters in the game's own order ("rows=6, cols=6")."""
    time_control: str
    format: str
    """"round_robin", "gauntlet" or "swiss"."""
    games_per_pairing: int
    bots: tuple[str, ...]
    challengers: tuple[str, ...]
    rounds_planned: int
    """A Swiss's rounds (0 for the other formats)."""
    played: int
    """Counted games."""
    planned: int
    """Every game of the tournament (a Swiss: all its rounds)."""
    tables: tuple[Table, ...]
    """One table; a gauntlet's challengers and field."""
    crosstable: Crosstable
    rounds: tuple[Round, ...]
    """A Swiss's rounds paired so far, the one being played last; () for the other formats."""
    isolation: str
    """"" or "; bots were NOT isolated in N of M games (why)" (`isolation_note`)."""
    clock: str = "wall"
    """What a move was charged: "wall" or "cpu" time (the fingerprint's `clock`, "cpu x3")."""
    wall_factor: float = 3.0
    """On a "cpu" clock, how many times its time a move may take in wall time."""
    under_load: int = 0
    """Counted games played under load (GameRecord.loaded_moves)."""
    aborted: str = ""
    """The aborted games with both bots' last output (arena.tournament.aborted.aborted_note), or ""."""
    openings: str = ""
    """The balanced openings game pairs started from (the fingerprint's `openings`: "random:4", a
    file), "" without: they change what Elo's ± means (game pairs, not single games)."""

    def openings_text(self) -> str:
        """"random:4 (each game pair starts from one opening, seats swapped)", or ""."""
        if not self.openings:
            return ""
        return f"{self.openings} (each game pair starts from one opening, seats swapped)"

    def format_text(self) -> str:
        """"round robin", "gauntlet of alice, bob", "Swiss of 7 rounds"."""
        if self.format == "gauntlet":
            return f"gauntlet of {', '.join(self.challengers)}"
        if self.format == "swiss":
            return f"Swiss of {self.rounds_planned} rounds"
        return self.format.replace("_", " ")

    def summary(self) -> str:
        """The line above every table: the tournament, its format and the games played."""
        kind = "" if self.format == "round_robin" else f"{self.format_text()}, "
        cpu = " of CPU" if self.clock == "cpu" else ""
        openings = f", openings {self.openings}" if self.openings else ""
        return (f"{self.name or '?'}: {self.game}{f' ({self.params})' if self.params else ''}, "
                f"time {self.time_control} s{cpu}, {len(self.bots)} bots, "
                f"{kind}{self.games_per_pairing} games a pairing"
                f"{openings}: {self.played}/{self.planned} games played"
                f"{self.isolation}{f'; {self.under_load} played under load' if self.under_load else ''}")

    def opponents(self, bot: str) -> list[tuple[str, Score]]:
        """`bot`'s results against each opponent it played, in the order of the standings."""
        cells = self.crosstable.cells
        return [(opp, cells[bot, opp]) for t in self.tables for opp in t.frame["bot"] if (bot, opp) in cells]


def compute(fingerprint: dict[str, Any], games: Sequence[StoredGame],
            prior_draws: float = DEFAULT_PRIOR_DRAWS) -> Standings:
    """The standings of a tournament from its fingerprint (Store.fingerprint: name, game, params,
    format, bots, challengers, rounds...) and its stored games (`counted` decides which count)."""
    fmt = str(fingerprint.get("format") or "round_robin")
    bots = [b["name"] for b in fingerprint.get("bots", [])]
    per = int(fingerprint.get("games_per_pairing") or 0)
    challengers = tuple(fingerprint.get("challengers") or ()) if fmt == "gauntlet" else ()
    rounds_planned = int(fingerprint.get("rounds") or 0) if fmt == "swiss" else 0
    games_counted = counted(games)
    names = list(dict.fromkeys([*bots, *(p for g in games_counted for p in g.record.players)]))
    tallies, scored = _tally(games_counted, names)
    rounds = _rounds(bots, per, rounds_planned, games, tallies) if fmt == "swiss" else ()
    for r in rounds:
        if r.bye in tallies:
            tallies[r.bye].add_bye(per)
    results = [(r.players[0], r.players[1], r.points(0)) for r in (g.record for g in games_counted)
               if not r.is_double_forfeit()]
    ratings = fit(results, players=names, prior_draws=prior_draws)
    factors = paired_error_factors(games_counted) if "openings" in fingerprint else {}
    make_key, ranked_by = _RANKING.get(fmt, _RANKING["round_robin"])
    if fmt == "gauntlet":
        groups = [("challengers", "Challengers", [n for n in names if n in challengers]),
                  ("field", "Field", [n for n in names if n not in challengers])]
    else:
        groups = [("standings", "Standings", names)]
    tables = tuple(
        Table(name, title, ranked_by, _frame(_ranked(tallies, group, make_key(tallies, group)), tallies,
                                             ratings, scored, fmt == "swiss", factors))
        for name, title, group in groups)
    order = [list(t.frame["bot"]) for t in tables]
    rows, columns = (order[0], order[1]) if fmt == "gauntlet" else (order[0], order[0])
    cells = {(me, opp): s for me in names for opp, s in tallies[me].versus.items()}
    planned = total_games(fmt, len(bots), per, len(challengers), rounds_planned)
    return Standings(
        name=str(fingerprint.get("name") or ""), game=str(fingerprint.get("game", "?")),
        params=params_text(str(fingerprint.get("game", "")), fingerprint.get("params") or {}),
        time_control=str(fingerprint.get("time_control", "?")), format=fmt, games_per_pairing=per,
        bots=tuple(bots), challengers=challengers, rounds_planned=rounds_planned,
        played=len(games_counted), planned=planned, tables=tables,
        crosstable=Crosstable(tuple(rows), tuple(columns), cells), rounds=rounds,
        isolation=isolation_note(games_counted),
        clock=str(fingerprint.get("clock", "wall")).split()[0],
        wall_factor=float(str(fingerprint.get("clock", "wall x3")).partition(" x")[2] or 3),
        under_load=sum(1 for g in games_counted if g.record.loaded_moves),
        aborted=aborted_note(g.record for g in games),
        openings=str(fingerprint.get("openings") or ""),
    )


def _frame(ranked: list[tuple[int, _Tally]], tallies: dict[str, _Tally], ratings: dict[str, Any],
           scored: bool, swiss: bool, factors: dict[str, float] | None = None) -> pd.DataFrame:
    """One table's rows; `factors`: each bot's paired-openings factor on its "elo ±"."""
    table = []
    for rank, t in ranked:
        rating = ratings.get(t.name)
        entry = {
            "rank": rank, "bot": t.name, "games": t.total.games, "wins": t.total.wins,
            "draws": t.total.draws, "losses": t.total.losses, "points": t.points, "score %": t.score_pct,
            "elo": round(rating.elo, 1) if rating else math.nan,
            "elo ±": round(rating.ci95 * (factors or {}).get(t.name, 1.0), 1) if rating else math.nan,
            "SB": t.sonneborn_berger(tallies), "forfeits": t.forfeits,
            "forfeit reasons": ", ".join(f"{k} {v}" for k, v in sorted(t.reasons.items())),
            "errors": t.errors,
        }
        if scored:
            entry["score diff"] = t.score_diff
        if swiss:
            entry["byes"] = t.byes
            entry["Buchholz"] = t.buchholz(tallies)
        table.append(entry)
    columns = STANDINGS_COLUMNS + (["score diff"] if scored else []) + (["byes", "Buchholz"] if swiss else [])
    df = pd.DataFrame(table, columns=columns)
    if df.empty:
        df["rank"] = pd.Series(dtype=int)
    return df


def _rounds(bots: list[str], per: int, rounds: int, stored: Sequence[StoredGame],
            tallies: dict[str, _Tally]) -> tuple[Round, ...]:
    """A Swiss's rounds, paired again exactly as the run paired them (from every stored game), each
    pairing with its counted results (two bots of a Swiss meet once: their crosstable cell)."""
    try:
        planned = swiss_rounds(bots, per, rounds, pairing_results(stored))
    except ValueError:  # fewer than 2 bots, or no round left without a rematch
        return ()
    out = []
    for r in planned:
        pairings = []
        for p in r.pairings:
            a, b = tallies[p.a].versus.get(p.b, Score()), tallies[p.b].versus.get(p.a, Score())
            pairings.append(RoundPairing(p.pairing_id, p.a, p.b, p.games, a.games, a.points, b.points))
        out.append(Round(r.number, tuple(pairings), r.bye, bye_points(per) if r.bye is not None else 0.0))
    return tuple(out)


def shown_ranks(ranks: pd.Series) -> pd.Series:
    """Ranks as people read them: `2=` where bots share rank 2, else `2`."""
    counts = ranks.value_counts()
    return ranks.map(lambda r: f"{r}=" if counts[r] > 1 else str(r))


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
    forfeit = record.forfeiture
    if record.is_double_forfeit():
        both = [f"{record.players[b.seat]}: {b.reason}" for b in (forfeit.both or ()) if b.seat is not None] \
            if forfeit is not None else []
        return "; ".join(both) or f"both: {Forfeit.DOUBLE_FORFEIT}"
    if forfeit is not None and forfeit.seat is not None:
        return f"{record.players[forfeit.seat]}: {forfeit.reason}"
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


def rounds_frame(rounds: Sequence[Round]) -> pd.DataFrame:
    """A Swiss round by round: a row per pairing (the bot listed first starts its first game) and
    one per bye, with the points each bot scored and the games played of the pairing's."""
    rows = []
    for r in rounds:
        for p in r.pairings:
            rows.append({"round": str(r.number), "bot": p.a,
                         "points": f"{_num(p.points_a)}-{_num(p.points_b)}", "opponent": p.b,
                         "games": f"{p.played} of {p.games}"})
        if r.bye is not None:
            rows.append({"round": str(r.number), "bot": r.bye, "points": f"bye: {_num(r.bye_points)}",
                         "opponent": "", "games": ""})
    return pd.DataFrame(rows, columns=["round", "bot", "points", "opponent", "games"])


def rounds_text(rounds: Sequence[Round], fmt: str = "simple") -> str:
    shown = rounds_frame(rounds)
    return tabulate(shown, headers="keys", tablefmt=fmt, showindex=False, disable_numparse=True,
                    colalign=("right", "left", "center", "left", "right"))


def report_text(standings: Standings, fmt: str = "simple", crosstable: bool = True) -> str:
    """What `arena standings` prints: the summary line, each table under its title and order, the
    crosstable (unless `crosstable` is False) and, in a Swiss, the rounds; `fmt` "github" for
    markdown (the titles then are headings)."""
    def heading(words: str) -> str:
        return f"## {words}" if fmt == "github" else words

    parts = [standings.summary()]
    for table in standings.tables:
        parts += [heading(f"{table.title} (ranked by {table.ranked_by})"), standings_text(table.frame, fmt)]
    if crosstable:
        parts += [heading("Crosstable (points of the row bot against the column bot)"),
                  crosstable_text(standings.crosstable.frame(), fmt)]
    if standings.rounds:
        parts += [heading(f"Rounds (a bye is a won pairing: {_num(bye_points(standings.games_per_pairing))} "
                          "points)"), rounds_text(standings.rounds, fmt)]
    if standings.aborted:
        parts.append(standings.aborted)
    return "\n\n".join(parts)


def standings_csv(standings: Standings) -> str:
    """standings.csv: every table's rows (a gauntlet's with a first column "group": challengers or
    field), the ranks as numbers."""
    if len(standings.tables) == 1:
        return standings.tables[0].frame.to_csv(index=False)
    frames = [t.frame.assign(group=t.name) for t in standings.tables]
    both = pd.concat(frames, ignore_index=True)
    return both[["group", *frames[0].columns.drop("group")]].to_csv(index=False)


# --- from the database ---

def load(results_dir: str | Path) -> tuple[dict[str, Any], list[StoredGame]]:
    """The tournament's fingerprint and its stored games, read from results_dir/results.sqlite."""
    with Store(Path(results_dir) / DB_NAME, create=False) as store:
        fingerprint = store.fingerprint() or {}
        return fingerprint, store.games()


def read(results_dir: str | Path) -> Standings:
    """The standings of the tournament whose results are in `results_dir`."""
    return compute(*load(results_dir))


def report(results_dir: str | Path, fmt: str = "simple") -> str:
    """The text `arena standings` prints (`report_text`)."""
    return report_text(read(results_dir), fmt)


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
    standings = compute(fingerprint, games)
    written: list[Path] = []

    def write(name: str, text: str) -> None:
        path = out / name
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
        written.append(path)

    write("standings.md", f"# {standings.name or 'tournament'}\n\n"
          + report_text(standings, "github", crosstable=False) + "\n")
    write("standings.csv", standings_csv(standings))
    write("crosstable.md", "Points of the row bot against the column bot.\n\n"
          + crosstable_text(standings.crosstable.frame(), "github") + "\n")
    write("games.csv", games_table(games).to_csv(index=False))
    records = out / "records"
    records.mkdir(exist_ok=True)
    writer = _santorini_writer() if fingerprint.get("game") == "santorini" else None
    for g in games:
        stem = _safe(g.record.game_id)
        write(f"records/{stem}.json", json.dumps(g.record.to_dict(), indent=1, sort_keys=True) + "\n")
        if writer is not None:
            try:
                moves = writer([*g.record.start_moves, *(m.move for m in g.record.moves)])
            except ValueError:
                continue  # a record whose moves do not make a game file is still in its JSON
            write(f"records/{stem}.txt", moves if moves.endswith("\n") else moves + "\n")
    return written


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def _santorini_writer():
    try:
        from rules import santorini
    except ImportError:
        return None
    return getattr(santorini, "write_game_file", None)
