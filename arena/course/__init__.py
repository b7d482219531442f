"""The course: students submit bots, the server builds them in the sandbox, qualifies them
against `random`, runs the season (phases, ladder, final, grades). Layers, arrows one way:
the web front (arena/course_web, a room above) -> `course.py` -> `season/` -> `db/`, `config/`;
`background/` (the server's threads) -> the season; only arena/course_web/server.py imports both
the web front and `background/`.

- `course.py`: `Course`, the facade the web app, the commands and the background threads use; it
  owns what they share: the game player (`player`, `play`), the listeners, the final's thread.
- `client.py`: `arena course submit` (standard library only).
- `config/course_toml.py`: course.toml (read once, every problem at once) and the roster; `init`'s templates.
- `config/sections.py`: the season's sections as typed, frozen values (phases, ladder, final, grading...).
- `config/checks.py`: the checks every reader shares: a number in range, a time, a duration.
- `db/database.py`: `Database`, course.db's one connection manager (a connection a thread, one write).
- `db/files.py`: `write_atomically`, the one way the course writes a file (whole or absent).
- `db/states.py`: the statuses as StrEnums (submission, ladder game, the ladder's own, final), shared with
  the pages.
- `db/store.py`: course.db's students, submissions, jobs, build logs, games; content-addressed files.
- `db/accounts.py`: accounts, passwords (argon2), sign-in links, sessions, API tokens, the audit log.
- `season/archives.py`: what an upload may be (files, archives, their limits).
- `season/builds.py`: build.sh in the sandbox.
- `season/jobs.py`: one submission's build and qualification (`run_job`, `play_judged`).
- `season/games.py`: the game player the course's games share (GamePlayer), `play_each`.
- `season/phases.py`: the season's phases, extensions, deadlines, reports and their judging.
- `season/ladder.py`: the ladder: pairing, openskill ratings, unrated requests, when it plays.
- `season/final.py`: the final tournament, its runs and status.
- `season/grades.py`: grades.csv from the final.
- `season/similarity.py`: the copying check (winnowing over pygments' tokens, clusters).
- `season/privacy.py`: pseudonyms for the public standings.
- `background/loop.py`: `Loop`, the one base of the server's threads (start, wake, stop, run once).
- `background/submissions.py`: `Workers`, the threads that build and qualify submissions.
- `background/ladder.py`: `LadderRunner`, the thread that plays the ladder's games.
- `background/season_clock.py`: `SeasonClock`, the thread that starts (or resumes) the final.
"""
