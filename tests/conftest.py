"""Shared test helpers."""
from __future__ import annotations

import os

import pytest


def require(condition: object, reason: str) -> None:
    """Skip the test when `condition` is false, saying why; under CI (CI=true) fail instead, so a
    CI machine missing what a test needs (bubblewrap, a browser...) never passes by skipping."""
    if condition:
        return
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true but {reason}")
    pytest.skip(reason)
