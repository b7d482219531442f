"""The season as a student lives it (issue 32): the student's season page (each phase with its
deadline, the student's extension applied, what it requires, the student's status and evidence,
the report it will judge and the form to hand one in; the freeze time; the student's pseudonym;
the final's table and the student's final games), reports handed in for a phase on their own
(the page's form and `POST /api/reports` for `arena course report`), and the replays of the games
played for a phase and in the final.

The course's rule holds: a student sees its own things only (any other URL answers the one 404),
and nothing a student receives names another student by id: classmates appear under the names
the student sees (their pseudonyms where `[privacy] pseudonyms = true`, else roster names).
"""
from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData, UploadFile
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from arena.course.config import checks
from arena.course.season import phases, reports
from arena.course.season.archives import Refused
from arena.course_web.forms import api_error, checked_form, json_for_script, to_login
from arena.match.records import GameRecord

if TYPE_CHECKING:
    from arena.course.db.accounts import Account
    from arena.course_web.app import CourseApp

REPORT_PATHS = ("/me/reports", "/api/reports")
"""The routes that take a report on its own: their body bound is the largest report plus the form's."""
GAME_ID_RE = re.compile(r"[A-Za-z0-9._-]{1,200}")


class StudentSeason:
    """The student's season views, sharing CourseApp's course, accounts, templates and sign-in."""

    def __init__(self, views: CourseApp) -> None:
        self.views = views
        self.course = views.course

    def routes(self) -> list[Route]:
        return [
            Route("/me/season", self.season_page),
            Route("/me/season.json", self.season_json),
            Route("/me/reports", self.hand_in, methods=["POST"]),
            Route("/reports/{rid:int}", self.report_file),
            Route("/phase-games/{gid}", self.phase_game),
            Route("/final/games/{n:int}", self.final_game),
            Route("/api/reports", self.api_hand_in, methods=["POST"]),
        ]

    # --- the season page ---
    async def student(self, request: Request) -> Account | Response:
        account = await self.views.who(request)
        if account is None:
            return to_login(request)
        if account.is_staff:
            raise HTTPException(404)
        return account

    async def season_page(self, request: Request) -> Response:
        account = await self.student(request)
        if isinstance(account, Response):
            return account
        context = await run_in_threadpool(season_context, self.course, account.id)
        return self.views.render(request, "season.html", error=request.query_params.get("error", ""),
                                 handed=request.query_params.get("handed", ""), **context)

    async def season_json(self, request: Request) -> Response:
        account = await self.student(request)
        if isinstance(account, Response):
            return account
        context = await run_in_threadpool(season_context, self.course, account.id)
        return JSONResponse(json.loads(json.dumps({k: context[k] for k in ("pseudonym", "freeze", "phases",
                                                                           "final")}, default=str)),
                            headers={"Cache-Control": "no-store"})

    # --- reports ---
    async def hand_in(self, request: Request) -> Response:
        account = await self.student(request)
        if isinstance(account, Response):
            return account
        form = await checked_form(request)
        try:
            report = await self.store_report(account, form)
        except Refused as exc:
            return RedirectResponse(f"/me/season?error={quote(str(exc))}#reports", 303)
        return RedirectResponse(f"/me/season?handed={quote(report.filename)}#reports", 303)

    async def store_report(self, account: Account, form: FormData) -> reports.Report:
        phase = str(form.get("phase", "")).strip()
        upload = form.get("report")
        if not isinstance(upload, UploadFile) or not upload.filename:
            raise Refused("no report: choose your report's file (.pdf or .md)")
        limit = max_report_bytes(self.course)
        if not limit:
            raise Refused("this course takes no reports")
        data = await upload.read(limit + 1)
        name = Path(upload.filename.replace("\\", "/")).name
        return await run_in_threadpool(reports.hand_in, self.course, account.id, phase, name, data)

    async def api_hand_in(self, request: Request) -> Response:

        account = await self.views.bearer(request)
        if account is None:
            return api_error("no valid API token (Authorization: Bearer TOKEN); staff issue one with "
                             "`arena course token DIR ID`", 401)
        if account.is_staff:
            return api_error("a staff token cannot hand in a report: reports are students'", 403)
        try:
            form = await request.form(max_files=1, max_fields=4)
            report = await self.store_report(account, form)
        except Refused as exc:
            return api_error(str(exc), 400)
        return JSONResponse({"phase": str(form.get("phase", "")), "filename": report.filename,
                             "size": report.size, "created": report.created, "url": report.url},
                            status_code=201, headers={"Cache-Control": "no-store"})

    async def report_file(self, request: Request) -> Response:
        account = await self.views.who(request)
        if account is None:
            return to_login(request)
        found = await run_in_threadpool(reports.report_file, self.course, request.path_params["rid"])
        if found is None or not (account.is_staff or found[0] == account.id):
            raise HTTPException(404)
        sid, name, data = found
        if account.is_staff:
            await run_in_threadpool(self.views.accounts.audit, account.id, "read a report", sid,
                                    f"report {request.path_params['rid']}")
        media = "application/pdf" if name.lower().endswith(".pdf") else "text/markdown; charset=utf-8"
        return Response(data, media_type=media, headers={
            "Cache-Control": "no-store",
            "Content-Disposition": f"attachment; filename*=UTF-8''{quote(name)}"})

    # --- replays ---
    async def phase_game(self, request: Request) -> Response:
        account = await self.views.who(request)
        if account is None:
            return to_login(request)
        gid = request.path_params["gid"]
        if not GAME_ID_RE.fullmatch(gid):
            raise HTTPException(404)
        found = await run_in_threadpool(phase_game_of, self.course, gid)
        if found is None or not (account.is_staff or found[0] == account.id):
            raise HTTPException(404)
        back = "/staff/phases" if account.is_staff else "/me/season"
        return self.replay(request, found[1], f"phase game {gid}", back)

    async def final_game(self, request: Request) -> Response:
        account = await self.student(request)
        if isinstance(account, Response):
            return account
        n = request.path_params["n"]
        games = await run_in_threadpool(final_games, self.course, account.id)
        if not 1 <= n <= len(games):
            raise HTTPException(404)
        names = await run_in_threadpool(seen_names, self.course, account.id)
        record = shown_final_record(games[n - 1][1], games[n - 1][2], names, account.id)
        return self.replay(request, record, f"final game {n}", "/me/season#final")

    def replay(self, request: Request, record: GameRecord, label: str, back: str) -> Response:
        from arena.site import model as site_model
        from arena.tournament.store import StoredGame

        stored = StoredGame("phase", 1, record)
        data = site_model.game_page(stored)
        return self.views.render(request, "season_game.html", label=label, back=back, g=data,
                                 data_json=json_for_script(data), logs=site_model.game_logs(record),
                                 row=site_model.game_row(stored))


# --- plain data for the templates ---

def max_report_bytes(course: Any) -> int:
    """The largest report any phase takes (0 where none takes one)."""
    return max((p.report_max_bytes for p in course.config.season.phases if p.report), default=0)


def seen_names(course: Any, viewer: str) -> dict[str, str]:
    """Student id -> the name `viewer` (a student) sees: its own roster name, classmates' pseudonyms
    where [privacy] says so, else their roster names."""
    from arena.course.season.privacy import display_name

    return {s.id: display_name(course, s.id, viewer, False) for s in course.students()}


def phase_game_of(course: Any, game_id: str) -> tuple[str, GameRecord] | None:
    """(the student whose version played it, the record) of a phase's score game or a
    qualification game, None for an unknown id."""
    rows = course.store.rows("SELECT p.record, s.student_id FROM phase_games p JOIN submissions s "
                             "ON p.submission_id = s.id WHERE p.game_id = ?", game_id)
    if rows:
        return rows[0]["student_id"], GameRecord.from_json(rows[0]["record"])
    match = re.fullmatch(r"qualify-(\d+)-g(\d+)", game_id)
    if match:
        row = course.store.submission_row(int(match.group(1)))
        record = phases.phase_game(course, game_id)
        if row is not None and record is not None:
            return row["student_id"], record
    return None


def shown_position(game: Any, wire: Any, missing: list[str], extra: list[str]) -> dict[str, Any]:
    """A disagreeing position as the page draws it: the wire form (the board's script draws it),
    the board as text beside it, the moves left out and those not legal."""
    try:
        text = game.state_from_wire(wire).render()
    except (ValueError, TypeError, KeyError, AttributeError):
        text = json.dumps(wire)
    return {"wire": json_for_script(wire), "board": text, "missing": list(missing), "extra": list(extra)}


def season_context(course: Any, student_id: str) -> dict[str, Any]:
    """Everything the season page shows the student: its pseudonym, the freeze time, each phase
    (deadline with the extension, requirements, status, evidence, games, disagreeing positions,
    the report judged; `pending`: its checks not run yet, where each stands: the page plays
    nothing) and the final (its table under the names the student sees, its games)."""
    import rules
    from arena.course.season import privacy

    config = course.config
    now = course.clock.now()
    season = config.season
    extension = season.extensions.get(student_id)
    game = rules.load(config.game, **config.params)
    results = {r.phase: r for r in phases.student_results(course, student_id, now)}
    shown_phases = []
    for phase in season.phases:
        own = reports.phase_deadline(course, phase, student_id)
        r = results[phase.name]
        report = phases.judged_report(course, phase, student_id, min(own, now)) if phase.report else None
        shown_phases.append({
            "name": phase.name, "deadline": phase.deadline.isoformat(), "own_deadline": own.isoformat(),
            "extended": own != phase.deadline, "open": now < own, "asks": phase.requirements(),
            "takes_report": phase.report, "report_max": phase.report_max_bytes,
            "passed": r.passed, "provisional": r.provisional, "evidence": r.evidence,
            "pending": list(r.pending),
            "submission_id": r.submission_id,
            "games": [{"id": g, "url": f"/phase-games/{quote(g)}"} for g in r.game_ids],
            "positions": [shown_position(game, *d) for d in r.disagreements],
            "report": None if report is None else {"filename": report.filename, "url": report.url,
                                                    "created": report.created, "size": report.size}})
    freeze = phases.deadline_for(config, student_id)
    return {"pseudonym": privacy.pseudonym(course, student_id),
            "pseudonyms_on": config.privacy.pseudonyms,
            "freeze": freeze.isoformat() if freeze else None,
            "extension": checks.duration_text(extension) if extension else "",
            "phases": shown_phases, "game": config.game, "history": reports.history(course, student_id),
            "final": final_context(course, student_id)}


def final_games(course: Any, student_id: str) -> list[tuple[int, GameRecord, dict[str, str]]]:
    """(number, record, bot -> student id) of the final's games the student's bot played, in the
    order they were stored; none before the final."""
    from arena.course.season.final import final_status
    from arena.tournament.store import DB_NAME, Store, StoreError

    try:
        status = final_status(course)
    except StoreError:
        return []
    bots = {sid: bot for bot, sid in status.students.items()}
    mine = bots.get(student_id)
    if mine is None or status.results_dir is None or not (status.results_dir / DB_NAME).is_file():
        return []
    try:
        with Store(status.results_dir / DB_NAME, create=False) as store:
            games = [g.record for g in store.iter_games() if mine in g.record.players]
    except StoreError:
        return []
    return [(n, record, status.students) for n, record in enumerate(games, 1)]


def shown_final_record(record: GameRecord, students: dict[str, str], names: dict[str, str],
                       viewer: str) -> GameRecord:
    """A final game as the student sees it: the bots under the names it sees, its own bot's
    output kept, of the other nothing it printed."""
    from arena.site.model import PRINTED

    own = {seat for seat, p in enumerate(record.players) if students.get(p) == viewer}
    players = [names.get(students.get(p, ""), p) if students.get(p) else p for p in record.players]
    logs = {seat: text for seat, text in record.logs.items() if seat.isdigit() and int(seat) in own}
    moves = [m if m.seat in own else dataclasses.replace(m, info={}) for m in record.moves]
    forfeit = record.forfeit
    if forfeit and forfeit.get("seat") is not None and forfeit["seat"] not in own:
        forfeit = {**forfeit, "detail": str(forfeit.get("detail", "")).split(PRINTED, 1)[0]}
    if forfeit and forfeit.get("both"):
        forfeit = {**forfeit, "both": [s if s.get("seat") in own else
                                       {**s, "detail": str(s.get("detail", "")).split(PRINTED, 1)[0]}
                                       for s in forfeit["both"]]}
    return dataclasses.replace(record, players=players, logs=logs, moves=moves, forfeit=forfeit)


def final_context(course: Any, student_id: str) -> dict[str, Any]:
    """The final as the student sees it: its state, its table (bots under the names the student
    sees, the student's own row marked) and the student's games."""
    from arena.course.season.final import final_status
    from arena.site import model as site_model
    from arena.tournament.store import StoreError

    if "final" not in course.config.sections:
        return {"on": False, "state": "", "tables": [], "games": []}
    try:
        status = final_status(course)
    except StoreError:
        return {"on": True, "state": "running", "tables": [], "games": []}
    names = seen_names(course, student_id)
    tables = []
    if status.standings is not None:
        for table in status.standings.tables:
            rows = []
            for r in table.frame.to_dict("records"):
                sid = status.students.get(r["bot"])
                rows.append({"rank": r.get("rank"), "name": names.get(sid, r["bot"]) if sid else r["bot"],
                             "own": sid == student_id, "games": r.get("games"), "wins": r.get("wins"),
                             "losses": r.get("losses"), "points": r.get("points"),
                             "score": r.get("score %")})
            tables.append({"title": table.title, "rows": rows})
    games = []
    for n, record, students in final_games(course, student_id):
        shown = shown_final_record(record, students, names, student_id)
        games.append({"n": n, "players": list(shown.players), "result": site_model.result(shown),
                      "words": site_model.result_words(shown), "url": f"/final/games/{n}"})
    return {"on": True, "state": status.state, "tables": tables, "games": games}
