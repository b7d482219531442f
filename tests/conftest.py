"""Shared test helpers."""
from __future__ import annotations

import os

import pytest

CI = os.environ.get("CI", "").lower() == "true"
"""Under CI=true a missing compiler or library fails the test instead of skipping it."""


def require(condition: object, reason: str) -> None:
    """Skip the calling test with `reason` unless `condition` holds; under CI=true, fail instead
    (CI installs everything the tests need, so a skip there would hide a broken setup)."""
    if condition:
        return
    if CI:
        pytest.fail(f"CI=true but {reason}", pytrace=False)
    pytest.skip(reason)
