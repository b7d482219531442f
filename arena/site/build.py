"""Render a tournament's site from the results database with the Jinja2 templates; write it.

The site directory holds only pages, records and static files (never the database or the lock):

    index.html  games.html  bots/<bot>.html  games/<game id>.html
    records/<game id>.json  records/<game id>.txt  static/...
"""
from __future__ import annotations

import json
import os
import shutil
import tomllib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from arena import __version__
from arena.site import model
from arena.tournament import standings as st
from arena.tournament.store import DB_NAME, StoredGame

SITE_DIR_NAME = "site"
HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"
BOARDS = sorted(p.stem for p in (STATIC / "boards").glob("*.js") if p.stem != "svg")
"""The games with a board module (games.html draws the games in progress with it)."""
FORMAT_NAMES = {"round_robin": "round robin", "": "round robin"}


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


def page_extras(tournament_file: str | Path | None) -> dict[str, str]:
    """`title` and `description` of a tournament file (not in the stored fingerprint), if readable."""
    if tournament_file is None:
        return {}
    try:
        data = tomllib.loads(Path(tournament_file).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}
    return {k: data[k] for k in ("title", "description") if isinstance(data.get(k), str)}


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
        self._game_pages: dict[str, tuple[tuple[str | None, str | None], str]] = {}
        """game id -> (its previous and next game's ids, its page)."""
        self._written: list[Path] = []
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
        fingerprint, games = self.load()
        games = sorted(games, key=lambda g: (g.pairing, g.number))
        self.games_count = len(games)
        self.out.mkdir(parents=True, exist_ok=True)
        self._copy_static()
        info = self.tournament_info(fingerprint, games)
        order = [b["name"] for b in fingerprint.get("bots", [])]
        table = st.standings(games, order, paired="openings" in fingerprint)
        cross = st.crosstable(games, list(table["bot"]))
        rows = [model.game_row(g) for g in games]
        standing_rows = [_standing_row(r) for r in table.to_dict("records")]
        common = {"t": info, "version": __version__}
        self._render("index.html", "index.html", root="", live=True, standings=standing_rows,
                     columns=_columns(table), cross=_cross(cross, games), elo_note=model.ELO_NOTE,
                     sb_note=model.SB_NOTE, forfeit_reasons=model.forfeit_reasons(games), **common)
        self._render("games.html", "games.html", root="", live=True, games=rows,
                     bots=list(table["bot"]), boards=BOARDS, **common)
        commands = {b["name"]: _command_text(b.get("command")) for b in fingerprint.get("bots", [])}
        limit = model.per_move_limit(fingerprint.get("time_control", ""))
        for row in standing_rows:
            page = model.bot_page(row["bot"], commands.get(row["bot"], ""), row, games, limit)
            self._render(f"bots/{model.safe_name(row['bot'])}.html", "bot.html", root="../", live=True,
                         bot=page, **common)
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

    def _write(self, rel: str, text: str) -> None:
        path = self.out / rel
        try:
            if path.read_text(encoding="utf-8") == text:
                return
        except (OSError, UnicodeDecodeError):
            pass
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
        self._written.append(path)

    def _copy_static(self) -> None:
        for source in sorted(STATIC.rglob("*")):
            if source.is_file() and not source.name.startswith("."):
                rel = source.relative_to(HERE).as_posix()
                target = self.out / rel
                if target.is_file() and target.read_bytes() == source.read_bytes():
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, target)
                self._written.append(target)

    # --- the tournament's facts ---
    def tournament_info(self, fingerprint: dict[str, Any], games: list[StoredGame]) -> dict[str, Any]:
        extras = page_extras(self.tournament_file)
        name = str(fingerprint.get("name") or self.results_dir.name)
        bots = [b["name"] for b in fingerprint.get("bots", [])]
        per = fingerprint.get("games_per_pairing", 0)
        planned = fingerprint.get("total_games") or len(bots) * (len(bots) - 1) // 2 * per
        started = sorted(g.record.started_at for g in games if g.record.started_at)
        params = fingerprint.get("params") or {}
        fmt = str(fingerprint.get("format", ""))
        return {
            "name": name, "title": extras.get("title") or name, "description": extras.get("description", ""),
            "game": fingerprint.get("game", "?"),
            "params": ", ".join(f"{k} = {v}" for k, v in params.items()),
            "clock": model.describe_clock(fingerprint.get("time_control", "?")),
            "format": FORMAT_NAMES.get(fmt, fmt.replace("_", " ")),
            "games_per_pairing": per, "bots": bots, "played": len(games), "planned": planned,
            "first_game": started[0][:16].replace("T", " ") if started else "",
            "last_game": started[-1][:16].replace("T", " ") if started else "",
            "published": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "isolation": model.isolation_summary(games),
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


def _columns(table) -> list[dict[str, str]]:
    """The standings columns in order; columns other versions add (errors, ...) come before forfeits."""
    known = {k for k, _, _ in _KNOWN + _TAIL} | _HIDDEN
    extra = [(c, c, "num" if str(table[c].dtype) != "object" else "text") for c in table.columns
             if c not in known]
    present = set(table.columns)
    return [{"key": k, "label": label, "type": kind} for k, label, kind in _KNOWN + extra + _TAIL
            if k in present]


def _standing_row(row: dict[str, Any]) -> dict[str, Any]:
    out = dict(row)
    out["file"] = model.safe_name(str(row["bot"]))
    return out


def _cross(cross, games: list[StoredGame]) -> dict[str, Any]:
    """The crosstable: per cell the points, the games and the pairing (for the link)."""
    pairing: dict[frozenset, str] = {}
    played: dict[tuple[str, str], int] = {}
    for g in games:
        a, b = g.record.players
        pairing[frozenset((a, b))] = g.pairing
        played[(a, b)] = played.get((a, b), 0) + 1
        played[(b, a)] = played.get((b, a), 0) + 1
    names = list(cross.index)
    rows = []
    for me in names:
        cells = []
        for opp in names:
            value = cross.at[me, opp]
            n = played.get((me, opp), 0)
            got = None if value != value else value
            cells.append({"self": me == opp, "points": got, "games": n, "opponent": opp,
                          "text": f"{_halves(got or 0.0)} of {n}", "tone": _tone(got or 0.0, n),
                          "pairing": pairing.get(frozenset((me, opp)), "")})
        rows.append({"bot": me, "file": model.safe_name(me), "cells": cells})
    return {"names": names, "rows": rows}


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
