"""What every view of the course's web app shares: the CSRF-checked form, the redirect to the
sign-in page, a safe `next` target, JSON safe inside a page's script element."""
from __future__ import annotations

import hmac
import json
from typing import Any
from urllib.parse import quote, urlsplit

from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse


def json_for_script(value: Any) -> str:
    """JSON safe inside <script type="application/json">: no "<" can close the element."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).replace("<", "\\u003c")


async def checked_form(request: Request) -> FormData:
    """The POST's form, after checking its CSRF token against the session's: 403 without it."""
    form = await request.form(max_files=2, max_fields=20)  # a bot and its report
    sent, expected = form.get("csrf"), request.session.get("csrf")
    if not (isinstance(sent, str) and isinstance(expected, str) and hmac.compare_digest(sent, expected)):
        raise HTTPException(403, "the form had no valid CSRF token: reload the page and send it again")
    return form


def to_login(request: Request) -> RedirectResponse:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(f"/login?next={quote(target)}", 303)


def safe_next(target: str) -> str:
    """`target` if it is a path on this site (no scheme, no host: no open redirect), else ""."""
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not target.startswith("/") or target.startswith("//") \
            or "\\" in target:
        return ""
    return target


NO_STORE = {"Cache-Control": "no-store"}
"""Answers that carry a student's own data are never cached."""


def api_error(message: str, status: int, headers: dict[str, str] | None = None) -> JSONResponse:
    """The API's error answer: JSON `{"error": message}`, not cached."""
    return JSONResponse({"error": message}, status_code=status, headers={**NO_STORE, **(headers or {})})
