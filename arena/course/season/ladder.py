"""The course's ladder: rated games between the students' active bots and the reference bots, all
season long, as Galaxy, Halite and Kaggle rank their entrants between deadlines (docs/course.md,
"[ladder]").

Who plays: every enabled student's ACTIVE version (a new entrant, from the prior rating, first
playing `placement_games` against the reference bots, weakest first; unless its code is that of
the student's previous entrant: archives.code_digest, whose rating and games it takes over) and the
reference bots. A ladder game is a pair of games, both seats, from one paired opening. It plays
until `[ladder] until` (default: the last deadline), paused while the final is played (`status`).

The scheduler (`Ladder.due(now)`): each entrant, reference bots included (once a student's bot is
placed), is owed `games_per_hour` games over the last hour (its share of its age, when younger), a
reference bot its placement games at once; those owed are served fewest recent games first, each
against the least busy of its `neighbours` nearest in rating (`Neighbours`, by bisection). Unrated
games students ask for (`request`, at most `unrated_per_hour` an hour) come first. `due` records
what it hands out; `record` takes the played games. A round reads a few queries whatever the
number of students.

Ratings: openskill's Weng-Lin models, updated game by game; shown as the ordinal mu - 3 sigma (the
table's order) and as mu ± sigma. A forfeit is a loss; aborted games, double forfeits and games
lost on time under load are unrated (the runner plays those again first: jobs.play_judged).

Tables (course.db): `ladder_players` (an entrant: a student's version or a reference bot, its
rating), `ladder_games` (a ladder game: its entrants, rated or asked for, its state),
`ladder_records` (the played games' records, for replays), `ladder_history` (an entrant's rating
after each rated game). The server's thread that plays what is due is
arena.course.background.ladder.LadderRunner.
"""
from __future__ import annotations

import bisect
import dataclasses
import heapq
import json
import logging
import math
import shlex
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cached_property
from typing import TYPE_CHECKING, Any

from openskill.models import PlackettLuce, ThurstoneMostellerFull

import rules
from arena.cell.launcher import resolve_command
from arena.course.db.states import LadderState, LadderStatus
from arena.course.db.store import iso
from arena.course.season import final, phases
from arena.course.season.archives import Refused, code_digest
from arena.match.openings import Openings, parse_openings, random_opening
from arena.match.records import GameRecord
from arena.match.spec import BotSpec, MatchSpec

if TYPE_CHECKING:
    import sqlite3

    from arena.course.course import Course

log = logging.getLogger(__name__)

MODELS = {"plackett-luce": PlackettLuce, "thurstone-mosteller-full": ThurstoneMostellerFull}
"""openskill's models by the name `[ladder] model` gives (config/sections.py: LADDER_MODELS)."""
WINDOW = timedelta(hours=1)
MATCH_PREFIX = "ladder-"
"""A ladder game's match id is "ladder-<its id>"; its two games "ladder-<id>-g0" and "-g1"."""
REFERENCE_PREFIX = "ref:"
REPLAYED = "replayed: lost on time under load"
UNRATED = "not rated: lost on time under load"
"""What a ladder game's detail says of its games lost on time under load: played again, and (past
jobs.LOAD_REPLAYS replays) left unrated."""


@dataclass(frozen=True)
class LadderRow:
    """One line of the ladder's table. `student_id` is None for a reference bot (`reference` then
    names it); `name` is the student's roster name or the reference bot's name; `bot` the name the
    bot plays under ("s001-v3")."""

    rank: int
    name: str
    student_id: str | None
    reference: str | None
    submission_id: int | None
    bot: str
    mu: float
    sigma: float
    ordinal: float
    games: int
    placed: bool
    """It has played its `placement_games` (a reference bot too: its rating then means something)."""


@dataclass(frozen=True)
class LadderGame:
    """A ladder game (a pair of games, both seats): its entrants' bot names, rated or asked for by
    `requested_by`, its state (queued, scheduled, done, errored), and its played games' ids
    (`Ladder.record_of` gives each one's record). `score` is bot `a`'s points of the pair (None
    before it is done)."""

    id: int
    a: str
    b: str
    rated: bool
    requested_by: str | None
    created: str
    state: LadderState
    detail: str
    game_ids: tuple[str, ...]
    score: float | None


@dataclass
class _Entrant:
    key: str
    name: str
    student_id: str | None
    submission_id: int | None
    command_line: str
    """The bot's command, its words joined as a shell would read them (split only for a game)."""
    mu: float
    sigma: float
    games: int
    created: datetime
    recent: int = 0
    """Rated games in the last hour (scheduled ones included)."""
    planned: int = 0
    """Rated games played or scheduled (what placement counts)."""

    @property
    def ordinal(self) -> float:
        return self.mu - 3 * self.sigma

    @cached_property
    def command(self) -> tuple[str, ...]:
        return tuple(shlex.split(self.command_line))


class Neighbours:
    """The `count` entrants nearest in rating (ordinal) to each of `entrants`, nearest first (ties by
    key), found by bisection in the entrants sorted once by rating: a round of `Ladder.due` at 300
    entrants took 0.27 s sorting every entrant for each one owed games."""

    def __init__(self, entrants: list[_Entrant], count: int) -> None:
        self.sorted = sorted(entrants, key=lambda e: (e.ordinal, e.key))
        self.ordinals = [e.ordinal for e in self.sorted]
        self.count = count

    def of(self, entrant: _Entrant) -> list[_Entrant]:
        """The `count` others nearest to `entrant`'s rating: those within `count` places on either
        side, widened over entrants as near as the farthest of them (equal ratings)."""
        mine = entrant.ordinal
        at = bisect.bisect_left(self.ordinals, mine)
        low, high = max(0, at - self.count - 1), min(len(self.sorted), at + self.count + 2)
        window = [e for e in self.sorted[low:high] if e.key != entrant.key]
        if not window:
            return []
        window.sort(key=lambda e: (abs(e.ordinal - mine), e.key))
        reach = abs(window[min(self.count, len(window)) - 1].ordinal - mine)
        while low > 0 and mine - self.ordinals[low - 1] <= reach:
            low -= 1
        while high < len(self.sorted) and self.ordinals[high] - mine <= reach:
            high += 1
        near = [e for e in self.sorted[low:high] if e.key != entrant.key]
        near.sort(key=lambda e: (abs(e.ordinal - mine), e.key))
        return near[:self.count]


class Ladder:
    """The ladder of `course` (its tables in course.db; `[ladder]` read and checked)."""

    def __init__(self, course: Course) -> None:
        self.course = course
        self.config = course.config
        self.settings = course.config.ladder
        self.model = MODELS[self.settings.model]()
        self._game = rules.load(self.config.game, **self.config.params)
        self._openings: Openings = parse_openings(self.settings.openings, self._game, self.config.directory)
        self._lock = threading.Lock()
        """due() and request() of one process take turns (the database makes them consistent too)."""

    @property
    def until(self) -> datetime | None:
        """When the ladder stops playing: `[ladder] until`, else the course's last deadline (None:
        it never stops)."""
        return self.settings.until or phases.last_deadline(self.config)

    def status(self, now: datetime | None = None) -> tuple[LadderStatus, str]:
        """Whether the ladder plays at `now`, and why not in a line for its page: ended at `until`,
        paused while the final is played (its games would compete with the final's for the CPU)."""
        now = now or self.course.clock.now()
        until = self.until
        if until is not None and now >= until:
            source = "[ladder] until" if self.settings.until is not None else "the course's last deadline"
            return LadderStatus.ENDED, (f"the ladder ended at {until.isoformat()} ({source}): its ratings "
                                        "are final")
        run = final.under_way(self.course)
        if run is not None:
            return LadderStatus.PAUSED, (f"the ladder is paused while the final is played (run {run}), so "
                                         "that the final has the machine: it goes on once the final has "
                                         "finished")
        return LadderStatus.OPEN, ""

    # --- entrants ---
    def _entrants(self, now: datetime, write: bool = True) -> list[_Entrant]:
        """The current entrants (reference bots, then every enabled student's active version),
        their rows made on first sight at `now` (with `write=False` only in memory), with their
        recent and planned games: a few queries, whatever the number of students."""
        store = self.course.store
        wanted: list[tuple[str, str, str | None, int | None, str]] = []
        for name in self.settings.reference:
            wanted.append((REFERENCE_PREFIX + name, name, None, None, shlex.join(resolve_command(name))))
        active: dict[str, sqlite3.Row] = {}
        for sub in store.active_rows():  # one query: 300 students' rows took 25-45 ms to make
            if sub["disabled"] or not sub["command"]:
                continue
            sid = sub["student_id"]
            active[sid] = sub
            wanted.append((f"v{sub['id']}", f"{sid}-v{sub['version']}", sid, sub["id"], sub["command"]))
        rows = {r["key"]: r for r in store.rows("SELECT * FROM ladder_players")}
        new = [w for w in wanted if w[0] not in rows]
        if new:  # a write only when the ladder meets a bot for the first time
            values = self._new_rows(new, rows, active, now)
            if write:
                with store.write() as db:
                    db.executemany("INSERT OR IGNORE INTO ladder_players (key, name, student_id, "
                                   "submission_id, mu, sigma, games, created) "
                                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", values)
                rows = {r["key"]: r for r in store.rows("SELECT * FROM ladder_players")}
            else:
                columns = ("key", "name", "student_id", "submission_id", "mu", "sigma", "games", "created")
                rows.update({v[0]: dict(zip(columns, v, strict=True)) for v in values})  # type: ignore[misc]
        since = iso(now - WINDOW)
        recent: dict[str, int] = {}
        pending: dict[str, int] = {}
        for r in store.rows("SELECT a, b, state, created FROM ladder_games WHERE rated = 1 AND "
                            "(state = 'scheduled' OR (state = 'done' AND created > ?))", since):
            for key in (r["a"], r["b"]):
                if r["created"] > since:
                    recent[key] = recent.get(key, 0) + 2
                if r["state"] == LadderState.SCHEDULED:
                    pending[key] = pending.get(key, 0) + 2
        return [_Entrant(k, n, s, i, command, rows[k]["mu"], rows[k]["sigma"], rows[k]["games"],
                         datetime.fromisoformat(rows[k]["created"]), recent.get(k, 0),
                         rows[k]["games"] + pending.get(k, 0))
                for k, n, s, i, command in wanted]

    def _new_rows(self, new: list[tuple[str, str, str | None, int | None, str]],
                  rows: dict[str, sqlite3.Row], active: dict[str, sqlite3.Row], now: datetime) -> list[tuple]:
        """The ladder_players rows of entrants met for the first time: the prior rating; a student's
        version whose code is the same as its previous entrant's takes that one's rating and games
        over (its history stays: `history` reads every version of the student)."""
        latest = {r["student_id"]: r for r in sorted(rows.values(), key=lambda r: (r["created"], r["key"]))
                  if r["student_id"] is not None}  # each student's last entrant
        prior = self.model.rating()
        values = []
        for key, name, sid, submission_id, _ in new:
            mu, sigma, games = prior.mu, prior.sigma, 0
            previous = latest.get(sid) if sid is not None else None
            if previous is not None and self._same_code(previous["submission_id"], active[sid]):  # type: ignore[index]
                mu, sigma, games = previous["mu"], previous["sigma"], previous["games"]
                log.info("ladder: %s has the code of %s: it keeps its rating", name, previous["name"])
            values.append((key, name, sid, submission_id, mu, sigma, games, iso(now)))
        return values

    def _same_code(self, submission_id: int, new: sqlite3.Row) -> bool:
        """The submission `submission_id` and `new` hold the same code (archives.code_digest; the
        same kind and protocol)."""
        store = self.course.store
        old = store.submission_row(submission_id)
        if old is None or old["id"] == new["id"] or (old["kind"], old["protocol"]) != (new["kind"],
                                                                                       new["protocol"]):
            return False
        if old["sha256"] == new["sha256"] or new["kind"] != "archive":
            return old["sha256"] == new["sha256"]
        try:
            return (code_digest(old["filename"], store.read_file(old["sha256"]), old["kind"])
                    == code_digest(new["filename"], store.read_file(new["sha256"]), new["kind"]))
        except (OSError, Refused):  # a file gone, an archive that cannot be read: not the same
            return False

    # --- scheduling ---
    def due(self, now: datetime | None = None, limit: int | None = None) -> list[MatchSpec]:
        """The ladder games to play now (at most `limit` pairs), none while the ladder is paused
        or ended (`status`): the unrated ones students asked for, then placement games of new
        versions, then every entrant owed games (reference bots too) against a rating neighbour
        (fewest recent games first). Each is recorded as scheduled: not handed out again."""
        now = now or self.course.clock.now()
        with self._lock:
            if self.status(now)[0] is not LadderStatus.OPEN:
                return []
            store = self.course.store
            entrants = self._entrants(now)
            by_key = {e.key: e for e in entrants}
            chosen: list[tuple[int, str, str]] = [(r["id"], r["a"], r["b"]) for r in store.rows(
                "SELECT id, a, b FROM ladder_games WHERE state = 'queued' ORDER BY id")]
            if limit is not None:
                chosen = chosen[:limit]
            pairs = self._pairs(entrants, now, None if limit is None else limit - len(chosen))
            with store.write() as db:
                db.executemany("UPDATE ladder_games SET state = 'scheduled' WHERE id = ?",
                               [(i,) for i, _, _ in chosen])
                for a, b in pairs:
                    cursor = db.execute("INSERT INTO ladder_games (a, b, rated, created, state) "
                                        "VALUES (?, ?, 1, ?, 'scheduled')", (a, b, iso(now)))
                    chosen.append((int(cursor.lastrowid), a, b))  # type: ignore[arg-type]
            return [self._spec(i, a, b, by_key) for i, a, b in chosen]

    def owed(self, now: datetime | None = None) -> int:
        """The rated ladder games (pairs) `due` would hand out at `now`, worked out without writing
        anything (the staff's queue): none while the ladder is paused or ended."""
        now = now or self.course.clock.now()
        with self._lock:
            if self.status(now)[0] is not LadderStatus.OPEN:
                return 0
            return len(self._pairs(self._entrants(now, write=False), now, None))

    def _pairs(self, entrants: list[_Entrant], now: datetime, room: int | None) -> list[tuple[str, str]]:
        """The rated pairs (entrant keys) due at `now`, at most `room`: placement, then games owed."""
        placement = self.settings.placement_games
        references = [e for e in entrants if e.student_id is None]  # as listed: the weakest first
        pairs: list[tuple[str, str]] = []

        def full() -> bool:
            return room is not None and len(pairs) >= room

        def pair(a: _Entrant, b: _Entrant) -> None:
            pairs.append((a.key, b.key))
            for e in (a, b):
                e.recent += 2
                e.planned += 2

        # who may meet classmates: a version placed before this round (scheduled games count)
        pool = [e for e in entrants if e.student_id is None or e.planned >= placement or not references]
        # placement first: a new version plays the reference bots from the weakest up
        for entrant in sorted((e for e in entrants if e.student_id is not None),
                              key=lambda e: (e.games, e.created, e.key)):
            while entrant.planned < placement and references and not full():
                pair(entrant, references[(entrant.planned // 2) % len(references)])
        if len(pool) < 2 or all(e.student_id is None for e in pool):  # no reference games for nobody
            return pairs
        # then each entrant owed games (its share of the last hour; a reference bot its placement
        # too), fewest recent games first, against the least busy of its nearest in rating
        hour = WINDOW.total_seconds()
        rate = self.settings.games_per_hour
        share = {e.key: rate * min(1.0, max(0.0, (now - e.created).total_seconds() / hour)) for e in pool}
        by_rating = Neighbours(pool, self.settings.neighbours)
        by_key = {e.key: e for e in pool}
        waiting = [(e.recent, e.key) for e in pool]
        heapq.heapify(waiting)
        while waiting and not full():
            recent, key = heapq.heappop(waiting)
            entrant = by_key[key]
            if recent != entrant.recent:  # it played meanwhile (as an opponent): in its new place
                heapq.heappush(waiting, (entrant.recent, key))
                continue
            owed = entrant.recent < share[key] or (entrant.student_id is None and entrant.planned < placement)
            if not owed:  # and it never will be again this round: its games only grow
                continue
            near = by_rating.of(entrant)  # never none: the pool holds two entrants or more
            pair(entrant, min(enumerate(near), key=lambda n_e: (n_e[1].recent, n_e[0]))[1])
            heapq.heappush(waiting, (entrant.recent, key))
        return pairs

    def _spec(self, ladder_id: int, key_a: str, key_b: str, by_key: dict[str, _Entrant]) -> MatchSpec:
        a, b = self._entrant(key_a, by_key), self._entrant(key_b, by_key)
        return MatchSpec(
            match_id=f"{MATCH_PREFIX}{ladder_id}", game=self.config.game,
            bots=(BotSpec(a.name, a.command), BotSpec(b.name, b.command)),
            time_control=self.settings.time_control or self.config.time_control, game_numbers=(0, 1),
            params=dict(self.config.params), seed=ladder_id, limits=self.config.limits,
            openings=(self._opening(ladder_id),))

    def _entrant(self, key: str, by_key: dict[str, _Entrant]) -> _Entrant:
        """An entrant by key; one no longer current (a version replaced since) from its row."""
        if key in by_key:
            return by_key[key]
        row = self.course.store.rows("SELECT * FROM ladder_players WHERE key = ?", key)[0]
        if row["student_id"] is None:
            command = shlex.join(resolve_command(row["name"]))
        else:
            sub = self.course.store.submission_row(row["submission_id"])
            command = sub["command"] if sub is not None and sub["command"] else ""
        return _Entrant(key, row["name"], row["student_id"], row["submission_id"], command, row["mu"],
                        row["sigma"], row["games"], datetime.fromisoformat(row["created"]))

    def _opening(self, ladder_id: int) -> tuple[str, ...]:
        """The pair's opening: the book's in turn, or `random:N` drawn from the ladder game's id."""
        if self._openings.book:
            return self._openings.book[ladder_id % len(self._openings.book)]
        for attempt in range(100):
            opening = random_opening(self._game, self._openings.plies, 0, ladder_id, attempt)
            if opening is not None:
                return opening
        return ()

    def abandon_scheduled(self) -> int:
        """Mark every scheduled game that was never recorded (a server stopped while it waited or
        played) errored, so the scheduler owes its entrants those games again; how many."""
        with self.course.store.write() as db:
            return db.execute("UPDATE ladder_games SET state = 'errored', detail = 'the server stopped "
                              "before it was played', finished = ? WHERE state = 'scheduled'",
                              (iso(self.course.clock.now()),)).rowcount

    # --- results ---
    def record(self, records: list[GameRecord], now: datetime | None = None,
               replaced: list[GameRecord] | None = None) -> None:
        """Take played ladder games (records of "ladder-<id>-g<n>"; others are ignored): each kept
        for replays; a rated one updates both entrants' ratings and histories, unless aborted, a
        double forfeit or lost on time under load; a ladder game with both games in is done. Its
        detail names those lost under load, and those played again instead (`replaced`)."""
        now = now or self.course.clock.now()
        store = self.course.store
        notes: dict[int, list[str]] = {}
        for lost, note in [*((r, REPLAYED) for r in replaced or ()),
                           *((r, UNRATED) for r in records if r.lost_on_time_under_load())]:
            ladder_id = _ladder_id(lost.game_id)
            if ladder_id is not None:
                notes.setdefault(ladder_id, []).append(f"{note} ({_loser(lost)})")
        with self._lock, store.write() as db:
            touched: set[int] = set()
            for record in records:
                ladder_id = _ladder_id(record.game_id)
                if ladder_id is None:
                    continue
                row = db.execute("SELECT * FROM ladder_games WHERE id = ?", (ladder_id,)).fetchone()
                if row is None or row["state"] not in (LadderState.SCHEDULED, LadderState.QUEUED):
                    continue
                if db.execute("SELECT 1 FROM ladder_records WHERE game_id = ?", (record.game_id,)).fetchone():
                    continue  # a record given twice counts once
                db.execute("INSERT INTO ladder_records (game_id, ladder_id, at, record) VALUES (?, ?, ?, ?)",
                           (record.game_id, ladder_id, iso(now), record.to_json()))
                touched.add(ladder_id)
                if (row["rated"] and not record.is_aborted() and not record.is_double_forfeit()
                        and not record.lost_on_time_under_load()):
                    self._rate(db, row["a"], row["b"], record, now)
            for ladder_id in touched & set(notes):
                db.execute("UPDATE ladder_games SET detail = ? WHERE id = ?",
                           ("; ".join(dict.fromkeys(notes[ladder_id]))[:500], ladder_id))
            for ladder_id in touched:
                count = db.execute("SELECT COUNT(*) FROM ladder_records WHERE ladder_id = ?",
                                   (ladder_id,)).fetchone()[0]
                if count >= 2:
                    db.execute("UPDATE ladder_games SET state = 'done', finished = ? WHERE id = ?",
                               (iso(now), ladder_id))

    def fail(self, match_id: str, detail: str, now: datetime | None = None) -> None:
        """A ladder game that could not be played (a bot would not start...): errored, unrated."""
        ladder_id = _ladder_id(f"{match_id}-g0")
        if ladder_id is None:
            return
        with self.course.store.write() as db:
            db.execute("UPDATE ladder_games SET state = 'errored', detail = ?, finished = ? WHERE id = ? "
                       "AND state IN ('queued', 'scheduled')",
                       (detail[:500], iso(now or self.course.clock.now()), ladder_id))

    def _rate(self, db: Any, key_a: str, key_b: str, record: GameRecord, now: datetime) -> None:
        rows = {r["key"]: r for r in db.execute("SELECT * FROM ladder_players WHERE key IN (?, ?)",
                                                (key_a, key_b))}
        names = {rows[k]["name"]: k for k in rows}
        if set(record.players) != set(names):
            log.warning("ladder game %s: players %s are not %s", record.game_id, record.players, list(names))
            return
        keys = [names[p] for p in record.players]  # by seat
        seat = record.winner_seat()
        ranks = [0, 0] if seat is None else [0 if s == seat else 1 for s in (0, 1)]
        teams = [[self.model.rating(mu=rows[k]["mu"], sigma=rows[k]["sigma"])] for k in keys]
        rated = self.model.rate(teams, ranks=ranks)
        for key, [rating] in zip(keys, rated, strict=True):
            db.execute("UPDATE ladder_players SET mu = ?, sigma = ?, games = games + 1 WHERE key = ?",
                       (rating.mu, rating.sigma, key))
            db.execute("INSERT INTO ladder_history (key, at, game_id, mu, sigma) VALUES (?, ?, ?, ?, ?)",
                       (key, iso(now), record.game_id, rating.mu, rating.sigma))

    # --- what students and staff see ---
    def table(self, now: datetime | None = None) -> list[LadderRow]:
        """The current entrants, best first: by ordinal (mu - 3 sigma), then mu, then name."""
        entrants = self._entrants(now or self.course.clock.now())
        names = {s.id: s.name for s in self.course.students()}
        ordered = sorted(entrants, key=lambda e: (-e.ordinal, -e.mu, e.name))
        return [LadderRow(rank=n, name=names.get(e.student_id, e.name) if e.student_id else e.name,
                          student_id=e.student_id, reference=None if e.student_id else e.name,
                          submission_id=e.submission_id, bot=e.name, mu=e.mu, sigma=e.sigma,
                          ordinal=e.ordinal, games=e.games, placed=e.games >= self.settings.placement_games)
                for n, e in enumerate(ordered, 1)]

    def history(self, student_id: str) -> list[tuple[str, float, float, float]]:
        """(time ISO 8601 UTC, mu, sigma, ordinal) after each rated game of any of the student's
        versions (a reference bot's with "ref:NAME"), oldest first."""
        if student_id.startswith(REFERENCE_PREFIX):
            rows = self.course.store.rows("SELECT at, mu, sigma FROM ladder_history WHERE key = ? "
                                          "ORDER BY id", student_id)
        else:
            rows = self.course.store.rows(
                "SELECT h.at, h.mu, h.sigma FROM ladder_history h JOIN ladder_players p ON p.key = h.key "
                "WHERE p.student_id = ? ORDER BY h.id", student_id)
        return [(r["at"], r["mu"], r["sigma"], r["mu"] - 3 * r["sigma"]) for r in rows]

    def request(self, student_id: str, opponent: str, now: datetime | None = None) -> int:
        """Ask for an unrated game of the student's active bot against `opponent` (a reference bot's
        name or a classmate's student id); its ladder game id (the runner plays it first). Refused
        while the ladder is paused or ended, without an active bot on either side, or past
        `unrated_per_hour` in the last hour."""
        now = now or self.course.clock.now()
        status, why = self.status(now)
        if status is not LadderStatus.OPEN:
            raise Refused(why)
        with self._lock:
            entrants = {e.key: e for e in self._entrants(now)}
            mine = next((e for e in entrants.values() if e.student_id == student_id), None)
            if mine is None:
                raise Refused("you have no active bot on the ladder: upload one that qualifies first")
            if opponent in self.settings.reference:
                theirs = entrants[REFERENCE_PREFIX + opponent]
            else:
                theirs = next((e for e in entrants.values() if e.student_id == opponent), None)
                if theirs is None:
                    known = ", ".join(self.settings.reference)
                    raise Refused(f"no opponent {opponent!r} on the ladder (a reference bot: {known}; or a "
                                  "classmate with an active bot)")
            if theirs.key == mine.key:
                raise Refused("your bot cannot play itself on the ladder")
            limit = self.settings.unrated_per_hour
            if limit == 0:
                raise Refused("this course's ladder takes no requests for unrated games")
            with self.course.store.write() as db:
                asked = db.execute("SELECT created FROM ladder_games WHERE requested_by = ? AND created > ? "
                                   "ORDER BY created", (student_id, iso(now - WINDOW))).fetchall()
                if len(asked) >= limit:
                    wait = datetime.fromisoformat(asked[0]["created"]) + WINDOW - now if asked else WINDOW
                    minutes = max(1, math.ceil(wait.total_seconds() / 60))
                    raise Refused(f"at most {limit} unrated game{'s' if limit != 1 else ''} an hour: "
                                  f"try again in {minutes} min")
                cursor = db.execute("INSERT INTO ladder_games (a, b, rated, requested_by, created, state) "
                                    "VALUES (?, ?, 0, ?, ?, 'queued')",
                                    (mine.key, theirs.key, student_id, iso(now)))
        for wake in list(self.course.ladder_listeners):
            wake()  # the server's runner plays it now, not at its next look
        return int(cursor.lastrowid)  # type: ignore[arg-type]

    def games(self, student_id: str | None = None) -> list[LadderGame]:
        """The ladder games of any of the student's versions (everyone's with None), newest first."""
        store = self.course.store
        sql = ("SELECT g.*, pa.name AS an, pb.name AS bn FROM ladder_games g "
               "JOIN ladder_players pa ON pa.key = g.a JOIN ladder_players pb ON pb.key = g.b")
        if student_id is None:
            rows = store.rows(sql + " ORDER BY g.id DESC")
        else:
            rows = store.rows(sql + " WHERE pa.student_id = ? OR pb.student_id = ? OR g.requested_by = ? "
                              "ORDER BY g.id DESC", student_id, student_id, student_id)
        kept: dict[int, list[GameRecord]] = {}
        if rows:  # one query for every game's records
            ids = json.dumps([r["id"] for r in rows])
            for t in store.rows("SELECT ladder_id, record FROM ladder_records WHERE ladder_id IN "
                                "(SELECT value FROM json_each(?)) ORDER BY game_id", ids):
                kept.setdefault(t[0], []).append(GameRecord.from_json(t[1]))
        out = []
        for r in rows:
            records = kept.get(r["id"], [])
            score = None
            if r["state"] == LadderState.DONE:
                score = sum(_points(rec, r["an"]) for rec in records)
            out.append(LadderGame(r["id"], r["an"], r["bn"], bool(r["rated"]), r["requested_by"],
                                  r["created"], LadderState(r["state"]), r["detail"],
                                  tuple(rec.game_id for rec in records), score))
        return out

    def record_of(self, game_id: str) -> GameRecord | None:
        """A played ladder game's record (for its replay)."""
        found = self.course.store.rows("SELECT record FROM ladder_records WHERE game_id = ?", game_id)
        return GameRecord.from_json(found[0][0]) if found else None


def _ladder_id(game_id: str) -> int | None:
    """The ladder game id of "ladder-<id>-g<n>" (None for another game)."""
    if not game_id.startswith(MATCH_PREFIX):
        return None
    head = game_id[len(MATCH_PREFIX):].rsplit("-g", 1)[0]
    return int(head) if head.isdigit() else None


def _loser(record: GameRecord) -> str:
    """"<bot> in game <n>" of a game lost on time ("ladder-7-g1": game 2 of the pair)."""
    forfeit = record.forfeiture
    bot = record.players[forfeit.seat] if forfeit is not None and forfeit.seat in (0, 1) else "?"
    number = record.game_id.rsplit("-g", 1)[-1]
    return f"{bot} in game {int(number) + 1 if number.isdigit() else number}"


def _points(record: GameRecord, name: str) -> float:
    """What the game was worth to the bot `name`: GameRecord.points (0 each for a double forfeit
    or an aborted game)."""
    return record.points(record.players.index(name))


def describe(row: LadderRow) -> str:
    """A table row's rating as people read it: "ordinal 12.3 (mu 27.1 ± 4.9)"."""
    return f"ordinal {row.ordinal:.1f} (mu {row.mu:.1f} ± {row.sigma:.1f})"


def to_json(rows: list[LadderRow]) -> str:
    """The table as JSON (for pages and scripts)."""
    return json.dumps([dataclasses.asdict(r) for r in rows])
