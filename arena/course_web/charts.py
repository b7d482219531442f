"""A student's rating history as a chart the server draws: plain data for an inline SVG (no
script, no chart library), laid out by the template `_rating_chart.html`.

The chart shows μ as a line, the band μ ± σ around it, and the ordinal μ − 3σ (the rating the
leaderboard sorts by) as a dashed line, over the games played (one point a rated game; the x axis
counts games, not hours, so a burst of games does not squeeze into one pixel).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

CHART_WIDTH_PX = 640
CHART_HEIGHT_PX = 260
PAD_LEFT_PX = 44
"""Room left of the plot for the y axis's labels."""
PAD_PX = 16
"""Room on the other three sides (the x axis's labels sit in the bottom one, doubled)."""
Y_TICKS = 5
"""About how many labelled ratings the y axis shows."""


@dataclass(frozen=True)
class HistoryPoint:
    """The rating after one rated game: when (ISO 8601 UTC), μ, σ and the ordinal μ − 3σ."""

    time: str
    mu: float
    sigma: float
    ordinal: float


def history_points(history: Sequence[Any]) -> list[HistoryPoint]:
    """The ladder's history (tuples (time, mu, sigma, ordinal), or HistoryPoints) as HistoryPoints."""
    points = []
    for item in history:
        if isinstance(item, HistoryPoint):
            points.append(item)
        else:
            time, mu, sigma, ordinal = tuple(item)[:4]
            points.append(HistoryPoint(str(time), float(mu), float(sigma), float(ordinal)))
    return points


def rating_chart(history: Sequence[Any]) -> dict[str, Any]:
    """The geometry of the rating-history chart of `history` (oldest first): the μ line, the μ ± σ
    band and the ordinal line as SVG point lists, the y axis's ticks, and a summary sentence for
    screen readers. `points` is 0 for an empty history (the template then says so instead)."""
    points = history_points(history)
    out: dict[str, Any] = {"width": CHART_WIDTH_PX, "height": CHART_HEIGHT_PX, "points": len(points)}
    if not points:
        return out
    low = min(min(p.mu - p.sigma, p.ordinal) for p in points)
    high = max(p.mu + p.sigma for p in points)
    step = _nice_step((high - low) / Y_TICKS if high > low else 1.0)
    low, high = step * _floor(low / step), step * _ceil(high / step)
    if high <= low:
        high = low + step
    left, right = PAD_LEFT_PX, CHART_WIDTH_PX - PAD_PX
    top, bottom = PAD_PX, CHART_HEIGHT_PX - 2 * PAD_PX

    def x(i: int) -> float:
        return round(left + (right - left) * (i / (len(points) - 1) if len(points) > 1 else 0.5), 1)

    def y(value: float) -> float:
        return round(bottom - (bottom - top) * (value - low) / (high - low), 1)

    def line(values: list[float]) -> str:
        return " ".join(f"{x(i)},{y(v)}" for i, v in enumerate(values))

    upper = [(x(i), y(p.mu + p.sigma)) for i, p in enumerate(points)]
    lower = [(x(i), y(p.mu - p.sigma)) for i, p in enumerate(points)]
    band = " ".join(f"{a},{b}" for a, b in upper + lower[::-1])
    ticks = []
    value = low
    while value <= high + step / 2:
        ticks.append({"y": y(value), "label": _tick_label(value, step)})
        value += step
    last = points[-1]
    out.update({
        "left": left, "right": right, "top": top, "bottom": bottom, "ticks": ticks,
        "mu": line([p.mu for p in points]), "ordinal": line([p.ordinal for p in points]), "band": band,
        "dots": [{"x": x(i), "y": y(p.mu), "title": f"game {i + 1} ({p.time[:19].replace('T', ' ')}): "
                                                   f"μ {p.mu:.1f} ± {p.sigma:.1f}, ordinal {p.ordinal:.1f}"}
                 for i, p in enumerate(points)],
        "last": last, "first_label": "game 1", "last_label": f"game {len(points)}",
        "summary": (f"Rating over {len(points)} rated game{'s' if len(points) != 1 else ''}: μ from "
                    f"{points[0].mu:.1f} to {last.mu:.1f}, σ from {points[0].sigma:.1f} to {last.sigma:.1f}, "
                    f"ordinal now {last.ordinal:.1f}."),
    })
    return out


def _nice_step(raw: float) -> float:
    """1, 2 or 5 times a power of ten, at least `raw`."""
    power = 10.0 ** _floor(_log10(raw))
    for factor in (1, 2, 5, 10):
        if factor * power >= raw:
            return factor * power
    return 10 * power


def _tick_label(value: float, step: float) -> str:
    return f"{value:.0f}" if step >= 1 else f"{value:.1f}"


def _floor(value: float) -> int:
    return math.floor(value + 1e-9)


def _ceil(value: float) -> int:
    return math.ceil(value - 1e-9)


def _log10(value: float) -> float:
    return math.log10(value) if value > 0 else 0.0
