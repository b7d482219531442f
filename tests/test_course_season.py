"""Issue 25's compressed season, run on the real server (`arena course serve` on a free 127.0.0.1
port) and watched as people would: 30 students, three phases a few seconds apart, the ladder, the
final at the deadline with a `kill -9` of the server in the middle of it, the grades, the copying
check; then the season's pages in Debian's chromium (Selenium), each also checked with axe-core.

Bots of known strength are the shipped reference bots under students' names (a one-line file that
runs `bots.load(NAME)` through the SDK: random < greedy < alphabeta, champion on 5x5 Domineering);
broken ones crash, raise, play an illegal move, miss the clock or do not compile; two C++ kit bots
(one answers the `legal` request, one is built with `no-legal`); a student's own alpha-beta and a
renamed, reformatted copy of it. The clock is 0.05 s a move and the board 5x5, so a game takes
well under a second; the course's times (phase deadlines, the extension) are seconds apart.

With ARENA_SCREENSHOTS=1 the browser test writes the season's screenshots to docs/img/.
"""
from __future__ import annotations

import csv
import io
import json
import os
import re
import threading
import time
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import test_site
import test_site_live
from conftest import require
from course_helpers import (
    PASSWORD,
    RAISING_BOT,
    SYNTAX_ERROR_BOT,
    Server,
    arena,
    csrf_of,
    invite_links,
    make_course,
    signed_in,
)

try:
    import httpx
except ImportError:  # the test extra
    httpx = None

ROOT = Path(__file__).resolve().parents[1]
KIT = ROOT / "examples" / "kits" / "cpp"
browser = test_site.browser
shots = test_site.shots
AXE = test_site_live.AXE

NAMES = ["Ada Lovelace", "Alan Turing", "Grace Hopper", "Katherine Johnson", "Edsger Dijkstra",
         "Barbara Liskov", "Donald Knuth", "Frances Allen", "John McCarthy", "Margaret Hamilton",
         "Claude Shannon", "Radia Perlman", "Ken Thompson", "Shafi Goldwasser", "Tony Hoare",
         "Leslie Lamport", "Niklaus Wirth", "Adele Goldberg", "Robin Milner", "Sophie Wilson",
         "Dennis Ritchie", "Jean Sammet", "Edgar Codd", "Karen Sparck Jones", "Alan Kay",
         "Hedy Lamarr", "Seymour Cray", "Annie Easley", "Peter Naur", "Mary Allen Wilkes"]
ROSTER = [(f"s{n:02d}", name, f"s{n:02d}@example.org", "AB"[n % 2]) for n, name in enumerate(NAMES, 1)]

STRENGTH = {"random": 1, "greedy": 2, "alphabeta": 3, "champion": 3}
"""The reference bots' known order on 5x5 Domineering at 0.05 s a move (alphabeta and champion
are level there: each wins about as often as the other)."""
LAUNCHER = '__import__("bots").load("{name}")().run()\n'
"""A student's bot that is a shipped bot: one line through the SDK (`python -m bots NAME`)."""
KNOWN = {"s01": "random", "s02": "random", "s03": "greedy", "s04": "greedy", "s05": "alphabeta",
         "s06": "alphabeta", "s07": "champion", "s08": "champion", "s22": "greedy"}
"""Students whose only version is a shipped bot (s21 and s24 get theirs in a second version)."""
ILLEGAL_BOT = '''from bots.sdk import Bot


class Wrong(Bot):
    def choose(self, state, time_left):
        return "9Z"


Wrong().run()
'''
SLOW_BOT = '''import time
from bots.sdk import Bot


class Slow(Bot):
    def choose(self, state, time_left):
        time.sleep(2)
        return self.legal[0]


Slow().run()
'''
ORIGINAL = '''"""Domineering by alpha-beta over the difference in mobility (a student's own bot)."""
import time

from bots.sdk import Bot


def mobility(state, seat):
    """How many moves `seat` would have here, minus the opponent's."""
    mine = len(state.legal_moves()) if state.seat == seat else 0
    theirs = len(state.legal_moves()) if state.seat != seat else 0
    return mine - theirs


def search(state, depth, alpha, beta, seat, stop):
    outcome = state.outcome
    if outcome is not None:
        return (1000 if outcome.winner == seat else -1000), None
    if depth == 0 or time.monotonic() > stop:
        return mobility(state, seat), None
    best_move = None
    maximizing = state.seat == seat
    best = -10_000 if maximizing else 10_000
    for move in state.legal_moves():
        value, _ = search(state.play(move), depth - 1, alpha, beta, seat, stop)
        if maximizing and value > best:
            best, best_move = value, move
            alpha = max(alpha, value)
        elif not maximizing and value < best:
            best, best_move = value, move
            beta = min(beta, value)
        if beta <= alpha:
            break
    return best, best_move


class MobilityBot(Bot):
    name = "mobility"

    def choose(self, state, time_left):
        stop = time.monotonic() + min(time_left, 1.0) * 0.4
        _, move = search(state, 2, -10_000, 10_000, state.seat, stop)
        return move or state.legal_moves()[0]


if __name__ == "__main__":
    MobilityBot().run()
'''
PLANTED = '''# my own Domineering player
import time
from bots.sdk import Bot


def count_moves(position, player):
    # my moves minus the other side's moves
    own = len(position.legal_moves()) if position.seat == player else 0
    other = len(position.legal_moves()) if position.seat != player else 0
    return own - other


def alphabeta(position, plies, lo, hi, player, until):
    result = position.outcome
    if result is not None:
        return (1000 if result.winner == player else -1000), None
    if plies == 0 or time.monotonic() > until:
        return count_moves(position, player), None
    chosen = None
    is_max = position.seat == player
    value_best = -10_000 if is_max else 10_000
    for m in position.legal_moves():
        v, _ = alphabeta(position.play(m), plies - 1, lo, hi, player, until)
        if is_max and v > value_best:
            value_best, chosen = v, m
            lo = max(lo, v)
        elif not is_max and v < value_best:
            value_best, chosen = v, m
            hi = min(hi, v)
        if hi <= lo:
            break
    return value_best, chosen


class MyPlayer(Bot):
    name = "myplayer"

    def choose(self, position, time_left):
        until = time.monotonic() + min(time_left, 1.0) * 0.4
        _, m = alphabeta(position, 2, -10_000, 10_000, position.seat, until)
        return m or position.legal_moves()[0]


if __name__ == "__main__":
    MyPlayer().run()
'''
"""s14's upload: s13's bot with every name changed, comments rewritten and blank lines moved."""
REPORT = b"# Phase 1: the problem and the interface\n\nThe state is the board; a move is a domino.\n"

# the season's clock, in seconds after the course is written (phases "seconds apart")
P1_S, P2_S, P3_S = 10.0, 14.0, 18.0
EXTENSION_S = 4
"""s24's extension: the final is due at P3_S + EXTENSION_S."""
LADDER_GAMES_PER_HOUR = 900
FINAL_ROUNDS = 3


def kit_zip(no_legal: bool) -> bytes:
    """The C++ starter kit as a student zips it (`no-legal` beside build.sh: a bot without the
    `legal` extension)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name in ("bot.cpp", "Makefile", "build.sh"):
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o755 if name == "build.sh" else 0o644) << 16
            z.writestr(info, (KIT / name).read_bytes())
        if no_legal:
            z.writestr("no-legal", "")
    return out.getvalue()


def season_toml(start: datetime) -> str:
    """The season's sections of course.toml, its deadlines `start` + the offsets above."""
    def at(seconds: float) -> str:
        return (start + timedelta(seconds=seconds)).isoformat(timespec="milliseconds")

    return f"""
[[phases]]
name = "interface"
deadline = {at(P1_S)}
requires = {{qualified = true}}
report = true

[[phases]]
name = "move generation"
deadline = {at(P2_S)}
requires = {{legal = {{positions = 12}}}}

[[phases]]
name = "alpha-beta"
deadline = {at(P3_S)}
requires = {{score = {{against = "random", at_least = 1.0, games = 2}}}}

[extensions]
s24 = "{EXTENSION_S}s"

[ladder]
games_per_hour = {LADDER_GAMES_PER_HOUR}
placement_games = 2
reference = ["random", "greedy", "alphabeta"]
unrated_per_hour = 2
poll_s = 0.5

[final]
format = "swiss"
rounds = {FINAL_ROUNDS}
games = 2
concurrency = 2

[grading]
bonus = [5, 3, 2]
timeout_penalty = 2
penalty_per = "game"

[privacy]
pseudonyms = true
"""


class Season:
    """The season's course, its server, and what the test did to it (uploads and their answers)."""

    def __init__(self, directory: Path) -> None:
        self.started = time.monotonic()
        make_course(directory, roster=ROSTER, time="0.05", rows="5", cols="5", upload_interval_s="0")
        self.start = datetime.now(UTC)
        with open(directory / "course.toml", "a") as f:
            f.write(season_toml(self.start))
        self.directory = directory
        self.server = Server(directory, concurrency=2)
        self.url = self.server.url
        self.tokens = {sid: arena("course", "token", str(directory), sid)[1].strip() for sid, *_ in ROSTER}
        self.answers: dict[str, list[httpx.Response]] = {}

    def at(self, seconds: float) -> None:
        """Wait until `seconds` after the course was written."""
        wait = (self.start + timedelta(seconds=seconds) - datetime.now(UTC)).total_seconds()
        if wait > 0:
            time.sleep(wait)

    def now_s(self) -> float:
        return (datetime.now(UTC) - self.start).total_seconds()

    def upload(self, sid: str, name: str, data: bytes | str, report: bytes | None = None) -> httpx.Response:
        data = data.encode() if isinstance(data, str) else data
        files = [("file", (name, data, "application/octet-stream"))]
        if report is not None:
            files.append(("report", ("report.md", report, "text/markdown")))
        answer = httpx.post(f"{self.url}/api/submissions", files=files, data={"protocol": "v1"},
                            headers={"Authorization": f"Bearer {self.tokens[sid]}"}, timeout=60)
        self.answers.setdefault(sid, []).append(answer)
        return answer

    def course(self):
        from arena.course.service import Course

        return Course(self.directory)


def wait_until(condition, timeout: float, what: str, every: float = 0.25):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(every)
    raise AssertionError(f"{what}: not after {timeout} s")


def spearman(xs: list[float], ys: list[float]) -> float:
    """Spearman's rank correlation (ties get their average rank)."""
    def ranks(values: list[float]) -> list[float]:
        order = sorted(range(len(values)), key=lambda i: values[i])
        out = [0.0] * len(values)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
                j += 1
            for k in range(i, j + 1):
                out[order[k]] = (i + j) / 2 + 1
            i = j + 1
        return out

    rx, ry = ranks(xs), ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    var = (sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry)) ** 0.5
    return cov / var


@pytest.fixture(scope="module")
def season(tmp_path_factory):
    """The whole season, played out: the fixture returns once the final is finished (after a
    kill -9 in the middle of it and a restart); the tests then check what it left."""
    require(httpx is not None, "needs httpx (pip install -e '.[test]')")
    s = Season(tmp_path_factory.mktemp("season") / "domineering")
    try:
        play_season(s)
        yield s
    finally:
        s.server.kill()
        print(f"the season took {time.monotonic() - s.started:.1f} s")


def play_season(s: Season) -> None:
    # phase 1: everyone who hands in does so at once, with a report (s22 forgets it)
    uploads = [(sid, f"{bot}_{sid}.py", LAUNCHER.format(name=bot), sid != "s22") for sid, bot in KNOWN.items()]
    uploads += [("s13", "mobility.py", ORIGINAL, True), ("s14", "myplayer.py", PLANTED, True),
                ("s15", "kit.zip", kit_zip(no_legal=False), True), ("s16", "kit.zip", kit_zip(no_legal=True), True),
                ("s17", "raises.py", RAISING_BOT, True), ("s18", "syntax.py", SYNTAX_ERROR_BOT, True),
                ("s19", "illegal.py", ILLEGAL_BOT, True), ("s20", "slow.py", SLOW_BOT, True),
                ("s21", "first_try.py", RAISING_BOT, True), ("s24", "random_s24.py", LAUNCHER.format(name="random"), True)]
    threads = [threading.Thread(target=s.upload, args=(sid, name, data, REPORT if report else None))
               for sid, name, data, report in uploads]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for sid, answers in s.answers.items():
        assert answers[0].status_code == 201, (sid, answers[0].text)
    # between phase 1 and 2: s21 fixes its bot (a resubmission)
    s.at(P1_S + 0.5)
    assert s.upload("s21", "fixed.py", LAUNCHER.format(name="alphabeta")).status_code == 201
    # after the last deadline: s23 is refused, s24 (an extension) is not
    s.at(P3_S + 0.3)
    late = s.upload("s23", "late.py", LAUNCHER.format(name="greedy"))
    assert late.status_code == 400 and "uploads are frozen: the last deadline was" in late.json()["error"], late.text
    extended = s.upload("s24", "champion_s24.py", LAUNCHER.format(name="champion"))
    assert extended.status_code == 201, extended.text
    # the final starts by itself once s24's deadline has passed; kill -9 in the middle of it
    s.at(P3_S + EXTENSION_S)
    course = s.course()
    from arena.course.final import final_status

    status = wait_until(lambda: (lambda st: st if st.played >= 4 else None)(final_status(course)), 40,
                        "the final did not start and play 4 games")
    assert status.state == "running" and status.played < status.planned, status
    s.killed_at = status.played
    s.server.kill()
    s.server = Server(s.directory, concurrency=2)  # the season clock resumes the final
    s.url = s.server.url
    wait_until(lambda: final_status(course).state == "finished", 60, "the final did not finish after the restart")
    course.close()
