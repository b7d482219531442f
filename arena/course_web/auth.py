"""One sign-in guard for the course's pages, as decorators of a view method `(self, request,
account)`: `signed_in` (anyone signed in), `student_only`, `staff_only`. Nobody signed in is sent
to the sign-in page (or answered 404, `anonymous="404"`, for a page's JSON poll); a signed-in
account the page is not for is answered 404, as for a page that is not there (one 404 for
anything not one's own). The view's object finds the account with `who(request)` (CourseApp.who:
the session's account, a student still on the roster)."""
from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any, Literal, Protocol

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from arena.course.db.accounts import Account
from arena.course_web.forms import to_login


class HasWho(Protocol):
    async def who(self, request: Request) -> Account | None: ...


View = Callable[[Any, Request, Account], Awaitable[Response]]
Endpoint = Callable[[Any, Request], Awaitable[Response]]
Who = Literal["anyone", "student", "staff"]


def guard(who: Who = "anyone", anonymous: Literal["login", "404"] = "login") -> Callable[[View], Endpoint]:
    """The decorator letting `who` through to the view, with the account as its third argument."""

    def decorate(view: View) -> Endpoint:
        @functools.wraps(view)
        async def endpoint(self: HasWho, request: Request) -> Response:
            account = await self.who(request)
            if account is None:
                if anonymous == "404":
                    raise HTTPException(404)
                return to_login(request)
            if (who == "student" and account.is_staff) or (who == "staff" and not account.is_staff):
                raise HTTPException(404)
            return await view(self, request, account)

        endpoint.guard = (who, anonymous)  # type: ignore[attr-defined]  # what the tests read off a route
        return endpoint

    return decorate


signed_in = guard("anyone")
"""Anyone signed in (a student or staff)."""
student_only = guard("student")
"""A signed-in student; staff get 404."""
staff_only = guard("staff")
"""Signed-in staff; students get 404."""
