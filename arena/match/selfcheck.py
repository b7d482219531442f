"""A bot's self-check before any tournament (`arena check-bot GAME COMMAND`): what a student should fix.

Three looks, each with the real referee and the bot sandboxed as in a tournament:
- games against `random` from random openings (both seats, many positions): every move legal, in
  time, no protocol error, no exception of its own (the SDK's `info["error"]`);
- its first move's time against the clock: a bot that spends most of its first move starting up
  (a JVM, a big import) loses on time on a busier machine;
- the `legal` request, if it answers it (docs/PROTOCOL.md): its move generator against the rules on
  sampled positions (optional; a course's move-generation phase needs it).
Each look gives a `Finding`: ok, a note, or a fix with what to do.
"""
from __future__ import annotations

from dataclasses import dataclass

import rules
from arena.cell.launcher import resolve_command
from arena.cell.limits import Limits
from arena.match.clock import TimeControl
from arena.match.legal_check import NO_ANSWER, check_move_generation, sample_positions
from arena.match.openings import random_openings
from arena.match.records import Forfeit, GameRecord
from arena.match.referee import run_match
from arena.match.spec import BotSpec, MatchSpec

OPPONENT = "random"
OPENING_PLIES = 4
"""Random plies each game pair starts after, so the games reach many positions."""
SLOW_FIRST_MOVE_SHARE = 0.5
"""A first move taking more than this share of its clock is worth a warning."""
OUTPUT_LINES = 8
"""Lines of the bot's own output quoted with a failure."""

FIXES = {
    Forfeit.ILLEGAL_MOVE: "its move was not legal there: check its move generator and its notation "
                          "(docs/games.md: Domineering names a vertical domino by its lower cell)",
    Forfeit.TIMEOUT: "it answered after its clock: search less deep, or stop by the time_left it is given",
    Forfeit.CRASHED: "it exited or died: its last output below says where",
    Forfeit.NO_HELLO: "it never said hello: it must connect (protocol v1) or read stdin (stdio) at once; "
                      "a slow start-up can say `ready` when warm (docs/PROTOCOL.md)",
    Forfeit.MALFORMED_MESSAGE: "it sent something that is not a protocol message: print only protocol "
                               "lines on stdout, debug output on stderr (or speak on fd 3)",
}


@dataclass(frozen=True)
class Finding:
    """One look's verdict: `level` "ok", "note" or "fix"; `text` says what was seen and, for a fix,
    what to do; `output`: the bot's own last lines, where they help."""

    level: str
    text: str
    output: str = ""


def check(game_name: str, command: str, params: dict[str, str] | None = None, games: int = 4,
          time_control: TimeControl | None = None, limits: Limits | None = None,
          positions: int = 30, seed: int = 1) -> list[Finding]:
    """The bot `command` looked at as the module docstring says; LaunchError or ValueError for a
    command or a game that cannot be used."""
    game = rules.load(game_name, **(params or {}))
    bot = BotSpec("bot", resolve_command(command))
    clock = time_control or TimeControl.for_game(game_name)
    limits = limits or Limits()
    pairs = (games + 1) // 2
    opponent = BotSpec(OPPONENT, resolve_command(OPPONENT))
    spec = MatchSpec(match_id="check-bot", game=game_name, bots=(bot, opponent), time_control=clock,
                     game_numbers=tuple(range(2 * pairs)), params=game.params, seed=seed, limits=limits,
                     openings=random_openings(game, OPENING_PLIES, seed, pairs))
    records = run_match(spec)
    findings = [_games(records, clock), _first_move(records, clock)]
    findings.append(_move_generator(bot, game_name, game, limits, positions, seed))
    return [f for f in findings if f is not None]


def _games(records: list[GameRecord], clock: TimeControl) -> Finding:
    moves = 0
    for number, record in enumerate(records, 1):
        seat = record.players.index("bot")
        failed = _forfeit(record, seat)
        output = _last_lines(record.logs.get(str(seat), ""))
        if failed is not None:
            reason, detail = failed
            fix = FIXES.get(reason, "see its output below")
            return Finding("fix", f"game {number} of {len(records)} (seat {seat}), ply {len(record.moves)}: "
                                  f"{reason.value.replace('_', ' ')}: {detail}\n  fix: {fix}", output)
        raised = next((m for m in record.moves if m.seat == seat and m.info.get("error")), None)
        if raised is not None:
            return Finding("fix", f"game {number}: its choose() raised at ply {raised.ply} (the SDK played a "
                                  f"legal move for it; a tournament counts it as a crash):\n"
                                  f"{_last_lines(str(raised.info['error']))}")
        moves += sum(1 for m in record.moves if m.seat == seat)
    return Finding("ok", f"{len(records)} games against {OPPONENT} from random openings: {moves} moves, "
                         f"every one legal and in time ({clock} s a move)")


def _forfeit(record: GameRecord, seat: int) -> tuple[Forfeit, str] | None:
    """(reason, detail) when seat `seat` forfeited `record`, alone or with its opponent."""
    side = record.forfeit_of(seat)
    if side is None or not side.reason:
        return None
    detail = side.detail.splitlines()
    return Forfeit(side.reason), detail[0] if detail else ""


def _first_move(records: list[GameRecord], clock: TimeControl) -> Finding | None:
    first = next((m for r in records[:1] for m in r.moves if m.seat == r.players.index("bot")), None)
    if first is None:
        return None
    allowed = clock.initial_bank()
    if first.time_s > SLOW_FIRST_MOVE_SHARE * allowed:
        return Finding("fix", f"its first move took {first.time_s:.3f} s of its {allowed:g} s: on a busier "
                              "machine it will lose on time; load and warm up before saying hello (the "
                              "text protocol's `ready`, docs/PROTOCOL.md), or search less on move one")
    return Finding("ok", f"its first move took {first.time_s:.3f} s of its {allowed:g} s")


def _move_generator(bot: BotSpec, name: str, game: rules.Game, limits: Limits, positions: int,
                    seed: int) -> Finding:
    sampled = sample_positions(game, positions, seed)
    result = check_move_generation(bot, name, dict(game.params), sampled, limits, seed=seed)
    if result.error is not None and NO_ANSWER in result.error:
        return Finding("note", "it does not answer the `legal` request (optional; a course's "
                               "move-generation phase needs it: docs/PROTOCOL.md, section 7)")
    if result.passed:
        return Finding("ok", result.summary())
    if result.error is not None:
        return Finding("fix", result.summary())
    wire, missing, extra = result.disagreements[0]
    wrong = [f"misses {', '.join(missing)}"] if missing else []
    wrong += [f"gives {', '.join(extra)}"] if extra else []
    return Finding("fix", f"{result.summary()}\n  the position: {wire}\n  fix: its move generator "
                          f"{' and '.join(wrong)} there")


def _last_lines(text: str) -> str:
    return "\n".join(text.strip().splitlines()[-OUTPUT_LINES:])
