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

from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from arena.course.archives import Refused
from arena.course.charts import rating_chart

if TYPE_CHECKING:
    from arena.course.accounts import Account
    from arena.course.app import CourseApp

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

    def routes(self) -> list[Route]:
        return [
            Route("/ladder", self.leaderboard),
            Route("/ladder/students/{sid}", self.history),
            Route("/ladder/request", self.request_game, methods=["POST"]),
            Route("/ladder/games/{gid:int}", self.ladder_game),
            Route("/submissions/{id:int}/report", self.report),
            Route("/staff/phases", self.phases),
            Route("/staff/grades", self.grades),
            Route("/staff/grades.csv", self.grades_csv),
            Route("/staff/similarity", self.similarity),
            Route("/staff/final", self.final),
            Route("/staff/final/{action}", self.final_action, methods=["POST"]),
        ]

    # --- helpers ---
    @property
    def ladder(self) -> Any:
        if self._ladder is None:
            from arena.course.ladder import Ladder

            self._ladder = Ladder(self.course)
        return self._ladder

    async def signed_in(self, request: Request) -> Account | Response:
        account = await self.views.who(request)
        if account is None:
            from arena.course.app import to_login

            return to_login(request)
        return account

    def names(self, viewer: Account) -> dict[str, str]:
        """Student id -> the name `viewer` sees: pseudonyms on public pages when [privacy] says so,
        the student's own name to itself, real names to staff."""
        from arena.course.privacy import display_name

        return {s.id: display_name(self.course, s.id, viewer.id, viewer.is_staff) for s in self.course.students()}

    # --- the ladder ---
    async def leaderboard(self, request: Request) -> Response:
        account = await self.signed_in(request)
        if not hasattr(account, "is_staff"):
            return account  # type: ignore[return-value]
        names = await run_in_threadpool(self.names, account)
        table = await run_in_threadpool(self.ladder.table)
        rows = [ladder_row(r, names) for r in table]
        context: dict[str, Any] = {"rows": rows, "names": names, "own": None, "chart": None, "games": [],
                                   "opponents": [], "error": request.query_params.get("error", "")}
        if not account.is_staff:
            context.update(await run_in_threadpool(self.student_context, account, names))
        return self.views.render(request, "ladder.html", **context)

    def student_context(self, account: Account, names: dict[str, str]) -> dict[str, Any]:
        """What a student's leaderboard adds: its chart, its games, whom it may ask to play."""
        history = self.ladder.history(account.id)
        games = [ladder_game_row(g, account.id, names) for g in self.ladder.games(account.id)]
        opponents = [(o, label) for o, label in self.opponents(names) if o != account.id]
        return {"own": account.id, "chart": rating_chart(history), "games": games[:LADDER_GAMES_SHOWN],
                "opponents": opponents}

    def opponents(self, names: dict[str, str]) -> list[tuple[str, str]]:
        """(value, label) of every bot a student may ask for an unrated game: the reference bots,
        then the classmates with an active bot (under the names the viewer sees)."""
        found = []
        for row in self.ladder.table():
            sid = getattr(row, "student_id", None)
            if sid:
                found.append((sid, names.get(sid, sid)))
            else:
                found.append((row.name, f"{row.name} (reference bot)"))
        return sorted(found, key=lambda o: (o[1].endswith("(reference bot)") is False, o[1].lower()))

    async def history(self, request: Request) -> Response:
        account = await self.signed_in(request)
        if not hasattr(account, "is_staff"):
            return account  # type: ignore[return-value]
        sid = request.path_params["sid"]
        if not account.is_staff and sid != account.id:
            raise HTTPException(404)
        student = await run_in_threadpool(self.course.student, sid)
        if student is None:
            raise HTTPException(404)
        names = await run_in_threadpool(self.names, account)
        history = await run_in_threadpool(self.ladder.history, sid)
        games = await run_in_threadpool(self.ladder.games, sid)
        return self.views.render(request, "ladder_student.html", student=student, chart=rating_chart(history),
                                 games=[ladder_game_row(g, sid, names) for g in games])

    async def request_game(self, request: Request) -> Response:
        from arena.course.app import checked_form

        account = await self.signed_in(request)
        if not hasattr(account, "is_staff"):
            return account  # type: ignore[return-value]
        form = await checked_form(request)
        if account.is_staff:
            raise HTTPException(404)
        opponent = str(form.get("opponent", "")).strip()
        try:
            game_id = await run_in_threadpool(self.ladder.request, account.id, opponent)
        except (Refused, ValueError, KeyError) as exc:
            message = exc.args[0] if exc.args else str(exc)
            return RedirectResponse(f"/ladder?error={quote(str(message))}#request", 303)
        return RedirectResponse(f"/ladder/games/{game_id}", 303)

    async def ladder_game(self, request: Request) -> Response:
        from arena.course.app import json_for_script
        from arena.site import model as site_model
        from arena.tournament.store import StoredGame

        account = await self.signed_in(request)
        if not hasattr(account, "is_staff"):
            return account  # type: ignore[return-value]
        gid = request.path_params["gid"]
        game = await run_in_threadpool(self.ladder.game, gid)
        if game is None or not (account.is_staff or account.id in game_students(game)):
            raise HTTPException(404)
        names = await run_in_threadpool(self.names, account)
        row = ladder_game_row(game, None if account.is_staff else account.id, names)
        if game.record is None:
            return self.views.render(request, "ladder_wait.html", game=row, poll_s=GAME_POLL_S)
        stored = StoredGame("ladder", gid, shown_record(game.record, names))
        data = site_model.game_page(stored)
        return self.views.render(request, "ladder_game.html", game=row, g=data, data_json=json_for_script(data),
                                 logs=site_model.game_logs(stored.record) if account.is_staff else [],
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
            "Cache-Control": "no-store", "Content-Disposition": f"attachment; filename*=UTF-8''{quote(name)}"})

    # --- staff ---
    async def staff(self, request: Request) -> Account | Response:
        return await self.views.staff_account(request)

    async def phases(self, request: Request) -> Response:
        from arena.course.phases import phase_results

        account = await self.staff(request)
        if isinstance(account, Response):
            return account
        results = await run_in_threadpool(phase_results, self.course)
        students = {s.id: s for s in await run_in_threadpool(self.course.students)}
        by_phase: dict[str, list[Any]] = {}
        for r in results:
            by_phase.setdefault(r.phase, []).append(r)
        return self.views.render(request, "phases.html", phases=phase_tables(self.course, by_phase),
                                 students=students)

    async def grades(self, request: Request) -> Response:
        from arena.course.grades import grades

        account = await self.staff(request)
        if isinstance(account, Response):
            return account
        try:
            rows = await run_in_threadpool(grades, self.course)
        except ValueError as exc:  # no final yet: the page says so
            return self.views.render(request, "grades.html", rows=[], problem=str(exc))
        return self.views.render(request, "grades.html", rows=rows, problem="")

    async def grades_csv(self, request: Request) -> Response:
        from arena.course.grades import grades_csv

        account = await self.staff(request)
        if isinstance(account, Response):
            return account
        try:
            text = await run_in_threadpool(grades_csv, self.course)
        except ValueError as exc:
            raise HTTPException(409, str(exc)) from None
        await run_in_threadpool(self.views.accounts.audit, account.id, "downloaded grades.csv", "")
        return Response(text, media_type="text/csv; charset=utf-8", headers={
            "Cache-Control": "no-store", "Content-Disposition": "attachment; filename=grades.csv"})

    async def similarity(self, request: Request) -> Response:
        from arena.course.similarity import similar_pairs

        account = await self.staff(request)
        if isinstance(account, Response):
            return account
        threshold = request.query_params.get("threshold", "")
        kwargs = {}
        if threshold:
            try:
                kwargs["threshold"] = float(threshold)
            except ValueError:
                raise HTTPException(400, f"threshold must be a number, got {threshold!r}") from None
        pairs = await run_in_threadpool(lambda: similar_pairs(self.course, **kwargs))
        students = {s.id: s for s in await run_in_threadpool(self.course.students)}
        return self.views.render(request, "similarity.html", pairs=pairs, students=students,
                                 threshold=threshold)

    async def final(self, request: Request) -> Response:
        from arena.course.final import final_status

        account = await self.staff(request)
        if isinstance(account, Response):
            return account
        status = await run_in_threadpool(final_status, self.course)
        return self.views.render(request, "final.html", status=status,
                                 done=request.query_params.get("done", ""))

    async def final_action(self, request: Request) -> Response:
        from arena.course import final
        from arena.course.app import checked_form

        account = await self.staff(request)
        if isinstance(account, Response):
            return account
        await checked_form(request)
        action = request.path_params["action"]
        calls = {"start": lambda: final.start_final(self.course),
                 "rerun": lambda: final.start_final(self.course, rerun=True),
                 "publish": lambda: final.publish_final(self.course)}
        if action not in calls:
            raise HTTPException(404)
        try:
            await run_in_threadpool(calls[action])
        except (ValueError, RuntimeError) as exc:
            raise HTTPException(409, str(exc)) from None
        words = {"start": "started the final early", "rerun": "reran the final", "publish": "published the final"}
        await run_in_threadpool(self.views.accounts.audit, account.id, words[action], "")
        return RedirectResponse(f"/staff/final?done={action}", 303)


# --- plain data for the templates ---

def ladder_row(row: Any, names: dict[str, str]) -> dict[str, Any]:
    """A leaderboard row: the name the viewer sees, μ ± σ, the ordinal, games."""
    sid = getattr(row, "student_id", None)
    return {"student_id": sid, "name": names.get(sid, row.name) if sid else row.name, "reference": not sid,
            "mu": row.mu, "sigma": row.sigma, "ordinal": row.ordinal, "games": row.games}


def game_students(game: Any) -> list[str]:
    return [s for s in getattr(game, "student_ids", ()) if s]


def ladder_game_row(game: Any, viewer: str | None, names: dict[str, str]) -> dict[str, Any]:
    """A ladder game as the lists show it: id, the players under the names the viewer sees,
    rated or not, its result from the viewer's side once played."""
    players = [shown_player(p, s, names) for p, s in zip(game.players, game_students(game) or (None, None),
                                                          strict=False)]
    record = game.record
    result = ""
    if record is not None:
        from arena.site import model as site_model

        result = site_model.result(record)
    return {"id": game.id, "players": players, "rated": game.rated, "result": result,
            "finished": record is not None, "time": getattr(game, "time", "")}


def shown_player(player: str, student_id: str | None, names: dict[str, str]) -> str:
    return names.get(student_id, player) if student_id else player


def shown_record(record: Any, names: dict[str, str]) -> Any:
    return record


def phase_tables(course: Any, by_phase: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """The phases in course.toml's order, each with its results and how many passed."""
    order = [p.get("name") for p in course.config.sections.get("phases", []) if isinstance(p, dict)]
    order += [name for name in by_phase if name not in order]
    tables = []
    for name in order:
        results = sorted(by_phase.get(name, []), key=lambda r: r.student_id)
        tables.append({"name": name, "results": results, "passed": sum(1 for r in results if r.passed)})
    return tables
