"""Who may sign in to a course server: students (the roster's ids) and staff, their passwords,
one-time sign-in links, API tokens, and the audit log of what staff did.

The tables live in the course's one SQLite database (`course.db`, WAL mode) beside the engine's.
Passwords are argon2id hashes at `[accounts]`'s costs (a sign-in rehashes one made at others). Sign-in
links and API tokens are 32 random bytes, so they are stored as their SHA-256 (a slow hash adds nothing
to a secret nobody can guess, and a token is checked on every API call); each is shown once, when made,
and a new one replaces the old. Nothing here knows of HTTP: the web app and `arena course` call it.
"""
from __future__ import annotations

import csv
import hashlib
import io
import os
import re
import secrets
import sqlite3
import time
from contextlib import AbstractContextManager
from dataclasses import astuple, dataclass
from datetime import UTC, datetime
from pathlib import Path

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from arena.course.config.sections import AccountSettings
from arena.course.db.database import DB_NAME, Database
from arena.course.db.files import write_atomically

"""The course's database file, shared with the engine's tables (store.py)."""
SECRET_NAME = "session.key"
"""The file beside course.toml holding the key that signs session cookies (made on first use, 0600)."""
STUDENT, STAFF = "student", "staff"
ROLES = (STUDENT, STAFF)
STAFF_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
MIN_PASSWORD_CHARS = 8
MAX_PASSWORD_CHARS = 1024
"""Longer passwords are refused before hashing (argon2 reads all of it)."""
TOKEN_PREFIX = "arena_"
"""API tokens start with this, so a leaked one is recognisable (and grep-able in a repository)."""
INVITE_PATH = "/invite/"
"""A sign-in link is BASE_URL + INVITE_PATH + its secret."""
SESSION_DAYS = 14
SESSION_S = SESSION_DAYS * 24 * 3600
"""How long a sign-in lasts without signing in again (seconds)."""

TERMINAL = "(terminal)"
"""The audit log's actor for what `arena course` commands did on the server's machine."""


class AccountError(ValueError):
    """A refused account operation (unknown id, bad password, used link): one line naming it."""


@dataclass(frozen=True)
class Account:
    """One account as the app sees it: `id`, `role` (student or staff), whether a password is set,
    and the `generation` a session must carry to be valid."""

    id: str
    role: str
    has_password: bool
    generation: int

    @property
    def is_staff(self) -> bool:
        return self.role == STAFF


@dataclass(frozen=True)
class AuditEntry:
    """One staff action: when, who, what, on what, and any detail."""

    at: str
    actor: str
    action: str
    target: str
    detail: str


def now_text() -> str:
    """Now as ISO 8601 in UTC, to the second."""
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def digest(secret: str) -> str:
    """The SHA-256 (hex) stored for a sign-in link's secret or an API token."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


class Accounts:
    """The accounts of the course in `directory` (its course.db). Safe to share between threads:
    each thread has its own connection (WAL mode), so the web app's worker threads never share one."""

    def __init__(self, directory: str | Path, costs: AccountSettings | None = None,
                 database: Database | None = None) -> None:
        self.directory = Path(directory)
        self.path = self.directory / DB_NAME
        self.hasher = PasswordHasher(*astuple(costs or AccountSettings())[:3])  # passes, memory KiB, lanes
        self.database = database or Database(self.path)
        """course.db's connections: the course's own (Store.db) when the server shares it."""

    def _connection(self) -> sqlite3.Connection:
        """This thread's connection."""
        return self.database.connection()

    def _one(self, sql: str, *args: object) -> sqlite3.Row | None:
        """The first row of a read (no transaction: WAL readers never wait for writers)."""
        return self.database.one(sql, *args)

    def _db(self) -> AbstractContextManager[sqlite3.Connection]:
        """One write transaction (Database.write: it waits for other writers, never fails halfway)."""
        return self.database.write()

    # --- reading ---
    def get(self, account_id: str) -> Account | None:
        row = self._one("SELECT id, role, password IS NOT NULL, generation FROM accounts WHERE id = ?",
                        account_id)
        return Account(row[0], row[1], bool(row[2]), row[3]) if row else None

    def staff(self) -> list[str]:
        db = self._connection()
        return [r[0] for r in db.execute("SELECT id FROM accounts WHERE role = 'staff' ORDER BY id")]

    # --- making accounts and links ---
    def invite(self, account_id: str, role: str = STUDENT) -> str:
        """A new one-time sign-in secret for `account_id` (made if new, as `role`); the previous
        link stops working. With it the person sets a (new) password."""
        if role not in ROLES:
            raise AccountError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
        secret = secrets.token_urlsafe(32)
        with self._db() as db:
            row = db.execute("SELECT role FROM accounts WHERE id = ?", (account_id,)).fetchone()
            if row is None:
                db.execute("INSERT INTO accounts (id, role, invite, created) VALUES (?, ?, ?, ?)",
                           (account_id, role, digest(secret), now_text()))
            elif row[0] != role:
                raise AccountError(f"{account_id!r} is already a {row[0]} account, not a {role} one")
            else:
                db.execute("UPDATE accounts SET invite = ? WHERE id = ?", (digest(secret), account_id))
        return secret

    def add_staff(self, name: str) -> str:
        """A staff account `name` (letters, digits, . _ -); returns its one-time sign-in secret.
        AccountError for a bad name or one that is a student's."""
        if not STAFF_NAME_RE.match(name):
            raise AccountError(f"staff name {name!r} is not usable (letters, digits, . _ -; at most 64)")
        secret = self.invite(name, STAFF)
        self.audit(TERMINAL, "staff added", name)
        return secret

    def invite_account(self, secret: str) -> Account | None:
        """The account a sign-in secret is for, None if the link is unknown or was used."""
        if not secret:
            return None
        row = self._one("SELECT id FROM accounts WHERE invite = ?", digest(secret))
        return self.get(row[0]) if row else None

    def accept_invite(self, secret: str, password: str) -> Account:
        """Set the password of the link's account and use the link up (one time); every older
        session of the account ends. AccountError for a used link or an unfit password."""
        check_password_rules(password)
        hashed = self.hasher.hash(password)
        with self._db() as db:
            row = db.execute("SELECT id FROM accounts WHERE invite = ?", (digest(secret),)).fetchone()
            if row is None:
                raise AccountError("this sign-in link was already used or replaced by a newer one; "
                                   "sign in with your password, or ask staff for a new link")
            db.execute("UPDATE accounts SET password = ?, invite = NULL, generation = generation + 1 "
                       "WHERE id = ?", (hashed, row[0]))
            db.execute("DELETE FROM sessions WHERE account_id = ?", (row[0],))
        account = self.get(row[0])
        assert account is not None
        return account

    # --- signing in ---
    def sign_in(self, account_id: str, password: str) -> Account | None:
        """The account if `password` is its password, else None (also for an unknown id, after
        the same work, so a wrong id is not told apart by the time it takes)."""
        row = self._one("SELECT password FROM accounts WHERE id = ?", account_id)
        stored = row[0] if row else None
        if stored is None or len(password) > MAX_PASSWORD_CHARS:
            self._waste(password)
            return None
        try:
            self.hasher.verify(stored, password)
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return None
        if self.hasher.check_needs_rehash(stored):
            rehashed = self.hasher.hash(password)
            with self._db() as db:
                db.execute("UPDATE accounts SET password = ? WHERE id = ?", (rehashed, account_id))
        return self.get(account_id)

    def _waste(self, password: str) -> None:
        """One argon2 hash's worth of time for nothing."""
        try:
            self.hasher.hash(password[:MAX_PASSWORD_CHARS] or "-")
        except Exception:  # noqa: BLE001 (only the time matters)
            pass

    # --- sessions ---
    def open_session(self, account_id: str, lasts_s: float = SESSION_S) -> str:
        """A new session of `account_id` for `lasts_s` seconds: its secret, for the cookie (only
        its SHA-256 is kept, so a copy of the database opens no session). Expired ones are dropped."""
        secret = secrets.token_urlsafe(32)
        now = time.time()
        with self._db() as db:
            db.execute("DELETE FROM sessions WHERE expires < ?", (now,))
            db.execute("INSERT INTO sessions (id, account_id, created, expires) VALUES (?, ?, ?, ?)",
                       (digest(secret), account_id, now_text(), now + lasts_s))
        return secret

    def session_account(self, secret: str) -> Account | None:
        """The account of a session that is open (not ended, not expired), else None."""
        if not secret:
            return None
        row = self._one("SELECT account_id FROM sessions WHERE id = ? AND expires >= ?", digest(secret),
                        time.time())
        return self.get(row[0]) if row else None

    def end_session(self, secret: str) -> None:
        """End one session (sign-out): its cookie, wherever a copy of it is, opens nothing after."""
        with self._db() as db:
            db.execute("DELETE FROM sessions WHERE id = ?", (digest(secret),))

    def end_sessions(self, account_id: str) -> int:
        """End every session of `account_id` (staff's "sign out everywhere"); how many there were."""
        with self._db() as db:
            return db.execute("DELETE FROM sessions WHERE account_id = ? AND expires >= ?",
                              (account_id, time.time())).rowcount

    def session_count(self, account_id: str) -> int:
        """How many sessions of `account_id` are open."""
        row = self._one("SELECT COUNT(*) FROM sessions WHERE account_id = ? AND expires >= ?", account_id,
                        time.time())
        return int(row[0]) if row else 0

    # --- API tokens ---
    def new_token(self, account_id: str, role: str = STUDENT) -> str:
        """A new API token for `account_id` (made as `role` if new); the old one stops working.
        Shown once: only its SHA-256 is kept."""
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        with self._db() as db:
            row = db.execute("SELECT role FROM accounts WHERE id = ?", (account_id,)).fetchone()
            if row is None:
                db.execute("INSERT INTO accounts (id, role, token, created) VALUES (?, ?, ?, ?)",
                           (account_id, role, digest(token), now_text()))
            else:
                db.execute("UPDATE accounts SET token = ? WHERE id = ?", (digest(token), account_id))
        self.audit(TERMINAL, "API token issued", account_id, "the old one revoked")
        return token

    def token_account(self, token: str) -> Account | None:
        """The account an API token belongs to, None if it is unknown or revoked."""
        if not token.startswith(TOKEN_PREFIX):
            return None
        row = self._one("SELECT id FROM accounts WHERE token = ?", digest(token))
        return self.get(row[0]) if row else None

    # --- the audit log ---
    def audit(self, actor: str, action: str, target: str = "", detail: str = "") -> None:
        with self._db() as db:
            db.execute("INSERT INTO audit_log (at, actor, action, target, detail) VALUES (?, ?, ?, ?, ?)",
                       (now_text(), actor, action, target, detail))

    def audit_log(self, limit: int = 500) -> list[AuditEntry]:
        """The latest `limit` entries, newest first."""
        rows = self._connection().execute("SELECT at, actor, action, target, detail FROM audit_log "
                                          "ORDER BY id DESC LIMIT ?", (limit,)).fetchall()
        return [AuditEntry(*row) for row in rows]


def check_password_rules(password: str) -> None:
    """AccountError unless `password` has MIN_PASSWORD_CHARS to MAX_PASSWORD_CHARS characters."""
    if len(password) < MIN_PASSWORD_CHARS:
        raise AccountError(f"a password needs at least {MIN_PASSWORD_CHARS} characters")
    if len(password) > MAX_PASSWORD_CHARS:
        raise AccountError(f"a password may have at most {MAX_PASSWORD_CHARS} characters")


def sign_in_link(base_url: str, secret: str) -> str:
    """The one-time sign-in link for `secret` on the server at `base_url`."""
    return base_url.rstrip("/") + INVITE_PATH + secret


def write_invites(accounts: Accounts, students: list[tuple[str, str]], base_url: str, path: Path) -> int:
    """A new sign-in link for each (id, email) in `students`, written as invites.csv (id, email,
    link; mode 0600: the links are secrets) for the teacher's own mail merge; returns how many.
    Each link replaces the student's previous one; a student who set a password can use the new
    one to set another."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["id", "email", "link"])
    for student_id, email in students:
        writer.writerow([student_id, email, sign_in_link(base_url, accounts.invite(student_id))])
    write_atomically(path, out.getvalue(), 0o600)
    accounts.audit(TERMINAL, "invites written", str(path), f"{len(students)} sign-in links")
    return len(students)


def session_secret(directory: str | Path) -> str:
    """The key that signs this course's session cookies: DIR/session.key, made (0600) on first use,
    so sessions outlive a restart of the server."""
    path = Path(directory) / SECRET_NAME
    try:
        return path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        pass
    key = secrets.token_urlsafe(48)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # made by another process meanwhile
        return path.read_text(encoding="ascii").strip()
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(key + "\n")
    return key
