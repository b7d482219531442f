"""The forfeit policy: a game a bot loses outside the rules of the game, and what happens to the bot.

`Forfeited` carries the seat that broke the arena's rules, why (`Forfeit`) and the detail; it is
raised wherever the referee finds out, and `settle` writes it into the game record: the opponent
wins, and a bot that forfeited is killed, to be started afresh for its next game
(`Limits.restart_on_forfeit`), unless it resigned. When neither bot could play it is a double
forfeit: nobody wins, both score 0 (GameRecord.points), and the record names both failures.
"""
from __future__ import annotations

from arena.cell.limits import Limits
from arena.match.players import Player
from arena.match.records import Forfeit, Forfeiture, GameRecord

DETAIL_MAX_CHARS = 1200
"""Forfeit details are cut to this length (they quote what the bot sent, or the last lines it
printed before its hello: twice that for a double forfeit)."""


def _cut(detail: str) -> str:
    return detail if len(detail) <= DETAIL_MAX_CHARS else detail[: DETAIL_MAX_CHARS - 3] + "..."


class Forfeited(Exception):
    """Seat `seat` forfeits the game for `reason`. `both`: a double forfeit, the (reason, detail) of
    seat 0 and of seat 1 (nobody wins; `seat` is then None)."""

    def __init__(self, seat: int | None, reason: Forfeit, detail: str,
                 both: list[tuple[Forfeit, str]] | None = None) -> None:
        super().__init__(detail)
        self.seat = seat
        self.both = both
        self.reason = reason
        self.detail = _cut(detail)
        self.under_load = False
        """A timeout while the machine kept the bot from a CPU (set by the referee's turns)."""
        self.move_came = False
        """A timeout by a move that came, but after the deadline (set by the referee's turns)."""


def check_ready(seated: list[Player]) -> None:
    """Before a game: Forfeited if a player in `seated` (seat order) cannot play, naming both when
    neither can."""
    failed = [seat for seat, player in enumerate(seated) if player.failure is not None]
    if len(failed) == 2:
        both = [seated[0].failure, seated[1].failure]
        detail = "; ".join(f"seat {seat} {reason.value}: {why}"
                           for seat, (reason, why) in enumerate(both))  # type: ignore[misc]
        raise Forfeited(None, Forfeit.DOUBLE_FORFEIT, detail, both=both)  # type: ignore[arg-type]
    if failed:
        reason, detail = seated[failed[0]].failure  # type: ignore[misc]
        raise Forfeited(failed[0], reason, detail)


def raise_failures(seated: list[Player]) -> None:
    """During a game: Forfeited for the first player in `seated` that has failed."""
    for seat, player in enumerate(seated):
        if player.failure is not None:
            reason, detail = player.failure
            raise Forfeited(seat, reason, detail)


def settle(forfeit: Forfeited, seated: list[Player], record: GameRecord, limits: Limits) -> None:
    """Write `forfeit` into `record`; a bot that forfeited (other than by resigning) is stopped, to
    be restarted for its next game, when `limits.restart_on_forfeit` (it may still be computing)."""
    record.reason = forfeit.reason.value
    double = forfeit.both is not None or forfeit.seat is None  # both already failed: restarted anyway
    sides = tuple(Forfeiture(seat, reason, _cut(why))
                  for seat, (reason, why) in enumerate(forfeit.both or []))
    record.forfeit = Forfeiture(forfeit.seat, forfeit.reason, _cut(forfeit.detail),
                                under_load=bool(forfeit.under_load), both=sides if double else None).to_dict()
    if double:
        record.winner = None
        return
    record.winner = 1 - forfeit.seat
    loser = seated[forfeit.seat]
    if limits.restart_on_forfeit and not loser.spec.external and forfeit.reason is not Forfeit.RESIGNED:
        loser.fail(forfeit.reason, forfeit.detail)
        loser.stop()
