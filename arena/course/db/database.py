"""`Database`: course.db's one connection manager. A connection per thread (SQLite's own rule), made
on first use with the course's settings (WAL, synchronous FULL: a commit survives kill -9, foreign
keys, a busy timeout), the schema migrated on opening (db/schema.py); `write()` is one transaction
whose writers take turns. The store (db/store.py) and the accounts (db/accounts.py) both go
through one."""
from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from arena.course.db import schema

DB_NAME = "course.db"
BUSY_TIMEOUT_S = 30.0
"""How long a write waits for another process's (or thread's) write to end."""


class Database:
    """course.db at `path`; safe to share between threads (each has its own connection)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._local = threading.local()
        schema.migrate(self.connection(), str(self.path))

    def connection(self) -> sqlite3.Connection:
        """This thread's connection (rows by name, autocommit outside `write`)."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            # made private before SQLite opens it: its -wal and -shm files take the database's mode.
            # Only when it is missing: closing any descriptor of the database file drops every POSIX
            # lock this process's other connections hold on it (sqlite.org, "How To Corrupt An SQLite
            # Database File", 2.2): the server's workers and pages then missed committed rows.
            if not self.path.exists():
                os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600))
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None,
                                   check_same_thread=True)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("PRAGMA foreign_keys=ON")
            self._local.conn = conn
        return conn

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (BEGIN IMMEDIATE: writers take turns, none fails halfway),
        committed on leaving the block, rolled back on an exception."""
        conn = self.connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def rows(self, sql: str, *args: Any) -> list[sqlite3.Row]:
        """A read's rows (no transaction: WAL readers never wait for writers)."""
        return self.connection().execute(sql, args).fetchall()

    def one(self, sql: str, *args: Any) -> sqlite3.Row | None:
        """A read's first row, None without one."""
        return self.connection().execute(sql, args).fetchone()

    def close(self) -> None:
        """Close this thread's connection (made again on next use)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
