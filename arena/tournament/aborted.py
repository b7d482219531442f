"""Aborted games: a game whose worker process kept dying is recorded as `aborted`, never charged to a bot.

A bot can kill the process that referees it (a sandbox escape, a referee bug it triggers) and time it
to its opponent's turn, so whoever was to move when the worker died is not to blame. After
WORKER_DEATHS_PER_GAME deaths (the local pool) or the cluster's resubmissions (Dask), both in
arena.tournament.backends, the game is stored with reason `aborted` (arena.match.records.ABORTED):
no winner, no points, left out of the standings and Elo, listed for the staff with both bots' last
output (`aborted_note`: the run's summary and `arena standings`), and played again only by
`arena tournament run --retry-aborted` (Store.retry_aborted keeps the aborted records aside).
"""
from __future__ import annotations

import os
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from arena.cell.botlog import read_since
from arena.match.records import ABORTED, GameRecord
from arena.match.spec import MatchSpec, safe_name

LOG_TAIL_CHARS = 2000
"""What an aborted game's record keeps of each bot's log (characters), as a played game's does."""
SHOWN_LINES = 3
"""Lines of each bot's log shown in the list of aborted games."""


def aborted_record(spec: MatchSpec, number: int, ply: int, seat: int, deaths: int,
                   logs: dict[str, str] | None = None) -> GameRecord:
    """The record of game `number` of `spec`, aborted after its worker process died `deaths` times;
    the last time at `ply` with `seat` to move. `logs`: what each seat's bot printed ({"0": text})."""
    import rules

    players = spec.seats(number)
    clocks = dict.fromkeys(str(b.time_control or spec.time_control) for b in players)
    detail = (f"the worker process playing this game died {deaths} times; the last time at ply {ply}, "
              f"with {players[seat].name} (seat {seat}) to move")
    return GameRecord(
        game_id=spec.game_id(number), game=spec.game, params=rules.load(spec.game, **spec.params).params,
        players=[b.name for b in players], time_control=" / ".join(clocks),
        start_moves=list(spec.start_for(number)), winner=None, reason=ABORTED,
        started_at=datetime.now(UTC).isoformat(timespec="seconds"), logs=dict(logs or {}),
        aborted={"detail": detail, "deaths": deaths, "ply": ply, "seat": seat},
    )


def bot_logs(workdir: Path, spec: MatchSpec, number: int) -> dict[str, str]:
    """What each seat's bot of game `number` printed last, from the bots' logs of a match that ran in
    `workdir` (the referee's per-bot directories `bot{i}-{name}/bot.log`); seats without one are left
    out. Read without following links."""
    from arena.cell.launcher import LOG_NAME

    logs = {}
    for seat, bot in enumerate(spec.seats(number)):
        i = next((k for k, b in enumerate(spec.bots) if b is bot), seat)
        text = _tail(workdir / f"bot{i}-{safe_name(bot.name)}" / LOG_NAME, LOG_TAIL_CHARS)
        if text.strip():
            logs[str(seat)] = text
    return logs


def _tail(path: Path, max_chars: int) -> str:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return ""
    try:
        return read_since(fd, 0, max_chars)
    finally:
        os.close(fd)


def aborted_note(records: Iterable[GameRecord], lines: int = SHOWN_LINES) -> str:
    """The aborted games for the staff: each with why, and the last `lines` lines each bot printed;
    "" when there are none."""
    aborted = [r for r in records if r.is_aborted()]
    if not aborted:
        return ""
    out = [f"{len(aborted)} game{'s' if len(aborted) != 1 else ''} aborted, not scored (their worker "
           "process kept dying; `arena tournament run --retry-aborted` plays them again):"]
    for record in aborted:
        out.append(f"  {record.game_id}: {(record.aborted or {}).get('detail', 'aborted')}")
        for seat, name in enumerate(record.players):
            shown = record.logs.get(str(seat), "").strip().splitlines()[-lines:]
            if shown:
                out.append(f"    {name} (seat {seat}) printed last:")
                out += [f"      {line[:200]}" for line in shown]
            else:
                out.append(f"    {name} (seat {seat}) printed nothing")
    return "\n".join(out)
