"""A course of 300 students stays quick: the staff's and a student's pages and the ladder's
scheduler, on a course filled as a long season leaves it.

    python benchmarks/course_300.py                      # 300 students, 5 versions each
    python benchmarks/course_300.py --students 600 --requests 40

Two temporary courses are filled straight in course.db (Domineering 6x6, three phases, a ladder):
the baseline of 30 students (the trial season's size) and the course measured (300 students, 1,500
versions, each with its qualification games, its phase checks and a share of 20 rated ladder
games a student). Each is served by the real `arena course serve` on 127.0.0.1; a staff member and a
student sign in, and each page is fetched `--requests` times (median and 95th percentile). The
ladder's scheduler is timed in this process on a copy of each course.db: `Ladder.due` for a whole
round (a game to every entrant owed one) and for the runner's next game (`limit=1`). Goals (issue
33): the staff's table under 0.3 s, a student's page under 0.1 s, scheduling under 50 ms a round.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx  # noqa: E402

import rules  # noqa: E402
from arena.course.config import course_toml  # noqa: E402
from arena.course.course import Course  # noqa: E402
from arena.course.db.accounts import Accounts  # noqa: E402
from arena.course.db.store import iso  # noqa: E402
from arena.course.season.ladder import Ladder  # noqa: E402
from arena.match.records import GameRecord, MoveRecord  # noqa: E402

PLAYER_COLUMNS = "(key, name, student_id, submission_id, mu, sigma, games, created)"
GOALS_S = {"staff": 0.3, "student": 0.1, "scheduling": 0.05}
PASSWORD = "a long enough password"
BOT = b'from bots.sdk import Bot\n\n\nclass First(Bot):\n    def choose(self, state, time_left):\n' \
      b'        return self.legal[0]\n\n\nif __name__ == "__main__":\n    First().run()\n'
PHASES = """
[[phases]]
name = "formulation"
deadline = {d1}
requires = {{ qualified = true }}

[[phases]]
name = "search"
deadline = {d2}
requires = {{ score = {{ against = "greedy", at_least = 0.5, games = 4 }} }}

[ladder]
games_per_hour = 6
poll_s = 3600
"""


def random_game(game_id: str, players: list[str], rng: random.Random) -> GameRecord:
    """A real game of Domineering 6x6 by random moves, recorded as the referee records one."""
    game = rules.load("domineering", rows=6, cols=6)
    state = game.start()
    record = GameRecord(game_id, "domineering", {"rows": 6, "cols": 6}, players, "1")
    ply = 0
    while not state.is_over():
        move = rng.choice(sorted(state.legal_moves()))
        record.moves.append(MoveRecord(ply, ply % 2, move, round(rng.uniform(0.01, 0.2), 4)))
        state = state.play(move)
        ply += 1
    record.winner = 1 - ply % 2
    record.reason = "no legal move"
    return record


def make_course(directory: Path, students: int, versions: int, rng: random.Random) -> tuple[Course, str]:
    """A course of `students` with `versions` qualified versions each, filled as a season leaves
    it; the id of the student whose page is measured."""
    course_toml.init(directory, "domineering")
    now = datetime.now(UTC)
    text = (directory / "course.toml").read_text()
    for old, new in (("rows = 8", "rows = 6"), ("cols = 8", "cols = 6"), ("upload_interval_s = 60",
                                                                           "upload_interval_s = 0")):
        text = text.replace(old, new)
    text += PHASES.format(d1=(now - timedelta(days=7)).isoformat(timespec="seconds"),
                          d2=(now + timedelta(days=7)).isoformat(timespec="seconds"))
    (directory / "course.toml").write_text(text)
    ids = [f"s{n:04d}" for n in range(1, students + 1)]
    (directory / "roster.csv").write_text("id,name,email,group\n" + "".join(
        f"{sid},Student {sid},{sid}@example.org,G{n % 10}\n" for n, sid in enumerate(ids)))
    course = Course(directory)
    course.store.sync_students(course.students())
    store = course.store
    sha = store.put_file(BOT)
    games = [random_game(f"g{n}", ["a", "b"], rng).to_dict() for n in range(40)]
    score_key = "score:greedy:4"
    begun = now - timedelta(days=30)
    with store.write() as db:
        for n, sid in enumerate(ids):
            for v in range(1, versions + 1):
                created = begun + timedelta(days=30 * v / (versions + 1), minutes=n)
                cursor = db.execute(
                    "INSERT INTO submissions (student_id, version, filename, protocol, kind, sha256, size, "
                    "created, status, command, finished) VALUES (?, ?, 'bot.py', 'v1', 'file', ?, ?, ?, "
                    "'qualified', 'python bot.py', ?)",
                    (sid, v, sha, len(BOT), iso(created), iso(created + timedelta(seconds=20))))
                sub_id = cursor.lastrowid
                for g in range(2):
                    data = dict(rng.choice(games), game_id=f"q{sub_id}-g{g}",
                                players=[f"{sid}-v{v}", "random"])
                    db.execute("INSERT INTO games (submission_id, number, record) VALUES (?, ?, ?)",
                               (sub_id, g, json.dumps(data)))
                db.execute("INSERT INTO phase_checks (submission_id, requirement, passed, evidence, "
                           "game_ids, disagreements, value, checked) "
                           "VALUES (?, ?, 1, ?, '[]', '[]', 0.75, ?)",
                           (sub_id, score_key, "score 3/4 against greedy", iso(created)))
        fill_ladder(db, ids, versions, games, now, rng)
    accounts = Accounts(directory)
    accounts.accept_invite(accounts.add_staff("bench-staff"), PASSWORD)
    watched = ids[len(ids) // 2]
    accounts.accept_invite(accounts.invite(watched), PASSWORD)
    return course, watched


def fill_ladder(db, ids: list[str], versions: int, games: list[dict], now: datetime,
                rng: random.Random) -> None:
    """Every student's last version on the ladder with 20 rated games a student, three of them
    (a pair each) in the last hour, so that the server's ladder has nothing due while pages are
    measured; with ratings and their history."""
    keys, names = [], {}
    for n, sid in enumerate(ids):
        sub_id = (n + 1) * versions
        keys.append(f"v{sub_id}")
        names[keys[-1]] = f"{sid}-v{versions}"
        db.execute(f"INSERT INTO ladder_players {PLAYER_COLUMNS} VALUES (?, ?, ?, ?, ?, ?, 20, ?)",
                   (keys[-1], names[keys[-1]], sid, sub_id, rng.gauss(25, 4), 2.0,
                    iso(now - timedelta(days=3))))
    for name in ("random", "greedy", "alphabeta"):
        db.execute(f"INSERT INTO ladder_players {PLAYER_COLUMNS} VALUES (?, ?, NULL, NULL, 25, 2, 40, ?)",
                   (f"ref:{name}", name, iso(now - timedelta(days=30))))
        names[f"ref:{name}"] = name
    keys += ["ref:random", "ref:greedy", "ref:alphabeta"]
    for g in range(len(ids) * 10):
        a, b = rng.sample(keys, 2)
        recent = g >= len(ids) * 10 - len(keys) * 2
        at = now - (timedelta(minutes=rng.uniform(1, 50)) if recent else timedelta(hours=rng.uniform(2, 500)))
        cursor = db.execute("INSERT INTO ladder_games (a, b, rated, created, state, finished) "
                            "VALUES (?, ?, 1, ?, 'done', ?)", (a, b, iso(at), iso(at)))
        lid = cursor.lastrowid
        for side in range(2):
            seats = [names[a], names[b]] if side == 0 else [names[b], names[a]]
            data = dict(rng.choice(games), game_id=f"ladder-{lid}-g{side}", players=seats)
            db.execute("INSERT INTO ladder_records (game_id, ladder_id, at, record) VALUES (?, ?, ?, ?)",
                       (data["game_id"], lid, iso(at), json.dumps(data)))
            for key in (a, b):
                db.execute("INSERT INTO ladder_history (key, at, game_id, mu, sigma) VALUES (?, ?, ?, ?, ?)",
                           (key, iso(at), data["game_id"], rng.gauss(25, 3), 2.0))


def serve(directory: Path) -> tuple[subprocess.Popen, str]:
    argv = [sys.executable, "-m", "arena", "course", "serve", str(directory), "--port", "0"]
    process = subprocess.Popen(argv,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                               start_new_session=True)
    line = process.stdout.readline()  # type: ignore[union-attr]
    match = re.search(r"(http://127\.0\.0\.1:\d+)/", line)
    if not match:
        process.kill()
        raise SystemExit(f"the server did not start: {line!r}")
    return process, match.group(1)


def signed_in(url: str, account_id: str) -> httpx.Client:
    client = httpx.Client(base_url=url, timeout=60)
    page = client.get("/login")
    csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
    answer = client.post("/login", data={"csrf": csrf, "id": account_id, "password": PASSWORD})
    if answer.status_code != 303:
        raise SystemExit(f"{account_id} could not sign in: {answer.status_code}")
    return client


def timed(client: httpx.Client, path: str, requests: int) -> tuple[float, float]:
    """(median, 95th percentile) seconds of GET `path`, after one warm-up request."""
    first = client.get(path)
    assert first.status_code == 200, (path, first.status_code, first.text[-300:])
    times = []
    for _ in range(requests):
        began = time.perf_counter()
        answer = client.get(path)
        times.append(time.perf_counter() - began)
        assert answer.status_code == 200, (path, answer.status_code)
    times.sort()
    return statistics.median(times), times[min(len(times) - 1, int(0.95 * len(times)))]


def scheduling(directory: Path, rounds: int, limit: int | None = None) -> float:
    """Median seconds of one `Ladder.due` round two hours on (every entrant owed games), each on a
    fresh copy of course.db: a whole round (`limit` None) or the server's runner's call for its
    next game (`limit` 1)."""
    times = []
    for n in range(rounds):
        copy = directory.parent / f"{directory.name}-copy{n}"
        shutil.copytree(directory, copy)
        course = Course(copy)
        ladder = Ladder(course)
        later = datetime.now(UTC) + timedelta(hours=2)
        began = time.perf_counter()
        handed = ladder.due(later, limit=limit)
        times.append(time.perf_counter() - began)
        assert handed, "nothing was due"
        course.close()
        shutil.rmtree(copy)
    return statistics.median(times)


def measure(root: Path, students: int, versions: int, requests: int, rng: random.Random) -> dict[str, object]:
    directory = root / f"course-{students}"
    began = time.perf_counter()
    course, watched = make_course(directory, students, versions, rng)
    course.close()
    filled = time.perf_counter() - began
    figures: dict[str, object] = {"students": students, "versions": students * versions,
                                  "fill_s": filled,
                                  "db_mb": sum(p.stat().st_size for p in directory.glob("course.db*")) / 1e6}
    process, url = serve(directory)
    try:
        staff = signed_in(url, "bench-staff")
        student = signed_in(url, watched)
        for name, client, path in (("staff table /staff", staff, "/staff"),
                                   ("staff: one student", staff, f"/staff/students/{watched}"),
                                   ("staff: ladder", staff, "/ladder"),
                                   ("student /me", student, "/me"),
                                   ("student /me/season", student, "/me/season"),
                                   ("student: ladder", student, "/ladder")):
            figures[name] = timed(client, path, requests)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(60)
    figures["scheduling"] = scheduling(directory, 5)
    figures["next game"] = scheduling(directory, 5, limit=1)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--students", type=int, default=300)
    parser.add_argument("--versions", type=int, default=5, help="qualified versions a student")
    parser.add_argument("--baseline", type=int, default=30, help="students of the baseline course")
    parser.add_argument("--requests", type=int, default=20, help="requests a page")
    args = parser.parse_args()
    rng = random.Random(1)
    with tempfile.TemporaryDirectory(prefix="course300-") as tmp:
        base = measure(Path(tmp), args.baseline, args.versions, args.requests, rng)
        big = measure(Path(tmp), args.students, args.versions, args.requests, rng)
    print(f"{'':28} {'baseline':>18} {'measured':>18}   goal")
    print(f"{'students / versions':28} {base['students']:>9} / {base['versions']:<6} "
          f"{big['students']:>9} / {big['versions']:<6}")
    print(f"{'course.db (MB)':28} {base['db_mb']:>18.1f} {big['db_mb']:>18.1f}")
    verdicts = []
    for name in [k for k in big if isinstance(big[k], tuple)]:
        goal = GOALS_S["staff"] if name.startswith("staff") else GOALS_S["student"]
        (bm, bp), (m, p) = base[name], big[name]  # type: ignore[misc]
        print(f"{name + ' med/p95 (s)':28} {bm:>8.3f} / {bp:<7.3f} {m:>8.3f} / {p:<7.3f}  < {goal:g}")
        verdicts.append(m < goal)
    print(f"{'ladder due() a round (s)':28} {base['scheduling']:>18.4f} {big['scheduling']:>18.4f}"
          f"   < {GOALS_S['scheduling']:g}")
    print(f"{'ladder due(limit=1) (s)':28} {base['next game']:>18.4f} {big['next game']:>18.4f}"
          f"   < {GOALS_S['scheduling']:g}")
    verdicts.append(big["scheduling"] < GOALS_S["scheduling"])  # type: ignore[operator]
    verdicts.append(big["next game"] < GOALS_S["scheduling"])  # type: ignore[operator]
    print("goals met" if all(verdicts) else "some goal missed")
    return 0 if all(verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
