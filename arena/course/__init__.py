"""The course server: students submit bots, the server builds them in the sandbox and plays
qualification games against `random`; staff see every student's row.

`config.py` (course.toml, the roster), `store.py` (SQLite and content-addressed files),
`archives.py` (what an upload may hold), `builds.py` (build.sh in the sandbox), `jobs.py` (the
queue and its workers), `service.py` (`Course`, the facade the web app and the CLI use).
"""
