"""course.db's schema in one place: every table, `PRAGMA user_version`, and the ordered
migrations that bring a course.db made by an older arena up to this one, in place.

Version 0 is a course.db made before the schema had a version (each module created its own
tables, some on first read); version 1 has the same tables, all created when the database is
opened. A new version appends a migration (SQL, run in one transaction with the version bump) and
never edits an old one: a course that upgrades mid-term keeps every row."""
from __future__ import annotations

import sqlite3

TABLES_V1 = """
-- submissions: the students, their uploads, the jobs that build and qualify them
CREATE TABLE IF NOT EXISTS students (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL, grp TEXT NOT NULL DEFAULT '',
    in_roster INTEGER NOT NULL DEFAULT 1, disabled INTEGER NOT NULL DEFAULT 0, chosen_id INTEGER);
CREATE TABLE IF NOT EXISTS submissions (
    id INTEGER PRIMARY KEY AUTOINCREMENT, student_id TEXT NOT NULL REFERENCES students(id),
    version INTEGER NOT NULL, filename TEXT NOT NULL, protocol TEXT NOT NULL, kind TEXT NOT NULL,
    sha256 TEXT NOT NULL, size INTEGER NOT NULL, created TEXT NOT NULL, status TEXT NOT NULL,
    reason TEXT, detail TEXT, command TEXT, finished TEXT, UNIQUE (student_id, version));
CREATE INDEX IF NOT EXISTS submissions_by_student ON submissions (student_id, id);
CREATE TABLE IF NOT EXISTS jobs (
    submission_id INTEGER PRIMARY KEY REFERENCES submissions(id), state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0, enqueued TEXT NOT NULL, started TEXT);
CREATE TABLE IF NOT EXISTS build_logs (submission_id INTEGER PRIMARY KEY REFERENCES submissions(id),
    text TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS games (submission_id INTEGER NOT NULL REFERENCES submissions(id),
    number INTEGER NOT NULL, record TEXT NOT NULL, PRIMARY KEY (submission_id, number));
-- accounts: sign-in, sessions, API tokens, the audit log
CREATE TABLE IF NOT EXISTS accounts (
    id TEXT PRIMARY KEY,            -- a roster id (student) or a staff name
    role TEXT NOT NULL CHECK (role IN ('student', 'staff')),
    password TEXT,                  -- argon2id hash; NULL until set through a sign-in link
    invite TEXT UNIQUE,             -- SHA-256 of the pending one-time sign-in link's secret
    token TEXT UNIQUE,              -- SHA-256 of the API token
    generation INTEGER NOT NULL DEFAULT 0,  -- bumped on a new password: older sessions end
    created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,            -- SHA-256 of the session's secret (the cookie carries the secret)
    account_id TEXT NOT NULL,
    created TEXT NOT NULL,          -- ISO 8601, UTC
    expires REAL NOT NULL           -- Unix time after which the session is over
);
CREATE INDEX IF NOT EXISTS sessions_by_account ON sessions (account_id);
CREATE TABLE IF NOT EXISTS audit_log (
    id INTEGER PRIMARY KEY,
    at TEXT NOT NULL,               -- ISO 8601, UTC
    actor TEXT NOT NULL,            -- a staff name, or "(terminal)" for `arena course ...` commands
    action TEXT NOT NULL,
    target TEXT NOT NULL DEFAULT '',
    detail TEXT NOT NULL DEFAULT ''
);
-- phases: reports and the judged requirements
CREATE TABLE IF NOT EXISTS reports (submission_id INTEGER PRIMARY KEY REFERENCES submissions(id),
    filename TEXT NOT NULL, sha256 TEXT NOT NULL, size INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS phase_checks (submission_id INTEGER NOT NULL REFERENCES submissions(id),
    requirement TEXT NOT NULL, passed INTEGER NOT NULL, evidence TEXT NOT NULL, game_ids TEXT NOT NULL,
    disagreements TEXT NOT NULL, value REAL, checked TEXT NOT NULL, PRIMARY KEY (submission_id, requirement));
CREATE TABLE IF NOT EXISTS phase_games (game_id TEXT PRIMARY KEY, submission_id INTEGER NOT NULL
    REFERENCES submissions(id), record TEXT NOT NULL);
-- the ladder: players, games, ratings and their history
CREATE TABLE IF NOT EXISTS ladder_players (
    key TEXT PRIMARY KEY,           -- "v<submission id>" (a student's version) or "ref:<bot name>"
    name TEXT NOT NULL UNIQUE,      -- the bot's name in games: "<student id>-v<version>" or the bot's
    student_id TEXT,                -- NULL for a reference bot
    submission_id INTEGER,
    mu REAL NOT NULL, sigma REAL NOT NULL,
    games INTEGER NOT NULL DEFAULT 0,   -- rated games played
    created TEXT NOT NULL           -- when the ladder first saw it (ISO 8601 UTC)
);
CREATE TABLE IF NOT EXISTS ladder_games (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    a TEXT NOT NULL REFERENCES ladder_players(key), b TEXT NOT NULL REFERENCES ladder_players(key),
    rated INTEGER NOT NULL,
    requested_by TEXT,              -- the student who asked for this unrated game
    created TEXT NOT NULL,
    state TEXT NOT NULL,            -- queued (asked for), scheduled (handed out by due), done, errored
    detail TEXT NOT NULL DEFAULT '',
    finished TEXT
);
CREATE INDEX IF NOT EXISTS ladder_games_by_state ON ladder_games (state, id);
CREATE TABLE IF NOT EXISTS ladder_records (
    game_id TEXT PRIMARY KEY, ladder_id INTEGER NOT NULL REFERENCES ladder_games(id),
    at TEXT NOT NULL, record TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS ladder_history (
    id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL REFERENCES ladder_players(key),
    at TEXT NOT NULL, game_id TEXT NOT NULL,
    mu REAL NOT NULL, sigma REAL NOT NULL);
CREATE INDEX IF NOT EXISTS ladder_history_by_key ON ladder_history (key, id);
-- the final's runs and entrants
CREATE TABLE IF NOT EXISTS final_runs (run INTEGER PRIMARY KEY, started TEXT NOT NULL, finished TEXT,
    published TEXT);
CREATE TABLE IF NOT EXISTS final_entrants (run INTEGER NOT NULL REFERENCES final_runs(run),
    student_id TEXT NOT NULL, submission_id INTEGER NOT NULL, bot TEXT NOT NULL, command TEXT NOT NULL,
    PRIMARY KEY (run, student_id));
-- pseudonyms
CREATE TABLE IF NOT EXISTS privacy_secret (id INTEGER PRIMARY KEY CHECK (id = 1), secret TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS pseudonyms (student_id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE);
"""
"""Every table and index of version 1 (all `IF NOT EXISTS`: a version-0 file has some of them)."""

TABLES_V2 = """
-- a phase's report, handed in on its own (issue 32): every upload kept, the latest before the
-- phase's deadline (plus the student's extension) is the one judged
CREATE TABLE IF NOT EXISTS phase_reports (
    id INTEGER PRIMARY KEY AUTOINCREMENT, student_id TEXT NOT NULL REFERENCES students(id),
    phase TEXT NOT NULL,            -- the phase's name in course.toml
    filename TEXT NOT NULL, sha256 TEXT NOT NULL, size INTEGER NOT NULL,
    created TEXT NOT NULL           -- ISO 8601, UTC
);
CREATE INDEX IF NOT EXISTS phase_reports_by_student ON phase_reports (student_id, phase, id);
"""
"""Version 2's new table (a report kept with an upload stays in `reports` and is still read)."""

TABLES_V3 = """
-- disqualification (issue 33): a disqualified student's grade is 0; reversible (the row deleted)
CREATE TABLE IF NOT EXISTS disqualifications (
    student_id TEXT PRIMARY KEY, reason TEXT NOT NULL,
    at TEXT NOT NULL,               -- ISO 8601, UTC
    actor TEXT NOT NULL             -- the staff member, as in the audit log
);
"""
"""Version 3's new table."""

TABLES_V4 = """
-- a ladder game's records by its id (a student's ladder page read each game's two records by a
-- scan of every record: 0.2 s at 300 students)
CREATE INDEX IF NOT EXISTS ladder_records_by_ladder ON ladder_records (ladder_id, game_id);
-- phase checks run in the background (issue 33): a check started and not yet kept in phase_checks
CREATE TABLE IF NOT EXISTS phase_check_runs (
    submission_id INTEGER NOT NULL REFERENCES submissions(id),
    requirement TEXT NOT NULL,      -- as in phase_checks
    started TEXT NOT NULL,          -- ISO 8601, UTC: the last attempt's start
    attempts INTEGER NOT NULL DEFAULT 1,  -- starts, those a stopped server cut short included
    pid INTEGER,                    -- the process running it; NULL once a stopped server cut it short
    done INTEGER NOT NULL DEFAULT 0,  -- games played so far (a score check)
    total INTEGER NOT NULL DEFAULT 0, -- games in all (0: a move-generation check)
    PRIMARY KEY (submission_id, requirement)
);
"""
"""Version 4's new table and index."""

MIGRATIONS: tuple[str, ...] = (
    TABLES_V1,  # 0 -> 1: every table created at open, the version recorded
    TABLES_V2,  # 1 -> 2: phase_reports, a phase's report on its own
    TABLES_V3,  # 2 -> 3: disqualifications
    TABLES_V4,  # 3 -> 4: phase_check_runs, the phase checks under way; ladder_records by ladder game
)
"""Migration i takes a course.db from version i to i + 1."""
VERSION = len(MIGRATIONS)
"""The schema version this arena reads and writes."""


class SchemaError(sqlite3.DatabaseError):
    """A course.db this arena cannot use: one line naming the file and the versions (a
    sqlite3.DatabaseError, so the commands report it as they report a broken file)."""


def version(conn: sqlite3.Connection) -> int:
    """The database's schema version (0 for a file made before versions, or a new one)."""
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: sqlite3.Connection, where: str = "course.db") -> int:
    """Bring the database on `conn` (autocommit) to VERSION, each migration in its own write
    transaction with its version bump; a no-op (no write) when it is there already. The migrations
    applied; SchemaError for a file from a newer arena."""
    found = version(conn)
    if found > VERSION:
        raise SchemaError(f"{where}: schema version {found} is newer than this arena's ({VERSION}): "
                          "upgrade arena to open it")
    applied = 0
    while found < VERSION:
        conn.execute("BEGIN IMMEDIATE")
        try:
            now = version(conn)  # another process may have migrated while this one waited
            if now == found:
                for statement in _statements(MIGRATIONS[found]):
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {found + 1}")
                applied += 1
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        found = version(conn)
    return applied


def _statements(script: str) -> list[str]:
    """The SQL statements of `script` (executescript would commit the open transaction)."""
    statements, current = [], ""
    for line in script.splitlines(keepends=True):
        if line.lstrip().startswith("--"):
            continue
        current += line
        if sqlite3.complete_statement(current):
            statements.append(current.strip())
            current = ""
    return statements
