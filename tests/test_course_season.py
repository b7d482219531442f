"""Issue 25's compressed season, run on the real server (`arena course serve` on a free 127.0.0.1
port) and watched as people would: 30 students, three phases an hour apart, the ladder, the final
at the deadline with a `kill -9` of the server in the middle of it, the grades, the copying check;
then the season's pages in Debian's chromium (Selenium), each also checked with axe-core.

The season is rehearsed on the course's clock (`arena course clock DIR set`, issue 35): the test
moves it past each deadline once the uploads before it have their status and the phase checks due
are done, so the order of events is the test's, however slow the machine (on the wall clock, with
deadlines seconds apart, a loaded machine made uploads land after their deadline). The rehearsal
is set a day in the past; the season over, the course goes back to real time, after every deadline.

Bots of known strength are the shipped reference bots under students' names (a one-line file that
runs `bots.load(NAME)` through the SDK: random < greedy < alphabeta, champion on 5x5 Domineering);
broken ones crash, raise, play an illegal move, miss the clock or do not compile; two C++ kit bots
(one answers the `legal` request, one is built with `no-legal`); a student's own alpha-beta and a
renamed, reformatted copy of it. The clock is 0.2 s a move and the board 5x5, so a game takes a
few seconds.

With ARENA_SCREENSHOTS=1 the browser test writes the season's screenshots to docs/img/.
"""
from __future__ import annotations

import csv
import io
import json
import threading
import time
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import test_site
import test_site_live
from conftest import require, run_arena
from course_helpers import (
    RAISING_BOT,
    SYNTAX_ERROR_BOT,
    Server,
    arena,
    make_course,
    signed_in,
    staff_signed_in,
    tls,
)

try:
    import httpx
except ImportError:  # the test extra
    httpx = None

ROOT = Path(__file__).resolve().parents[1]
KIT = ROOT / "examples" / "kits" / "cpp"
shots = test_site.shots
AXE = test_site_live.AXE

NAMES = ["Ada Lovelace", "Alan Turing", "Grace Hopper", "Katherine Johnson", "Edsger Dijkstra",
         "Barbara Liskov", "Donald Knuth", "Frances Allen", "John McCarthy", "Margaret Hamilton",
         "Claude Shannon", "Radia Perlman", "Ken Thompson", "Shafi Goldwasser", "Tony Hoare",
         "Leslie Lamport", "Niklaus Wirth", "Adele Goldberg", "Robin Milner", "Sophie Wilson",
         "Dennis Ritchie", "Jean Sammet", "Edgar Codd", "Karen Sparck Jones", "Alan Kay",
         "Hedy Lamarr", "Seymour Cray", "Annie Easley", "Peter Naur", "Mary Allen Wilkes"]
ROSTER = [(f"s{n:02d}", name, f"s{n:02d}@example.org", "AB"[n % 2]) for n, name in enumerate(NAMES, 1)]

STRENGTH = {"random": 1, "greedy": 2, "alphabeta": 2.5, "champion": 3}
"""The shipped bots' known order on 5x5 Domineering at 0.2 s a move, measured over 12 games a
pairing: champion beat greedy 11-1; alphabeta (iterative deepening and the champion's evaluation
in Domineering since issue 26) split 6-6 with champion and beat greedy 7-5; random loses to all of
them. Only random against champion is a wide gap: the ladder's ~12 games a bot cannot order the
three close ones reliably (Spearman measured 0.34 to 0.8+ on the same code)."""
LAUNCHERS = [
    '__import__("bots").load("{name}")().run()\n',
    'import bots\nbots.load("{name}")().run()\n',
    'from bots import load\nload("{name}")().run()\n',
    'from bots import load as get\nbot = get("{name}")()\nbot.run()\n',
    'import bots\ncls = bots.load("{name}")\ncls().run()\n',
    'from bots.__main__ import main\nmain(["{name}"])\n',
    'import bots\n\nif __name__ == "__main__":\n    bots.load("{name}")().run()\n',
]
"""A student's bot that is a shipped bot, run through the SDK (as `python -m bots NAME`), written
seven ways: seven students each hand in one of them, and none is a copy of another's."""
KNOWN = {"s01": "random", "s02": "greedy", "s03": "champion", "s04": "champion", "s22": "greedy"}
"""Students whose only version is a shipped bot (s21 and s24 get theirs in a second version)."""
ACTIVE_BOT = {**KNOWN, "s21": "alphabeta", "s24": "champion"}
"""The shipped bot each of those students ends the season with."""
LAUNCHER_OF = {sid: LAUNCHERS[n] for n, sid in enumerate(ACTIVE_BOT)}
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
LATE_BOT = '''import time
from bots.sdk import Bot


class LateMover(Bot):
    """Plays its first legal move, on time while qualifying; after its third move, in any other
    game, too slowly: it loses those on time (the final's timeout penalty)."""

    def choose(self, state, time_left):
        if self.ply >= 6 and not self.game_id.startswith("qualify-"):
            time.sleep(3 * time_left)
        return self.legal[0]


LateMover().run()
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

T0 = (datetime.now(UTC) - timedelta(days=1)).replace(second=0, microsecond=0)
"""The season's start on the course's clock: a day ago (its rehearsal clock is set to it)."""
P1, P2, P3 = (T0 + timedelta(hours=h) for h in (1, 2, 3))
"""The phases' deadlines."""
EXTENSION = timedelta(hours=1)
"""s24's extension: the final is due at P3 + EXTENSION."""
PAST = timedelta(minutes=1)
"""How far past a deadline the test moves the course's clock."""
LADDER_GAMES_PER_HOUR = 900
LADDER_UNTIL = T0 + timedelta(days=30)
"""The ladder plays on past the last deadline (its default end) while the tests run: paused while
the final is played, it then goes on for the test of its order, the last."""
SETTLE_TIMEOUT_S = 600.0
"""How long the test waits for the uploads' statuses, the phase checks, the final: whatever the load
(the deadlines wait for the test, not the other way round)."""
LEGAL_TIMEOUT_S = 3
"""Seconds the move-generation check waits for each answer (s16's kit never answers: its check
waits this long)."""
FINAL_ROUNDS = 2
CLOCK_S = 0.2
"""Seconds a move, for every game of the season (at 0.05 s a loaded machine's waits for a CPU made
bots forfeit on time, and alphabeta fall back to its depth-1 answer, greedy's, too often for the
known order to hold)."""
LADDER_MIN_GAMES = 6
"""The ladder's order is compared with the known one over the bots with this many rated games
(a version that joined at the last deadline has had no time to climb)..."""
LADDER_SETTLED = 7
"""... once this many of the 10 bots of known strength have them (the test waits for it)."""


def kit_zip(binary: Path, no_legal: bool) -> bytes:
    """The C++ starter kit as a student zips the folder it built in (the binary last, so that it
    is newer than bot.cpp and the server's `make` finds it up to date); `no-legal` beside
    build.sh: a bot without the `legal` extension (the kit's build.sh then says --no-legal)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name in ("bot.cpp", "Makefile", "build.sh", *(["no-legal"] if no_legal else []), "bot"):
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o755 if name in ("build.sh", "bot") else 0o644) << 16
            z.writestr(info, binary.read_bytes() if name == "bot" else b"" if name == "no-legal"
                       else (KIT / name).read_bytes())
    return out.getvalue()


def season_toml() -> str:
    """The season's sections of course.toml, its deadlines those above."""
    def at(moment: datetime) -> str:
        return moment.isoformat(timespec="seconds")

    return f"""
[[phases]]
name = "interface"
deadline = {at(P1)}
requires = {{qualified = true}}
report = true

[[phases]]
name = "move generation"
deadline = {at(P2)}
requires = {{legal = {{positions = 12, timeout_s = {LEGAL_TIMEOUT_S}}}}}

[[phases]]
name = "alpha-beta"
deadline = {at(P3)}
requires = {{score = {{against = "random", at_least = 0.5, games = 2}}}}

[extensions]
s24 = "{EXTENSION.total_seconds() / 3600:g}h"

[ladder]
games_per_hour = {LADDER_GAMES_PER_HOUR}
placement_games = 2
reference = ["random", "greedy", "alphabeta"]
unrated_per_hour = 2
poll_s = 0.5
until = {at(LADDER_UNTIL)}

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

    def __init__(self, directory: Path, kit: Path) -> None:
        self.started = time.monotonic()
        self.marks: list[tuple[float, str]] = []
        make_course(directory, roster=ROSTER, time=str(CLOCK_S), rows="5", cols="5", upload_interval_s="0",
                    title='"Domineering, autumn term"')
        # the C++ students built the kit on their machines before the season began: its binary
        self.kit = kit
        with open(directory / "course.toml", "a") as f:
            f.write(season_toml())
        self.directory = directory
        self.clock(T0)  # the rehearsal begins before the server starts: it says so at once
        self.server = Server(directory, concurrency=2)
        self.mark("server up")
        self.url = self.server.url
        self.tokens = {sid: arena("course", "token", str(directory), sid)[1].strip() for sid, *_ in ROSTER}
        self.answers: dict[str, list[httpx.Response]] = {}
        self.phases: list = []
        """What `arena course phases DIR` answered after the last deadline."""
        self.phases_thread: threading.Thread | None = None

    def clock(self, moment: datetime) -> None:
        """`arena course clock DIR set MOMENT`: the course's time from now on."""
        code, out, err = arena("course", "clock", str(self.directory), "set", moment.isoformat())
        assert code == 0 and "REHEARSAL CLOCK" in out, err
        self.mark(f"clock at T0 + {moment - T0}")

    def mark(self, what: str) -> None:
        """Note how far into the season (seconds) the test got to `what` (printed at its end)."""
        self.marks.append((self.now_s(), what))

    def settled(self) -> None:
        """Wait until every upload has its final status: what the next deadline judges is then
        decided. (The phase checks need not be done: a check's verdict is its version's, whenever
        it runs; they run in the server's thread meanwhile, and `arena course phases --wait`
        waits for them after the final.)"""
        course = self.course()
        try:
            wait_until(lambda: course.store.pending() == 0, SETTLE_TIMEOUT_S,
                       "uploads still waiting to be built or tested", every=0.2)
        finally:
            course.close()
        self.mark("uploads settled")

    def now_s(self) -> float:
        return time.monotonic() - self.started

    def upload(self, sid: str, name: str, data: bytes | str, report: bytes | None = None) -> httpx.Response:
        data = data.encode() if isinstance(data, str) else data
        files = [("file", (name, data, "application/octet-stream"))]
        if report is not None:
            files.append(("report", ("report.md", report, "text/markdown")))
        answer = httpx.post(f"{self.url}/api/submissions", files=files, data={"protocol": "v1"},
                            headers={"Authorization": f"Bearer {self.tokens[sid]}"}, timeout=60, verify=tls())
        self.answers.setdefault(sid, []).append(answer)
        return answer

    def course(self):
        from arena.course.course import Course

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
def season(tmp_path_factory, built_kit):
    """The whole season, played out: the fixture returns once the final is finished (after a
    kill -9 in the middle of it and a restart); the tests then check what it left."""
    require(httpx is not None, "needs httpx (pip install -e '.[test]')")
    # a course directory with a long name a line cannot break (no space nor hyphen): the paths the
    # staff's pages show must still fit a phone's screen
    s = Season(tmp_path_factory.mktemp("season") / "domineering_for_the_algorithms_course_autumn_term",
               built_kit("cpp")[0] / "bot")
    try:
        play_season(s)
        yield s
    finally:
        if s.phases_thread is not None:
            s.phases_thread.join()  # its checks run in the server: before it is killed
        s.server.kill()
        print(f"the season took {time.monotonic() - s.started:.1f} s: "
              + ", ".join(f"{what} {at:.1f}" for at, what in s.marks))


def play_season(s: Season) -> None:
    assert "WARNING: REHEARSAL CLOCK: the course's time is" in s.server.errors()  # said at its start
    # phase 1: who hands in does so at once, with a report (s22 forgets it); the C++ kits last
    uploads = [(sid, f"{bot}_{sid}.py", LAUNCHER_OF[sid].format(name=bot), sid != "s22")
               for sid, bot in KNOWN.items()]
    uploads += [("s05", "syntax.py", SYNTAX_ERROR_BOT, True), ("s06", "late_mover.py", LATE_BOT, True),
                ("s13", "mobility.py", ORIGINAL, True), ("s14", "myplayer.py", PLANTED, True),
                ("s17", "raises.py", RAISING_BOT, True), ("s18", "syntax.py", SYNTAX_ERROR_BOT, True),
                ("s19", "illegal.py", ILLEGAL_BOT, True), ("s20", "slow.py", SLOW_BOT, True),
                ("s21", "first_try.py", RAISING_BOT, True),
                ("s24", "random_s24.py", LAUNCHERS[-1].format(name="random"), True)]
    upload_all(s, uploads)
    upload_all(s, [("s15", "kit.zip", kit_zip(s.kit, no_legal=False), True),
                   ("s16", "kit.zip", kit_zip(s.kit, no_legal=True), True)])
    for sid, answers in s.answers.items():
        assert answers[0].status_code == 201, (sid, answers[0].text)
    s.settled()  # every version of phase 1 judged: then its deadline passes
    # between phase 1 and 2: s21 fixes its bot (a resubmission; uploaded in time for phase 2
    # whenever it is judged)
    s.clock(P1 + PAST)
    fixed = s.upload("s21", "fixed.py", LAUNCHER_OF["s21"].format(name="alphabeta"))
    assert fixed.status_code == 201, fixed.text
    # after phase 2 staff look who passed so far
    s.clock(P2 + PAST)
    code, out, err = arena("course", "phases", str(s.directory))
    assert code == 0 and "move generation: deadline" in out, err
    # after the last deadline: s23 is refused, s24 (an extension) is not
    s.clock(P3 + PAST)
    late = s.upload("s23", "late.py", LAUNCHERS[0].format(name="greedy"))
    assert late.status_code == 400, late.text
    s.late_refusal = late.json()["error"]
    extended = s.upload("s24", "champion_s24.py", LAUNCHER_OF["s24"].format(name="champion"))
    assert extended.status_code == 201, extended.text
    s.extended_id = extended.json()["id"]
    # the final starts by itself once s24's deadline has passed (the server's clock watch wakes the
    # season clock) and s24's upload is judged (one made in time holds the final back until it
    # is); kill -9 in the middle of it
    from arena.course.db.states import FinalState
    from arena.course.season.final import final_status
    from arena.tournament.store import StoreError

    course = s.course()

    def status_now():
        try:
            return final_status(course)
        except StoreError:  # the runner is making its results database this moment
            return None

    assert status_now().state == FinalState.NOT_STARTED
    s.clock(P3 + EXTENSION + PAST)
    status = wait_until(lambda: (lambda st: st if st and st.played >= 4 else None)(status_now()),
                        SETTLE_TIMEOUT_S, "the final did not start and play 4 games", every=0.1)
    assert status.state == "running" and status.played < status.planned, status
    s.before_kill = stored_games(status.results_dir)
    s.mark(f"kill -9 ({status.played} of {status.planned} final games in)")
    s.server.kill()
    s.server = Server(s.directory, concurrency=2)  # the season clock resumes the final at once
    s.url = s.server.url
    wait_until(lambda: (lambda st: st and st.state == "finished")(status_now()), SETTLE_TIMEOUT_S,
               "the final did not finish after a restart")
    s.mark("final finished")
    course.close()
    # the rehearsal over, back to real time (a day on: after every deadline); the server says so
    code, out, err = arena("course", "clock", str(s.directory), "real")
    assert code == 0 and "real time again" in out, err
    wait_until(lambda: "the rehearsal clock ended: real time" in s.server.errors(), 60,
               "the server did not notice the clock's end")

    # meanwhile staff ask who passed each phase, waiting for the checks the server's thread runs
    # (the restarted server: a check the kill cut short runs again); the tests before
    # `phases_checked` run meanwhile
    def after_the_deadlines() -> None:
        s.phases.append(run_arena("course", "phases", str(s.directory), "--wait", cwd=s.directory,
                                  timeout=SETTLE_TIMEOUT_S))
        s.mark("phases printed")

    s.phases_thread = threading.Thread(target=after_the_deadlines)
    s.phases_thread.start()


def upload_all(s: Season, uploads: list) -> None:
    """Send the uploads at once (a thread each), as a class at a deadline does."""
    threads = [threading.Thread(target=s.upload, args=(sid, name, data, REPORT if report else None))
               for sid, name, data, report in uploads]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def stored_games(results_dir: Path) -> dict[str, str]:
    """game id -> when it started, of every game the final's store holds."""
    from arena.tournament import standings as st

    _, games = st.load(results_dir)
    return {g.record.game_id: g.record.started_at for g in games}


# --- what the season left (the phases' tests further down: their checks finish meanwhile) ---

def submissions(course) -> dict[str, list]:
    """student id -> its submissions, oldest first."""
    return {s.id: list(reversed(course.submissions(s.id))) for s in course.students()}


def test_every_upload_ends_in_one_final_status(season):
    course = season.course()
    subs = submissions(course)
    shown = {sid: [(x.status, x.reason) for x in found] for sid, found in subs.items() if found}
    qualified = [("qualified", None)]
    expected = {
        **{sid: qualified for sid in ("s01", "s02", "s03", "s04", "s06", "s13", "s14", "s15", "s16", "s22")},
        "s05": [("failed", "compile error")],
        "s17": [("failed", "crashed")], "s18": [("failed", "compile error")],
        "s19": [("failed", "illegal move")], "s20": [("failed", "timeout")],
        "s21": [("failed", "crashed"), ("qualified", None)], "s24": qualified * 2,
    }
    wrong = {sid: [(x.status, x.reason, x.detail) for x in subs.get(sid, [])]
             for sid in set(shown) | set(expected) if shown.get(sid) != expected.get(sid)}
    assert shown == expected, wrong  # with the details of the verdicts not expected (a forfeit's says why)
    assert "s23" not in shown  # the late upload was refused, and nothing kept
    assert season.late_refusal.startswith("uploads are frozen: the last deadline was ")
    assert [x.active for x in subs["s24"]] == [False, True]  # the upload in its extension counts


def test_the_final_ran_once_at_the_deadline_and_every_game_once_across_a_kill(season):
    from arena.course.season.final import final_status

    course = season.course()
    status = final_status(course)
    assert status.state == "finished" and status.run == 1
    assert status.played == status.planned
    after = stored_games(status.results_dir)
    assert len(after) == status.planned  # every game stored, none twice (ids are unique keys)
    assert 4 <= len(season.before_kill) < status.planned
    assert {g: after[g] for g in season.before_kill} == season.before_kill  # none played again
    # the entrants: each student's latest version uploaded before its own deadline and qualified
    # when the final started (a version still being built then cannot play)
    from arena.course.season.phases import deadline_for

    started = datetime.fromisoformat(status.started)
    expected = {}
    for sid, found in submissions(course).items():
        usable = [x for x in found if x.status == "qualified" and
                  datetime.fromisoformat(x.created) < deadline_for(course.config, sid) and
                  datetime.fromisoformat(course.store.submission_row(x.id)["finished"]) <= started]
        if usable:
            expected[sid] = usable[-1].id
    entered = {r["student_id"]: r["submission_id"] for r in course.store.rows(
        "SELECT student_id, submission_id FROM final_entrants WHERE run = 1")}
    assert entered == expected
    assert set(entered) >= set(ACTIVE_BOT) | {"s13", "s14"}, entered
    assert entered["s24"] == season.extended_id  # the final waited for its extension's upload
    code, out, err = arena("standings", str(course.directory / "final" / "final-1.toml"),
                           "--results", str(course.directory / "final"))
    assert code == 0, err
    code, shown, err = arena("course", "final", str(season.directory), "--status")
    assert code == 0, err
    table = out.split("\n\n")[1]  # the standings table, as `arena standings` prints it
    assert table.strip() and table in shown


def test_the_planted_copy_tops_the_similarity_list_and_the_kit_bots_are_not_flagged(season):
    from arena.course.season.similarity import similar_pairs

    pairs = similar_pairs(season.course())
    assert pairs, "no pair found"
    assert (pairs[0].a, pairs[0].b) == ("s13", "s14") and pairs[0].score > 0.9
    flagged = {(p.a, p.b) for p in pairs}
    assert ("s15", "s16") not in flagged  # both the C++ kit: its code is boilerplate
    assert not any(a in ACTIVE_BOT and b in ACTIVE_BOT for a, b in flagged), flagged


# --- the season's pages, in the browser ---

@pytest.fixture(scope="module")
def axe_source() -> str:
    require(AXE.is_file(), f"needs axe-core at {AXE} (npm install --prefix tests/.axe axe-core)")
    return AXE.read_text(encoding="utf-8")


def as_account(browser, season: Season, client) -> None:
    """The browser signed in as `client` (an httpx client that signed in with its link)."""
    browser.get(season.url + "/login")
    browser.delete_all_cookies()
    for name, value in client.cookies.items():
        browser.add_cookie({"name": name, "value": value, "path": "/"})


NARROW_SHOTS = {"course-ladder"}
"""The pages docs/course.md also shows on a phone's screen."""


def look(browser, season: Season, path: str, axe: str, found: dict, shots: Path, name: str) -> None:
    """Open `path`, check axe and that a 360 px screen does not scroll sideways; with
    ARENA_SCREENSHOTS=1 its screenshot `name` (none for ""), at 360 px too for NARROW_SHOTS."""
    browser.get(season.url + path)
    found[path] = test_site_live.axe_violations(browser, axe)
    try:
        browser.set_window_size(test_site.NARROW_PX, test_site.HEIGHT_PX)
        width, inner = browser.execute_script(
            "return [document.documentElement.scrollWidth, window.innerWidth]")
        assert width <= inner, (f"{path}: {width} px wide in a {inner} px window: "
                                f"{test_site_live.too_wide(browser)}")
    finally:
        browser.set_window_size(test_site.WIDE_PX, test_site.HEIGHT_PX)
    if name:
        test_site.screenshot(browser, shots / f"{name}.png")
        if name in NARROW_SHOTS:
            test_site.screenshot(browser, shots / f"{name}-360.png", test_site.NARROW_PX)
    assert not test_site.errors_in_log(browser), path


def test_a_student_sees_the_leaderboard_its_chart_and_watches_an_unrated_game(season, browser, shots,
                                                                              axe_source):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    from arena.course.season.privacy import pseudonym

    course = season.course()
    code, _, err = arena("course", "invite", str(season.directory), "--url", season.url, "--only", "s02")
    assert code == 0, err
    links = {r["id"]: r["link"] for r in csv.DictReader(open(season.directory / "invites.csv"))}
    student = signed_in(season.url, links["s02"])
    as_account(browser, season, student)
    found: dict = {}
    look(browser, season, "/ladder", axe_source, found, shots, "course-ladder")
    own = browser.find_element(By.CSS_SELECTOR, "#leaderboard tr.own")
    assert "Alan Turing" in own.text and "you" in own.text
    text = browser.find_element(By.ID, "leaderboard").text
    assert "Ada Lovelace" not in text and pseudonym(course, "s01") in text  # classmates: pseudonyms
    assert "greedy" in text and "reference bot" in text
    dots = browser.find_elements(By.CSS_SELECTOR, "#rating-chart circle.dot")
    points = browser.find_element(By.CSS_SELECTOR, "#rating-chart polyline.mu").get_attribute("points")
    points = points.split()
    assert len(dots) == len(points) >= 2  # a point a rated game: placement games at least
    assert "rated game" in browser.find_element(By.CSS_SELECTOR, "#rating-chart title").get_attribute(
        "textContent")
    Select(browser.find_element(By.ID, "opponent")).select_by_value("alphabeta")
    browser.find_element(By.CSS_SELECTOR, "form.request button[type=submit]").click()
    test_site.wait_for(lambda: "/ladder/games/" in browser.current_url, what="the unrated game's page")
    test_site.wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "#board *"), timeout=60,
                       what="the unrated game's replay")
    assert "unrated pair" in browser.find_element(By.CSS_SELECTOR, ".crumbs").text
    title = browser.find_element(By.CSS_SELECTOR, "h1.game-title").text
    assert "Alan Turing" in title and "alphabeta" in title
    browser.find_element(By.ID, "last").click()
    assert "move" in browser.find_element(By.ID, "ply-label").text
    look(browser, season, browser.current_url.split(season.url, 1)[1], axe_source, found, shots,
         "course-ladder-game")
    # another student's history and games are not the student's to see: the one 404
    from arena.course.season.ladder import Ladder

    others = [g for g in Ladder(course).games() if g.id not in {x.id for x in Ladder(course).games("s02")}]
    nobody = student.get("/ladder/games/1000000")
    for url in ("/ladder/students/s01", f"/ladder/games/{others[0].id}", f"/ladder/games/{others[0].id}?n=2"):
        answer = student.get(url)
        assert answer.status_code == 404 and answer.text == nobody.text, url
    assert {path: v for path, v in found.items() if v} == {}


@pytest.fixture(scope="module")
def phases_checked(season):
    """What `arena course phases DIR --wait` answered after the last deadline, once its checks are
    done (the tests before this one ran meanwhile; those after may read the phases' results)."""
    season.phases_thread.join()
    print(f"the phase checks were done {season.marks[-1][0]:.1f} s into the season")
    return season.phases[0]


def test_each_phase_pass_list_is_right_with_its_evidence(season, phases_checked):
    from arena.course.season.phases import phase_game, phase_results

    assert phases_checked.returncode == 0, phases_checked.stderr
    out = phases_checked.stdout
    course = season.course()
    results = phase_results(course)  # `arena course phases --wait` waited for every check: all kept
    passed = {p: {r.student_id for r in results if r.phase == p and r.passed}
              for p in ("interface", "move generation", "alpha-beta")}
    by = {(r.phase, r.student_id): r for r in results}
    subs = submissions(course)
    assert passed["interface"] == {"s01", "s02", "s03", "s04", "s06", "s13", "s14", "s15", "s16", "s24"}
    assert "no report handed in" in by["interface", "s22"].evidence
    assert "no upload" in by["interface", "s23"].evidence
    assert "no qualified version (v1 is failed: crashed)" in by["interface", "s21"].evidence
    evidence = [(r.student_id, r.evidence) for r in results if r.phase == "move generation"]
    assert passed["move generation"] == {"s01", "s02", "s03", "s04", "s06", "s13", "s14", "s15", "s21", "s22",
                                         "s24"}, evidence
    assert "does not answer the `legal` request" in by["move generation", "s16"].evidence
    # alpha-beta: two games against random, one at least won (at_least = 0.5: in the first seat on
    # 5x5, champion lost 2 of 20 games to random at 0.2 s a move, so "both won" failed it by chance);
    # checked again here from the games themselves
    for sid in subs:
        r = by["alpha-beta", sid]
        if r.submission_id is None:
            assert not r.passed and sid not in ACTIVE_BOT, (sid, r.evidence)
            continue
        records = [phase_game(course, gid) for gid in r.game_ids if not gid.startswith("qualify-")]
        assert len(records) == 2, (sid, r.game_ids)
        bot = next(p for p in records[0].players if p != "random")
        won = sum(1 for rec in records if rec.winner_seat() is not None
                  and rec.players[rec.winner_seat()] == bot)
        assert r.passed == (won >= 1), (sid, r.evidence, won)
    late = by["alpha-beta", "s06"]  # the late mover loses both on time: below the threshold
    assert late.submission_id is not None and not late.passed, late.evidence
    for sid in ("s04", "s24"):  # champion beats random
        games = [phase_game(course, gid) for gid in by["alpha-beta", sid].game_ids]
        said = [(g.players, g.winner, g.reason, g.forfeit,
                 [(m.move, m.time_s, m.info.get("depth")) for m in g.moves]) for g in games if g]
        assert by["alpha-beta", sid].passed, (sid, by["alpha-beta", sid].evidence, said)
    assert by["alpha-beta", "s24"].submission_id == season.extended_id  # judged on the extension's upload
    for phase, sid in (("interface", "s22"), ("move generation", "s16"), ("alpha-beta", "s24")):
        assert by[phase, sid].evidence in out, (phase, sid)  # the command prints the same evidence


@pytest.fixture(scope="module")
def graded(season, phases_checked) -> str:
    """`arena course grades DIR` once the phases are checked: the grades.csv it wrote (each test that
    reads it asks for it, so that any of them runs alone)."""
    code, _, err = arena("course", "grades", str(season.directory))
    assert code == 0, err
    return (season.directory / "grades.csv").read_text()


def test_grades_csv_follows_the_standings_and_the_rules(season, graded):
    from arena.course.season.final import final_status
    from arena.tournament import standings as st

    text = graded
    notes = json.loads((season.directory / "grades.json").read_text())["notes"]
    assert any("ranked by points" in n for n in notes), notes  # the tie-break order is said
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    rows = {r["id"]: r for r in csv.DictReader(lines)}
    assert len(rows) == 30
    course = season.course()
    status = final_status(course)
    frame = status.standings.tables[0].frame.to_dict("records")
    _, games = st.load(status.results_dir)
    timeouts: dict[str, int] = {}
    for g in games:
        forfeit = g.record.forfeit or {}
        for side in [forfeit, *forfeit.get("both", [])]:
            if side.get("reason") == "timeout":
                bot = g.record.players[side["seat"]]
                timeouts[bot] = timeouts.get(bot, 0) + 1
    places = {}
    for row in frame:
        sid = status.students[row["bot"]]
        level = [r for r in frame if r["rank"] == row["rank"]]
        first = 1 + sum(1 for r in frame if r["rank"] < row["rank"])
        bonus = sum([5, 3, 2][p - 1] for p in range(first, first + len(level)) if p <= 3) / len(level)
        places[sid] = (first, len(level), bonus, timeouts.get(row["bot"], 0))
    for sid, row in rows.items():
        if sid not in places:
            assert row["final rank"] == "" and row["bonus"] == "0", row
            continue
        first, shared, bonus, forfeits = places[sid]
        assert row["final rank"] == f"{first}{'=' if shared > 1 else ''}", (sid, row)
        assert float(row["bonus"]) == pytest.approx(bonus), (sid, row)
        assert int(row["time forfeits"]) == forfeits and float(row["penalty"]) == 2 * forfeits, (sid, row)
    assert sum(float(r["bonus"]) for r in rows.values()) == pytest.approx(10)
    assert int(rows["s06"]["time forfeits"]) >= 1 and float(rows["s06"]["penalty"]) >= 2  # the slow one


def test_staff_see_phases_grades_similarity_and_publish_the_final(season, phases_checked, graded, browser,
                                                                 shots, axe_source):
    from selenium.webdriver.common.by import By

    from arena.course.season.phases import phase_results

    staff = staff_signed_in(season.directory, season.url)
    as_account(browser, season, staff)
    course = season.course()
    found: dict = {}
    look(browser, season, "/staff/phases", axe_source, found, shots, "course-phases")
    results = phase_results(course)
    for section in browser.find_elements(By.CSS_SELECTOR, "section.phase"):
        phase = section.get_attribute("data-phase")
        rows = section.find_elements(By.CSS_SELECTOR, "tr[data-passed=yes]")
        shown = {r.get_attribute("data-student") for r in rows}
        assert shown == {r.student_id for r in results if r.phase == phase and r.passed}, phase
    s16 = next(r for r in results if r.phase == "move generation" and r.student_id == "s16")
    assert s16.evidence in browser.find_element(By.ID, "phase-2").text
    report = browser.find_element(By.CSS_SELECTOR, '#phase-1 tr[data-student="s01"] a[href$="/report"]')
    assert staff.get(report.get_attribute("href").split(season.url, 1)[1]).content == REPORT

    look(browser, season, "/staff/grades", axe_source, found, shots, "course-grades")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#grades tbody tr")) == 30
    download = staff.get("/staff/grades.csv")
    assert download.status_code == 200 and download.headers["content-type"].startswith("text/csv")
    ours = [line for line in download.text.splitlines() if not line.startswith("#")]
    assert ours == [line for line in graded.splitlines() if not line.startswith("#")]

    look(browser, season, "/staff/similarity", axe_source, found, shots, "course-similarity")
    first = browser.find_element(By.CSS_SELECTOR, "section.pair")
    assert (first.get_attribute("data-a"), first.get_attribute("data-b")) == ("s13", "s14")
    assert len(first.find_elements(By.CSS_SELECTOR, ".side-by-side figure")) >= 2
    assert "def search" in first.text and "def alphabeta" in first.text  # the passages, side by side

    look(browser, season, "/staff/final", axe_source, found, shots, "course-final")
    assert browser.find_element(By.ID, "final-state").text == "finished"
    from arena.course.season.final import final_status

    frame = final_status(course).standings.tables[0].frame.to_dict("records")
    rows = browser.find_elements(By.CSS_SELECTOR, "#final-standings tbody tr")
    assert [r.get_attribute("data-bot") for r in rows] == [r["bot"] for r in frame]
    browser.find_element(By.ID, "final-publish").click()
    test_site.wait_for(lambda: browser.execute_script(
        "const e = document.getElementById('final-state'); return e && e.textContent") == "published",
        what="the final published")
    assert final_status(course).state == "published"
    assert (season.directory / "final" / "site" / "index.html").is_file()
    assert "published the final" in staff.get("/staff/audit").text

    look(browser, season, "/ladder", axe_source, found, shots, "")
    assert "Ada Lovelace" in browser.find_element(By.ID, "leaderboard").text  # staff: names
    assert {path: v for path, v in found.items() if v} == {}


# --- last, so that the ladder has played while the other tests ran ---

def test_the_ladder_order_agrees_with_the_known_strengths(season):
    from arena.course.season.ladder import Ladder

    course = season.course()

    def enough_games():  # however fast the season went, the ladder has played enough (it plays on)
        table = Ladder(course).table()
        known = [(row, STRENGTH[row.reference or ACTIVE_BOT[row.student_id]])
                 for row in table if row.reference or row.student_id in ACTIVE_BOT]
        ready = sum(1 for row, _ in known if row.games >= LADDER_MIN_GAMES) >= LADDER_SETTLED
        return (table, known) if ready else None

    table, known = wait_until(enough_games, SETTLE_TIMEOUT_S, f"{LADDER_SETTLED} bots with "
                              f"{LADDER_MIN_GAMES}+ rated ladder games", every=1.0)
    settled = [(row, strength) for row, strength in known if row.games >= LADDER_MIN_GAMES]
    games = [row.games for row, _ in known]
    rho = spearman([-row.rank for row, _ in settled], [strength for _, strength in settled])
    print(f"ladder: {sum(r.games for r in table) // 2} rated games, {min(games)} to {max(games)} a bot; "
          f"Spearman {rho:.2f} against the known strengths over the {len(settled)} bots with "
          f"{LADDER_MIN_GAMES}+ games")
    shown = [(row.bot, round(row.ordinal, 1), row.games, strength) for row, strength in known]
    assert len(known) == 10 and len(settled) >= LADDER_SETTLED, shown
    weakest = [row.rank for row, strength in settled if strength == 1]
    strongest = [row.rank for row, strength in settled if strength == 3]
    assert weakest and strongest and min(weakest) > max(strongest), shown  # random below every champion
    assert rho > 0, shown


# --- the pages' own pieces, without a server ---

def test_a_student_sees_nothing_its_opponent_printed_in_a_ladder_replay():
    from arena.course_web.season_pages import shown_record
    from arena.match.records import GameRecord, MoveRecord

    secret = "my opponent's secret plan"
    record = GameRecord(
        game_id="ladder-7-g0", game="domineering", params={"rows": 5, "cols": 5},
        players=["s01-v2", "s02-v1"],
        time_control="0.2", moves=[MoveRecord(0, 0, "1A", 0.01, {"pv": ["1A"]}),
                                   MoveRecord(1, 1, "1C", 0.01, {"error": f"Traceback...\n{secret}"})],
        winner=0, reason="timeout", forfeit={"seat": 1, "reason": "timeout",
                                             "detail": f"no move within 0.2 s; it printed:\n{secret}"},
        logs={"0": "what I printed", "1": secret})
    names = {"s01": "Ada Lovelace", "s02": "brave-otter"}
    mine = shown_record(record, names, "s01")
    assert mine.players == ["Ada Lovelace v2", "brave-otter v1"]
    assert secret not in json.dumps(mine.to_dict())
    assert mine.logs == {"0": "what I printed"} and mine.moves[0].info == {"pv": ["1A"]}
    assert mine.forfeit["detail"] == "no move within 0.2 s"
    staff = shown_record(record, {"s01": "Ada Lovelace", "s02": "Alan Turing"}, None)
    assert staff.players == ["Ada Lovelace v2", "Alan Turing v1"] and secret in json.dumps(staff.to_dict())


def test_the_rating_chart_draws_mu_its_band_and_the_ordinal_on_one_scale():
    from arena.course_web.charts import CHART_HEIGHT_PX, PAD_PX, rating_chart

    history = [("2026-01-10T10:00:00Z", 25.0, 8.3, 0.1), ("2026-01-10T10:05:00Z", 27.5, 7.0, 6.5),
               ("2026-01-10T10:09:00Z", 30.0, 5.0, 15.0)]
    c = rating_chart(history)
    mu = [tuple(map(float, p.split(","))) for p in c["mu"].split()]
    ordinal = [tuple(map(float, p.split(","))) for p in c["ordinal"].split()]
    assert len(mu) == len(ordinal) == len(c["dots"]) == 3 and c["points"] == 3
    assert [x for x, _ in mu] == sorted(x for x, _ in mu)  # left to right, a point a game
    assert mu[0][1] > mu[-1][1] and ordinal[0][1] > ordinal[-1][1]  # rising ratings go up the page
    assert all(o[1] > m[1] for o, m in zip(ordinal, mu, strict=True))  # the ordinal lies under mu
    ys = [float(p.split(",")[1]) for p in c["band"].split()]
    assert PAD_PX <= min(ys) and max(ys) <= CHART_HEIGHT_PX - 2 * PAD_PX  # the band fits the plot
    labels = [float(t["label"]) for t in c["ticks"]]
    assert labels[0] <= 0.1 and labels[-1] >= 25.0 + 8.3  # the axis covers every value
    assert "3 rated games" in c["summary"] and "ordinal now 15.0" in c["summary"]
    assert rating_chart([])["points"] == 0
