"""The course server as people use it: the real server (`arena course serve` on a free 127.0.0.1
port, a course made with `arena course init`), driven over HTTP with httpx and, for the student's
and the staff's pages, in Debian's chromium with Selenium.

One server for the module (Domineering 4x4, one qualification game, 1 s a move); a second, short
one for the late upload. With ARENA_SCREENSHOTS=1 the browser test writes its screenshots to
docs/img/ (docs/course.md shows them).
"""
from __future__ import annotations

import html
import io
import json
import re
import stat
import subprocess
import zipfile
from pathlib import Path

import pytest
import test_site
import test_site_live
from conftest import ENV, arena_cmd, require, run_arena
from course_helpers import (
    GOOD_BOT,
    PASSWORD,
    RAISED_LINE,
    RAISING_BOT,
    SLOW_START,
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
)

try:
    import httpx
except ImportError:  # the test extra
    httpx = None


@pytest.fixture(scope="module", autouse=True)
def needs_httpx() -> None:
    require(httpx is not None, "needs httpx (pip install -e '.[test]')")


shots = test_site.shots
AXE = test_site_live.AXE


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    return make_course(tmp_path_factory.mktemp("course") / "bots101")


@pytest.fixture(scope="module")
def server(course):
    server = Server(course)
    yield server
    assert server.stop() == 0, server.errors()
    assert server.lines[-1].strip() == "arena course serve: stopped"


@pytest.fixture(scope="module")
def links(course, server) -> dict[str, str]:
    return invite_links(course, server.url)


@pytest.fixture(scope="module")
def ada(server, links):
    """Student A (s001), signed in, with one qualified submission (its game played)."""
    client = signed_in(server.url, links["s001"])
    sid = submitted_id(upload(client, "first.py", GOOD_BOT))
    assert wait_final(client, sid)["status"] == "qualified"
    yield client
    client.close()


@pytest.fixture(scope="module")
def alan(server, links):
    """Student B (s002), signed in, with nothing submitted."""
    client = signed_in(server.url, links["s002"])
    yield client
    client.close()


BUILD = b"#!/bin/sh\necho ./bot\n"


def app_routes(course: Path) -> list[tuple[str, str]]:
    """(method, path template) of every route of the app that names a submission: the list the
    404 rule must hold for, read from the app itself so a new route is checked too."""
    from arena.course.course import Course
    from arena.course_web.app import create_app

    found = []
    for route in create_app(Course(course)).routes:
        path = getattr(route, "path", "")
        if "{id" in path:
            found += [(method, path) for method in sorted(route.methods or ()) if method != "HEAD"]
    return found


def fill(path: str, submission_id: int) -> str:
    return path.replace("{id:int}", str(submission_id)).replace("{n:int}", "1")


# --- the 404 rule ---

def test_student_b_gets_404_for_everything_of_a_by_every_url(course, server, ada, alan):
    a_id = statuses(ada)[0]["id"]
    routes = app_routes(course)
    assert {p for _, p in routes} >= {"/submissions/{id:int}", "/submissions/{id:int}/log",
                                      "/submissions/{id:int}/source", "/submissions/{id:int}/download",
                                      "/submissions/{id:int}/games/{n:int}", "/api/submissions/{id:int}"}
    token_b = arena("course", "token", str(course), "s002")[1].strip()
    api_b = {"Authorization": f"Bearer {token_b}"}
    nobody = 10 ** 6  # no such submission: B must not tell it apart from A's
    csrf_b = csrf_of(alan.get("/me").text)
    for method, path in routes:
        answers = []
        for sid in (a_id, nobody):
            url = fill(path, sid)
            if path.startswith("/api/"):
                answers.append(httpx.request(method, server.url + url, headers=api_b, timeout=30))
            else:
                answers.append(alan.request(method, url, data={"csrf": csrf_b} if method == "POST" else None))
        for answer in answers:
            assert answer.status_code == 404, f"{method} {path}: {answer.status_code}"
        assert answers[0].text == answers[1].text, f"{method} {path}: A's 404 differs from a missing id's"
        if method == "GET":  # A sees its own (the URL is real; A handed in no report: none to see)
            own = ada.get(fill(path, a_id)) if not path.startswith("/api/") else None
            expected = 404 if path.endswith("/report") else 200
            assert own is None or own.status_code == expected, f"{path}: {own.status_code}"
    assert "first.py" not in alan.get(f"/submissions/{a_id}/source").text
    assert statuses(alan) == []  # nothing of A's in B's list either


def test_staff_pages_are_404_for_a_student(alan):
    for path in ("/staff", "/staff/audit", "/staff/active-sources.zip", "/staff/students/s001"):
        assert alan.get(path).status_code == 404, path


# --- sessions and CSRF ---

def test_the_session_cookie_is_signed_httponly_and_samesite(server, links):
    client = httpx.Client(base_url=server.url, timeout=30)
    page = client.get("/login")
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert page.headers["referrer-policy"] == "no-referrer"  # a sign-in link's secret is in its path
    cookie = page.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=lax" in cookie and "path=/" in cookie
    assert client.get("/me").status_code == 303  # not signed in: to the sign-in page
    client.cookies.set("arena_course", "eyJ1aWQiOiAiczAwMSJ9.forged.signature")
    answer = client.get("/me")
    assert answer.status_code == 303 and answer.headers["location"].startswith("/login")


def test_a_form_without_its_csrf_token_is_refused(server, ada, links):
    before = len(statuses(ada))
    files = {"file": ("first.py", GOOD_BOT.encode(), "text/x-python")}
    for data in ({"protocol": "v1"}, {"protocol": "v1", "csrf": "a-guessed-token"}):
        answer = ada.post("/me/submit", data=data, files=files)
        assert answer.status_code == 403 and "CSRF" in answer.text
    assert len(statuses(ada)) == before  # nothing stored
    a_id = statuses(ada)[0]["id"]
    assert ada.post(f"/submissions/{a_id}/activate", data={}).status_code == 403
    assert ada.post("/logout", data={}).status_code == 403
    assert ada.get("/me").status_code == 200  # still signed in
    stranger = httpx.Client(base_url=server.url, timeout=30)
    answer = stranger.post("/login", data={"id": "s001", "password": PASSWORD})
    assert answer.status_code == 403


def test_five_wrong_passwords_hold_an_id_off_for_a_while(server, alan):
    from arena.course_web.app import MAX_FAILED_SIGN_INS

    client = httpx.Client(base_url=server.url, timeout=30)
    csrf = csrf_of(client.get("/login").text)
    for _ in range(MAX_FAILED_SIGN_INS):
        answer = client.post("/login", data={"csrf": csrf, "id": "s002", "password": "a wrong guess"})
        assert answer.status_code == 401
    answer = client.post("/login", data={"csrf": csrf, "id": "s002", "password": PASSWORD})
    assert answer.status_code == 429
    assert "Too many wrong passwords for s002: try again in 15 min" in answer.text
    assert alan.get("/me").status_code == 200  # a session already open stays open


def test_sign_in_with_the_password_and_a_used_link(server, links, ada):
    client = httpx.Client(base_url=server.url, timeout=30)
    assert client.get(links["s001"]).status_code == 404  # used by the `ada` fixture
    page = client.get("/login")
    wrong = client.post("/login", data={"csrf": csrf_of(page.text), "id": "s001", "password": "not it!!"})
    assert wrong.status_code == 401 and "Wrong id or password" in wrong.text
    right = client.post("/login", data={"csrf": csrf_of(wrong.text), "id": "s001", "password": PASSWORD,
                                        "next": "https://evil.example/"})
    assert right.status_code == 303 and right.headers["location"] == "/me"  # no open redirect
    assert "Ada Lovelace" in client.get("/me").text


def test_a_new_link_and_password_end_the_older_sessions(course, server):
    code, _, err = arena("course", "invite", str(course), "--url", server.url, "--only", "s003")
    assert code == 0, err
    first = signed_in(server.url, invite_links_file(course)["s003"])
    assert first.get("/me").status_code == 200
    code, _, err = arena("course", "invite", str(course), "--url", server.url, "--only", "s003")
    assert code == 0, err
    links = invite_links_file(course)
    assert list(links) == ["s003"]
    second = signed_in(server.url, links["s003"])
    assert second.get("/me").status_code == 200
    answer = first.get("/me")
    assert answer.status_code == 303 and answer.headers["location"].startswith("/login")
    code, _, err = arena("course", "invite", str(course), "--only", "nobody")
    assert code == 2 and "nobody not in the roster" in err


def invite_links_file(course: Path) -> dict[str, str]:
    import csv

    with open(course / "invites.csv", newline="") as f:
        return {row["id"]: row["link"] for row in csv.DictReader(f)}


# --- uploads ---

def test_an_earlier_qualified_submission_can_be_made_active(ada):
    sid = submitted_id(upload(ada, "first_again.py", GOOD_BOT))
    assert wait_final(ada, sid)["active"]
    older = statuses(ada)[1]
    assert older["status"] == "qualified" and not older["active"]
    answer = ada.post(f"/submissions/{older['id']}/activate", data={"csrf": csrf_of(ada.get("/me").text)})
    assert answer.status_code == 303
    assert [s["active"] for s in statuses(ada)][:2] == [False, True]


def test_a_text_protocol_bot_chosen_on_the_form_qualifies(ada):
    """The Python stdio kit's bot, uploaded with protocol = stdio."""
    kit = Path(__file__).resolve().parents[1] / "examples" / "kits" / "python-stdio" / "bot.py"
    sid = submitted_id(upload(ada, "bot.py", kit.read_text(), protocol="stdio"))
    shown = wait_final(ada, sid)
    assert (shown["status"], shown["kind"], shown["protocol"]) == ("qualified", "stdio", "stdio"), shown


def test_a_refused_upload_names_the_problem(ada):
    answer = upload(ada, "notes.txt", "these are not a bot")
    assert answer.status_code == 400 and "Refused:" in answer.text
    big = "#" * (5_000_000 + 70_000)
    answer = upload(ada, "big.py", big)
    assert answer.status_code == 413 and "too big" in answer.text


def test_unsafe_archives_are_refused_through_the_form_and_nothing_is_stored(ada):
    """Issue 24's refusals as a student meets them: a zip with a `../` path, one holding a symbolic
    link, and a zip bomb (a 200 kB upload unpacking past the limit) each get a 400 that names the
    problem, and none becomes a submission."""
    before = len(statuses(ada))
    link = zipfile.ZipInfo("secret")
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    cases = [
        ("up.zip", [("build.sh", BUILD), ("../x", b"x")], "unsafe path '../x' in the archive"),
        ("link.zip", [("build.sh", BUILD), (link, "/etc/passwd")], "'secret' in the archive is a symbolic"),
        ("bomb.zip", [("build.sh", BUILD), ("zeros", b"\0" * 101_000_000)], "unpacks to more than 100.0 MB"),
    ]
    for name, members, why in cases:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for member, data in members:
                archive.writestr(member, data)
        csrf = csrf_of(ada.get("/me").text)
        answer = ada.post("/me/submit", data={"csrf": csrf, "protocol": "v1"},
                          files={"file": (name, buffer.getvalue(), "application/zip")})
        shown = html.unescape(answer.text)
        assert answer.status_code == 400 and why in shown, (name, answer.status_code, shown[-800:])
    assert len(statuses(ada)) == before


def test_a_late_upload_is_refused(tmp_path):
    course = make_course(tmp_path / "closed", deadline="2020-01-31T23:59:00+01:00")
    server = Server(course, concurrency=1)
    try:
        client = signed_in(server.url, invite_links(course, server.url)["s001"])
        answer = upload(client, "first.py", GOOD_BOT)
        assert answer.status_code == 400
        assert "submissions are closed: the deadline was 2020-01-31T23:59:00+01:00" in answer.text
        assert statuses(client) == []
        token = arena("course", "token", str(course), "s001")[1].strip()
        bot = tmp_path / "first.py"
        bot.write_text(GOOD_BOT)
        code, _, err = arena("course", "submit", server.url, str(bot), "--token", token)
        assert code == 2 and "submissions are closed" in err
        assert len(err.strip().splitlines()) == 1
    finally:
        assert server.stop() == 0


# --- the terminal client and its token ---

def test_the_api_token_flow_and_submit_exit_codes(course, server, tmp_path):
    code, token, err = arena("course", "token", str(course), "s003")
    assert code == 0, err
    token = token.strip()
    assert token.startswith("arena_")
    good, bad = tmp_path / "first.py", tmp_path / "broken.py"
    good.write_text(GOOD_BOT)
    bad.write_text(RAISING_BOT)
    done = run_arena("course", "submit", server.url, str(good), "--token", token, "--wait", cwd=tmp_path)
    assert done.returncode == 0, done.stderr  # the real command, in a process of its own
    assert done.stdout.strip().splitlines()[-1] == "version 1: qualified"
    code, out, _ = arena("course", "submit", server.url, str(bad), "--wait",
                         env={"ARENA_COURSE_TOKEN": token})  # the token from the environment
    assert code == 1
    assert out.strip().splitlines()[-1] == f"version 2: failed (crashed): {RAISED_LINE}"
    code, _, err = arena("course", "submit", server.url, str(good), "--token", "arena_wrong")
    assert code == 2 and "401" in err and "no valid API token" in err
    answer = httpx.get(f"{server.url}/api/submissions/1", timeout=30)  # no token: JSON, not a page
    assert answer.status_code == 401 and "no valid API token" in answer.json()["error"]
    newer = arena("course", "token", str(course), "s003")[1].strip()
    code, _, err = arena("course", "submit", server.url, str(good), "--token", token)
    assert code == 2, "the old token still works after a new one was issued"
    code, _, err = arena("course", "submit", server.url, str(tmp_path / "missing.py"), "--token", newer)
    assert code == 2 and "cannot read" in err and "Traceback" not in err
    code, _, err = arena("course", "token", str(course), "nobody")
    assert code == 2 and "no student 'nobody'" in err


# --- staff ---

@pytest.fixture(scope="module")
def staff(course, server):
    client = staff_signed_in(course, server.url)
    yield client
    client.close()


def test_staff_see_every_row_requeue_disable_and_download_active_sources(course, staff, ada, alan):
    code, _, err = arena("course", "token", str(course), "s002")  # one of the actions the audit log shows
    assert code == 0, err
    page = staff.get("/staff")
    assert page.status_code == 200
    for sid in ("s001", "s002", "s003"):
        assert f'data-student="{sid}"' in page.text
    a_id = statuses(ada)[0]["id"]
    assert staff.get(f"/submissions/{a_id}/source").status_code == 200  # any source
    assert staff.get(f"/submissions/{a_id}/log").status_code == 200  # any log
    csrf = csrf_of(page.text)
    assert staff.post(f"/submissions/{a_id}/requeue", data={"csrf": csrf}).status_code == 303
    assert wait_final(ada, a_id)["status"] == "qualified"
    assert staff.post("/staff/students/s002/disable", data={"csrf": csrf, "disabled": "1"}).status_code == 303
    answer = upload(alan, "first.py", GOOD_BOT)
    assert answer.status_code == 400 and "disabled" in answer.text
    assert staff.post("/staff/students/s002/disable", data={"csrf": csrf, "disabled": "0"}).status_code == 303
    archive = staff.get("/staff/active-sources.zip")
    assert archive.status_code == 200 and archive.headers["content-type"] == "application/zip"
    names = zipfile.ZipFile(io.BytesIO(archive.content)).namelist()
    assert "s001/first.py" in names and not any(n.startswith("s002/") for n in names)
    audit = staff.get("/staff/audit").text
    for action in ("requeued", "disabled", "enabled", "downloaded all active sources", "invites written",
                   "staff added", "API token issued"):
        assert action in audit, action
    assert staff.post("/me/submit", data={"csrf": csrf}).status_code == 404  # staff do not submit


# --- the server itself ---

def test_the_server_refuses_to_run_without_a_sandbox(course, tmp_path):
    """No bubblewrap on the PATH: one line saying why, exit 2, nothing served."""
    empty = tmp_path / "bin"
    empty.mkdir()
    env = {**ENV, "PATH": str(empty)}
    done = subprocess.run(arena_cmd("course", "serve", str(course), "--port", "0"), env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.startswith("arena course: error: refusing to run students' bots unisolated: bwrap not "
                                  "installed; fix: install bubblewrap")
    assert len(done.stderr.strip().splitlines()) == 1 and done.stdout == ""



# --- in the browser ---

def _status_of_first_row(driver) -> str:
    return driver.execute_script("const row = document.querySelector('#submissions tr[data-id]');"
                                 "return row ? row.dataset.status : '';")


def _upload_in_browser(driver, path: Path) -> str:
    """Choose `path` in the upload form and send it; returns the status the new row shows at once."""
    from selenium.webdriver.common.by import By

    before = driver.current_url  # after an earlier upload: /me?submitted=<its id>
    driver.find_element(By.ID, "file").send_keys(str(path))
    driver.find_element(By.CSS_SELECTOR, "form.upload button[type=submit]").click()
    test_site.wait_for(lambda: "submitted=" in driver.current_url and driver.current_url != before,
                       what="the upload's answer")
    driver.execute_script("window.arenaMarker = 'the same page';")  # gone if the page reloads
    return _status_of_first_row(driver)


def _still_the_same_page(driver) -> bool:
    return driver.execute_script("return window.arenaMarker") == "the same page"


def test_a_student_signs_in_uploads_and_sees_its_bot_qualify_and_fail_in_place(
        server, links, staff, browser, shots, tmp_path):
    from selenium.webdriver.common.by import By

    driver = browser
    driver.get(server.url + links["s004"].split(server.url, 1)[1])
    assert "Katherine Johnson" in driver.find_element(By.TAG_NAME, "h1").text
    driver.find_element(By.ID, "password").send_keys(PASSWORD)
    driver.find_element(By.ID, "again").send_keys(PASSWORD)
    driver.find_element(By.CSS_SELECTOR, "form.card button[type=submit]").click()
    test_site.wait_for(lambda: driver.current_url.endswith("/me"), what="the student's page")
    assert "No submissions yet" in driver.find_element(By.ID, "submissions").text

    good, bad = tmp_path / "first.py", tmp_path / "broken.py"
    good.write_text(SLOW_START + GOOD_BOT)
    bad.write_text(SLOW_START + RAISING_BOT)
    assert _upload_in_browser(driver, good) in ("queued", "building", "testing")
    test_site.wait_for(lambda: _status_of_first_row(driver) == "qualified", timeout=90, what="qualified")
    assert _still_the_same_page(driver), "the page reloaded instead of updating the status in place"
    row = driver.find_element(By.CSS_SELECTOR, "#submissions tr[data-id]")
    assert "active" in row.find_element(By.CSS_SELECTOR, ".active-cell").text

    assert _upload_in_browser(driver, bad) in ("queued", "building", "testing")
    test_site.wait_for(lambda: _status_of_first_row(driver) == "failed", timeout=90, what="failed")
    assert _still_the_same_page(driver)
    row = driver.find_element(By.CSS_SELECTOR, "#submissions tr[data-id]")
    assert row.find_element(By.CSS_SELECTOR, ".last-line").text == RAISED_LINE
    assert "crashed" in row.find_element(By.CSS_SELECTOR, ".reason").text
    test_site.screenshot(driver, shots / "course-student.png")
    test_site.screenshot(driver, shots / "course-student-360.png", test_site.NARROW_PX)
    assert not test_site.errors_in_log(driver)

    failed_id, qualified_id = (r.get_attribute("data-id") for r in
                               driver.find_elements(By.CSS_SELECTOR, "#submissions tr[data-id]"))
    driver.get(f"{server.url}/submissions/{failed_id}")
    assert driver.find_element(By.ID, "status").text == "failed"
    assert driver.find_element(By.ID, "last-line").text == RAISED_LINE
    test_site.screenshot(driver, shots / "course-submission.png")
    driver.get(f"{server.url}/submissions/{qualified_id}/games/1")
    test_site.wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, "#board *"), what="the board")
    driver.find_element(By.ID, "last").click()
    assert "move" in driver.find_element(By.ID, "ply-label").text
    test_site.screenshot(driver, shots / "course-game.png")
    assert not test_site.errors_in_log(driver)

    # staff: the student's row and both of its submissions
    driver.find_element(By.CSS_SELECTOR, "form.signout button").click()
    test_site.wait_for(lambda: "/login" in driver.current_url, what="the sign-in page")
    driver.find_element(By.ID, "id").send_keys("teacher")
    driver.find_element(By.ID, "password").send_keys(PASSWORD)
    driver.find_element(By.CSS_SELECTOR, "form.card button[type=submit]").click()
    test_site.wait_for(lambda: driver.current_url.endswith("/staff"), what="the staff page")
    row = driver.find_element(By.CSS_SELECTOR, '#students tr[data-student="s004"]')
    assert "Katherine Johnson" in row.text and "failed" in row.text and "v2" in row.text
    test_site.screenshot(driver, shots / "course-staff.png")
    row.find_element(By.LINK_TEXT, "s004").click()
    test_site.wait_for(lambda: driver.current_url.endswith("/staff/students/s004"), what="the student's row")
    statuses_shown = [r.get_attribute("data-status") for r in
                      driver.find_elements(By.CSS_SELECTOR, "#submissions tr[data-id]")]
    assert statuses_shown == ["failed", "qualified"]
    test_site.screenshot(driver, shots / "course-staff-student.png")
    assert not test_site.errors_in_log(driver)


@pytest.fixture(scope="module")
def axe_source() -> str:
    require(AXE.is_file(), f"needs axe-core at {AXE} (npm install --prefix tests/.axe axe-core)")
    return AXE.read_text(encoding="utf-8")


def test_the_pages_have_no_axe_violations(server, staff, ada, browser, axe_source):
    """The staff's pages, then a student's (signed in in the browser with the student's cookie)."""
    a_id = statuses(ada)[0]["id"]
    found = {}
    browser.get(server.url + "/login")
    browser.delete_all_cookies()
    for name, value in staff.cookies.items():
        browser.add_cookie({"name": name, "value": value, "path": "/"})
    for path in ("/staff", "/staff/audit", f"/submissions/{a_id}", f"/submissions/{a_id}/games/1"):
        browser.get(server.url + path)
        found[path] = test_site_live.axe_violations(browser, axe_source)
    browser.delete_all_cookies()
    for name, value in ada.cookies.items():
        browser.add_cookie({"name": name, "value": value, "path": "/"})
    browser.get(server.url + "/me")
    found["/me"] = test_site_live.axe_violations(browser, axe_source)
    browser.delete_all_cookies()
    browser.get(server.url + "/login")
    found["/login"] = test_site_live.axe_violations(browser, axe_source)
    assert {path: v for path, v in found.items() if v} == {}


def test_one_guard_answers_for_every_page_by_who_asks(course, server, staff, alan):
    """Every route behind the sign-in guard (auth.py), read from the app: nobody signed in is sent
    to sign in (a page's JSON poll: 404), a student gets 404 on staff pages, staff on students'."""
    from arena.course.course import Course
    from arena.course_web.app import create_app

    guarded = [(method, route.path, route.endpoint.guard) for route in create_app(Course(course)).routes
               if hasattr(getattr(route, "endpoint", None), "guard")
               for method in sorted(route.methods or ()) if method != "HEAD"]
    paths = {path for _, path, _ in guarded}
    assert {"/me", "/me/submit", "/staff", "/staff/audit", "/staff/final/{action}", "/ladder"} <= paths
    assert all(path.startswith("/staff") or path == "/submissions/{id:int}/requeue"
               for _, path, (who, _) in guarded if who == "staff")
    nobody = httpx.Client(base_url=server.url, timeout=30)
    csrf = {"student": csrf_of(alan.get("/me").text), "staff": csrf_of(staff.get("/staff").text)}
    try:
        for method, path, (who, anonymous) in guarded:
            url = re.sub(r"\{[^}]+\}", "1", path).replace("/students/1", "/students/s001")
            answer = nobody.request(method, url)
            if anonymous == "404":
                assert answer.status_code == 404, f"{method} {path}: {answer.status_code}"
            else:
                assert answer.status_code == 303, f"{method} {path}: {answer.status_code}"
                assert answer.headers["location"].startswith("/login?next="), path
            for client, kind in ((alan, "student"), (staff, "staff")):
                if who in ("anyone", kind):
                    continue
                data = {"csrf": csrf[kind]} if method == "POST" else None
                answer = client.request(method, url, data=data)
                assert answer.status_code == 404, f"{kind}: {method} {path}: {answer.status_code}"
    finally:
        nobody.close()


def test_the_pages_script_is_handed_the_statuses(ada):
    """course.js compares against the statuses it is handed (data-states), as the enums say."""
    from arena.course.db.states import STATES_JSON

    page = ada.get("/me").text
    found = re.search(r'<script src="/static/course/course.js"[^>]* data-states="([^"]*)"', page)
    assert found and json.loads(html.unescape(found.group(1))) == json.loads(STATES_JSON)
    a_id = statuses(ada)[0]["id"]
    found = re.search(r'data-states="([^"]*)"', ada.get(f"/submissions/{a_id}").text)
    assert found and json.loads(html.unescape(found.group(1)))["finished"] == ["qualified", "failed"]
    assert statuses(ada)[0]["status"] in ("qualified", "failed")  # the JSON's strings, as before
