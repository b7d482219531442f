"""Issue 32: the season as students live it, on the real server (`arena course serve` on a free
127.0.0.1 port) with a roster of matriculation numbers, pseudonyms on, a ladder, three phases (two
take a report) and a final: reports handed in for a phase on their own from the terminal
(`arena course submit --report`, `arena course report`) and from the season page, the student's
season page (deadlines with the extension, evidence, replays, the pseudonym, the final), no other
student's id in anything a student receives, the pages at 360 px, and the fixed messages.
Domineering 4x4, 1 s a move.
"""
from __future__ import annotations

import os
import re
import textwrap
from collections import deque
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
import test_site
from conftest import require
from course_helpers import (
    GOOD_BOT,
    Server,
    arena,
    csrf_of,
    invite_links,
    make_course,
    signed_in,
    staff_signed_in,
    statuses,
    submitted_id,
    upload,
    wait_final,
    wait_phase_checks,
)

try:
    import httpx
except ImportError:  # the test extra
    httpx = None

from arena.cell import sandbox

BUGGY = (Path(__file__).resolve().parent / "bots" / "buggy_legal.py").read_text()
WIRTH, LISKOV, DIJKSTRA, ALLEN = "4711093", "4711284", "4711517", "4711802"
ROSTER = [(WIRTH, "Niklaus Wirth", "wirth@example.org", "A"),
          (LISKOV, "Barbara Liskov", "liskov@example.org", "A"),
          (DIJKSTRA, "Edsger Dijkstra", "dijkstra@example.org", "B"),
          (ALLEN, "Frances Allen", "allen@example.org", "B")]
IDS = [r[0] for r in ROSTER]
T0 = datetime.now(UTC).replace(microsecond=0)
SYNTAX = "from bots.sdk import Bot\n\n\nclass WirthBot(Bot)\n    pass\n"


def season_toml() -> str:
    def at(hours: float) -> str:
        return (T0 + timedelta(hours=hours)).isoformat()

    return textwrap.dedent(f"""
        [[phases]]
        name = "interface"
        deadline = {at(1)}
        report = true
        requires = {{ qualified = true }}

        [[phases]]
        name = "move generation"
        deadline = {at(2)}
        report = true
        requires = {{ legal = {{ positions = 8, timeout_s = 5 }} }}

        [[phases]]
        name = "search"
        deadline = {at(3)}
        requires = {{ score = {{ against = "random", at_least = 0.0, games = 2 }} }}

        [extensions]
        {WIRTH} = "48h"

        [ladder]
        games_per_hour = 2
        placement_games = 2
        reference = ["random"]
        unrated_per_hour = 2
        poll_s = 1

        [final]
        format = "round-robin"
        games = 2

        [privacy]
        pseudonyms = true
        """)


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    require(httpx is not None, "needs httpx (pip install -e '.[test]')")
    reason = sandbox.unavailable_reason()
    require(reason is None, f"bots cannot be sandboxed here: {reason}")
    directory = make_course(tmp_path_factory.mktemp("season32") / "course", roster=ROSTER)
    (directory / "course.toml").write_text((directory / "course.toml").read_text() + season_toml())
    return directory


@pytest.fixture(scope="module")
def server(course):
    server = Server(course)
    yield server
    assert server.stop() == 0, server.errors()


@pytest.fixture(scope="module")
def clients(course, server):
    links = invite_links(course, server.url)
    found = {sid: signed_in(server.url, links[sid]) for sid in IDS}
    yield found
    for client in found.values():
        client.close()


def token(course: Path, sid: str) -> str:
    code, out, err = arena("course", "token", str(course), sid)
    assert code == 0, err
    return out.strip()


def terminal(*args: str) -> tuple[int, str, str]:
    """`arena ARGS...` in this process; an option the parser does not know is its exit code 2."""
    try:
        return arena(*args)
    except SystemExit as exc:  # argparse's own exit, for an option an older arena lacks
        return int(exc.code or 0), "", f"the parser stopped: exit {exc.code}"


def hand_in(client, phase: str, name: str, data: bytes):
    """A report through the season page's form."""
    csrf = csrf_of(client.get("/me").text)  # the session's token, the same on every page
    return client.post("/me/reports", data={"csrf": csrf, "phase": phase},
                       files={"report": (name, data, "text/markdown")})


@pytest.fixture(scope="module")
def played(course, server, clients, tmp_path_factory):
    """The students' season so far: what each handed in, how, and what the terminal said."""
    folder = tmp_path_factory.mktemp("files")
    (folder / "first.py").write_text(GOOD_BOT)
    (folder / "r.md").write_text("# Wirth: the interface\n")
    (folder / "notes.md").write_text("# Dijkstra: move generation\n")
    said = {}
    # Wirth, at the terminal: code and the interface's report in one command
    said["submit"] = terminal("course", "submit", server.url, str(folder / "first.py"),
                           "--token", token(course, WIRTH), "--report", str(folder / "r.md"),
                           "--phase", "interface", "--wait", "--timeout", "120")
    # Liskov, on the web: code, then a report from the season page, then a better one
    liskov = clients[LISKOV]
    l_id = submitted_id(upload(liskov, "first.py", GOOD_BOT))
    assert wait_final(liskov, l_id, 120)["status"] == "qualified"
    said["web first"] = hand_in(liskov, "interface", "draft.md", b"# draft\n")
    said["web second"] = hand_in(liskov, "interface", "final.md", b"# final\n")
    # Dijkstra: a bot whose move generator is wrong, and the move generation's report from the terminal
    d_token = token(course, DIJKSTRA)
    d_id = submitted_id(upload(clients[DIJKSTRA], "buggy.py", BUGGY))
    notes = str(folder / "notes.md")
    for key, phase in (("report", "move generation"), ("no such phase", "essay"), ("takes none", "search")):
        said[key] = terminal("course", "report", server.url, notes, "--phase", phase, "--token", d_token)
    # Allen: a syntax error first, then a bot with a report uploaded with the code (the old way)
    allen = clients[ALLEN]
    a_bad = submitted_id(upload(allen, "wirth.py", SYNTAX))
    said["syntax"] = wait_final(allen, a_bad, 120)
    csrf = csrf_of(allen.get("/me").text)
    a_good = submitted_id(allen.post("/me/submit", data={"csrf": csrf, "protocol": "v1"},
                                     files={"file": ("first.py", GOOD_BOT.encode(), "text/x-python"),
                                            "report": ("with-code.md", b"# with it\n", "text/markdown")}))
    assert wait_final(allen, a_good, 120)["status"] == "qualified"
    assert wait_final(clients[DIJKSTRA], d_id, 120)["status"] == "qualified"
    said["ids"] = {"syntax": a_bad, "allen": a_good, "liskov": l_id, "dijkstra": d_id}
    wait_phase_checks(course)  # the server's thread plays the score games, runs the move generation's
    return said


def results_after_the_deadlines(course: Path) -> dict:
    from arena.course.course import Course
    from arena.course.season.phases import phase_results

    c = Course(course)
    try:
        after = T0 + timedelta(hours=72)
        return {(r.phase, r.student_id): r for r in phase_results(c, after)}
    finally:
        c.close()


# --- reports: a phase's hand-in ---

def test_students_pass_a_report_phase_from_the_terminal_and_from_the_web(course, played, clients):
    code, out, err = played["submit"]
    assert code == 0, err
    assert "handed in r.md" in out and "'interface'" in out and "qualified" in out
    assert played["web first"].status_code == 303 and played["web second"].status_code == 303
    code, out, err = played["report"]
    assert code == 0 and "handed in notes.md" in out, err
    results = results_after_the_deadlines(course)
    wirth, liskov, allen = (results["interface", sid] for sid in (WIRTH, LISKOV, ALLEN))
    assert wirth.passed and wirth.report == "r.md", wirth.evidence
    assert liskov.passed and liskov.report == "final.md", liskov.evidence  # the latest replaced the draft
    assert allen.passed and allen.report == "with-code.md", allen.evidence  # a report kept with its upload
    assert not results["interface", DIJKSTRA].passed
    assert "no report handed in" in results["interface", DIJKSTRA].evidence
    # a report belongs to its phase: the interface's counts for no other
    assert results["move generation", DIJKSTRA].report == "notes.md"
    assert results["move generation", WIRTH].report is None
    assert results["move generation", ALLEN].report is None
    # handing in a report touched no code: one version each, the active one unchanged
    assert [s["version"] for s in statuses(clients[LISKOV])] == [1]
    assert [s["active"] for s in statuses(clients[LISKOV])] == [True]


def test_a_refused_report_is_one_line_naming_why(course, played):
    from arena.course.course import Course
    from arena.course.season import reports
    from arena.course.season.archives import Refused

    for key, words in (("no such phase", "no phase named 'essay'"),
                       ("takes none", "the phase 'search' takes no report")):
        code, out, err = played[key]
        assert code == 2 and words in err and len(err.strip().splitlines()) == 1, (key, err)
    c = Course(course)
    try:
        late = T0 + timedelta(hours=1, seconds=1)
        with pytest.raises(Refused, match=r"^the deadline of phase 'interface' has passed: it was "):
            reports.hand_in(c, LISKOV, "interface", "late.md", b"# late\n", now=late)
        with pytest.raises(Refused, match=r"must be a PDF or Markdown file"):
            reports.hand_in(c, LISKOV, "interface", "r.docx", b"x")
    finally:
        c.close()


# --- the student's season page ---

def test_the_season_page_shows_the_phases_the_extension_the_pseudonym_and_the_replays(course, played, clients,
                                                                                      server):
    from arena.course.course import Course
    from arena.course.season.privacy import pseudonym

    c = Course(course)
    names = {sid: pseudonym(c, sid) for sid in IDS}
    c.close()
    page = clients[WIRTH].get("/me/season")
    assert page.status_code == 200
    text = page.text
    assert names[WIRTH] in text and "with your extension" in text
    extended = (T0 + timedelta(hours=49)).astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
    assert extended in text  # the interface's deadline, his own
    assert "r.md" in text and "the one this phase judges" in text
    for phase in ("interface", "move generation", "search"):
        assert f'data-phase="{phase}"' in text
    data = clients[DIJKSTRA].get("/me/season.json").json()
    by = {p["name"]: p for p in data["phases"]}
    assert by["move generation"]["positions"], by["move generation"]["evidence"]  # where it is wrong
    assert by["move generation"]["report"]["filename"] == "notes.md"
    games = by["search"]["games"]
    assert len(games) >= 2 and all(g["url"].startswith("/phase-games/") for g in games)
    replay = clients[DIJKSTRA].get(games[-1]["url"])
    assert replay.status_code == 200 and 'id="game-data"' in replay.text
    assert clients[WIRTH].get(games[-1]["url"]).status_code == 404  # not his
    report_url = by["move generation"]["report"]["url"]
    assert clients[DIJKSTRA].get(report_url).content == b"# Dijkstra: move generation\n"
    assert clients[WIRTH].get(report_url).status_code == 404


@pytest.fixture(scope="module")
def final_played(course, played):
    code, out, err = arena("course", "final", str(course), "--start", "--concurrency", "2")
    assert code == 0, err
    return out


def test_the_final_shows_its_table_and_the_students_own_games(clients, final_played):
    data = clients[LISKOV].get("/me/season.json").json()
    final = data["final"]
    assert final["state"] == "finished" and final["tables"], final
    rows = final["tables"][0]["rows"]
    assert sum(1 for r in rows if r["own"]) == 1 and len(rows) == 4
    assert {r["name"] for r in rows if r["own"]} == {"Barbara Liskov"}
    assert final["games"] and all("Barbara Liskov" in g["players"] for g in final["games"])
    replay = clients[LISKOV].get(final["games"][0]["url"])
    assert replay.status_code == 200 and "Barbara Liskov" in replay.text


# --- no other student's id ---

def crawl(client, base: str, start: list[str], limit: int = 200) -> dict[str, str]:
    """Every page and JSON the client reaches by GET from `start`, following the links in them
    (same origin; not the sign-out): url -> body."""
    seen: dict[str, str] = {}
    todo = deque(start)
    while todo and len(seen) < limit:
        path = todo.popleft()
        if path in seen:
            continue
        answer = client.get(path)
        body = answer.content.decode("utf-8", "replace")
        seen[path] = body
        if "html" not in answer.headers.get("content-type", ""):
            continue
        for href in re.findall(r'(?:href|src|action)="([^"#]+)', body):
            target = urlsplit(urljoin(base + path, href.replace("&amp;", "&")))
            if target.netloc != urlsplit(base).netloc or target.path in ("/logout",):
                continue
            todo.append(target.path + (f"?{target.query}" if target.query else ""))
    return seen


def test_nothing_a_student_receives_names_another_student_by_id(course, server, clients, played,
                                                                final_played):
    test_site.wait_for(lambda: clients[LISKOV].get("/ladder").text.count("data-name=") >= 4, timeout=120,
                       what="the classmates on the ladder")
    for sid in (LISKOV, DIJKSTRA):
        client = clients[sid]
        pages = crawl(client, server.url, ["/me", "/me/season", "/me/season.json", "/me/submissions.json",
                                           "/ladder", "/api/submissions"])
        assert len(pages) >= 10, sorted(pages)
        api = httpx.get(server.url + "/api/submissions",
                        headers={"Authorization": f"Bearer {token(course, sid)}"})
        pages["/api/submissions (token)"] = api.text
        others = [o for o in IDS if o != sid]
        leaks = {(path, o) for path, body in pages.items() for o in others if o in body}
        assert leaks == set(), sorted(leaks)
        assert any("/ladder/games/" in p for p in pages) or "<option" in pages["/ladder"]


# --- messages ---

def test_the_messages_say_what_is_wrong_in_exact_terms(course, server, clients, played):
    syntax = played["syntax"]
    assert syntax["status"] == "failed" and syntax["reason"] == "compile error"
    assert syntax["last_line"] == "wirth.py, line 4: SyntaxError: expected ':'", syntax
    page = clients[ALLEN].get(f"/submissions/{played['ids']['syntax']}").text
    assert "None played yet" not in page and "failed before playing any (compile error)" in page
    big = httpx.post(server.url + "/api/submissions",
                     headers={"Authorization": f"Bearer {token(course, ALLEN)}"},
                     files={"file": ("big.py", b"#" * 6_000_000)}, data={"protocol": "v1"}, timeout=60)
    assert big.status_code == 400
    assert big.json()["error"] == "too big: 6,000,000 bytes, the limit is 5,000,000 bytes (5 MB)"


# --- in the browser, 360 and 1280 px ---

def as_student(driver, base: str, client) -> None:
    driver.get(base + "/login")
    driver.delete_all_cookies()
    for name, value in client.cookies.items():
        driver.add_cookie({"name": name, "value": value, "path": "/"})


def off_screen(driver, selector: str) -> list[str]:
    """The elements matching `selector` whose right edge is past the window's width."""
    return driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])].filter(e => e.getClientRects().length && "
        "e.getBoundingClientRect().right > window.innerWidth + 1).map(e => e.outerHTML.slice(0, 80));",
        selector)


def test_the_pages_are_readable_at_360_and_1280_px(server, clients, played, final_played, browser, tmp_path):
    """Also writes docs/img/course-season.png and course-season-360.png with ARENA_SCREENSHOTS=1."""
    from selenium.webdriver.common.by import By

    shots = test_site.ROOT / "docs" / "img" if os.environ.get("ARENA_SCREENSHOTS") == "1" else tmp_path

    try:
        for width in (test_site.NARROW_PX, test_site.WIDE_PX):
            browser.set_window_size(width, test_site.HEIGHT_PX)
            as_student(browser, server.url, clients[DIJKSTRA])
            browser.get(server.url + "/me")
            assert off_screen(browser, "#submissions td, #protocol, form.upload button") == [], width
            browser.get(server.url + "/me/season")
            test_site.wait_for(lambda: browser.find_elements(By.CSS_SELECTOR,
                                                             "svg.position[data-drawn=yes] *"),
                               what="the positions drawn as boards")
            assert off_screen(browser, "section.phase dd, svg.position, form.report-form button") == [], width
            width_now, inner = browser.execute_script(
                "return [document.documentElement.scrollWidth, window.innerWidth]")
            assert width_now <= inner, f"/me/season at {width} px scrolls sideways"
            name = "course-season.png" if width == test_site.WIDE_PX else "course-season-360.png"
            test_site.screenshot(browser, shots / name, width)
    finally:
        browser.set_window_size(test_site.WIDE_PX, test_site.HEIGHT_PX)
    assert not test_site.errors_in_log(browser)


def test_a_ladder_replay_opens_after_the_pairs_opening(server, clients, played, browser):
    from selenium.webdriver.common.by import By

    client = clients[LISKOV]
    test_site.wait_for(lambda: re.search(r'href="(/ladder/games/\d+)"', client.get("/ladder").text),
                       timeout=120, what="a ladder game of Liskov's")
    path = re.search(r'href="(/ladder/games/\d+)"', client.get("/ladder").text).group(1)
    test_site.wait_for(lambda: 'id="game-data"' in client.get(path).text, timeout=120, what="the game played")
    as_student(browser, server.url, client)
    browser.get(server.url + path)
    test_site.wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "#board *"), what="the board")
    assert browser.find_element(By.ID, "board").get_attribute("data-ply") == "2"
    assert browser.find_element(By.ID, "ply-label").text.startswith("after the opening (2 moves)")


def test_staff_open_phase_games_as_replays_and_read_their_tables_at_360_px(course, server, played,
                                                                           final_played, browser):
    from selenium.webdriver.common.by import By

    staff = staff_signed_in(course, server.url)
    try:
        page = staff.get("/staff/phases").text
        games = re.findall(r'href="(/phase-games/[^"]+)"', page)
        assert games, "no phase game links on the staff's phases page"
        assert staff.get(games[0]).status_code == 200 and 'id="game-data"' in staff.get(games[0]).text
        as_student(browser, server.url, staff)
        browser.set_window_size(test_site.NARROW_PX, test_site.HEIGHT_PX)
        for path, cells in (("/staff", "#students td"),
                            ("/staff/grades", "#grades td.bonus, #grades td.penalty")):
            browser.get(server.url + path)
            assert browser.find_elements(By.CSS_SELECTOR, cells), path
            assert off_screen(browser, cells) == [], path
    finally:
        browser.set_window_size(test_site.WIDE_PX, test_site.HEIGHT_PX)
        staff.close()
