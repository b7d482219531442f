"""A tournament's results in SQLite (results/<tournament>/results.sqlite), safe against `kill -9`.

- WAL mode, synchronous=FULL: a game counts once its own transaction has committed, and a reader
  (`arena standings` during a run) never blocks the writer.
- `games` is keyed by (pairing, number) UNIQUE: a game is never stored twice; a second insert of the
  same game is ignored and reported as such.
- The record itself is stored as JSON (GameRecord.to_json) beside a few columns for queries.
- An aborted game (reason `aborted`, arena.tournament.aborted) is stored like any other, so it is not
  played again; `retry_aborted` moves such games to `retried_games` (kept, never deleted), which
  makes them missing again. A database without that table (older arena) is read as it is; the
  table is added the first time a run opens it.
- The tournament's fingerprint (game, params, time control, bots and their commands, games per
  pairing, seed) is stored on the first run. A later run may only change it in ways that keep every
  stored game valid and every pairing's game numbers meaning the same thing (`fingerprint_change`):

  allowed:  appending bots at the end of the list (new pairings; the old ones are untouched) and
            raising games per pairing (the extra game numbers are played);
            anything not in the fingerprint (title, description, concurrency, games_per_task).
            raising a Swiss tournament's rounds.
  refused:  a different game, params, time control or seed; other openings (`openings`: another
            setting, or a file whose openings changed; the same openings under another file name
            are allowed); removing, renaming or reordering bots;
            changing a bot's command; fewer games per pairing; a different format or challengers;
            in a Swiss: fewer rounds, any change of bots or games per pairing (the later rounds
            were paired from the earlier ones' results).
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.match.records import ABORTED, GameRecord

SCHEMA_VERSION = 1
DB_NAME = "results.sqlite"
DB_MODE = 0o600
"""A new results database (and so its -wal and -shm files, which SQLite gives the database's
mode): the user's only, whatever the umask."""
RESULTS_DIR_MODE = 0o700
"""A new results directory (the database, the run's lock, md/csv and records): the user's only."""
_BUSY_TIMEOUT_S = 30.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS games (
    id             INTEGER PRIMARY KEY,
    pairing        TEXT    NOT NULL,
    number         INTEGER NOT NULL,
    game_id        TEXT    NOT NULL,
    seat0          TEXT    NOT NULL,
    seat1          TEXT    NOT NULL,
    winner         INTEGER,
    reason         TEXT    NOT NULL,
    forfeit_reason TEXT,
    plies          INTEGER NOT NULL,
    stored_at      REAL    NOT NULL,
    record         TEXT    NOT NULL,
    UNIQUE (pairing, number)
);
CREATE TABLE IF NOT EXISTS retried_games (
    id         INTEGER PRIMARY KEY,
    pairing    TEXT    NOT NULL,
    number     INTEGER NOT NULL,
    game_id    TEXT    NOT NULL,
    stored_at  REAL    NOT NULL,
    retried_at REAL    NOT NULL,
    record     TEXT    NOT NULL
);
"""


class StoreError(ValueError):
    """The results database cannot be used (not a database, wrong version, refused change)."""


@dataclass(frozen=True)
class StoredGame:
    pairing: str
    number: int
    record: GameRecord


def fingerprint_change(old: dict[str, Any], new: dict[str, Any]) -> str | None:
    """None when `new` keeps every game stored under `old` valid, else the reason it does not."""
    for key in ("game", "params", "time_control", "seed"):
        if old.get(key) != new.get(key):
            return (f"'{key}' changed from {old.get(key)!r} to {new.get(key)!r}; "
                    "the stored games were played under the old value")
    if _openings_key(old) != _openings_key(new):
        same_name = old.get("openings") == new.get("openings")
        return (f"'openings' changed from {old.get('openings')!r} to {new.get('openings')!r}"
                f"{' (the same file, other openings in it)' if same_name else ''}; "
                "the stored games were played from the old openings")
    old_games, new_games = old.get("games_per_pairing"), new.get("games_per_pairing")
    if not isinstance(new_games, int) or not isinstance(old_games, int) or new_games < old_games:
        return (f"'games_per_pairing' lowered from {old_games!r} to {new_games!r}; "
                "only raising it is allowed (stored games would be left out)")
    old_format, new_format = old.get("format", "round_robin"), new.get("format", "round_robin")
    if old_format != new_format:
        return (f"'format' changed from {old_format!r} to {new_format!r}; "
                "the stored games were paired under the old one")
    if old.get("challengers") != new.get("challengers"):
        return (f"'challengers' changed from {old.get('challengers')!r} to {new.get('challengers')!r}; "
                "the stored games were paired under the old ones")
    if new_format == "swiss":
        if new.get("rounds", 0) < old.get("rounds", 0):
            return (f"'rounds' lowered from {old.get('rounds')!r} to {new.get('rounds')!r}; "
                    "only raising it is allowed")
        if len(new.get("bots") or []) != len(old.get("bots") or []):
            return "a Swiss tournament's bots cannot change: every round was paired among them"
        if new.get("games_per_pairing") != old.get("games_per_pairing"):
            return ("a Swiss tournament's games_per_pairing cannot change: later rounds were paired "
                    "from the earlier rounds' results")
    old_bots, new_bots = old.get("bots") or [], new.get("bots") or []
    for k, bot in enumerate(old_bots):
        if k >= len(new_bots):
            return f"bot {bot['name']!r} was removed; bots may only be appended"
        other = new_bots[k]
        if other["name"] != bot["name"]:
            names = [b["name"] for b in new_bots]
            if bot["name"] in names:
                return (f"bot {bot['name']!r} moved from position {k + 1} to {names.index(bot['name']) + 1}; "
                        "the order of the bots fixes pairings and seats, bots may only be appended")
            return (f"bot {bot['name']!r} was removed or renamed (now {other['name']!r}); "
                    "bots may only be appended")
        if list(other["command"]) != list(bot["command"]):
            return (f"bot {bot['name']!r} changed its command from {bot['command']!r} "
                    f"to {other['command']!r}; "
                    "its stored games were played by the old one (add it under a new name instead)")
    return None


def _openings_key(fingerprint: dict[str, Any]) -> str | None:
    """What must not change of a fingerprint's openings: a file's digest, else the setting."""
    return fingerprint.get("openings_sha256") or fingerprint.get("openings")


def _write_schema(db: sqlite3.Connection) -> None:
    """WAL journal, the tables (those missing) and the schema version: for a new database or an old one."""
    db.execute("PRAGMA journal_mode = WAL")
    db.executescript(_SCHEMA)
    db.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))


def _create_whole(path: Path) -> None:
    """Make a new results database at `path` that appears with its schema: made under a name of its
    own, then linked into place, so that a reader (a course's pages while its final starts) never
    opens it empty ("schema None"). If another process made it first, theirs stays."""
    part = path.with_name(f".{path.name}.{os.getpid()}.{time.monotonic_ns()}.part")
    os.close(os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL, DB_MODE))
    try:
        db = sqlite3.connect(part, isolation_level=None)
        try:
            _write_schema(db)
        finally:
            db.close()  # the last connection: its WAL is checkpointed into the file and removed
        try:
            os.link(part, path)
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links: moved instead (not made in the meantime)
            if not path.exists():
                os.rename(part, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(part)


class Store:
    """The results database of one tournament. Use as a context manager."""

    def __init__(self, path: str | Path, create: bool = True) -> None:
        self.path = Path(path)
        if not create and not self.path.is_file():
            raise StoreError(f"no results yet: {self.path} does not exist")
        try:
            if create:
                self.path.parent.mkdir(mode=RESULTS_DIR_MODE, parents=True, exist_ok=True)
                if not self.path.exists():
                    _create_whole(self.path)
            self._db = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_S, isolation_level=None)
            self._db.execute(f"PRAGMA busy_timeout = {int(_BUSY_TIMEOUT_S * 1000)}")
            self._db.execute("PRAGMA synchronous = FULL")
            if create:  # a database of an older arena gets the tables added since
                _write_schema(self._db)
            version = self._meta("schema")
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: not a usable results database ({exc})") from None
        if version != str(SCHEMA_VERSION):
            self.close()
            raise StoreError(f"{self.path}: results database schema {version!r}, "
                             f"this arena reads {SCHEMA_VERSION}")

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        db = getattr(self, "_db", None)
        if db is not None:
            db.close()
            self._db = None  # type: ignore[assignment]

    def _meta(self, key: str) -> str | None:
        try:
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        except sqlite3.OperationalError:
            return None
        return row[0] if row else None

    # --- the fingerprint ---
    def fingerprint(self) -> dict[str, Any] | None:
        value = self._meta("fingerprint")
        return json.loads(value) if value is not None else None

    def accept_fingerprint(self, fingerprint: dict[str, Any]) -> str:
        """Store `fingerprint` on a first run, or check it against the stored one.

        Returns "new", "same" or "extended" (an allowed change, now stored); raises StoreError with
        the reason for a change that would break exactly-once.
        """
        text = json.dumps(fingerprint, sort_keys=True)
        self._db.execute("BEGIN IMMEDIATE")
        try:
            old = self.fingerprint()
            if old is None:
                self._db.execute("INSERT INTO meta VALUES ('fingerprint', ?)", (text,))
                status = "new"
            elif old == json.loads(text):
                status = "same"
            else:
                reason = fingerprint_change(old, json.loads(text))
                if reason is not None:
                    raise StoreError(f"the tournament file changed since the first run: {reason}")
                self._db.execute("UPDATE meta SET value = ? WHERE key = 'fingerprint'", (text,))
                status = "extended"
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        return status

    # --- the last run's timing (what `arena tournament plan` calibrates its estimates with) ---
    def record_run(self, timing: dict[str, Any]) -> None:
        """Keep the figures of the run that just ended (meta key 'last_run', JSON)."""
        self._db.execute("INSERT INTO meta VALUES ('last_run', ?) ON CONFLICT (key) DO UPDATE SET "
                         "value = excluded.value", (json.dumps(timing, sort_keys=True),))

    def last_run(self) -> dict[str, Any] | None:
        value = self._meta("last_run")
        try:
            data = json.loads(value) if value is not None else None
        except ValueError:
            return None
        return data if isinstance(data, dict) else None

    # --- games ---
    def add_game(self, pairing: str, number: int, record: GameRecord) -> bool:
        """Commit one game in its own transaction; False if (pairing, number) was already stored."""
        forfeit = record.forfeiture
        forfeit_reason = str(forfeit.reason) if forfeit is not None else None
        cur = self._db.execute(
            "INSERT INTO games (pairing, number, game_id, seat0, seat1, winner, reason, forfeit_reason,"
            " plies, stored_at, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (pairing, number) DO NOTHING",
            (pairing, number, record.game_id, record.players[0], record.players[1], record.winner,
             record.reason, forfeit_reason, len(record.moves), time.time(), record.to_json()),
        )
        return cur.rowcount == 1

    def retry_aborted(self) -> list[str]:
        """Make the aborted games missing again (to be played by the next run): each moves, in one
        transaction, to the `retried_games` table, where it is kept. Returns their game ids."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            rows = self._db.execute("SELECT id, pairing, number, game_id, stored_at, record FROM games"
                                    " WHERE reason = ?", (ABORTED,)).fetchall()
            now = time.time()
            self._db.executemany(
                "INSERT INTO retried_games (pairing, number, game_id, stored_at, retried_at, record)"
                " VALUES (?, ?, ?, ?, ?, ?)", [(*row[1:5], now, row[5]) for row in rows])
            self._db.executemany("DELETE FROM games WHERE id = ?", [(row[0],) for row in rows])
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        return [row[3] for row in rows]

    def retried(self) -> list[StoredGame]:
        """The aborted games `retry_aborted` set aside, oldest first (none in an older database)."""
        try:
            rows = self._db.execute("SELECT pairing, number, record FROM retried_games"
                                    " ORDER BY id").fetchall()
        except sqlite3.OperationalError:
            return []
        return [StoredGame(pairing, number, record_from_json(text)) for pairing, number, text in rows]

    def stored_numbers(self) -> dict[str, set[int]]:
        out: dict[str, set[int]] = {}
        for pairing, number in self._db.execute("SELECT pairing, number FROM games"):
            out.setdefault(pairing, set()).add(number)
        return out

    def pairing_results(self) -> dict[str, dict[int, float]]:
        """pairing -> {game number: points of the pairing's first bot}, the bot in seat 0 of its even
        games (what a Swiss round is planned from: arena.formats.swiss_rounds)."""
        return pairing_results(self.iter_games())

    def count(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM games").fetchone()[0]

    def games(self) -> list[StoredGame]:
        return list(self.iter_games())

    def iter_games(self) -> Iterator[StoredGame]:
        rows = self._db.execute("SELECT pairing, number, record FROM games ORDER BY id").fetchall()
        for pairing, number, text in rows:
            yield StoredGame(pairing, number, record_from_json(text))


_RECORD_FIELDS = {f.name for f in dataclasses.fields(GameRecord)}


def pairing_results(games: Iterator[StoredGame] | list[StoredGame]) -> dict[str, dict[int, float]]:
    """pairing -> {game number: points of the pairing's first bot} (see Store.pairing_results)."""
    out: dict[str, dict[int, float]] = {}
    for game in games:
        seat = 0 if game.number % 2 == 0 else 1
        out.setdefault(game.pairing, {})[game.number] = game.record.points(seat)
    return out


def record_from_json(text: str) -> GameRecord:
    """A GameRecord from stored JSON, ignoring fields this version does not know."""
    data = json.loads(text)
    return GameRecord.from_dict({k: v for k, v in data.items() if k in _RECORD_FIELDS})
