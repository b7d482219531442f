"""Staff's queue, a student's games and its defence sheet (issue 33) on the real server: a
submission seen in the queue (and its qualification match in the game player) until it is done,
the qualification games of two versions with replays that open, the defence sheet with the line
changed from v1 to v2, the game v2 lost on time and the report handed in, a student refused on
every one of these pages, and the sheet in Chromium (axe, printed to a PDF). The copying check's
pairs of one student (`similarity.pairs_of`) are those of the all-pairs check."""
from __future__ import annotations

import base64
import html
import re
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
import test_site
import test_site_live
from conftest import require
from course_helpers import (
    GOOD_BOT,
    Server,
    csrf_of,
    invite_links,
    make_course,
    signed_in,
    staff_signed_in,
    submitted_id,
    upload,
    wait_final,
    wait_phase_checks,
)

try:
    import httpx
except ImportError:  # the test extra
    httpx = None

shots = test_site.shots
AXE = test_site_live.AXE
PHASE = "first bot"
PHASES = f'''
[[phases]]
name = "{PHASE}"
deadline = 2099-01-01T00:00:00Z
report = true
requires = {{ score = {{ against = "random", at_least = 0.0, games = 2 }} }}
'''
SLOW_START = "import time\ntime.sleep(1)  # a slow start: the queue shows it while it is tested\n"
V1 = SLOW_START + GOOD_BOT
OLD_LINE = "        return self.legal[0]"
NEW_LINE = "        return self.legal[-1]"
SLEEP_LINE = "        time.sleep(5)  # thinks too long: it loses on time\n"
V2 = SLOW_START + GOOD_BOT.replace(OLD_LINE + "\n", SLEEP_LINE + NEW_LINE + "\n")
STAFF_PAGES = ("/staff/queue", "/staff/queue.json", "/staff/students/s001/games",
               "/staff/students/s001/defence", "/staff/students/s001/final-games/1")


@pytest.fixture(scope="module", autouse=True)
def needs_httpx() -> None:
    require(httpx is not None, "needs httpx (pip install -e '.[test]')")


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    directory = make_course(tmp_path_factory.mktemp("course") / "staffviews")
    (directory / "course.toml").write_text((directory / "course.toml").read_text() + PHASES)
    return directory


@pytest.fixture(scope="module")
def server(course):
    server = Server(course)
    yield server
    assert server.stop() == 0, server.errors()


@pytest.fixture(scope="module")
def links(course, server) -> dict[str, str]:
    return invite_links(course, server.url)


@pytest.fixture(scope="module")
def ada(server, links):
    client = signed_in(server.url, links["s001"])
    yield client
    client.close()


@pytest.fixture(scope="module")
def alan(server, links):
    client = signed_in(server.url, links["s002"])
    yield client
    client.close()


@pytest.fixture(scope="module")
def staff(course, server):
    client = staff_signed_in(course, server.url)
    yield client
    client.close()


def _queue(staff) -> dict:
    answer = staff.get("/staff/queue.json")
    assert answer.status_code == 200, answer.text
    return answer.json()


@pytest.fixture(scope="module")
def versions(ada, staff) -> tuple[int, int]:
    """Ada's v1 (qualified) and v2 (lost on time), the queue watched while v1 is tested."""
    v1 = submitted_id(upload(ada, "bot.py", V1))
    seen = _queue(staff)
    job = next((j for j in seen["jobs"] if j["submission_id"] == v1), None)
    assert job is not None, seen  # in the queue right after the upload (its bot starts slowly)
    assert job["status"] in ("queued", "building", "testing") and job["student_id"] == "s001"
    assert seen["counts"][job["status"]] >= 1 and seen["player_running"] is True
    page = staff.get("/staff/queue").text
    assert f'data-id="{v1}"' in page and '<meta http-equiv="refresh" content="5">' in page
    deadline = time.monotonic() + 60
    while True:  # its qualification match, in the game player while it is tested
        seen = _queue(staff)
        match = next((m for m in seen["running"] if m["match_id"] == f"qualify-{v1}"), None)
        if match is not None:
            break
        assert any(j["submission_id"] == v1 for j in seen["jobs"]), f"done before its match was seen: {seen}"
        assert time.monotonic() < deadline, seen
        time.sleep(0.05)
    assert match["kind"] == "qualification" and match["bots"] == ["s001-v1", "random"], match
    assert match["games"] == 1 and match["done"] == 0
    assert wait_final(ada, v1)["status"] == "qualified"
    seen = _queue(staff)
    assert all(j["submission_id"] != v1 for j in seen["jobs"]), seen  # gone once done
    assert all(m["match_id"] != f"qualify-{v1}" for m in seen["running"]), seen
    assert f'data-id="{v1}"' not in staff.get("/staff/queue").text
    v2 = submitted_id(upload(ada, "bot.py", V2))
    done = wait_final(ada, v2)
    assert (done["status"], done["reason"]) == ("failed", "timeout"), done
    return v1, v2


def test_the_queue_shows_a_submission_until_it_is_done_and_the_season_ahead(staff, versions):
    v1, v2 = versions
    seen = _queue(staff)
    assert seen["jobs"] == [] and seen["oldest_wait_s"] is None
    checks = {c["requirement"]: c for c in seen["checks"]}
    assert list(checks) == ["score:random:2"] and checks["score:random:2"]["phases"] == [PHASE]
    assert checks["score:random:2"]["pending"] + checks["score:random:2"]["checked"] == 1  # v1 qualified
    assert seen["checks_problem"] == "" and seen["ladder"] is None and seen["final_state"] == "not started"
    assert [e["what"] for e in seen["events"]][:1] == [f"phase {PHASE}: deadline"]
    assert seen["events"][0]["at"].startswith("2099-01-01") and seen["events"][0]["in_s"] > 0
    page = staff.get("/staff/queue").text
    assert "The queue is empty." in page and 'id="queue-events"' in page and "2099-01-01 00:00:00" in page
    assert 'href="/staff/queue"' in staff.get("/staff").text  # linked from the students' table


def test_the_games_page_lists_both_versions_with_replays_that_open(course, staff, versions):
    v1, v2 = versions
    wait_phase_checks(course)  # v1's score games, played by the server's background loop
    page = staff.get("/staff/students/s001/games")
    assert page.status_code == 200
    rows = re.findall(r'<tr data-kind="([^"]+)" data-game="([^"]+)" data-outcome="([^"]+)"'
                      r'(?: data-forfeit="([^"]+)")?>', page.text)
    newest_first = [("qualification", f"qualify-{v2}-g0"), ("qualification", f"qualify-{v1}-g0")]
    assert [(kind, game) for kind, game, _, _ in rows if kind == "qualification"] == newest_first
    assert sorted(game for kind, game, _, _ in rows if kind == "phase score") == \
        [f"phase-random-{v1}-g0", f"phase-random-{v1}-g1"]  # the phase's 2 games against random
    assert next(r for r in rows if r[1] == f"qualify-{v2}-g0")[2:] == ("loss", "timeout")
    assert staff.get(f"/phase-games/phase-random-{v1}-g0").status_code == 200
    assert "timeout by this bot" in page.text
    for sid, version in ((v1, 1), (v2, 2)):
        assert f'href="/submissions/{sid}/games/1"' in page.text
        replay = staff.get(f"/submissions/{sid}/games/1")
        assert replay.status_code == 200 and f"s001-v{version}" in replay.text and 'id="board"' in replay.text
    assert 'href="/staff/students/s001/games"' in staff.get("/staff/students/s001").text
    assert 'href="/staff/students/s001/games"' in staff.get("/staff").text
    assert staff.get("/staff/students/nobody/games").status_code == 404
    assert staff.get("/staff/students/s001/final-games/1").status_code == 404  # no final yet


def test_the_defence_sheet_shows_the_change_the_time_forfeit_and_the_report(course, ada, staff, versions):
    v1, v2 = versions
    csrf = csrf_of(ada.get("/me").text)
    handed = ada.post("/me/reports", data={"csrf": csrf, "phase": PHASE},
                      files={"report": ("report.md", b"# How my bot plays\n", "text/markdown")})
    assert handed.status_code == 303 and "handed=" in handed.headers["location"], handed.text
    page = staff.get("/staff/students/s001/defence")
    assert page.status_code == 200
    text = page.text
    assert '<section class="version-diff" id="diff-v2" data-old="1" data-new="2">' in text
    assert f'<span class="del">-{OLD_LINE}</span>' in text and f'<span class="add">+{NEW_LINE}</span>' in text
    assert '<span class="file">--- a/bot.py</span>' in text
    forfeits = text.split('id="sheet-forfeits"', 1)[1].split("</section>", 1)[0]
    assert f'data-game="qualify-{v2}-g0" data-outcome="loss" data-forfeit="timeout"' in forfeits
    assert f'href="/submissions/{v2}/games/1"' in forfeits
    wait_phase_checks(course)  # the server's background loop judges v1's score; the sheet plays nothing
    from arena.course.course import Course
    from arena.course.season.phases import phase_results

    judged = next(r for r in phase_results(Course(course)) if r.student_id == "s001" and r.phase == PHASE)
    text = staff.get("/staff/students/s001/defence").text
    assert f'data-phase="{PHASE}" data-passed="{"yes" if judged.passed else "no"}"' in text
    assert html.escape(judged.evidence, quote=False) in text
    report = re.search(r'<a href="(/reports/\d+)">report\.md</a>', text)
    assert report, text.split('id="sheet-reports"', 1)[1][:1000]
    assert staff.get(report.group(1)).content == b"# How my bot plays\n"
    assert 'id="sheet-pairs"' in text and "Print" in text
    assert 'href="/staff/students/s001/defence"' in staff.get("/staff/students/s001").text
    from arena.course.db.accounts import Accounts

    audit = Accounts(course).audit_log()
    assert any(e.action == "read a defence sheet" and e.target == "s001" for e in audit)


def test_a_student_and_nobody_are_refused_every_staff_view(server, alan, versions):
    for path in STAFF_PAGES:
        answer = alan.get(path)
        assert answer.status_code == 404, (path, answer.status_code)
        assert "s001-v" not in answer.text and "self.legal" not in answer.text
    nobody = httpx.Client(base_url=server.url, timeout=30)
    try:
        for path in STAFF_PAGES:
            answer = nobody.get(path)
            assert answer.status_code == 303 and answer.headers["location"].startswith("/login"), path
    finally:
        nobody.close()


def test_the_defence_sheet_in_chromium_passes_axe_and_prints(server, staff, versions, browser, shots):
    require(AXE.is_file(), f"needs axe-core at {AXE} (npm install --prefix tests/.axe axe-core)")
    from selenium.webdriver.common.by import By

    browser.get(server.url + "/login")
    browser.delete_all_cookies()
    for name, value in staff.cookies.items():
        browser.add_cookie({"name": name, "value": value, "path": "/"})
    pages = (("/staff/queue", "course-staff-queue"), ("/staff/students/s001/games", "course-staff-games"),
             ("/staff/students/s001/defence", "course-staff-defence"), ("/staff", ""))
    for path, name in pages:
        browser.get(server.url + path)
        if name:
            test_site.screenshot(browser, shots / f"{name}.png")
            test_site.screenshot(browser, shots / f"{name}-360.png", test_site.NARROW_PX)
        try:  # a phone's screen does not scroll sideways
            browser.set_window_size(test_site.NARROW_PX, test_site.HEIGHT_PX)
            width, inner = browser.execute_script("return [document.documentElement.scrollWidth, innerWidth]")
            assert width <= inner, f"{path}: {width} px wide in a {inner} px window"
        finally:
            browser.set_window_size(test_site.WIDE_PX, test_site.HEIGHT_PX)
    browser.get(server.url + "/staff/students/s001/defence")
    assert "Defence sheet" in browser.find_element(By.TAG_NAME, "h1").text
    assert test_site_live.axe_violations(browser, AXE.read_text(encoding="utf-8")) == []
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    try:
        hidden = browser.execute_script(
            "return [getComputedStyle(document.querySelector('header.top')).display,"
            " getComputedStyle(document.querySelector('nav.sheet-toc')).display,"
            " getComputedStyle(document.querySelector('pre.diff')).whiteSpace,"
            " getComputedStyle(document.querySelector('#sheet-versions')).breakBefore]")
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
    assert hidden == ["none", "none", "pre-wrap", "page"], hidden
    pdf = base64.b64decode(browser.execute_cdp_cmd("Page.printToPDF", {"printBackground": True})["data"])
    pages = len(re.findall(rb"/Type\s*/Page(?!s)", pdf))
    assert pdf.startswith(b"%PDF-") and pages >= 7, pages  # a page a section (seven of them)
    assert not test_site.errors_in_log(browser)


def test_one_students_pairs_are_those_of_the_all_pairs_check(tmp_path):
    """pairs_of compares one student with the others (n comparisons, not n^2) and finds the same
    pairs, with the same scores, as similar_pairs; asked again, it tokenizes no file again."""
    from test_course_similarity import _cluster_course

    from arena.course.course import Course
    from arena.course.season import similarity
    from arena.course.season.defence import defence_sheet
    from arena.similarity import fingerprints

    course = Course(_cluster_course(tmp_path), sandbox="off")
    try:
        every = similarity.similar_pairs(course)
        for sid in ("s1", "s5", "s6"):
            mine = similarity.pairs_of(course, sid)
            assert mine == [p for p in every if sid in (p.a, p.b)], sid
        assert {p.b for p in similarity.pairs_of(course, "s5")} >= {"published:bots/"}
        fingerprints._file.cache_clear()
        similarity.pairs_of(course, "s1")
        first = fingerprints._file.cache_info()
        similarity.pairs_of(course, "s1")
        again = fingerprints._file.cache_info()
        assert first.hits == 0 and again.misses == first.misses and again.hits >= 6  # its tokens kept
        sheet = defence_sheet(course, "s1")
        assert sheet is not None and {p.a for p in sheet.similarity} | {p.b for p in sheet.similarity} >= \
            {"s1", "s2", "s3", "s4"}
    finally:
        course.close()


def test_a_diff_names_binary_files_and_stays_bounded():
    from arena.course.season import defence

    old = {"bot.py": b"a = 1\n", "weights.bin": b"\0\1\2", "big.py": b"x = 1\n" * 10}
    new = {"bot.py": b"a = 2\n", "weights.bin": b"\0\1\3", "big.py": "".join(
        f"x = {n}\n" for n in range(3000)).encode(), "new.py": b"print('hi')\n"}
    d = defence.diff_versions(old, new, 1, 2)
    by_path = {f.path: f for f in d.files}
    assert by_path["weights.bin"].change == "binary" and not by_path["weights.bin"].lines
    assert "3 bytes → 3 bytes" in by_path["weights.bin"].note
    assert "-a = 1" in by_path["bot.py"].lines and "+a = 2" in by_path["bot.py"].lines
    assert len(by_path["big.py"].lines) == defence.DIFF_LINES_PER_FILE and by_path["big.py"].cut > 0
    assert by_path["new.py"].change == "added" and "+print('hi')" in by_path["new.py"].lines
    renamed = defence.diff_versions({"old.py": b"a = 1\n"}, {"bot.py": b"a = 2\n"}, 1, 2)
    assert renamed.files[0].lines[:2] == ("--- a/old.py", "+++ b/bot.py")


def test_the_ladders_backlog_and_a_students_ladder_games_are_read_without_writing(tmp_path):
    """The queue's ladder backlog (asked for, scheduled, owed) follows the scheduler without making
    a row, and a student's ladder games come with their ladder page's replay number."""

    from test_course_ladder import T0, activate, decided
    from test_course_ladder import make_course as ladder_course

    from arena.course.course import Course
    from arena.course.season.ladder import Ladder
    from arena.course.season.queue import LadderBacklog, queue_view
    from arena.course.season.student_games import student_games

    course = Course(ladder_course(tmp_path / "c", 2, "placement_games = 4\n"), sandbox="off")
    try:
        for sid in ("s1", "s2"):
            activate(course, sid, [sys.executable, "-m", "bots", "random"])
        assert queue_view(course, T0).ladder == LadderBacklog(queued=0, scheduled=0, oldest_s=None, owed=4,
                                                              entrants=5)  # 2 placement pairs each
        assert course.store.rows("SELECT COUNT(*) FROM ladder_players")[0][0] == 0  # nothing written
        ladder = Ladder(course)
        asked = ladder.request("s1", "s2", now=T0 + timedelta(minutes=5))
        backlog = queue_view(course, T0 + timedelta(minutes=10)).ladder
        assert (backlog.queued, backlog.oldest_s, backlog.scheduled) == (1, 300.0, 0)
        due = ladder.due(T0 + timedelta(minutes=10))
        backlog = queue_view(course, T0 + timedelta(minutes=10)).ladder
        assert (backlog.queued, backlog.scheduled) == (0, len(due))
        # what is owed is what the scheduler hands out next (the reference bots' share, now that the
        # students' placement games are planned), and nothing more once it has
        more = ladder.due(T0 + timedelta(minutes=10))
        assert backlog.owed == len(more) and queue_view(course, T0 + timedelta(minutes=10)).ladder.owed == 0
        due += more
        strength = {"s1-v1": 5, "s2-v1": 1, "random": 0, "greedy": 0, "alphabeta": 0}
        for spec in due:
            ladder.record(decided(spec, strength), T0 + timedelta(minutes=11))
        assert queue_view(course, T0 + timedelta(minutes=11)).ladder.scheduled == 0
        games = [g for g in student_games(course, "s1") if g.kind == "ladder"]
        assert len(games) == 2 * sum(1 for spec in due if "s1-v1" in [b.name for b in spec.bots]) >= 4
        mine = sorted((g.url, g.opponent, g.reference, g.outcome) for g in games if f"/{asked}?" in g.url)
        assert mine == [(f"/ladder/games/{asked}?n=1", "s2-v1", False, "win"),
                        (f"/ladder/games/{asked}?n=2", "s2-v1", False, "win")]
        assert {g.opponent for g in games if g.reference} == {"random", "greedy"}
        assert all(g.version == 1 and g.outcome == "win" for g in games)
    finally:
        course.close()
