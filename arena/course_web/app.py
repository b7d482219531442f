"""The course server's web app (ASGI, Starlette): students' and staff's pages, and the JSON API of
`arena course submit`.

One rule decides what a student may see: every URL naming a submission (its page, status, log,
source, download, games, actions) goes through `_visible`, which answers 404, the same page as for
an id that does not exist, unless the submission is the signed-in student's own (staff see all).
Pages sign in with a signed, HttpOnly, SameSite=Lax session cookie (Starlette's SessionMiddleware)
carrying the secret of a session kept in the accounts' table (so sign-out, staff and a new password
end it wherever the cookie was copied), and every form carries the session's CSRF token, checked
on each POST; the API uses a bearer token instead (no cookie, so no CSRF). Sign-in tries are
counted per id and client address (signin.py); request bodies are bounded as they stream
(bounds.py). The course itself (config, storage, statuses) is the engine's
`Course` facade: this module only lays it out, calling it in worker threads (it blocks on SQLite).
"""
from __future__ import annotations

import math
import secrets
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData, UploadFile
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from arena import __version__
from arena.course.course import Course, Submission
from arena.course.db.accounts import SESSION_S, Account, AccountError, Accounts, session_secret
from arena.course.db.clock import ClockError, offset_text
from arena.course.db.states import STATES_JSON, FinalState, LadderState, LadderStatus, SubmissionStatus
from arena.course.season.archives import Refused
from arena.course_web import signin
from arena.course_web.auth import guard, signed_in, staff_only, student_only
from arena.course_web.bounds import BodyLimit
from arena.course_web.forms import NO_STORE, api_error, checked_form, json_for_script, safe_next, to_login
from arena.course_web.season_pages import SeasonPages
from arena.course_web.staff_pages import StaffPages
from arena.course_web.student_season import REPORT_PATHS, StudentSeason, max_report_bytes
from arena.site import model as site_model
from arena.tournament.store import StoredGame

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
COURSE_STATIC = HERE / "static"
SITE_STATIC = HERE.parent / "site" / "static"
SITE_TEMPLATES = HERE.parent / "site" / "templates"
"""The published site's templates, second in the search path: the replay viewer's board (_board.html)."""
SESSION_COOKIE = "arena_course"
SESSION_MAX_AGE_S = SESSION_S
"""How long a sign-in lasts without signing in again (seconds)."""
MAX_FAILED_SIGN_INS = signin.MAX_FAILED_SIGN_INS
FAILED_SIGN_IN_WINDOW_S = signin.FAILURE_WINDOW_S
FORM_OVERHEAD_BYTES = 64 * 1024
"""What an upload's form may add to the file's size limit (boundaries, fields, headers)."""
FORM_MAX_BYTES = 32 * 1024
"""The largest body of any request but an upload (sign-in and the other forms): two passwords of
1,024 characters, percent-encoded, fit."""
UPLOAD_PATHS = ("/me/submit", "/api/submissions")
"""The routes that take a bot (and a report): their bound is the upload's limit plus the form's."""
STATUS_POLL_MS = 1000
"""How often a page with unfinished submissions asks for their status (milliseconds)."""
PROTOCOLS = (("v1", "v1: ZeroMQ, as the SDK and the kits speak it"),
             ("stdio", "stdio: text lines on stdin/stdout"))
"""The protocol choices of the upload form: (value, what the form says)."""
NOT_FOUND = "Not found"
"""The one 404 answer: the same whether the thing does not exist or is someone else's."""


def last_line(text: str | None) -> str:
    """The last non-empty line of `text` (a traceback's exception line), "" for none."""
    return site_model.last_line(text or "")


def when(iso: str) -> str:
    """An ISO 8601 UTC time as the pages show it: "2026-03-01 14:05:09" (the columns say UTC)."""
    try:
        moment = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return iso
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")


def submission_json(s: Submission) -> dict[str, Any]:
    """A submission as the pages' status polling and the API show it."""
    return {"id": s.id, "version": s.version, "filename": s.filename, "protocol": s.protocol, "kind": s.kind,
            "created": s.created, "status": s.status, "reason": s.reason, "detail": s.detail,
            "last_line": last_line(s.detail), "active": s.active, "finished": s.finished,
            "url": f"/submissions/{s.id}"}


class CourseApp:
    """The app's state (the course, its accounts, the templates) and its views."""

    def __init__(self, course: Course, accounts: Accounts) -> None:
        self.course = course
        self.accounts = accounts
        self.env = Environment(loader=FileSystemLoader([TEMPLATES, SITE_TEMPLATES]),
                               autoescape=select_autoescape(["html"]), undefined=StrictUndefined,
                               trim_blocks=True, lstrip_blocks=True)
        self.env.filters["last_line"] = last_line
        self.env.filters["when"] = when
        # the statuses as members, never string literals: in templates and in course.js's data-states
        self.env.globals.update(SubmissionStatus=SubmissionStatus, LadderState=LadderState,
                                LadderStatus=LadderStatus, FinalState=FinalState, states_json=STATES_JSON)
        self.title = course.config.title or f"{course.config.directory.name} · {course.config.game}"
        self.guard = signin.SignInGuard()

    # --- rendering ---
    def render(self, request: Request, template: str, status: int = 200,
               headers: dict[str, str] | None = None, **context: Any) -> HTMLResponse:
        account = request.scope.get("account")
        html = self.env.get_template(template).render(
            title=self.title, version=__version__, account=account, csrf=csrf_token(request),
            poll_ms=STATUS_POLL_MS, rehearsal=self.rehearsal(), **context)
        return HTMLResponse(html, status_code=status, headers={**NO_STORE, **(headers or {})})

    def rehearsal(self) -> dict[str, str] | None:
        """What every page's banner says while staff rehearse the season on a rehearsal clock
        (arena/course/db/clock.py), None on real time: never left on unnoticed."""
        try:
            found = self.course.clock.rehearsal()
        except ClockError as exc:
            return {"problem": str(exc), "now": "", "offset": "", "directory": str(self.course.directory)}
        if found is None:
            return None
        now = found.now(self.course.clock.real_now())
        return {"problem": "", "now": now.strftime("%Y-%m-%d %H:%M:%S"), "offset": offset_text(found.offset),
                "directory": str(self.course.directory)}

    def not_found(self, request: Request) -> HTMLResponse:
        return self.render(request, "error.html", 404, heading=NOT_FOUND,
                           message="There is no such page, or it is not yours to see.")

    # --- who is asking ---
    async def who(self, request: Request) -> Account | None:
        """The signed-in account, None if the session is missing, ended (sign-out, staff, a new
        password), expired, or a student's who left the roster."""
        secret = request.session.get("sid")
        if not isinstance(secret, str):
            return None
        account = await run_in_threadpool(self.accounts.session_account, secret)
        if account is None:
            return None
        if not account.is_staff and await run_in_threadpool(self.course.student, account.id) is None:
            return None
        request.scope["account"] = account
        return account

    async def visible(self, request: Request, account: Account, submission_id: int) -> Submission:
        """The submission if `account` may see it (its own, or staff), else HTTPException 404."""
        s = await run_in_threadpool(self.course.submission, submission_id)
        if s is None or not (account.is_staff or s.student_id == account.id):
            raise HTTPException(404)
        return s

    # --- signing in ---
    async def home(self, request: Request) -> Response:
        account = await self.who(request)
        if account is None:
            return RedirectResponse("/login", 303)
        return RedirectResponse("/staff" if account.is_staff else "/me", 303)

    async def login(self, request: Request) -> Response:
        error, status = "", 200
        next_url = safe_next(request.query_params.get("next", ""))
        if request.method == "POST":
            form = await checked_form(request)
            next_url = safe_next(str(form.get("next", "")))
            account_id = str(form.get("id", "")).strip()
            address = client_address(request)
            wait_s, which = self.guard.wait_s(account_id, address)
            if wait_s:
                return self.render(request, "login.html", 429, next=next_url,
                                   error=held_off(account_id, which, wait_s),
                                   headers={"Retry-After": str(math.ceil(wait_s))})
            password = str(form.get("password", ""))
            try:
                async with self.guard.hashing():
                    account = await run_in_threadpool(self.accounts.sign_in, account_id, password)
            except signin.Busy as exc:
                return self.render(request, "login.html", 429, next=next_url, error=str(exc),
                                   headers={"Retry-After": str(math.ceil(exc.retry_s))})
            if account is not None and (account.is_staff or
                                        await run_in_threadpool(self.course.student, account.id) is not None):
                self.guard.succeeded(account_id, address)
                await self.start_session(request, account)
                return RedirectResponse(next_url or ("/staff" if account.is_staff else "/me"), 303)
            self.guard.failed(account_id, address)
            error, status = "Wrong id or password.", 401
        return self.render(request, "login.html", status, error=error, next=next_url)

    async def start_session(self, request: Request, account: Account) -> None:
        """Sign `account` in: a new session in the table, its secret and a fresh CSRF token in the
        cookie (whatever the cookie held before is dropped)."""
        secret = await run_in_threadpool(self.accounts.open_session, account.id)
        request.session.clear()
        request.session.update({"sid": secret, "csrf": secrets.token_urlsafe(32)})

    async def logout(self, request: Request) -> Response:
        await checked_form(request)
        secret = request.session.get("sid")
        if isinstance(secret, str):
            await run_in_threadpool(self.accounts.end_session, secret)
        request.session.clear()
        return RedirectResponse("/login", 303)

    async def invite(self, request: Request) -> Response:
        secret = request.path_params["secret"]
        account = await run_in_threadpool(self.accounts.invite_account, secret)
        if account is None:
            return self.render(request, "error.html", 404, heading="This sign-in link does not work",
                               message="It was already used, or a newer link replaced it. Sign in with your "
                                       "password, or ask the course staff for a new link.")
        error = ""
        if request.method == "POST":
            form = await checked_form(request)
            password, again = str(form.get("password", "")), str(form.get("again", ""))
            if password != again:
                error = "The two passwords differ."
            else:
                try:
                    async with self.guard.hashing():
                        account = await run_in_threadpool(self.accounts.accept_invite, secret, password)
                except (AccountError, signin.Busy) as exc:
                    error = str(exc)
                else:
                    await self.start_session(request, account)
                    return RedirectResponse("/staff" if account.is_staff else "/me", 303)
        student = None if account.is_staff else await run_in_threadpool(self.course.student, account.id)
        return self.render(request, "invite.html", 400 if error else 200, error=error, invited=account,
                           student=student)

    # --- the student's pages ---
    @signed_in
    async def me(self, request: Request, account: Account) -> Response:
        if account.is_staff:
            return RedirectResponse("/staff", 303)
        return await self.student_page(request, account, account.id)

    async def student_page(self, request: Request, account: Account, student_id: str, error: str = "",
                           status: int = 200, headers: dict[str, str] | None = None) -> Response:
        student = await run_in_threadpool(self.course.student, student_id)
        if student is None:
            raise HTTPException(404)
        subs = await run_in_threadpool(self.course.submissions, student_id)
        row = await run_in_threadpool(self.course.row, student_id) if account.is_staff else None
        sessions = await run_in_threadpool(self.accounts.session_count, student_id) if account.is_staff else 0
        return self.render(request, "student.html", status, headers, student=student, submissions=subs,
                           error=error, protocols=PROTOCOLS, config=self.course.config, row=row,
                           sessions=sessions,
                           report_max=report_max_bytes(self.course), report_phases=report_phases(self.course),
                           submitted=request.query_params.get("submitted", ""))

    @guard("student", anonymous="404")
    async def my_statuses(self, request: Request, account: Account) -> Response:
        subs = await run_in_threadpool(self.course.submissions, account.id)
        return JSONResponse({"submissions": [submission_json(s) for s in subs]}, headers=NO_STORE)

    @student_only
    async def upload(self, request: Request, account: Account) -> Response:
        too_big = self.too_big(request)
        if too_big:
            return await self.student_page(request, account, account.id, too_big, 413)
        try:  # before the form is read: a refused upload is neither spooled nor stored
            await run_in_threadpool(self.course.check_upload, account.id, upload_declared(request))
        except Refused as exc:
            status = 429 if getattr(exc, "wait_s", 0) else 400
            return await self.student_page(request, account, account.id, str(exc), status, retry_after(exc))
        form = await checked_form(request)
        try:
            s = await self.store_upload(account, form)
        except Refused as exc:
            return await self.student_page(request, account, account.id, str(exc), 400)
        return RedirectResponse(f"/me?submitted={s.id}", 303)

    def too_big(self, request: Request) -> str:
        """Why an upload is refused before it is read ("" when its declared length is fine)."""
        limit = self.course.config.upload_max_bytes
        length = request.headers.get("content-length", "")
        if not length.isdigit():
            return "the upload did not say its length (Content-Length); send it as a browser or curl does"
        if int(length) > limit + report_max_bytes(self.course) + FORM_OVERHEAD_BYTES:
            return f"too big: {int(length):,} bytes; a submission may have at most {limit:,} bytes"
        return ""

    async def store_upload(self, account: Account, form: FormData) -> Submission:
        """Store the form's file (and the report beside it, when one was chosen) as a submission of
        `account` (Refused says why not); the course wakes its workers."""
        upload = form.get("file")
        if not isinstance(upload, UploadFile) or not upload.filename:
            raise Refused("no file: choose your bot's source file (.py, or any file with protocol = stdio) "
                          "or an archive (.zip, .tar.gz) holding build.sh")
        protocol = str(form.get("protocol") or "v1")
        if protocol not in dict(PROTOCOLS):
            raise Refused(f"protocol must be one of {', '.join(dict(PROTOCOLS))}, got {protocol!r}")
        limit = self.course.config.upload_max_bytes
        if upload.size is not None and upload.size > limit:  # its whole size, not the part read
            raise Refused(f"too big: {upload.size:,} bytes, the limit is {limit:,} bytes "
                          f"({limit / 1e6:g} MB)")
        data = await upload.read(limit + 1)
        name = Path(upload.filename.replace("\\", "/")).name
        report = await read_report(form, report_max_bytes(self.course))
        return await run_in_threadpool(lambda: self.course.submit(account.id, name, data, protocol,
                                                                  report=report))

    # --- one submission ---
    async def submission_view(self, request: Request) -> Response:
        account, s = await self.signed_in_with(request)
        if isinstance(account, Response):
            return account
        games = await run_in_threadpool(self.course.games, s.id)
        log = await run_in_threadpool(self.course.build_log, s.id)
        student = await run_in_threadpool(self.course.student, s.student_id)
        return self.render(request, "submission.html", s=s, student=student, games=game_rows(games), log=log)

    async def submission_status(self, request: Request) -> Response:
        account, s = await self.signed_in_with(request, api_too=True)
        if isinstance(account, Response):
            return account
        body = submission_json(s)
        if request.query_params.get("full"):
            body["log"] = await run_in_threadpool(self.course.build_log, s.id)
            body["games"] = [{**g, "url": f"/submissions/{s.id}/games/{g['n']}"}
                             for g in game_rows(await run_in_threadpool(self.course.games, s.id))]
        return JSONResponse(body, headers=NO_STORE)

    async def submission_log(self, request: Request) -> Response:
        account, s = await self.signed_in_with(request)
        if isinstance(account, Response):
            return account
        log = await run_in_threadpool(self.course.build_log, s.id)
        return PlainTextResponse(log, headers=NO_STORE)

    async def submission_source(self, request: Request) -> Response:
        account, s = await self.signed_in_with(request)
        if isinstance(account, Response):
            return account
        files = await run_in_threadpool(self.course.source_files, s.id)
        return self.render(request, "source.html", s=s, files=files)

    async def submission_download(self, request: Request) -> Response:
        account, s = await self.signed_in_with(request)
        if isinstance(account, Response):
            return account
        name, data = await run_in_threadpool(self.course.source, s.id)
        if account.is_staff:
            await run_in_threadpool(self.accounts.audit, account.id, "downloaded a source", s.student_id,
                                    f"submission {s.id} (version {s.version})")
        return Response(data, media_type="application/octet-stream", headers={
            **NO_STORE, "Content-Disposition": f"attachment; filename*=UTF-8''{quote(name)}"})

    async def game_view(self, request: Request) -> Response:
        account, s = await self.signed_in_with(request)
        if isinstance(account, Response):
            return account
        n = request.path_params["n"]
        games = await run_in_threadpool(self.course.games, s.id)
        if not 1 <= n <= len(games):
            raise HTTPException(404)
        stored = StoredGame("qualification", n, games[n - 1])
        data = site_model.game_page(stored)
        return self.render(request, "game.html", s=s, n=n, count=len(games), g=data,
                           data_json=json_for_script(data), logs=site_model.game_logs(stored.record),
                           row=site_model.game_row(stored))

    async def activate(self, request: Request) -> Response:
        account, s = await self.signed_in_with(request)
        if isinstance(account, Response):
            return account
        await checked_form(request)
        if account.is_staff or s.student_id != account.id:
            raise HTTPException(404)
        try:
            await run_in_threadpool(self.course.set_active, account.id, s.id)
        except Refused as exc:
            return await self.student_page(request, account, account.id, str(exc), 400)
        return RedirectResponse("/me", 303)

    async def signed_in_with(self, request: Request, api_too: bool = False) -> tuple[Any, Any]:
        """(account, the URL's submission) for a visible one; (a redirect to sign in, None) for
        nobody signed in; 404 for a submission that is not the account's."""
        account = await self.who(request)
        if account is None and api_too:
            account = await self.bearer(request)
        if account is None and request.url.path.startswith("/api/"):
            return api_error("no valid API token (Authorization: Bearer TOKEN)", 401), None
        if account is None:
            return to_login(request), None
        return account, await self.visible(request, account, request.path_params["id"])

    # --- staff ---
    @staff_only
    async def staff_home(self, request: Request, account: Account) -> Response:
        rows = await run_in_threadpool(self.course.rows)
        from arena.course.season.disqualify import disqualified

        out_of = await run_in_threadpool(disqualified, self.course)
        return self.render(request, "staff.html", rows=rows, config=self.course.config, disqualified=out_of)

    @staff_only
    async def staff_student(self, request: Request, account: Account) -> Response:
        return await self.student_page(request, account, request.path_params["sid"])

    @staff_only
    async def requeue(self, request: Request, account: Account) -> Response:
        await checked_form(request)
        s = await self.visible(request, account, request.path_params["id"])
        if not s.finished:
            return self.render(request, "error.html", 409, heading="Not requeued",
                               message=f"Version {s.version} of {s.student_id} is {s.status}: it can be "
                                       "requeued once it has its final status.")
        await run_in_threadpool(self.course.requeue, s.id)
        await run_in_threadpool(self.accounts.audit, account.id, "requeued", s.student_id,
                                f"submission {s.id} (version {s.version}, was {s.status})")
        return RedirectResponse(f"/submissions/{s.id}", 303)

    @staff_only
    async def disable(self, request: Request, account: Account) -> Response:
        form = await checked_form(request)
        sid = request.path_params["sid"]
        if await run_in_threadpool(self.course.student, sid) is None:
            raise HTTPException(404)
        disabled = form.get("disabled") == "1"
        await run_in_threadpool(self.course.set_disabled, sid, disabled)
        await run_in_threadpool(self.accounts.audit, account.id, "disabled" if disabled else "enabled", sid)
        return RedirectResponse(f"/staff/students/{quote(sid)}", 303)

    @staff_only
    async def end_sessions(self, request: Request, account: Account) -> Response:
        """Staff sign a student out everywhere (a lost laptop, a shared password): audit-logged."""
        await checked_form(request)
        sid = request.path_params["sid"]
        if await run_in_threadpool(self.course.student, sid) is None:
            raise HTTPException(404)
        ended = await run_in_threadpool(self.accounts.end_sessions, sid)
        await run_in_threadpool(self.accounts.audit, account.id, "ended sessions", sid,
                                f"{ended} session{'s' if ended != 1 else ''}")
        return RedirectResponse(f"/staff/students/{quote(sid)}", 303)

    @staff_only
    async def active_zip(self, request: Request, account: Account) -> Response:
        data = await run_in_threadpool(self.course.active_sources_zip)
        await run_in_threadpool(self.accounts.audit, account.id, "downloaded all active sources", "",
                                f"{len(data):,} bytes")
        name = f"{self.course.config.directory.name}-active-sources.zip"
        return Response(data, media_type="application/zip", headers={
            **NO_STORE, "Content-Disposition": f"attachment; filename*=UTF-8''{quote(name)}"})

    @staff_only
    async def audit(self, request: Request, account: Account) -> Response:
        entries = await run_in_threadpool(self.accounts.audit_log)
        return self.render(request, "audit.html", entries=entries)

    # --- the API of `arena course submit` ---
    async def bearer(self, request: Request) -> Account | None:
        """The account of the request's `Authorization: Bearer TOKEN`, None without a valid one."""
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        account = await run_in_threadpool(self.accounts.token_account, token.strip())
        if account is None or (not account.is_staff and
                               await run_in_threadpool(self.course.student, account.id) is None):
            return None
        request.scope["account"] = account
        return account

    async def api_submit(self, request: Request) -> Response:
        account = await self.bearer(request)
        if account is None:
            return api_error("no valid API token (Authorization: Bearer TOKEN); staff issue one with "
                             "`arena course token DIR ID`", 401)
        if account.is_staff:
            return api_error("a staff token cannot submit: submissions are students'", 403)
        too_big = self.too_big(request)
        if too_big:
            return api_error(too_big, 413)
        try:
            await run_in_threadpool(self.course.check_upload, account.id, upload_declared(request))
        except Refused as exc:
            return api_error(str(exc), 429 if getattr(exc, "wait_s", 0) else 400, retry_after(exc))
        try:
            s = await self.store_upload(account, await request.form(max_files=2, max_fields=4))
        except Refused as exc:
            return api_error(str(exc), 400)
        return JSONResponse(submission_json(s), status_code=201, headers=NO_STORE)

    async def api_list(self, request: Request) -> Response:
        account = await self.bearer(request)
        if account is None or account.is_staff:
            return api_error("no valid student API token (Authorization: Bearer TOKEN)", 401)
        subs = await run_in_threadpool(self.course.submissions, account.id)
        return JSONResponse({"submissions": [submission_json(s) for s in subs]}, headers=NO_STORE)




def retry_after(exc: Refused) -> dict[str, str]:
    """The Retry-After header of a refusal that passes with time (the upload interval), else none."""
    wait_s = getattr(exc, "wait_s", 0)
    return {"Retry-After": str(math.ceil(wait_s))} if wait_s else {}


def upload_declared(request: Request) -> int:
    """The upload's declared length less the form's overhead: what it may add to the store at most
    (too_big has checked Content-Length is there)."""
    return max(0, int(request.headers.get("content-length", "0")) - FORM_OVERHEAD_BYTES)


def client_address(request: Request) -> str:
    """The client's address as sign-in limits count it: the peer's (behind a proxy, the address
    uvicorn takes from X-Forwarded-For when the proxy is trusted: `serve --trusted-proxy`)."""
    return request.client.host if request.client is not None else "unknown"


def held_off(account_id: str, which: str, wait_s: float) -> str:
    """What a sign-in held off by a limit of signin.py is told."""
    minutes = math.ceil(wait_s / 60)
    if which == "address":
        return f"Too many wrong passwords from your address: try again in {minutes} min."
    return f"Too many wrong passwords for {account_id[:64]}: try again in {minutes} min."


def report_phases(course: Course) -> list[str]:
    """The names of the phases that take a report (course.toml's [[phases]] with report = true)."""
    return [p.name for p in course.config.season.phases if p.report]


def report_max_bytes(course: Course) -> int:
    """The largest report an upload may carry (0 where no phase asks for one); the course's
    submit checks it against the current phase's own limit."""
    return max((p.report_max_bytes for p in course.config.season.phases if p.report), default=0)


async def read_report(form: FormData, limit: int) -> tuple[str, bytes] | None:
    """(file name, bytes) of the form's report, None when none was chosen; Refused for one too
    big or a report where no phase takes one."""
    upload = form.get("report")
    if not isinstance(upload, UploadFile) or not upload.filename:
        return None
    if not limit:
        raise Refused("this course takes no reports: leave the report field empty")
    data = await upload.read(limit + 1)
    name = Path(upload.filename.replace("\\", "/")).name
    if len(data) > limit:
        raise Refused(f"report {name} too big: a report may have at most {limit / 1e6:g} MB")
    return name, data


def game_rows(records: list[Any]) -> list[dict[str, Any]]:
    """A submission's qualification games as its page lists them."""
    return [{"n": i, "players": list(r.players), "result": site_model.result(r),
             "words": site_model.result_words(r), "plies": len(r.moves)} for i, r in enumerate(records, 1)]


# --- sessions and CSRF ---

def csrf_token(request: Request) -> str:
    """The session's CSRF token (made on first use); every form carries it."""
    token = request.session.get("csrf")
    if not isinstance(token, str):
        token = request.session["csrf"] = secrets.token_urlsafe(32)
    return token


# --- the app ---

SECURITY_HEADERS = [
    (b"content-security-policy", b"default-src 'self'; img-src 'self' data:; "
                                 b"style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; "
                                 b"form-action 'self'; base-uri 'none'"),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),  # a sign-in link's secret is in its path
]
"""On every answer: scripts and styles from this server only, no framing (clickjacking), no
Referer sent anywhere."""


class SecurityHeaders:
    """ASGI middleware adding SECURITY_HEADERS to every HTTP answer (pages, JSON, static files)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], *SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, with_headers)


def create_app(course: Course, accounts: Accounts | None = None, https_cookies: bool = False) -> Starlette:
    """The ASGI app of `course` (its uploads wake the course's workers through `course.listeners`);
    `https_cookies` marks the session cookie Secure (behind an HTTPS proxy)."""
    accounts = accounts or Accounts(course.config.directory, course.config.accounts)
    views = CourseApp(course, accounts)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if request.url.path.startswith("/api/"):
            return api_error(NOT_FOUND if exc.status_code == 404 else str(exc.detail), exc.status_code)
        if exc.status_code == 404:
            return views.not_found(request)
        return views.render(request, "error.html", exc.status_code, heading=f"Refused ({exc.status_code})",
                            message=str(exc.detail))

    sub = "/submissions/{id:int}"
    routes = [
        Route("/", views.home),
        Route("/login", views.login, methods=["GET", "POST"]),
        Route("/logout", views.logout, methods=["POST"]),
        Route("/invite/{secret}", views.invite, methods=["GET", "POST"]),
        Route("/me", views.me),
        Route("/me/submissions.json", views.my_statuses),
        Route("/me/submit", views.upload, methods=["POST"]),
        Route(sub, views.submission_view),
        Route(sub + "/status.json", views.submission_status),
        Route(sub + "/log", views.submission_log),
        Route(sub + "/source", views.submission_source),
        Route(sub + "/download", views.submission_download),
        Route(sub + "/games/{n:int}", views.game_view),
        Route(sub + "/activate", views.activate, methods=["POST"]),
        Route(sub + "/requeue", views.requeue, methods=["POST"]),
        Route("/staff", views.staff_home),
        Route("/staff/students/{sid}", views.staff_student),
        Route("/staff/students/{sid}/disable", views.disable, methods=["POST"]),
        Route("/staff/students/{sid}/sessions/end", views.end_sessions, methods=["POST"]),
        Route("/staff/active-sources.zip", views.active_zip),
        Route("/staff/audit", views.audit),
        Route("/api/submissions", views.api_submit, methods=["POST"]),
        Route("/api/submissions", views.api_list, methods=["GET"]),
        Route("/api" + sub, views.submission_status),
        *SeasonPages(views).routes(),
        *StaffPages(views).routes(),
        *StudentSeason(views).routes(),
        Mount("/static/course", StaticFiles(directory=COURSE_STATIC), name="course-static"),
        Mount("/static", StaticFiles(directory=SITE_STATIC), name="static"),
    ]
    upload_bound = course.config.upload_max_bytes + report_max_bytes(course) + FORM_OVERHEAD_BYTES
    report_bound = max_report_bytes(course) + FORM_OVERHEAD_BYTES

    def bound(path: str) -> int:
        if path in UPLOAD_PATHS:
            return upload_bound
        return report_bound if path in REPORT_PATHS else FORM_MAX_BYTES

    middleware = [Middleware(BodyLimit, bound=bound),
                  Middleware(SecurityHeaders),
                  Middleware(SessionMiddleware, secret_key=session_secret(course.config.directory),
                             session_cookie=SESSION_COOKIE, max_age=SESSION_MAX_AGE_S, same_site="lax",
                             https_only=https_cookies)]
    handlers: dict[Any, Callable[[Request, Exception], Awaitable[Response]]] = {HTTPException: http_error}
    return Starlette(routes=routes, middleware=middleware, exception_handlers=handlers)
