"""Staff's working pages (issue 33), beside app.py's and season_pages.py's: the server's queue
(`/staff/queue`, refreshing itself, and `/staff/queue.json` for scripts), every game of one student
(`/staff/students/{sid}/games`, with the replay of its final games) and a student's defence sheet
for the oral exam (`/staff/students/{sid}/defence`, printable).

Staff only: a student gets the one 404, as for any page not its own. The data comes from
arena.course.season (queue.py, student_games.py, defence.py), called in worker threads; nothing
here plays, schedules or writes, except the audit log's line for a defence sheet read.
"""
from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from arena.course_web.auth import staff_only
from arena.course_web.forms import NO_STORE, json_for_script

if TYPE_CHECKING:
    from arena.course.db.accounts import Account
    from arena.course_web.app import CourseApp

QUEUE_REFRESH_S = 5
"""How often the queue page reloads itself (seconds)."""


class StaffPages:
    """The queue, a student's games and its defence sheet, sharing CourseApp's course, accounts,
    templates and sign-in."""

    def __init__(self, views: CourseApp) -> None:
        self.views = views
        self.course = views.course
        views.env.filters["duration"] = duration
        views.env.filters["diff_class"] = diff_class

    def routes(self) -> list[Route]:
        """Staff's URLs here (create_app adds them to the app's own)."""
        return [
            Route("/staff/queue", self.queue),
            Route("/staff/queue.json", self.queue_json),
            Route("/staff/students/{sid}/games", self.games),
            Route("/staff/students/{sid}/final-games/{n:int}", self.final_game),
            Route("/staff/students/{sid}/defence", self.defence),
        ]

    async def who(self, request: Request) -> Account | None:
        """The signed-in account (CourseApp.who), for the sign-in guard (auth.py)."""
        return await self.views.who(request)

    async def student(self, request: Request) -> Any:
        """The URL's student (404 for one not on the roster)."""
        student = await run_in_threadpool(self.course.student, request.path_params["sid"])
        if student is None:
            raise HTTPException(404)
        return student

    # --- the queue ---
    @staff_only
    async def queue(self, request: Request, account: Account) -> Response:
        from arena.course.season.queue import queue_view

        view = await run_in_threadpool(queue_view, self.course)
        return self.views.render(request, "queue.html", q=view, refresh_s=QUEUE_REFRESH_S)

    @staff_only
    async def queue_json(self, request: Request, account: Account) -> Response:
        from arena.course.season.queue import queue_view

        view = await run_in_threadpool(queue_view, self.course)
        return JSONResponse(view.to_json(), headers=NO_STORE)

    # --- a student's games ---
    @staff_only
    async def games(self, request: Request, account: Account) -> Response:
        from arena.course.season.student_games import student_games

        student = await self.student(request)
        games = await run_in_threadpool(student_games, self.course, student.id)
        return self.views.render(request, "student_games.html", student=student, games=games,
                                 kinds=kind_counts(games))

    @staff_only
    async def final_game(self, request: Request, account: Account) -> Response:
        from arena.course.season.student_games import final_records
        from arena.site import model as site_model
        from arena.tournament.store import StoredGame

        student = await self.student(request)
        n = request.path_params["n"]
        records = await run_in_threadpool(final_records, self.course, student.id)
        if not 1 <= n <= len(records):
            raise HTTPException(404)
        stored = StoredGame("final", n, records[n - 1])
        data = site_model.game_page(stored)
        return self.views.render(request, "final_game.html", label=f"final game {n}", student=student,
                                 back=f"/staff/students/{quote(student.id)}/games", g=data,
                                 data_json=json_for_script(data), logs=site_model.game_logs(stored.record),
                                 row=site_model.game_row(stored))

    # --- the defence sheet ---
    @staff_only
    async def defence(self, request: Request, account: Account) -> Response:
        from arena.course.season.defence import defence_sheet

        student = await self.student(request)
        sheet = await run_in_threadpool(defence_sheet, self.course, student.id)
        if sheet is None:
            raise HTTPException(404)
        await run_in_threadpool(self.views.accounts.audit, account.id, "read a defence sheet", student.id)
        printed = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        return self.views.render(request, "defence.html", student=student, sheet=sheet, printed=printed)


def kind_counts(games: list[Any]) -> list[tuple[str, int]]:
    """(kind, how many) of a student's games, in the order kinds first appear."""
    counts: dict[str, int] = {}
    for g in games:
        counts[g.kind] = counts.get(g.kind, 0) + 1
    return list(counts.items())


def duration(seconds: float | None) -> str:
    """A time span as the queue shows it: "42 s", "3 min 5 s", "2 h 10 min", "3 d 4 h"."""
    if seconds is None:
        return ""
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    if s < 86400:
        return f"{s // 3600} h {s % 3600 // 60} min"
    return f"{s // 86400} d {s % 86400 // 3600} h"


def diff_class(line: str) -> str:
    """The class of a unified diff's line: file, hunk, add, del, or "" for context."""
    if line.startswith(("+++", "---")):
        return "file"
    return {"@": "hunk", "+": "add", "-": "del"}.get(line[:1], "")
