"""Issue 35: the course's clock (arena/course/db/clock.py), what "now" is for the season. A rehearsal
clock set, advanced and ended with `arena course clock DIR ...` (DIR/clock.json: every process on
the course sees it), the season's logic following it (an upload frozen after the last deadline of
the course's time, the store's times), `arena course status` and the server saying so loudly, a
banner on every page (checked with axe-core in chromium), bad values refused in one line naming
them, and the server's season clock starting the final as soon as the clock is moved past the last
deadline (its clock watch wakes it: its own tick is an hour here)."""
from __future__ import annotations

import re
import textwrap
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import test_site_live
from conftest import require
from course_helpers import GOOD_BOT, Server, arena, invite_links, make_course, signed_in, staff_signed_in
from test_course_final import qualified

from arena.cell import sandbox
from arena.course.background.clock_watch import ClockWatch
from arena.course.background.season_clock import SeasonClock
from arena.course.course import Course
from arena.course.db.accounts import Accounts
from arena.course.db.clock import CLOCK_NAME, ClockError, CourseClock
from arena.course.db.states import FinalState
from arena.course.season import final
from arena.course.season.archives import Refused
from arena.tournament.store import StoreError

DEADLINE = datetime(2026, 1, 10, 12, tzinfo=UTC)
"""The season's one deadline: in the past of the real clock, so that only a rehearsal clock set
before it keeps the course open."""
ROSTER = [("s001", "Ada Lovelace", "ada@example.org", "A"), ("s002", "Alan Turing", "alan@example.org", "B")]
SEASON = textwrap.dedent(f"""
    [[phases]]
    name = "interface"
    deadline = {DEADLINE.isoformat()}
    requires = {{ qualified = true }}
    """)
FINAL = textwrap.dedent("""
    [final]
    format = "round-robin"
    games = 2
    time = 0.05
    concurrency = 2
    """)


def wait_until(condition, timeout_s: float, what: str):
    deadline = time.monotonic() + timeout_s
    while not (found := condition()):
        assert time.monotonic() < deadline, f"{what}: not after {timeout_s} s"
        time.sleep(0.05)
    return found


def final_state(course: Course) -> FinalState | None:
    """The final's state; None while its runner is making its results database this moment."""
    try:
        return final.final_status(course).state
    except StoreError:
        return None


def course_dir(tmp_path: Path, *sections: str) -> Path:
    directory = make_course(tmp_path / "course", roster=ROSTER)
    (directory / "course.toml").write_text((directory / "course.toml").read_text() + "".join(sections))
    return directory


class FakeReal:
    """Real time as the test says: it moves when the test moves it."""

    def __init__(self, at: datetime) -> None:
        self.at = at

    def __call__(self) -> datetime:
        return self.at


def test_a_rehearsal_clock_is_set_runs_advances_and_ends_for_every_process(tmp_path):
    real = FakeReal(datetime(2026, 11, 30, 9, tzinfo=UTC))
    clock = CourseClock(tmp_path, real)
    other = CourseClock(tmp_path, real)  # another process's view of the same course
    assert clock.now() == real.at and clock.rehearsal() is None and clock.describe() == "real time"
    assert clock.warning() is None

    moment = datetime(2026, 3, 1, 12, tzinfo=UTC)
    clock.set(moment)
    assert clock.now() == other.now() == moment
    real.at += timedelta(seconds=5)  # it runs at the real pace from there
    assert other.now() == moment + timedelta(seconds=5)
    clock.advance(timedelta(hours=2))
    assert other.now() == moment + timedelta(hours=2, seconds=5)  # seen at once (the file changed)
    assert "the course's time is 2026-03-01T14:00:05Z, real time - 273d 19h" in other.describe()
    warning = other.warning()
    assert warning.startswith("WARNING: REHEARSAL CLOCK") and f"clock {tmp_path} real" in warning

    assert clock.real() and not (tmp_path / CLOCK_NAME).exists()
    assert other.now() == real.at and other.rehearsal() is None
    assert not clock.real()  # nothing left to end

    (tmp_path / CLOCK_NAME).write_text('{"offset_s": "soon"}')
    with pytest.raises(ClockError) as bad:
        other.now()
    assert str(bad.value).startswith(f"{tmp_path / CLOCK_NAME}: not a rehearsal clock arena wrote")
    assert "\n" not in str(bad.value)
    assert clock.real() and other.now() == real.at  # `real` removes a bad one too


def test_the_season_follows_the_course_clock(tmp_path):
    directory = course_dir(tmp_path, SEASON)
    course = Course(directory)
    with pytest.raises(Refused, match="uploads are frozen"):  # real time: long after the deadline
        course.submit("s001", "bot.py", GOOD_BOT.encode())
    early = DEADLINE - timedelta(hours=1)
    course.clock.set(early)
    sub = course.submit("s001", "bot.py", GOOD_BOT.encode())  # the course's time: an hour before
    created = datetime.fromisoformat(sub.created)
    assert early <= created < early + timedelta(minutes=1)
    assert final.final_deadline(course.config) == DEADLINE
    course.clock.advance(timedelta(hours=2))
    frozen = f"uploads are frozen: the last deadline was {DEADLINE.isoformat()}"
    with pytest.raises(Refused, match=re.escape(frozen)):
        Course(directory).submit("s002", "bot.py", GOOD_BOT.encode())  # another Course sees it too


def test_arena_course_clock_sets_advances_and_ends_it_and_status_says_so(tmp_path):
    directory = course_dir(tmp_path, SEASON)
    code, out, err = arena("course", "clock", str(directory))
    assert (code, out) == (0, "real time\n"), err
    code, out, err = arena("course", "clock", str(directory), "set", "2026-03-01T12:00:00+01:00")
    assert code == 0, err
    assert out.startswith("REHEARSAL CLOCK: the course's time is 2026-03-01T11:00:00Z")  # in UTC
    assert f"`arena course clock {directory} real` returns to real time" in out
    code, out, err = arena("course", "clock", str(directory), "advance", "1d 2h")
    assert code == 0 and "the course's time is 2026-03-02T13:00:0" in out, err
    code, out, err = arena("course", "status", str(directory))
    assert code == 0, err
    assert out.splitlines()[-1].startswith("WARNING: REHEARSAL CLOCK: the course's time is 2026-03-02T13:00")
    code, out, err = arena("course", "clock", str(directory), "real")
    assert code == 0 and out.startswith("real time again: the rehearsal clock is ended (it was"), err
    code, out, err = arena("course", "status", str(directory))
    assert code == 0 and "REHEARSAL" not in out, err
    code, out, err = arena("course", "clock", str(directory), "real")
    assert code == 0 and "no rehearsal clock was set" in out, err
    actions = [(e.actor, e.action) for e in reversed(Accounts(directory).audit_log())]
    assert actions == [("(terminal)", f"{done} the rehearsal clock") for done in ("set", "advanced", "ended")]


@pytest.mark.parametrize(("words", "said"), [
    (("set", "tomorrow"), "clock set 'tomorrow': not an ISO 8601 time: 'tomorrow'"),
    (("set", "2026-03-01T12:00:00"), "clock set '2026-03-01T12:00:00': 2026-03-01T12:00:00 has no zone"),
    (("set",), "clock set: needs a value, e.g. `arena course clock DIR set 2026-03-01T12:00:00Z`"),
    (("advance", "2x"), "clock advance '2x': must be a duration such as \"48h\""),
    (("advance", "0m"), "clock advance '0m': must be longer than nothing"),
    (("real", "5"), "clock real: takes no value, got '5'"),
])
def test_a_bad_clock_value_is_one_line_naming_it(tmp_path, words, said):
    directory = course_dir(tmp_path)
    code, out, err = arena("course", "clock", str(directory), *words)
    assert code == 2 and err.startswith(f"arena course: error: {said}"), err
    assert len(err.strip().splitlines()) == 1, err
    assert not (directory / CLOCK_NAME).exists()


def test_a_bad_clock_file_is_named_and_the_server_will_not_start_on_it(tmp_path):
    directory = course_dir(tmp_path)
    (directory / CLOCK_NAME).write_text("not json\n")
    code, out, err = arena("course", "status", str(directory))
    assert code == 0 and out.splitlines()[-1].startswith(f"WARNING: {directory / CLOCK_NAME}: not a"), err
    code, out, err = arena("course", "serve", str(directory), "--port", "0", "--unsafe-no-sandbox")
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"{directory / CLOCK_NAME}: not a rehearsal clock arena wrote" in err
    code, out, err = arena("course", "clock", str(directory), "real")  # the way out
    assert code == 0 and "real time again" in out and not (directory / CLOCK_NAME).exists(), err


@pytest.fixture(scope="module")
def axe_source() -> str:
    require(test_site_live.AXE.is_file(), f"needs axe-core at {test_site_live.AXE}")
    return test_site_live.AXE.read_text(encoding="utf-8")


def test_the_server_warns_and_every_page_shows_a_banner_while_rehearsing(tmp_path, browser, axe_source):
    directory = course_dir(tmp_path, SEASON)
    code, _, err = arena("course", "clock", str(directory), "set", "2026-01-10T09:00:00Z")
    assert code == 0, err
    server = Server(directory, "--unsafe-no-sandbox")  # no bot runs: the pages only
    try:
        said = server.errors()
        assert "arena course: WARNING: REHEARSAL CLOCK: the course's time is 2026-01-10T09:00:0" in said
        assert f"`arena course clock {directory} real` returns to real time" in said
        staff = staff_signed_in(directory, server.url)
        student = signed_in(server.url, invite_links(directory, server.url)["s001"])
        page = staff.get("/staff").text
        assert 'id="rehearsal-clock"' in page and "the course's time is 2026-01-10 09:00:0" in page
        assert f"<code>arena course clock {directory} real</code>" in page  # staff: how to end it
        page = student.get("/me/season").text
        assert 'id="rehearsal-clock"' in page and "2026-01-10 09:00:0" in page
        assert "arena course clock" not in page  # a student is told what, not how
        [phase] = student.get("/me/season.json").json()["phases"]
        assert phase["open"]  # on the course's time the phase is open (on real time it closed long ago)

        browser.get(server.url + "/login")
        for name, value in staff.cookies.items():
            browser.add_cookie({"name": name, "value": value, "path": "/"})
        browser.get(server.url + "/staff")
        banner = browser.find_element("id", "rehearsal-clock")
        assert banner.is_displayed() and "Rehearsal clock" in banner.text
        assert test_site_live.axe_violations(browser, axe_source) == []

        code, _, err = arena("course", "clock", str(directory), "advance", "1d")
        assert code == 0, err
        wait_until(lambda: "the course's time is 2026-01-11T09:00:0" in server.errors(), 30,
                   "the server did not say the clock moved")
        assert "2026-01-11 09:00:0" in staff.get("/staff").text
        code, _, err = arena("course", "clock", str(directory), "real")
        assert code == 0, err
        wait_until(lambda: "arena course: the rehearsal clock ended: real time" in server.errors(), 30,
                   "the server did not say the clock ended")
        assert 'id="rehearsal-clock"' not in staff.get("/staff").text
        assert 'id="rehearsal-clock"' not in student.get("/me/season").text
        assert not student.get("/me/season.json").json()["phases"][0]["open"]
    finally:
        assert server.stop() == 0, server.errors()


def test_the_season_clock_starts_the_final_once_the_clock_passes_the_last_deadline(tmp_path):
    reason = sandbox.unavailable_reason()
    require(reason is None, f"bots cannot be sandboxed here: {reason}")
    directory = course_dir(tmp_path, SEASON, FINAL)
    course = Course(directory)
    for student_id, _, _, _ in ROSTER:
        qualified(course, student_id, GOOD_BOT, DEADLINE - timedelta(days=1))
    assert final.due(course)  # on real time the deadline is long past
    course.clock.set(DEADLINE - timedelta(hours=1))
    assert not final.due(course)
    season = SeasonClock(course, tick_s=3600)  # left to itself it would look again in an hour
    watch = ClockWatch(course, [season.wake], interval_s=0.05)
    season.start()
    watch.start()
    try:
        wait_until(lambda: season.rounds >= 1, 30, "the season clock's first round")
        assert final.final_status(course).state == FinalState.NOT_STARTED
        code, out, err = arena("course", "clock", str(directory), "advance", "1h 1m")  # another process
        assert code == 0, err
        wait_until(lambda: final.under_way(course) or final_state(course) != FinalState.NOT_STARTED, 60,
                   "the final did not start after the clock passed the deadline")
        # the final starts inside the round, which is counted once it ends: wait for that count
        wait_until(lambda: season.rounds >= 2, 30, "the season clock's second round to end")
        assert (season.rounds, watch.changes) == (2, 1)  # woken once, by the watch
    finally:
        watch.stop()
        season.stop()
    course.final_thread.join(120)
    status = final.final_status(course)
    assert status.state == FinalState.FINISHED and status.played == status.planned == 2, status
    started = datetime.fromisoformat(status.started)
    assert DEADLINE <= started < DEADLINE + timedelta(minutes=5)  # the course's time, not the real one
