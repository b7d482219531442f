"""The season's pages (issue 25), beside the course's own in app.py: the ladder's leaderboard, a
student's rating-history chart, unrated games a student asks for and their replays, and the
staff's pages for the phases, the grades, the similarity check and the final tournament.

The same rules as app.py's: a student sees its own things only (a URL of another's history or
game answers the one 404), staff see everything; every POST carries the session's CSRF token;
staff actions go to the audit log. The season's logic lives in its own modules (ladder.py,
phases.py, final.py, grades.py, similarity.py, privacy.py); this one only lays it out, calling
them in worker threads (they block on SQLite, and the final's start or a similarity check takes
a while).
"""
from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

import rules
from arena.course.season.archives import Refused
from arena.course_web.auth import signed_in, staff_only, student_only
from arena.course_web.charts import rating_chart
from arena.course_web.forms import checked_form, json_for_script
from arena.match.records import Forfeiture, GameRecord
from arena.site.model import PRINTED
from arena.tournament.store import StoreError

if TYPE_CHECKING:
    from arena.course.db.accounts import Account
    from arena.course_web.app import CourseApp


LADDER_GAMES_SHOWN = 30
"""A student's most recent ladder games listed on the leaderboard page."""
GAME_POLL_S = 2
"""How often the page of an unrated game still to be played reloads itself (seconds)."""


class SeasonPages:
    """The season's views, sharing CourseApp's course, accounts, templates and sign-in."""

    def __init__(self, views: CourseApp) -> None:
        self.views = views
        self.course = views.course
        self._ladder: Any = None
        views.env.globals["ladder_on"] = "ladder" in self.course.config.sections

    def routes(self) -> list[Route]:
        """The season's URLs (create_app adds them to the app's own)."""
        return [
            Route("/ladder", self.leaderboard),
            Route("/ladder/students/{sid}", self.history),
            Route("/ladder/request", self.request_game, methods=["POST"]),
            Route("/ladder/games/{gid:int}", self.ladder_game),
            Route("/submissions/{id:int}/report", self.report),
            Route("/staff/phases", self.phases),
            Route("/staff/phases/recheck", self.recheck_phase, methods=["POST"]),
            Route("/staff/grades", self.grades),
            Route("/staff/grades.csv", self.grades_csv),
            Route("/staff/similarity", self.similarity),
            Route("/staff/final", self.final),
            Route("/staff/final/{action}", self.final_action, methods=["POST"]),
        ]

    # --- helpers ---
    @property
    def ladder(self) -> Any:
        """The course's Ladder (its pages answer 404 where course.toml has no [ladder])."""
        if "ladder" not in self.course.config.sections:
            raise HTTPException(404)
        if self._ladder is None:
            from arena.course.season.ladder import Ladder

            self._ladder = Ladder(self.course)
        return self._ladder

    async def who(self, request: Request) -> Account | None:
        """The signed-in account (CourseApp.who), for the sign-in guard (auth.py)."""
        return await self.views.who(request)

    def names(self, viewer: Account) -> dict[str, str]:
        """Student id -> the name `viewer` sees: pseudonyms on public pages when [privacy] says so,
        the student's own name to itself, real names to staff."""
        from arena.course.season.privacy import display_names

        return display_names(self.course, viewer.id, viewer.is_staff)

    # --- the ladder ---
    @signed_in
    async def leaderboard(self, request: Request, account: Account) -> Response:
        context = await run_in_threadpool(self.leaderboard_context, account)
        return self.views.render(request, "ladder.html", error=request.query_params.get("error", ""),
                                 **context)

    def leaderboard_context(self, account: Account) -> dict[str, Any]:
        """The table under the names `account` sees; a student's chart, games and opponents too."""
        names = self.names(account)
        table = self.ladder.table()
        rows = [ladder_row(r, names) for r in table]
        status, why = self.ladder.status()
        context: dict[str, Any] = {"rows": rows, "own": None, "chart": None, "games": [], "opponents": [],
                                   "ladder_status": status, "ladder_why": why}
        if account.is_staff:
            return context
        mine = self.ladder.games(account.id)
        opponents = [(r.reference, f"{r.reference} (reference bot)") for r in table if r.reference]
        from arena.course.season.privacy import pseudonyms

        others = [r.student_id for r in table if r.student_id and r.student_id != account.id]
        opaque = pseudonyms(self.course, others)  # the form names a classmate by its pseudonym
        opponents += sorted(((opaque[sid], names.get(sid, "")) for sid in others),
                            key=lambda o: o[1].lower())
        context.update(own=account.id, chart=rating_chart(self.ladder.history(account.id)),
                       games=[ladder_game_row(g, names, account.id) for g in mine[:LADDER_GAMES_SHOWN]],
                       opponents=opponents, on_ladder=any(r.student_id == account.id for r in table))
        return context

    @signed_in
    async def history(self, request: Request, account: Account) -> Response:
        sid = request.path_params["sid"]
        if not account.is_staff and sid != account.id:
            raise HTTPException(404)
        student = await run_in_threadpool(self.course.student, sid)
        if student is None:
            raise HTTPException(404)

        def context() -> dict[str, Any]:
            names = self.names(account)
            return {"chart": rating_chart(self.ladder.history(sid)),
                    "games": [ladder_game_row(g, names, sid) for g in self.ladder.games(sid)]}

        return self.views.render(request, "ladder_student.html", student=student,
                                 **await run_in_threadpool(context))

    @student_only
    async def request_game(self, request: Request, account: Account) -> Response:
        form = await checked_form(request)
        opponent = str(form.get("opponent", "")).strip()
        opponent = await run_in_threadpool(opponent_id, self.course, opponent)
        try:
            game_id = await run_in_threadpool(self.ladder.request, account.id, opponent)
        except Refused as exc:
            return RedirectResponse(f"/ladder?error={quote(str(exc))}#request", 303)
        return RedirectResponse(f"/ladder/games/{game_id}", 303)

    @signed_in
    async def ladder_game(self, request: Request, account: Account) -> Response:
        from arena.site import model as site_model
        from arena.tournament.store import StoredGame

        gid = request.path_params["gid"]
        n = request.query_params.get("n", "1")

        def find() -> tuple[Any, dict[str, str], Any]:
            games = self.ladder.games(None if account.is_staff else account.id)
            game = next((g for g in games if g.id == gid), None)
            if game is None:
                return None, {}, None
            names = self.names(account)
            wanted = game.game_ids[int(n) - 1] if n.isdigit() and 1 <= int(n) <= len(game.game_ids) else None
            return game, names, self.ladder.record_of(wanted) if wanted else None

        game, names, record = await run_in_threadpool(find)
        if game is None:
            raise HTTPException(404)
        row = ladder_game_row(game, names, None if account.is_staff else account.id)
        if record is None:
            if game.game_ids and n != "1":
                raise HTTPException(404)
            waiting = {} if game.state.over else {"refresh_s": GAME_POLL_S}
            return self.views.render(request, "ladder_wait.html", game=row, poll_s=GAME_POLL_S, **waiting)
        shown = shown_record(record, names, None if account.is_staff else account.id)
        stored = StoredGame("ladder", int(n), shown)
        data = site_model.game_page(stored)
        return self.views.render(request, "ladder_game.html", game=row, n=int(n), g=data,
                                 open_after_opening=True, data_json=json_for_script(data),
                                 logs=site_model.game_logs(shown),
                                 row=site_model.game_row(stored))

    # --- reports ---
    async def report(self, request: Request) -> Response:
        account, s = await self.views.signed_in_with(request)
        if isinstance(account, Response):
            return account
        found = await run_in_threadpool(self.course.report, s.id)
        if found is None:
            raise HTTPException(404)
        name, data = found
        if account.is_staff:
            await run_in_threadpool(self.views.accounts.audit, account.id, "read a report", s.student_id,
                                    f"submission {s.id} (version {s.version})")
        media = "application/pdf" if name.lower().endswith(".pdf") else "text/markdown; charset=utf-8"
        return Response(data, media_type=media, headers={
            "Cache-Control": "no-store",
            "Content-Disposition": f"attachment; filename*=UTF-8''{quote(name)}"})

    # --- staff ---
    @staff_only
    async def phases(self, request: Request, account: Account) -> Response:
        """Who passed each phase; plays nothing: a check not run yet shows queued or running (the
        background runs it: arena/course/background/phase_checks.py)."""
        from arena.course.season import phase_checks
        from arena.course.season.phases import phase_results

        def read() -> tuple[list[Any], list[Any], dict[Any, Any]]:
            return (phase_results(self.course), phase_checks.due(self.course),
                    phase_checks.progress(self.course.store))

        results, due, running = await run_in_threadpool(read)
        students = {s.id: s for s in await run_in_threadpool(self.course.students)}
        checking = {"due": len(due), "running": sum(1 for c in due if (c.submission_id, c.key) in running)}
        return self.views.render(request, "phases.html", phases=phase_tables(self.course, results),
                                 students=students, checking=checking,
                                 rechecked=request.query_params.get("rechecked", ""))

    @staff_only
    async def recheck_phase(self, request: Request, account: Account) -> Response:
        """Drop a student's verdicts in a phase (form fields `student`, `phase`) so that its checks
        run again in the background; audit-logged with the old verdicts."""
        from arena.course.season.phase_checks import RECHECKED, recheck

        form = await checked_form(request)
        student, phase = str(form.get("student", "")).strip(), str(form.get("phase", "")).strip()
        try:
            dropped = await run_in_threadpool(recheck, self.course, student, phase or None)
        except Refused as exc:
            return self.views.render(request, "error.html", 409, heading="Not checked again",
                                     message=str(exc))
        for d in dropped:
            await run_in_threadpool(self.views.accounts.audit, account.id, RECHECKED, student, d.detail())
        return RedirectResponse(f"/staff/phases?rechecked={quote(student)}", 303)

    @staff_only
    async def grades(self, request: Request, account: Account) -> Response:
        from arena.course.season.grades import grades
        from arena.course.season.grades import provisional as grades_provisional

        try:
            rows = await run_in_threadpool(grades, self.course)
            provisional = await run_in_threadpool(grades_provisional, self.course)
        except ValueError as exc:  # a bad [grading] or [final]: one line, the page says it
            return self.views.render(request, "grades.html", rows=[], problem=str(exc), provisional=True)
        return self.views.render(request, "grades.html", rows=rows, problem="", provisional=provisional)

    @staff_only
    async def grades_csv(self, request: Request, account: Account) -> Response:
        from arena.course.season.grades import csv_text

        try:
            text = await run_in_threadpool(csv_text, self.course)
        except ValueError as exc:
            raise HTTPException(409, str(exc)) from None
        await run_in_threadpool(self.views.accounts.audit, account.id, "downloaded grades.csv", "")
        return Response(text, media_type="text/csv; charset=utf-8", headers={
            "Cache-Control": "no-store", "Content-Disposition": "attachment; filename=grades.csv"})

    @staff_only
    async def similarity(self, request: Request, account: Account) -> Response:
        from arena.course.season.similarity import clusters, settings, similar_pairs

        threshold = request.query_params.get("threshold", "")
        kwargs = {}
        if threshold:
            try:
                kwargs["threshold"] = float(threshold)
            except ValueError:
                raise HTTPException(400, f"threshold must be a number, got {threshold!r}") from None
        try:
            pairs = await run_in_threadpool(lambda: similar_pairs(self.course, **kwargs))
        except ValueError as exc:  # a threshold outside [0, 1]
            raise HTTPException(400, str(exc)) from None
        students = {s.id: s for s in await run_in_threadpool(self.course.students)}
        return self.views.render(request, "similarity.html", pairs=pairs, clusters=clusters(pairs),
                                 students=students,
                                 threshold=threshold or f"{settings(self.course.config).threshold:g}")

    @staff_only
    async def final(self, request: Request, account: Account) -> Response:
        from arena.course.season.final import final_status

        try:
            status = await run_in_threadpool(final_status, self.course)
        except StoreError as exc:  # its results database is being made this moment, or is broken
            return self.views.render(request, "error.html", 503, heading="The final's results cannot be read",
                                     message=f"{exc} (if the final has just started: reload in a moment)")
        names = {s.id: s.name for s in await run_in_threadpool(self.course.students)}
        from arena.course.season.final import rerun_warning

        warning = await run_in_threadpool(rerun_warning, self.course) if status.run else ""
        return self.views.render(request, "final.html", final=status, tables=final_tables(status, names),
                                 done=request.query_params.get("done", ""), rerun_warning=warning)

    @staff_only
    async def final_action(self, request: Request, account: Account) -> Response:
        from arena.course.season import final
        form = await checked_form(request)
        action = request.path_params["action"]
        if action == "rerun":  # cannot be undone: the form asks for the run number it replaces
            status = await run_in_threadpool(final.final_status, self.course)
            if str(form.get("confirm_run", "")).strip() != str(status.run):
                warning = await run_in_threadpool(final.rerun_warning, self.course)
                return self.views.render(request, "error.html", 409, heading="Not rerun: confirm it",
                                         message=f"{warning}. Type the run number {status.run} in the box "
                                                 "to confirm.")
        calls = {"start": lambda: final.start_final(self.course),
                 "rerun": lambda: final.start_final(self.course, rerun=True),
                 "publish": lambda: final.publish_final(self.course)}
        if action not in calls:
            raise HTTPException(404)
        try:
            await run_in_threadpool(calls[action])
        except ValueError as exc:  # FinalError: not now, and why
            return self.views.render(request, "error.html", 409, heading="Not done", message=str(exc))
        await run_in_threadpool(self.views.accounts.audit, account.id, FINAL_ACTIONS[action], "")
        return RedirectResponse(f"/staff/final?done={action}", 303)


FINAL_ACTIONS = {"start": "started the final", "rerun": "reran the final", "publish": "published the final"}
"""The final's buttons, as the audit log words them."""
FINAL_COLUMNS = ("rank", "bot", "games", "wins", "losses", "points", "score %", "forfeits")
"""The standings' columns the final's page shows (arena.tournament.standings.STANDINGS_COLUMNS)."""


# --- plain data for the templates ---

def opaque_opponent(course: Any, student_id: str) -> str:
    """How the request form names a classmate: its pseudonym (unique in the course, made from a
    keyed hash: it tells nothing of the student's id), never the id (a matriculation number)."""
    from arena.course.season.privacy import pseudonym

    return pseudonym(course, student_id)


def opponent_id(course: Any, value: str) -> str:
    """The student id a request's `opponent` names by its pseudonym (a reference bot's name, or
    anything else, as it is: the ladder refuses what names no opponent)."""
    rows = course.store.rows("SELECT student_id FROM pseudonyms WHERE name = ?", value)
    return rows[0]["student_id"] if rows else value


def ladder_row(row: Any, names: dict[str, str]) -> dict[str, Any]:
    """A leaderboard row: the name the viewer sees, μ ± σ, the ordinal, games."""
    sid = row.student_id
    return {"student_id": sid, "name": names.get(sid, row.name) if sid else row.name,
            "reference": row.reference, "bot": row.bot, "mu": row.mu, "sigma": row.sigma,
            "ordinal": row.ordinal, "games": row.games, "placed": row.placed}


def bot_student(bot: str, names: dict[str, str]) -> str | None:
    """The student id of a ladder bot's name ("s001-v3"), None for a reference bot."""
    head, sep, version = bot.rpartition("-v")
    return head if sep and version.isdigit() and head in names else None


def shown_bot(bot: str, names: dict[str, str]) -> str:
    """A ladder bot as the viewer sees it: "<name> v3" (a pseudonym where [privacy] says so), or
    the reference bot's name."""
    sid = bot_student(bot, names)
    return f"{names[sid]} v{bot.rpartition('-v')[2]}" if sid else bot


def ladder_game_row(game: Any, names: dict[str, str], side: str | None = None) -> dict[str, Any]:
    """A ladder game (a pair of games, both seats) as the lists show it: the bots under the names
    the viewer sees (the bot of student `side` first, where it plays), rated or asked for, its
    state, and the first bot's points of the pair."""
    players, score = [game.a, game.b], game.score
    if side is not None and bot_student(game.b, names) == side and bot_student(game.a, names) != side:
        players.reverse()
        score = None if score is None else len(game.game_ids) - score
    return {"id": game.id, "players": [shown_bot(p, names) for p in players], "rated": game.rated,
            "state": game.state, "detail": game.detail, "games": len(game.game_ids), "score": score,
            "time": game.created, "finished": game.state.over}


def shown_record(record: GameRecord, names: dict[str, str], viewer: str | None) -> GameRecord:
    """The record as `viewer` may see it (None: staff, all of it): the players under the names
    the viewer sees, and of the other bot nothing it printed (its log, its tracebacks, what its
    forfeit quoted): a student sees its own code, logs and games only."""
    players = [shown_bot(p, names) for p in record.players]
    if viewer is None:
        return dataclasses.replace(record, players=players)
    own = {seat for seat, p in enumerate(record.players) if bot_student(p, names) == viewer}
    logs = {seat: text for seat, text in record.logs.items() if seat.isdigit() and int(seat) in own}
    moves = [m if m.seat in own else dataclasses.replace(m, info={}) for m in record.moves]
    forfeit = record.forfeiture

    def unprinted(side: Forfeiture) -> Forfeiture:  # what another's bot printed is not shown
        if side.seat is None or side.seat in own:
            return side
        return dataclasses.replace(side, detail=side.detail.split(PRINTED, 1)[0])

    if forfeit is not None:
        forfeit = unprinted(forfeit)
        if forfeit.both:
            forfeit = dataclasses.replace(forfeit, both=tuple(unprinted(side) for side in forfeit.both))
    return dataclasses.replace(record, players=players, logs=logs, moves=moves,
                               forfeit=forfeit.to_dict() if forfeit is not None else None)


def phase_tables(course: Any, results: list[Any]) -> list[dict[str, Any]]:
    """The phases in course.toml's order, each with its results (in student id order), how many
    passed and how many are still being checked, its deadline, what it asks for and whether it
    has checks to run (score games, move generation: staff may run them again)."""
    game = rules.load(course.config.game, **course.config.params)
    tables = []
    for phase in course.config.season.phases:
        mine = [{"r": r, "disagreements": [shown_position(game, *d) for d in r.disagreements]}
                for r in results if r.phase == phase.name]
        tables.append({"name": phase.name, "deadline": phase.deadline.isoformat(),
                       "asks": phase.requirements(), "report": phase.report, "results": mine,
                       "passed": sum(1 for m in mine if m["r"].passed),
                       "checking": sum(1 for m in mine if m["r"].pending),
                       "checks": phase.score is not None or phase.legal is not None,
                       "provisional": any(m["r"].provisional for m in mine)})
    return tables


def shown_position(game: Any, wire: Any, missing: list[str], extra: list[str]) -> dict[str, Any]:
    """A position where a bot's move generation disagreed with the rules: the board as text (the
    wire form itself where it cannot be read back), the moves it left out and those not legal."""
    try:
        board = game.state_from_wire(wire).render()
    except (ValueError, TypeError, KeyError, AttributeError):
        board = json.dumps(wire)
    return {"board": board, "missing": list(missing), "extra": list(extra)}


def final_tables(status: Any, names: dict[str, str]) -> list[dict[str, Any]]:
    """The final's standings tables as rows of FINAL_COLUMNS, each bot with its student's id and
    name (staff's page: real names)."""
    if status.standings is None:
        return []
    tables = []
    for table in status.standings.tables:
        rows = []
        for r in table.frame.to_dict("records"):
            sid = status.students.get(r["bot"])
            rows.append({**{c: r.get(c) for c in FINAL_COLUMNS}, "student_id": sid or "",
                         "name": names.get(sid, "") if sid else ""})
        tables.append({"title": table.title, "ranked_by": table.ranked_by, "rows": rows})
    return tables
