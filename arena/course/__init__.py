"""The course: students submit bots, the server builds them in the sandbox, qualifies them
against `random`, runs the season (phases, ladder, final, grades). Layers, arrows one way:
the web front (arena/course_web, a room above) -> `course.py` -> `season/` -> `db/`, `config/`;
the background threads (season/jobs.py's Workers, season/ladder.py's LadderRunner) -> the season.

- `course.py`: `Course`, the facade the web app, the commands and the background threads use.
- `client.py`: `arena course submit` (standard library only).
- `config/course_toml.py`: course.toml and the roster read into checked settings; `init`'s templates.
- `db/store.py`: course.db's students, submissions, jobs, build logs, games; content-addressed files.
- `db/accounts.py`: accounts, passwords (argon2), sign-in links, sessions, API tokens, the audit log.
- `season/settings.py`: every season section of course.toml checked at once (one line per problem).
- `season/archives.py`: what an upload may be (files, archives, their limits).
- `season/builds.py`: build.sh in the sandbox.
- `season/jobs.py`: one submission's build and qualification, the game player, the workers.
- `season/games.py`: the game player the course's games share (GamePlayer).
- `season/phases.py`: the season's phases, extensions, deadlines, reports and their judging.
- `season/ladder.py`: the ladder: pairing, openskill ratings, its runner.
- `season/final.py`: the final tournament, its runs and status.
- `season/grades.py`: grades.csv from the final.
- `season/similarity.py`: the copying check (winnowing over pygments' tokens, clusters).
- `season/privacy.py`: pseudonyms for the public standings.
"""
