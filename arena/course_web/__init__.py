"""The Starlette app: routes, the sign-in guard, views, templates/ and static/."""
