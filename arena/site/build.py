"""Render a tournament's site from the results database with the Jinja2 templates; write it.

The site directory holds only pages, records and static files (never the database or the lock):

    index.html  games.html  rounds.html (a Swiss)  bots/<bot>.html  games/<game id>.html
    records/<game id>.json  records/<game id>.txt  static/...

The standings, crosstable and rounds are `arena.tournament.standings.compute`'s, as `arena
standings` prints them; the site lays them out and computes none of them. Every file is written
world-readable (FILE_MODE) and every folder world-enterable (DIR_MODE), whatever the umask, so
that a web server running as another user can serve the site.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from arena import __version__
from arena.site import model
from arena.tournament import config
from arena.tournament import standings as st
from arena.tournament.formats import bye_points
from arena.tournament.store import DB_NAME, RESULTS_DIR_MODE, StoredGame

SITE_DIR_NAME = "site"
HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"
BOARDS = sorted(p.stem for p in (STATIC / "boards").glob("*.js") if p.stem != "svg")
"""The games with a board module (games.html draws the games in progress with it)."""
FORMAT_NAMES = {"round_robin": "round robin", "": "round robin"}
FILE_MODE = 0o644
"""Every file of the site: readable by all (a web server runs as another user)."""
DIR_MODE = 0o755
"""Every folder of the site: enterable and listable by all."""


class SiteError(ValueError):
    """A site that cannot be written where asked; the message names the directory."""


def default_out(results_dir: str | Path) -> Path:
    """Where `arena publish` writes the site: results/<name>/site/."""
    return Path(results_dir) / SITE_DIR_NAME


def check_out(site: str | Path, results_dir: str | Path) -> Path:
    """`site` if the website may go there: a site is copied to web hosts, so it must not hold (or
    be, or contain) the results directory with its database and lock."""
    site, results = Path(site), Path(results_dir)
    if (site.resolve() == results.resolve() or site.resolve() in results.resolve().parents
            or (site / DB_NAME).exists()):
        raise SiteError(f"--out {site}: the website would hold the results database; "
                        "choose a directory of its own")
    return site


@dataclass(frozen=True)
class PageOptions:
    """What the tournament file says about the pages (none of it is in the stored results)."""

    title: str = ""
    description: str = ""
    show_commands: bool = True
    """[site] show_commands: False hides the bots' commands and the `hidden` directories."""
    hidden: tuple[str, ...] = ()
    """Directories written as model.HIDDEN_DIR in every published text (model.hidden_directories)."""


def page_options(tournament_file: str | Path | None) -> PageOptions:
    """The title, description and [site] table of a tournament file (defaults without one).
    TournamentError for a file that does not read, so that a broken [site] never shows what it hid."""
    if tournament_file is None:
        return PageOptions()
    tour = config.load(tournament_file, check_commands=False)
    hidden: tuple[str, ...] = ()
    if not tour.site.show_commands:
        words = [w for b in tour.bots for w in b.argv]
        hidden = tuple(model.hidden_directories(words, os.path.dirname(os.path.abspath(tour.path))))
    return PageOptions(tour.title, tour.description, tour.site.show_commands, hidden)


def _json_for_script(value: Any) -> str:
    """JSON safe inside <script type="application/json">: no "<" can close the element."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).replace("<", "\\u003c")


class SiteBuilder:
    """Builds the site of one results directory; rebuilding reuses the pages of games already drawn
    (a stored game never changes), so `arena serve` can rebuild after every new game."""

    def __init__(self, results_dir: str | Path, out: str | Path | None = None,
                 tournament_file: str | Path | None = None,
                 fingerprint: dict[str, Any] | None = None) -> None:
        self.results_dir = Path(results_dir)
        self.out = Path(out) if out is not None else default_out(self.results_dir)
        self.tournament_file = tournament_file
        self.fallback_fingerprint = fingerprint or {}
        self.env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(["html"]),
                               undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
        self.env.filters["num"] = _num
        self.env.filters["secs"] = _secs
        self.env.filters["botfile"] = model.safe_name
        self.env.filters["file"] = model.safe_name
        self._game_pages: dict[str, tuple[tuple[str | None, str | None], str]] = {}
        """game id -> (its previous and next game's ids, its page)."""
        self._hidden: tuple[str, ...] = ()
        self._hidden_games: dict[str, StoredGame] = {}
        """Games with those directories hidden, by id (a stored game never changes)."""
        self._written: list[Path] = []
        self._folders: set[Path] = set()
        self.games_count = 0
        """Games in the last build (the live version `arena serve` gives its pages)."""

    # --- reading ---
    def load(self) -> tuple[dict[str, Any], list[StoredGame]]:
        """The fingerprint and games; before the first game is stored, the tournament file's."""
        if (self.results_dir / DB_NAME).is_file():
            fingerprint, games = st.load(self.results_dir)
            return fingerprint or self.fallback_fingerprint, games
        return self.fallback_fingerprint, []

    # --- writing ---
    def build(self) -> list[Path]:
        """Write every page; returns the files written (unchanged files are not rewritten)."""
        self._written = []
        self._folders = set()
        fingerprint, games = self.load()
        games = sorted(games, key=lambda g: (g.pairing, g.number))
        self.games_count = len(games)
        options = page_options(self.tournament_file)
        if options.hidden != self._hidden:  # pages drawn with other directories hidden are stale
            self._game_pages.clear()
            self._hidden_games.clear()
            self._hidden = options.hidden
        if options.hidden:
            games = [self._hidden_games.get(g.record.game_id) or self._hidden_games.setdefault(
                g.record.game_id, model.hide_paths(g, list(options.hidden))) for g in games]
        self._folder(self.out)
        self._copy_static()
        standings = st.compute(fingerprint, games)
        info = self.tournament_info(standings, options, games)
        tables = [_table(t, standings) for t in standings.tables]
        common = {"t": info, "version": __version__}
        self._render("index.html", "index.html", root="", live=True, tables=tables,
                     cross=_cross(standings), elo_note=model.ELO_NOTE, sb_note=model.SB_NOTE,
                     forfeit_reasons=model.forfeit_reasons(games), **common)
        rows = [model.game_row(g) for g in games]
        self._render("games.html", "games.html", root="", live=True, games=rows,
                     bots=[r["bot"] for t in tables for r in t["rows"]], boards=BOARDS, **common)
        if standings.rounds:
            self._render("rounds.html", "rounds.html", root="", live=True, rounds=standings.rounds, **common)
        commands = {b["name"]: _command_text(b.get("command")) for b in fingerprint.get("bots", [])}
        limit = model.per_move_limit(fingerprint.get("time_control", ""))
        for table in tables:
            for row in table["rows"]:
                command = commands.get(row["bot"], "") if options.show_commands else ""
                page = model.bot_page(row["bot"], command, row, standings.opponents(row["bot"]), games, limit)
                self._render(f"bots/{row['file']}.html", "bot.html", root="../", live=True, bot=page,
                             **common)
        around = model.neighbours(rows)
        for g in games:
            self._game(g, around[g.record.game_id], common)
        return list(self._written)

    def _game(self, g: StoredGame, around: tuple[model.GameRow | None, model.GameRow | None],
              common: dict[str, Any]) -> None:
        stem = model.safe_name(g.record.game_id)
        self._write(f"records/{stem}.json", json.dumps(g.record.to_dict(), indent=1, sort_keys=True) + "\n")
        moves = model.move_file_text(g.record)
        if moves is not None:
            self._write(f"records/{stem}.txt", moves)
        previous, following = around
        key = (previous.game_id if previous else None, following.game_id if following else None)
        known, page = self._game_pages.get(g.record.game_id, (None, None))
        if page is None or known != key:  # a stored game never changes; its neighbours may
            data = model.game_page(g)
            page = self.env.get_template("game.html").render(
                root="../", live=False, g=data, row=model.game_row(g), data_json=_json_for_script(data),
                stem=stem, has_moves=moves is not None, logs=model.game_logs(g.record),
                max_trace_chars=model.MAX_TRACE_CHARS,
                previous=previous, following=following,
                bot_files=[model.safe_name(p) for p in g.record.players],
                **common)
            self._game_pages[g.record.game_id] = (key, page)
        self._write(f"games/{stem}.html", page)

    def _render(self, path: str, template: str, **context: Any) -> None:
        self._write(path, self.env.get_template(template).render(**context))

    def _write(self, rel: str, text: str | bytes) -> None:
        """Write `rel` (FILE_MODE) unless it already holds `text`."""
        data = text.encode("utf-8") if isinstance(text, str) else text
        path = self.out / rel
        self._folder(path.parent)
        try:
            same = path.read_bytes() == data
        except OSError:
            same = False
        if same:
            if path.stat().st_mode & 0o777 != FILE_MODE:  # written by an arena that left it private
                os.chmod(path, FILE_MODE)
            return
        tmp = path.with_name(path.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(fd, FILE_MODE)  # the umask took bits off the mode given to open
            handle.write(data)
        os.replace(tmp, path)
        self._written.append(path)

    def _folder(self, path: Path) -> None:
        """Make `path` and the folders between it and the site's, each DIR_MODE (the site's own
        folder, perhaps the user's --out, keeps any mode bits it has beyond DIR_MODE)."""
        if path in self._folders:
            return
        if path != self.out:
            self._folder(path.parent)
        elif not path.parent.exists():  # `arena serve` before the first game: no results directory yet
            path.parent.mkdir(mode=RESULTS_DIR_MODE, parents=True, exist_ok=True)
        path.mkdir(exist_ok=True)
        mode = path.stat().st_mode & 0o7777
        wanted = mode | DIR_MODE if path == self.out else DIR_MODE
        if mode != wanted:
            os.chmod(path, wanted)
        self._folders.add(path)

    def _copy_static(self) -> None:
        for source in sorted(STATIC.rglob("*")):
            if source.is_file() and not source.name.startswith("."):
                self._write(source.relative_to(HERE).as_posix(), source.read_bytes())

    # --- the tournament's facts ---
    def tournament_info(self, standings: st.Standings, options: PageOptions,
                        games: list[StoredGame]) -> dict[str, Any]:
        name = standings.name or self.results_dir.name
        started = sorted(g.record.started_at for g in games if g.record.started_at)
        return {
            "name": name, "title": options.title or name, "description": options.description,
            "game": standings.game, "params": standings.params,
            "clock": model.describe_clock(standings.time_control) + (
                f" of CPU time (a move may take {standings.wall_factor:g} times as long in wall time)"
                if standings.clock == "cpu" else ""),
            "under_load": standings.under_load,
            "format": standings.format_text(), "rounds": bool(standings.rounds),
            "bye_points": bye_points(standings.games_per_pairing),
            "games_per_pairing": standings.games_per_pairing, "bots": list(standings.bots),
            "played": standings.played, "planned": standings.planned,
            "first_game": started[0][:16].replace("T", " ") if started else "",
            "last_game": started[-1][:16].replace("T", " ") if started else "",
            "published": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "isolation": model.isolation_summary(games),
            "openings": standings.openings_text(),
        }


def publish_site(results_dir: str | Path, out: str | Path | None = None,
                 tournament_file: str | Path | None = None) -> list[Path]:
    """Write the tournament's site (default results_dir/site/); returns the files written.
    SiteError if `out` would hold the results database."""
    site = check_out(out if out is not None else default_out(results_dir), results_dir)
    return SiteBuilder(results_dir, site, tournament_file).build()


# --- helpers for the templates ---

_KNOWN = [("rank", "#", "num"), ("bot", "bot", "text"), ("points", "points", "num"),
          ("score %", "score %", "num"), ("elo", "Elo ± 95%", "num"), ("games", "games", "num"),
          ("wins", "W", "num"), ("draws", "D", "num"), ("losses", "L", "num"), ("SB", "SB", "num")]
"""Standings columns in the order shown: what a reader looks for first comes first (phones show
the first few without scrolling)."""
_TAIL = [("forfeits", "forfeits", "num"), ("forfeit reasons", "forfeit reasons", "text")]
_HIDDEN = {"elo ±"}


def _columns(frame) -> list[dict[str, str]]:
    """The standings columns in order; columns other versions add (errors, byes, ...) come before forfeits."""
    known = {k for k, _, _ in _KNOWN + _TAIL} | _HIDDEN
    extra = [(c, c, "num" if str(frame[c].dtype) != "object" else "text") for c in frame.columns
             if c not in known]
    present = set(frame.columns)
    return [{"key": k, "label": label, "type": kind} for k, label, kind in _KNOWN + extra + _TAIL
            if k in present]


def _table(table: st.Table, standings: st.Standings) -> dict[str, Any]:
    """One standings table for the templates: its columns, and per row the values (`raw`, what the
    columns sort by) and the text `arena standings` prints for them (`text`)."""
    shown = st.display_standings(table.frame)
    rows = [{"bot": raw["bot"], "file": model.safe_name(str(raw["bot"])), "raw": raw, "text": text,
             "table": table.title if len(standings.tables) > 1 else ""}
            for raw, text in zip(table.frame.to_dict("records"), shown.to_dict("records"), strict=True)]
    return {"name": table.name, "id": "standings" if table.name == "standings" else f"standings-{table.name}",
            "title": table.title, "ranked_by": table.ranked_by, "columns": _columns(table.frame),
            "rows": rows}


def _cross(standings: st.Standings) -> dict[str, Any]:
    """The crosstable: per cell the row bot's results against the column bot and its pairing (for
    the link). Columns are numbered as the rows when they are the same bots (else named)."""
    cross = standings.crosstable
    square = cross.rows == cross.columns
    columns = [{"bot": n, "label": str(i) if square else n, "file": model.safe_name(n)}
               for i, n in enumerate(cross.columns, 1)]
    rows = []
    for me in cross.rows:
        cells = []
        for opp in cross.columns:
            score = cross.cells.get((me, opp))
            got, n = (score.points, score.games) if score else (None, 0)
            cells.append({"self": me == opp, "points": got, "games": n, "opponent": opp,
                          "text": f"{_halves(got or 0.0)} of {n}", "tone": _tone(got or 0.0, n),
                          "pairing": score.pairing if score else ""})
        rows.append({"bot": me, "file": model.safe_name(me), "cells": cells})
    note = ("Points of the row bot against the column bot, out of the games played; a cell lists those games."
            if square else "Points of each challenger (rows) against each bot of the field (columns), out of "
            "the games played; a cell lists those games.")
    return {"columns": columns, "rows": rows, "note": note}


def _halves(points: float) -> str:
    """Points as a crosstable cell says them: "1", "½", "1½" (never "1/2", which reads as a draw)."""
    whole, half = divmod(round(points * 2), 2)
    return (str(whole) if whole or not half else "") + ("½" if half else "")


def _tone(points: float, games: int) -> str:
    """"ahead", "even" or "behind": how the row bot did against the column bot (the cell's colour)."""
    if not games:
        return ""
    return "ahead" if points * 2 > games else "behind" if points * 2 < games else "even"


def _command_text(command: Any) -> str:
    if isinstance(command, list):
        return " ".join(str(a) for a in command)
    return str(command or "")


def _num(value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "—"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def seconds_text(value: float) -> str:
    """A duration as people read it: "0.3 ms", "42 ms", "1.25 s", "63.1 s"."""
    if value < 0.01:
        return f"{value * 1000:.1f} ms"
    if value < 1:
        return f"{value * 1000:.0f} ms"
    return f"{value:.2f} s" if value < 10 else f"{value:.1f} s"


def _secs(value: Any) -> str:
    if not isinstance(value, (int, float)):
        return "—"
    return seconds_text(value)
