"""The checks course.toml's readers share: a number (not a bool) in a range, a time with its zone,
a duration; a table of known keys. Each reader names the key and says what it must be; these say
whether a value is one, so every section words its errors alike ("KEY: must be ..., got VALUE")."""
from __future__ import annotations

import math
import re
from datetime import datetime, timedelta
from typing import Any

DURATION_RE = re.compile(r"(\d+(?:\.\d+)?)\s*([dhms])")
UNITS = {"d": 86400, "h": 3600, "m": 60, "s": 1}
EXAMPLE_TIME = "2026-12-03T23:59:00+01:00"


def is_number(value: Any, *, whole: bool = False, least: float | None = None, above: float | None = None,
              most: float | None = None, below: float | None = None) -> bool:
    """`value` is a finite number (a whole one with `whole`), never a bool (TOML's true is no 1),
    within the bounds given: >= least, > above, <= most, < below."""
    if isinstance(value, bool) or not isinstance(value, int if whole else (int, float)):
        return False
    if not math.isfinite(value):
        return False
    return ((least is None or value >= least) and (above is None or value > above)
            and (most is None or value <= most) and (below is None or value < below))


def moment(value: Any) -> datetime:
    """A time with its zone: a TOML datetime or an ISO 8601 string; ValueError saying what is wrong
    (no time, no zone)."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(f"not an ISO 8601 time: {value!r} (e.g. {EXAMPLE_TIME})") from None
    if not isinstance(value, datetime):
        raise ValueError(f"must be a time with its zone, e.g. {EXAMPLE_TIME}, got {value!r}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{value.isoformat()} has no zone: add it, e.g. +01:00 or Z")
    return value


def duration(value: Any) -> timedelta:
    """A duration: "48h", "2d", "90m", "30s" or sums of them ("1d 12h"); ValueError saying so for
    anything else (or nothing)."""
    text = value.strip().lower() if isinstance(value, str) else None
    if not text or DURATION_RE.sub("", text).strip():
        raise ValueError(f'must be a duration such as "48h", "2d" or "90m", got {value!r}')
    seconds = sum(float(n) * UNITS[unit] for n, unit in DURATION_RE.findall(text))
    if seconds <= 0:
        raise ValueError(f"must be longer than nothing, got {value!r}")
    return timedelta(seconds=seconds)


def duration_text(delta: timedelta) -> str:
    """A duration as course.toml writes one: "48h", "90m", "30s"."""
    seconds = int(delta.total_seconds())
    for unit in ("h", "m"):
        if seconds % UNITS[unit] == 0:
            return f"{seconds // UNITS[unit]}{unit}"
    return f"{seconds}s"
