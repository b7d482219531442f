"""The forfeit policy: a game a bot loses outside the rules of the game, and what happens to the bot.

`Forfeited` carries the seat that broke the arena's rules, why (`Forfeit`) and the detail; it is
raised wherever the referee finds out, and `settle` writes it into the game record: the opponent
wins (nobody, when both bots failed), and a bot that forfeited is killed, to be started afresh for
its next game (`Limits.restart_on_forfeit`), unless it resigned.
"""
from __future__ import annotations

from arena.match.limits import Limits
from arena.match.players import Player
from arena.match.records import Forfeit, GameRecord

DETAIL_MAX_CHARS = 300
"""Forfeit details are cut to this length (they quote what the bot sent)."""


class Forfeited(Exception):
    """Seat `seat` forfeits the game for `reason`; `both`: both bots failed (nobody wins)."""

    def __init__(self, seat: int, reason: Forfeit, detail: str, both: bool = False) -> None:
        super().__init__(detail)
        self.seat = seat
        self.both = both
        self.reason = reason
        self.detail = detail if len(detail) <= DETAIL_MAX_CHARS else detail[: DETAIL_MAX_CHARS - 3] + "..."


def check_ready(seated: list[Player]) -> None:
    """Before a game: Forfeited if a player in `seated` (seat order) cannot play, naming both when
    neither can."""
    failed = [seat for seat, player in enumerate(seated) if player.failure is not None]
    if not failed:
        return
    seat = failed[0]
    reason, detail = seated[seat].failure  # type: ignore[misc]
    if len(failed) == 2:
        other = seated[1].failure
        detail = (f"both bots failed: seat 0 {reason.value}: {detail}; "
                  f"seat 1 {other[0].value}: {other[1]}")  # type: ignore[index]
    raise Forfeited(seat, reason, detail, both=len(failed) == 2)


def raise_failures(seated: list[Player]) -> None:
    """During a game: Forfeited for the first player in `seated` that has failed."""
    for seat, player in enumerate(seated):
        if player.failure is not None:
            reason, detail = player.failure
            raise Forfeited(seat, reason, detail)


def settle(forfeit: Forfeited, seated: list[Player], record: GameRecord, limits: Limits) -> None:
    """Write `forfeit` into `record`; a bot that forfeited (other than by resigning) is stopped, to
    be restarted for its next game, when `limits.restart_on_forfeit` (it may still be computing)."""
    record.winner = None if forfeit.both else 1 - forfeit.seat
    record.reason = forfeit.reason.value
    record.forfeit = {"seat": forfeit.seat, "reason": forfeit.reason.value, "detail": forfeit.detail}
    loser = seated[forfeit.seat]
    if limits.restart_on_forfeit and not loser.spec.external and forfeit.reason is not Forfeit.RESIGNED:
        loser.fail(forfeit.reason, forfeit.detail)
        loser.stop()
