"""Course accounts (arena/course/db/accounts.py) on a real course.db: one-time sign-in links, argon2
passwords at course.toml's costs (hashed again when they change), API tokens kept only as hashes,
staff names, the audit log, invites.csv."""
from __future__ import annotations

import csv
import sqlite3
import stat

import pytest
from argon2 import PasswordHasher

from arena.course.config.sections import AccountSettings
from arena.course.db import accounts as acc

FAST = AccountSettings(1, 8 * 1024, 1, True)
"""A cheaper argon2 for these tests (a real server's costs are course.toml's [accounts])."""


@pytest.fixture
def accounts(tmp_path) -> acc.Accounts:
    return acc.Accounts(tmp_path, FAST)


def test_a_sign_in_link_sets_the_password_once(accounts):
    secret = accounts.invite("s001")
    assert accounts.invite_account(secret).id == "s001"
    assert accounts.sign_in("s001", "correct horse") is None  # no password yet
    with pytest.raises(acc.AccountError, match="at least 8"):
        accounts.accept_invite(secret, "short")
    account = accounts.accept_invite(secret, "correct horse")
    assert account.has_password and account.generation == 1
    assert accounts.invite_account(secret) is None
    with pytest.raises(acc.AccountError, match="already used"):
        accounts.accept_invite(secret, "another password")
    assert accounts.sign_in("s001", "correct horse").id == "s001"
    assert accounts.sign_in("s001", "wrong horse!") is None
    assert accounts.sign_in("nobody", "correct horse") is None


def test_a_new_link_replaces_the_old_and_a_new_password_ends_old_sessions(accounts):
    first = accounts.invite("s001")
    second = accounts.invite("s001")
    assert accounts.invite_account(first) is None
    accounts.accept_invite(second, "password one")
    third = accounts.invite("s001")
    assert accounts.accept_invite(third, "password two").generation == 2
    assert accounts.sign_in("s001", "password one") is None


def test_passwords_are_argon2_and_tokens_are_stored_only_as_hashes(accounts, tmp_path):
    accounts.accept_invite(accounts.invite("s001"), "correct horse")
    token = accounts.new_token("s001")
    assert token.startswith(acc.TOKEN_PREFIX)
    assert accounts.token_account(token).id == "s001"
    with sqlite3.connect(tmp_path / acc.DB_NAME) as db:
        password, stored = db.execute("SELECT password, token FROM accounts WHERE id = 's001'").fetchone()
    assert password.startswith("$argon2id$") and "correct horse" not in password
    assert stored == acc.digest(token) and token not in stored
    newer = accounts.new_token("s001")
    assert accounts.token_account(token) is None and accounts.token_account(newer).id == "s001"
    assert accounts.token_account("arena_not-a-token") is None and accounts.token_account("") is None


def test_staff_names_are_checked_and_kept_apart_from_students(accounts):
    secret = accounts.add_staff("teacher")
    assert accounts.invite_account(secret).is_staff
    with pytest.raises(acc.AccountError, match="not usable"):
        accounts.add_staff("bad name!")
    accounts.invite("s001")
    with pytest.raises(acc.AccountError, match="already a student"):
        accounts.add_staff("s001")
    assert accounts.staff() == ["teacher"]
    assert [e.action for e in accounts.audit_log()] == ["staff added"]


def test_invites_csv_is_private_and_each_link_works(accounts, tmp_path):
    path = tmp_path / "invites.csv"
    assert acc.write_invites(accounts, [("s001", "a@example.org"), ("s002", "b@example.org")],
                             "http://127.0.0.1:8000/", path) == 2
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    rows = list(csv.DictReader(path.open()))
    assert [r["id"] for r in rows] == ["s001", "s002"] and rows[1]["email"] == "b@example.org"
    for row in rows:
        assert row["link"].startswith("http://127.0.0.1:8000/invite/")
        assert accounts.invite_account(row["link"].rsplit("/", 1)[1]).id == row["id"]
    assert accounts.audit_log()[0].action == "invites written"


def test_the_session_key_is_made_once_and_private(tmp_path):
    key = acc.session_secret(tmp_path)
    assert len(key) > 40 and acc.session_secret(tmp_path) == key
    assert stat.S_IMODE((tmp_path / acc.SECRET_NAME).stat().st_mode) == 0o600


def test_the_default_costs_are_argon2_cffis_and_accounts_hash_at_the_courses_costs(tmp_path):
    ours, theirs = acc.Accounts(tmp_path).hasher, PasswordHasher()
    assert (ours.time_cost, ours.memory_cost, ours.parallelism) == (theirs.time_cost, theirs.memory_cost,
                                                                    theirs.parallelism) == (3, 65536, 4)
    accounts = acc.Accounts(tmp_path, AccountSettings(2, 4096, 2))
    accounts.accept_invite(accounts.invite("s001"), "correct horse")
    assert stored_password(tmp_path, "s001").startswith("$argon2id$v=19$m=4096,t=2,p=2$")


def stored_password(directory, account_id: str) -> str:
    with sqlite3.connect(directory / acc.DB_NAME) as db:
        return db.execute("SELECT password FROM accounts WHERE id = ?", (account_id,)).fetchone()[0]


def test_a_password_hashed_at_other_costs_signs_in_and_is_hashed_again_at_the_new_ones(tmp_path):
    before = acc.Accounts(tmp_path, FAST)
    before.accept_invite(before.invite("s001"), "correct horse")
    old = stored_password(tmp_path, "s001")
    assert old.startswith("$argon2id$v=19$m=8192,t=1,p=1$")
    after = acc.Accounts(tmp_path, AccountSettings(2, 4096, 2, True))
    assert after.sign_in("s001", "wrong horse!") is None
    assert stored_password(tmp_path, "s001") == old  # a wrong password changes nothing
    assert after.sign_in("s001", "correct horse").id == "s001"  # the old costs still verify
    new = stored_password(tmp_path, "s001")
    assert new.startswith("$argon2id$v=19$m=4096,t=2,p=2$")
    assert after.sign_in("s001", "correct horse").id == "s001"
    assert stored_password(tmp_path, "s001") == new  # hashed again once, not at every sign-in
    assert before.sign_in("s001", "correct horse").id == "s001"  # and back, e.g. a course.toml undone
