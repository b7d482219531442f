"""How often and how many at once people may try passwords on the course server.

Wrong passwords are counted three ways, each over the last FAILURE_WINDOW_S seconds (in memory: a
restart forgets): per (id, client address), so a stranger's guesses hold off that stranger and
never the id's owner at another address; per address across ids, so one client cannot spray
passwords over the roster; and per id from everywhere, a much higher cap against guesses spread
over many addresses. A check costs no hash: refused tries never reach argon2. Hashes themselves
run at most HASHES_AT_ONCE at a time (each takes course.toml's [accounts] argon2_memory_kib, 64 MiB
by default), so a crowd of sign-ins waits its turn instead of taking every core and gigabytes of
memory; past a short wait, 429.
"""
from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from arena.course.config.sections import AccountSettings

FAILURE_WINDOW_S = 15 * 60
"""How long a wrong password counts against an id, an address or both (seconds)."""
MAX_FAILED_SIGN_INS = 5
"""Wrong passwords for one id from one address within the window before that address must wait."""
MAX_FAILURES_PER_ADDRESS = 20
"""Wrong passwords from one address, whatever the ids, within the window before it must wait."""
MAX_FAILURES_PER_ID = 100
"""Wrong passwords for one id from all addresses together within the window before it must wait
(high: reaching it takes many addresses, and the owner's own session stays open)."""
HASHES_AT_ONCE = 2
"""Password hashes (argon2id, 64 MiB each at the default costs) computed at the same time."""
HASH_QUEUE_S = 10.0
"""How long a sign-in waits for its turn to hash before 429 (seconds)."""
MAX_WAITING = 64
"""Sign-ins waiting for their turn beyond which the next is refused at once."""
MAX_KEYS = 50_000
"""Counters kept before the expired ones are swept (bounds memory under a spray of made-up ids)."""
ID_CHARS = 128
"""An id longer than this is counted by its first ID_CHARS characters."""


def weak_hashing_warning(costs: AccountSettings) -> str:
    """What the server and `arena course check` say first on a test course (course.toml's [accounts]
    weak_hashing_for_tests = true), so that it is never taken for a real one; else ""."""
    if not costs.weak_hashing_for_tests:
        return ""
    return ("WARNING: TEST COURSE: course.toml's [accounts] weak_hashing_for_tests = true: password hashes "
            f"(argon2id t={costs.argon2_time_cost}, {costs.argon2_memory_kib} KiB, "
            f"p={costs.argon2_parallelism}) may be below OWASP's floor, for tests only, never a real course")


class Busy(Exception):
    """Too many sign-ins are waiting to hash: `retry_s` is when to try again."""

    def __init__(self, retry_s: float) -> None:
        super().__init__(f"the server is busy signing people in: try again in {retry_s:.0f} s")
        self.retry_s = retry_s


class SignInGuard:
    """The counters of wrong passwords and the turn-taking of hashes; one per app, used from the
    event loop's thread only."""

    def __init__(self) -> None:
        self._failures: dict[tuple[str, str], deque[float]] = {}
        self._hashing: asyncio.Semaphore | None = None
        self._waiting = 0

    # --- counting wrong passwords ---
    def wait_s(self, account_id: str, address: str) -> tuple[float, str]:
        """(seconds before `address` may try a password for `account_id`, which limit holds it
        off: "id", "address" or "everyone"); (0, "") when it may try now."""
        account_id = account_id[:ID_CHARS]
        limits = ((("pair", f"{account_id}\0{address}"), MAX_FAILED_SIGN_INS, "id"),
                  (("address", address), MAX_FAILURES_PER_ADDRESS, "address"),
                  (("id", account_id), MAX_FAILURES_PER_ID, "everyone"))
        longest, which = 0.0, ""
        now = time.monotonic()
        for key, limit, name in limits:
            recent = self._recent(key, now)
            if len(recent) >= limit:
                wait = FAILURE_WINDOW_S - (now - recent[-limit])
                if wait > longest:
                    longest, which = wait, name
        return longest, which

    def failed(self, account_id: str, address: str) -> None:
        """Count one wrong password for `account_id` from `address`."""
        account_id = account_id[:ID_CHARS]
        if len(self._failures) > MAX_KEYS:
            self._sweep()
        now = time.monotonic()
        for key in (("pair", f"{account_id}\0{address}"), ("address", address), ("id", account_id)):
            self._failures.setdefault(key, deque(maxlen=MAX_FAILURES_PER_ID)).append(now)

    def succeeded(self, account_id: str, address: str) -> None:
        """The right password: this address's wrong ones for the id are forgotten."""
        self._failures.pop(("pair", f"{account_id[:ID_CHARS]}\0{address}"), None)

    def _recent(self, key: tuple[str, str], now: float) -> deque[float]:
        found = self._failures.get(key)
        if found is None:
            return deque()
        while found and now - found[0] >= FAILURE_WINDOW_S:
            found.popleft()
        if not found:
            del self._failures[key]
        return found

    def _sweep(self) -> None:
        now = time.monotonic()
        for key in list(self._failures):
            self._recent(key, now)

    # --- taking turns to hash ---
    @asynccontextmanager
    async def hashing(self) -> AsyncIterator[None]:
        """Hold one of the HASHES_AT_ONCE turns while hashing; Busy when the queue is full or the
        turn does not come within HASH_QUEUE_S."""
        if self._hashing is None:
            self._hashing = asyncio.Semaphore(HASHES_AT_ONCE)
        if self._waiting >= MAX_WAITING:
            raise Busy(HASH_QUEUE_S)
        self._waiting += 1
        try:
            await asyncio.wait_for(self._hashing.acquire(), HASH_QUEUE_S)
        except TimeoutError:
            raise Busy(HASH_QUEUE_S) from None
        finally:
            self._waiting -= 1
        try:
            yield
        finally:
            self._hashing.release()
