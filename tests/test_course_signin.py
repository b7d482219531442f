"""The sign-in counters and the hashes' turn-taking (arena/course_web/signin.py), on their own: which
limit holds whom off, for how long, and when a crowd is told to come back. The real server's
side of it is in test_course_security.py."""
from __future__ import annotations

import asyncio

import pytest

from arena.course_web import signin
from arena.course_web.signin import (
    FAILURE_WINDOW_S,
    MAX_FAILED_SIGN_INS,
    MAX_FAILURES_PER_ADDRESS,
    MAX_FAILURES_PER_ID,
    Busy,
    SignInGuard,
)


class Clock:
    """time.monotonic for the module, moved by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture()
def clock(monkeypatch) -> Clock:
    clock = Clock()
    monkeypatch.setattr(signin.time, "monotonic", clock)
    return clock


def test_an_id_is_held_off_only_at_the_address_that_failed(clock):
    guard = SignInGuard()
    for _ in range(MAX_FAILED_SIGN_INS):
        assert guard.wait_s("s001", "10.0.0.2") == (0.0, "")
        guard.failed("s001", "10.0.0.2")
    assert guard.wait_s("s001", "10.0.0.2") == (FAILURE_WINDOW_S, "id")
    assert guard.wait_s("s001", "10.0.0.1") == (0.0, "")  # the owner elsewhere
    clock.now += FAILURE_WINDOW_S - 60
    assert guard.wait_s("s001", "10.0.0.2") == (60, "id")
    clock.now += 60
    assert guard.wait_s("s001", "10.0.0.2") == (0.0, "")


def test_an_address_spraying_ids_and_an_id_guessed_from_everywhere(clock):
    guard = SignInGuard()
    for n in range(MAX_FAILURES_PER_ADDRESS):
        guard.failed(f"x{n}", "10.0.0.3")
    assert guard.wait_s("anyone", "10.0.0.3") == (FAILURE_WINDOW_S, "address")
    assert guard.wait_s("anyone", "10.0.0.4") == (0.0, "")
    for n in range(MAX_FAILURES_PER_ID - 1):
        guard.failed("s002", f"10.1.{n // 250}.{n % 250}")
    assert guard.wait_s("s002", "10.9.9.9") == (0.0, "")
    guard.failed("s002", "10.2.0.0")
    assert guard.wait_s("s002", "10.9.9.9") == (FAILURE_WINDOW_S, "everyone")


def test_the_right_password_forgets_that_addresss_failures_and_old_ones_are_swept(clock, monkeypatch):
    guard = SignInGuard()
    for _ in range(MAX_FAILED_SIGN_INS - 1):
        guard.failed("s001", "10.0.0.2")
    guard.succeeded("s001", "10.0.0.2")
    guard.failed("s001", "10.0.0.2")
    assert guard.wait_s("s001", "10.0.0.2") == (0.0, "")
    monkeypatch.setattr(signin, "MAX_KEYS", 10)
    for n in range(10):
        guard.failed(f"made-up-{n}", "10.0.0.5")
    clock.now += FAILURE_WINDOW_S
    guard.failed("s003", "10.0.0.6")  # past MAX_KEYS: the expired counters go
    assert len(guard._failures) == 3  # s003's pair, its address, its id
    guard.failed("x" * 10_000, "10.0.0.7")
    assert max(len(key[1]) for key in guard._failures) <= signin.ID_CHARS + len("\0" "10.0.0.7")


def test_hashes_take_turns_and_a_crowd_past_the_wait_is_told_to_come_back(monkeypatch):
    monkeypatch.setattr(signin, "HASH_QUEUE_S", 0.3)
    monkeypatch.setattr(signin, "MAX_WAITING", 4)  # the fifth is refused at once, two time out

    async def scene() -> list[str]:
        guard = SignInGuard()
        at_once = 0
        most = 0
        happened: list[str] = []

        async def sign_in(hold_s: float) -> None:
            nonlocal at_once, most
            try:
                async with guard.hashing():
                    at_once += 1
                    most = max(most, at_once)
                    await asyncio.sleep(hold_s)
                    at_once -= 1
                happened.append("hashed")
            except Busy as exc:
                happened.append(f"busy {exc.retry_s:g}")

        await asyncio.gather(*(sign_in(1.0) for _ in range(signin.HASHES_AT_ONCE + 3)))
        happened.append(f"at most {most}")
        return happened

    happened = asyncio.run(scene())
    assert sorted(happened) == sorted(["hashed"] * signin.HASHES_AT_ONCE + ["busy 0.3"] * 3
                                      + [f"at most {signin.HASHES_AT_ONCE}"])
