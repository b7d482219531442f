"""The course server: students submit bots, the server builds them in the sandbox and plays
qualification games against `random`; staff see every student's row.

`config.py` (course.toml, the roster), `store.py` (SQLite and content-addressed files),
`archives.py` (what an upload may hold), `builds.py` (build.sh in the sandbox), `jobs.py` (the
queue and its workers), `service.py` (`Course`, the facade the web app and the CLI use);
the web part over it: `accounts.py` (students and staff, passwords, sign-in links, API tokens,
the audit log), `app.py` (the Starlette app: pages, JSON, the API; `templates/`, `static/`),
`server.py` (`arena course serve`: uvicorn and the workers in one process tree) and `client.py`
(`arena course submit`, standard library only).
"""
