"""Every game one student's bots played, in one list, for staff (`/staff/students/{sid}/games` and
the defence sheet): the qualification games of each version, the phases' score games, the
ladder's games and the final's, each with its kind, the version that played, the opponent, the
result from the student's side, the forfeit and where its replay is.

Only reads: course.db's tables (`games`, `phase_games`, `ladder_records`, the final's entrants)
and the final's results database. The replay addresses are the server's existing ones (a
submission's game, a phase game, a ladder game) and, for the final, staff's own
(`/staff/students/{sid}/final-games/{n}`: the student's n-th game of the final's last run, in the
order the student's own season page numbers them).
"""
from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from arena.match.records import Forfeit, GameRecord

if TYPE_CHECKING:
    from arena.course.course import Course

QUALIFICATION, PHASE, LADDER, FINAL = "qualification", "phase score", "ladder", "final"
"""The kinds of games a student's bot plays."""
DETAIL_MAX_CHARS = 300
"""A forfeit's detail is cut to this (its first line; the replay shows the whole)."""
_VERSION_RE = re.compile(r"-v(\d+)$")


@dataclass(frozen=True)
class PlayedGame:
    """One game of the student's bot, from its side: `seat` it played, `outcome` (win, loss, draw,
    aborted, double forfeit), the record's `result` ("1-0") and `reason`, the forfeit if any
    (`forfeit_reason`: a Forfeit value, `forfeit_by`: "this bot", "opponent" or "both"), its
    length in plies, and `url`, its replay. `reference`: the opponent is a reference bot (a shipped
    bot, not a classmate)."""

    kind: str
    game_id: str
    started: str
    version: int | None
    submission_id: int | None
    seat: int
    player: str
    opponent: str
    reference: bool
    outcome: str
    result: str
    reason: str
    forfeit_reason: str
    forfeit_by: str
    forfeit_detail: str
    plies: int
    url: str
    label: str = ""
    """Where it belongs: "game 1 of v2", "phase opening", "ladder game 7 (rated)", "final run 1"."""

    @property
    def lost_on_time(self) -> bool:
        """The student's bot forfeited this game by running out of time."""
        return self.forfeit_reason == Forfeit.TIMEOUT and self.forfeit_by in ("this bot", "both")


def played_game(record: GameRecord, seat: int, kind: str, url: str, *, version: int | None,
                submission_id: int | None, reference: bool, label: str = "") -> PlayedGame:
    """A record as seen from `seat` (the student's bot)."""
    other = 1 - seat
    if record.is_aborted():
        outcome = "aborted"
    elif record.is_double_forfeit():
        outcome = "double forfeit"
    elif record.winner_seat() is None:
        outcome = "draw"
    else:
        outcome = "win" if record.winner_seat() == seat else "loss"
    reason, by, detail = "", "", ""
    forfeit = record.forfeiture
    if forfeit is not None:
        mine, theirs = record.forfeit_of(seat), record.forfeit_of(other)
        side = mine or theirs or forfeit
        reason = str(side.reason)
        by = "both" if mine is not None and theirs is not None else "this bot" if mine is not None \
            else "opponent" if theirs is not None else "both"
        lines = [line for line in side.detail.splitlines() if line.strip()]
        detail = lines[0][:DETAIL_MAX_CHARS] if lines else ""
    players = list(record.players)
    return PlayedGame(kind=kind, game_id=record.game_id, started=record.started_at, version=version,
                      submission_id=submission_id, seat=seat, player=players[seat],
                      opponent=players[other] if len(players) > other else "", reference=reference,
                      outcome=outcome, result=record.result(), reason=record.reason, forfeit_reason=reason,
                      forfeit_by=by, forfeit_detail=detail, plies=len(record.moves), url=url, label=label)


def _seat(record: GameRecord, name: str, fallback_not: str = "") -> int:
    """The seat of bot `name` (else of the bot that is not `fallback_not`, else 0)."""
    if name in record.players:
        return record.players.index(name)
    for seat, player in enumerate(record.players):
        if player != fallback_not:
            return seat
    return 0


def student_games(course: Course, student_id: str) -> list[PlayedGame]:
    """Every game of the student's bots (qualification, phase score, ladder, final), newest first."""
    games = [*qualification_games(course, student_id), *phase_score_games(course, student_id),
             *ladder_games(course, student_id), *final_games(course, student_id)]
    return sorted(games, key=lambda g: (g.started, g.game_id), reverse=True)


def qualification_games(course: Course, student_id: str) -> list[PlayedGame]:
    """The qualification games of each of the student's versions (against `random`)."""
    from arena.course.season.jobs import OPPONENT

    found = []
    for sub in course.store.submission_rows(student_id):
        name = f"{student_id}-v{sub['version']}"
        texts = course.store.game_texts(sub["id"])
        for n, text in enumerate(texts, 1):
            record = GameRecord.from_json(text)
            found.append(played_game(record, _seat(record, name, OPPONENT), QUALIFICATION,
                                     f"/submissions/{sub['id']}/games/{n}", version=sub["version"],
                                     submission_id=sub["id"], reference=True,
                                     label=f"game {n} of {len(texts)} of v{sub['version']}"))
    return found


def phase_score_games(course: Course, student_id: str) -> list[PlayedGame]:
    """The games a phase's score requirement played for the student's versions (against a
    reference bot); none where course.db has no such table (an older or newer shape)."""
    try:
        rows = course.store.rows("SELECT p.game_id, p.submission_id, p.record, s.version FROM phase_games p "
                                 "JOIN submissions s ON s.id = p.submission_id WHERE s.student_id = ? "
                                 "ORDER BY p.game_id", student_id)
    except sqlite3.Error:
        return []
    found = []
    for r in rows:
        record = GameRecord.from_json(r["record"])
        name = f"{student_id}-v{r['version']}"
        seat = _seat(record, name)
        found.append(played_game(record, seat, PHASE, f"/phase-games/{quote(r['game_id'])}",
                                 version=r["version"], submission_id=r["submission_id"], reference=True,
                                 label=f"score against {record.players[1 - seat]}"))
    return found


def ladder_games(course: Course, student_id: str) -> list[PlayedGame]:
    """The ladder games the student's versions played (rated, or asked for), each of the pair."""
    if "ladder" not in course.config.sections:
        return []
    rows = course.store.rows(
        "SELECT r.game_id, r.ladder_id, r.record, g.rated, pa.name AS an, pa.student_id AS sa, "
        "pa.submission_id AS ia, pb.name AS bn, pb.student_id AS sb, pb.submission_id AS ib "
        "FROM ladder_records r JOIN ladder_games g ON g.id = r.ladder_id "
        "JOIN ladder_players pa ON pa.key = g.a JOIN ladder_players pb ON pb.key = g.b "
        "WHERE pa.student_id = ? OR pb.student_id = ? ORDER BY r.ladder_id, r.game_id",
        student_id, student_id)
    numbers: dict[int, int] = {}
    found = []
    for r in rows:
        numbers[r["ladder_id"]] = numbers.get(r["ladder_id"], 0) + 1  # the ladder game page's ?n=
        mine_a = r["sa"] == student_id
        name, submission_id = (r["an"], r["ia"]) if mine_a else (r["bn"], r["ib"])
        other_student = r["sb"] if mine_a else r["sa"]
        record = GameRecord.from_json(r["record"])
        version = _VERSION_RE.search(name)
        url = f"/ladder/games/{r['ladder_id']}?n={numbers[r['ladder_id']]}"
        found.append(played_game(
            record, _seat(record, name), LADDER, url,
            version=int(version.group(1)) if version else None, submission_id=submission_id,
            reference=other_student is None,
            label=f"ladder game {r['ladder_id']} ({'rated' if r['rated'] else 'asked for'})"))
    return found


def _final_run(course: Course) -> tuple[int, Any] | None:
    """(the final's last run, the student's entrants' rows of it by student id), None before any."""
    rows = course.store.rows("SELECT run FROM final_runs ORDER BY run DESC LIMIT 1")
    if not rows:
        return None
    run = rows[0]["run"]
    entrants = {r["student_id"]: r for r in course.store.rows(
        "SELECT student_id, submission_id, bot FROM final_entrants WHERE run = ?", run)}
    return run, entrants


def final_records(course: Course, student_id: str) -> list[GameRecord]:
    """The records of the final's last run that the student's bot played, in the order they were
    stored (the student's season page numbers them so: its n-th is the n-th here); none before."""
    from arena.course.season.final import final_dir
    from arena.tournament.store import DB_NAME, Store, StoreError

    found = _final_run(course)
    if found is None or student_id not in found[1]:
        return []
    run, entrants = found
    path = final_dir(course) / f"final-{run}" / DB_NAME
    if not path.is_file():
        return []
    bot = entrants[student_id]["bot"]
    try:
        with Store(path, create=False) as store:
            return [g.record for g in store.iter_games() if bot in g.record.players]
    except StoreError:  # being made this moment, or broken: the final's page says which
        return []


def final_games(course: Course, student_id: str) -> list[PlayedGame]:
    """The student's games of the final's last run."""
    found = _final_run(course)
    if found is None or student_id not in found[1]:
        return []
    run, entrants = found
    entrant = entrants[student_id]
    bots = {r["bot"] for r in entrants.values()}
    sub = course.store.submission_row(entrant["submission_id"])
    version = sub["version"] if sub is not None else None
    out = []
    for n, record in enumerate(final_records(course, student_id), 1):
        seat = _seat(record, entrant["bot"])
        opponent = record.players[1 - seat] if len(record.players) > 1 else ""
        out.append(played_game(record, seat, FINAL, f"/staff/students/{quote(student_id)}/final-games/{n}",
                               version=version, submission_id=entrant["submission_id"],
                               reference=opponent not in bots, label=f"final run {run}, game {n}"))
    return out
