"""The course's web front, a room above the course (arena/course) that only the command line
imports: `server.py` (`arena course serve`: the one place that wires the web app and the
background threads together, uvicorn), `app.py` (the Starlette app: routes, middleware, the
account and submission views, the API), `season_pages.py` (the season's views: ladder, phases,
grades, similarity, the final), `auth.py` (the one sign-in guard: `signed_in`, `student_only`,
`staff_only`), `forms.py` (what every view shares: the CSRF-checked form, the
sign-in redirect, JSON for a page's script), `signin.py` (sign-in rate limits and the password
hashing queue), `bounds.py` (limits on requests: body size, the guarded h11 protocol),
`charts.py` (the rating chart drawn on the server); `templates/`, `static/`."""
