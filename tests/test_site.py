"""The published website in a real browser (headless Debian chromium driven by Selenium).

One tiny tournament per game (random against greedy, 2 games; Domineering with a third bot that
crashes at its third turn, for forfeits), played
for real by the referee, published with `arena publish`; the pages are opened from file:// and,
for `arena serve`, over HTTP while more games are played. With ARENA_SCREENSHOTS=1 the tests write
their screenshots to docs/img/ (the README shows them); without it they take none (a full-page
screenshot is three relayouts and a PNG: CPU the run's checks do not use).
"""
from __future__ import annotations

import json
import os
import re
import string
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import rules
from arena.tournament import config, runner
from arena.tournament.store import DB_NAME, Store

ROOT = Path(__file__).resolve().parents[1]
BROKEN = ROOT / "tests" / "bots" / "broken.py"
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
CHROME_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--in-process-gpu", "--disable-software-rasterizer"]
"""Headless, and as light as it can be made: no GPU process (its compositing in the browser's,
no SwiftShader): test_site_viewer and test_site_live took 38 CPU s of Chromium, 42 with one."""
WIDE_PX, NARROW_PX, HEIGHT_PX = 1280, 360, 900
WAIT_S = 30.0

GAMES = {"freedom": "size = 6", "domineering": "rows = 5\ncols = 5", "morris": "max_turns = 60",
         "santorini": "", "fanorona": "rows = 3\ncols = 5"}
LETTERS = string.ascii_uppercase


def tournament_file(directory: Path, game: str, params: str, games: int = 2, bots=None) -> Path:
    bots = bots or [("random", "random"), ("greedy", "greedy")]
    text = (f'name = "{game}"\ngame = "{game}"\ntime = "2"\ngames_per_pairing = {games}\nseed = 3\n'
            f'title = "{game.capitalize()} <cup>"\ndescription = "A tiny {game} tournament for the tests."\n'
            f"[params]\n{params}\n")
    text += "".join(f'[[bots]]\nname = "{n}"\ncommand = "{c}"\n' for n, c in bots)
    path = directory / f"{game}.toml"
    path.write_text(text)
    return path


def play(path: Path, results: Path) -> None:
    """Play the tournament's missing games for real (the referee in threads, the bots as processes)."""
    with ThreadPoolExecutor(2) as pool:
        summary = runner.run(config.load(path), results, executor=pool, progress=None)
    assert not summary.failures and summary.missing == 0, summary.failures


def arena(capsys, *args: str) -> tuple[int, str, str]:
    """`arena ARGS...` run in this process (the same parser and commands as the installed script)."""
    from arena.cli import main

    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def sites(tmp_path_factory) -> dict[str, Path]:
    """game -> its published site directory; each tournament played and published for real."""
    from arena.cli import main

    base = tmp_path_factory.mktemp("site")
    out = {}
    for game, params in GAMES.items():
        third = [("crasher", f"{sys.executable} {BROKEN} crash")] if game == "domineering" else []
        bots = [("random", "random"), ("greedy", "greedy"), *third]
        path = tournament_file(base, game, params, bots=bots)
        play(path, base / "results")
        assert main(["publish", str(path), "--results", str(base / "results")]) == 0
        out[game] = base / "results" / game / "site"
    return out


SCREENSHOTS = os.environ.get("ARENA_SCREENSHOTS") == "1"
"""Whether the browser tests take their screenshots (for docs/img/)."""


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    if SCREENSHOTS:
        path = ROOT / "docs" / "img"
        path.mkdir(parents=True, exist_ok=True)
        return path
    return tmp_path_factory.mktemp("screenshots")


def screenshot(driver, path: Path, width: int = WIDE_PX) -> None:
    """A full-page screenshot at `width`, with ARENA_SCREENSHOTS=1 only; the window goes back to its
    usual size after."""
    if not SCREENSHOTS:
        return
    driver.set_window_size(width, HEIGHT_PX)
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(width, min(max(height + 140, 400), 2400))
    time.sleep(0.2)
    driver.save_screenshot(str(path))
    driver.set_window_size(WIDE_PX, HEIGHT_PX)


def errors_in_log(driver) -> list[dict]:
    return [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]


def url(path: Path, fragment: str = "") -> str:
    return path.resolve().as_uri() + fragment


def wait_for(condition, timeout: float = WAIT_S, what: str = "the page"):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def stored(site: Path):
    with Store(site.parent / DB_NAME, create=False) as store:
        return store.games()


# --- what a wire state says is on the board, in the pages' terms (data-piece, data-at) ---

def expected_pieces(wire: dict) -> list[tuple[str, str]]:
    game = wire["game"]
    out = []
    if game in ("freedom", "fanorona"):
        for r, row in enumerate(wire["board"]):
            out += [(ch, f"{LETTERS[c]}{r + 1}") for c, ch in enumerate(row) if ch in "WB"]
    elif game == "morris":
        from rules.morris import POINTS

        out = [(ch, POINTS[i]) for i, ch in enumerate(wire["board"]) if ch in "WB"]
    elif game == "domineering":  # X runs split bottom-up in each column, O runs left to right in each row
        board = wire["board"]
        for c in range(len(board[0])):
            r = 0
            while r < len(board):
                if board[r][c] == "X":
                    out.append(("X", f"{r + 1}{LETTERS[c]}"))
                    r += 1
                r += 1
        for r, row in enumerate(board):
            c = 0
            while c < len(row):
                if row[c] == "O":
                    out.append(("O", f"{r + 1}{LETTERS[c]}"))
                    c += 1
                c += 1
    elif game == "santorini":
        for r, row in enumerate(wire["levels"]):
            out += [("dome" if level == 4 else f"level{level}", f"{'ABCDE'[r]}{c + 1}")
                    for c, level in enumerate(row) if level]
        out += [(f"worker{seat}", square)
                for seat, squares in enumerate(wire["workers"]) for square in squares]
    return sorted(out)


def shown_pieces(driver) -> list[tuple[str, str]]:
    pairs = driver.execute_script(
        "return Array.from(document.querySelectorAll('#board .piece'))"
        ".map(e => [e.getAttribute('data-piece'), e.getAttribute('data-at')]);")
    return sorted(tuple(p) for p in pairs)


def wire_states(record) -> list[dict]:
    state = rules.load(record.game, **record.params).start()
    states = [state.to_wire()]
    for move in record.move_list():
        state = state.play(move)
        states.append(state.to_wire())
    return states


# --- the files ---

def test_site_holds_pages_only_and_needs_no_network(sites):
    for game, site in sites.items():
        files = {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()}
        assert {"index.html", "games.html", "static/site.css", f"static/boards/{game}.js"} <= files
        assert not any(f.endswith((".sqlite", ".lock", ".tmp")) or "sqlite" in f for f in files), files
        games = stored(site)
        for g in games:
            assert f"games/{g.record.game_id}.html" in files and f"records/{g.record.game_id}.json" in files
            assert f"records/{g.record.game_id}.txt" in files
        for page in site.rglob("*.html"):
            text = page.read_text()
            assert not re.search(r"""(src|href)=["']?(https?:)?//""", text), f"{page} loads from the network"
        assert (site.parent / "standings.md").is_file()  # publish's other files stay where they were


def test_index_loads_without_errors_and_says_what_it_is(sites, browser, shots):
    site = sites["domineering"]
    browser.get(url(site / "index.html"))
    assert errors_in_log(browser) == []
    body = browser.find_element("tag name", "body").text
    assert "Domineering <cup>" in browser.title  # the file's title, escaped, not markup
    assert "A tiny domineering tournament for the tests." in body
    assert "2 s a move" in body and "round robin" in body and "6 of 6 played" in body
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d", body)  # a date
    assert "Sonneborn-Berger" in body and "Elo" in body
    assert "Isolation" in body
    assert "crashed: 4" in browser.find_element("id", "forfeits").text  # forfeits by reason
    screenshot(browser, shots / "site-index.png")
    screenshot(browser, shots / "site-index-360.png", NARROW_PX)


def test_sorting_by_elo_reorders_rows(sites, browser):
    browser.get(url(sites["domineering"] / "index.html"))
    table = browser.find_element("id", "standings")

    keys = [h.get_attribute("data-key") for h in table.find_elements("css selector", "thead th")]

    def bots_and_elo():
        rows = table.find_elements("css selector", "tbody tr")
        return [(r.get_attribute("data-bot"),
                 float(r.find_elements("css selector", "td")[keys.index("elo")].get_attribute("data-sort")))
                for r in rows]

    before = bots_and_elo()
    elo_button = table.find_element("css selector", "th[data-key=elo] button")
    elo_button.click()
    down = bots_and_elo()
    assert [e for _, e in down] == sorted((e for _, e in before), reverse=True)
    elo_button.click()
    up = bots_and_elo()
    assert [e for _, e in up] == sorted(e for _, e in before)
    assert [b for b, _ in up] != [b for b, _ in down]
    assert up[-1] == down[0] and up[0] != down[0]
    rank_button = table.find_element("css selector", "th[data-key=rank] button")
    rank_button.click()  # a rank's first click: 1 first
    assert [b for b, _ in bots_and_elo()] == [b for b, _ in before]
    table.find_element("css selector", "th[data-key=bot] button").click()  # a name's first click: A to Z
    names = [b for b, _ in bots_and_elo()]
    assert names == sorted(names, key=str.lower) or names == sorted(names), names
    assert table.find_element("css selector", "th[data-key=bot]").get_attribute("aria-sort") == "ascending"


def test_a_crosstable_cell_leads_to_that_pairings_games(sites, browser):
    site = sites["domineering"]
    browser.get(url(site / "index.html"))
    link = browser.find_element("css selector", "#crosstable a[data-pairing]")
    pairing = link.get_attribute("data-pairing")
    link.click()
    wait_for(lambda: browser.current_url.split("#")[0].endswith("games.html"), what="games.html")
    rows = browser.find_elements("css selector", "#games tbody tr")
    shown = [r.get_attribute("data-game") for r in rows if r.is_displayed()]
    expected = sorted(g.record.game_id for g in stored(site) if g.pairing == pairing)
    assert sorted(shown) == expected and len(expected) == 2
    assert len(rows) == 6  # the others are only hidden
    assert errors_in_log(browser) == []


def test_games_filter_by_bot_and_result(sites, browser):
    site = sites["domineering"]
    browser.get(url(site / "games.html"))
    from selenium.webdriver.support.ui import Select

    browser.find_element("id", "filter-bot").send_keys("greedy")  # a searchable box (test_site_live.py)
    shown = [r.get_attribute("data-game") for r in browser.find_elements("css selector", "#games tbody tr")
             if r.is_displayed()]
    assert sorted(shown) == sorted(g.record.game_id for g in stored(site) if "greedy" in g.record.players)
    Select(browser.find_element("id", "filter-result")).select_by_value("1/2-1/2")
    assert not any(r.is_displayed() for r in browser.find_elements("css selector", "#games tbody tr"))


@pytest.mark.parametrize("game", list(GAMES))
def test_a_game_page_steps_to_the_last_ply_and_shows_the_final_position(sites, browser, shots, game):
    site = sites[game]
    record = max((g.record for g in stored(site)), key=lambda r: len(r.moves))
    states = wire_states(record)
    last = len(states) - 1
    browser.get(url(site / "games" / f"{record.game_id}.html"))
    board = browser.find_element("id", "board")
    assert board.get_attribute("data-ply") == "0"
    assert shown_pieces(browser) == expected_pieces(states[0])
    browser.find_element("id", "next").click()
    assert board.get_attribute("data-ply") == "1"
    assert shown_pieces(browser) == expected_pieces(states[1])
    browser.find_element("id", "last").click()
    assert board.get_attribute("data-ply") == str(last)
    assert shown_pieces(browser) == expected_pieces(states[-1])
    assert browser.find_elements("css selector", "#board .mark")  # the last move is marked
    assert record.reason in browser.find_element("id", "move-info").text
    browser.find_element("id", "prev").click()
    assert board.get_attribute("data-ply") == str(last - 1)
    assert shown_pieces(browser) == expected_pieces(states[-2])
    browser.find_element("tag name", "body").send_keys("\ue010")  # End
    assert board.get_attribute("data-ply") == str(last)
    assert errors_in_log(browser) == []
    screenshot(browser, shots / f"site-game-{game}.png")


@pytest.mark.parametrize("game", ["morris", "santorini"])
def test_ply_in_the_address_opens_that_position(sites, browser, game):
    site = sites[game]
    record = max((g.record for g in stored(site)), key=lambda r: len(r.moves))
    states = wire_states(record)
    n = min(5, len(states) - 1)
    browser.get("about:blank")
    browser.get(url(site / "games" / f"{record.game_id}.html", f"#ply={n}"))
    board = browser.find_element("id", "board")
    assert board.get_attribute("data-ply") == str(n)
    assert shown_pieces(browser) == expected_pieces(states[n])
    assert browser.find_element("id", "slider").get_attribute("value") == str(n)


def test_bot_page_shows_results_time_and_games(sites, browser, shots):
    site = sites["domineering"]
    browser.get(url(site / "bots" / "greedy.html"))
    body = browser.find_element("tag name", "body").text
    assert "Against each opponent" in body and "random" in body and "crasher" in body
    assert "limit" in browser.find_element("id", "time-chart").get_attribute("innerHTML")
    links = browser.find_elements("css selector", "#bot-games td.game a")
    assert len(links) == 4
    links[0].click()
    wait_for(lambda: "/games/" in browser.current_url, what="a game page")
    assert errors_in_log(browser) == []
    browser.get(url(site / "bots" / "greedy.html"))
    screenshot(browser, shots / "site-bot.png")
    # a forfeit is shown with the referee's detail, on the bot's page and on the game's
    forfeited = next(g.record for g in stored(site) if g.record.forfeit)
    detail = forfeited.forfeit["detail"]
    ply = int(re.search(r"ply (\d+)", detail).group(1))
    shown = detail.replace(f"ply {ply}", f"move {ply + 1}")  # in the viewer's move numbers
    browser.get(url(site / "bots" / "crasher.html"))
    listed = browser.find_element("id", "forfeits")
    assert detail and shown in listed.text
    items = listed.find_elements("tag name", "li")  # 4 alike crashes, listed once per kind with a count
    games = [a.text for li in items for a in li.find_elements("tag name", "a")]
    assert len(items) < 4 and sorted(games) == sorted(g.record.game_id for g in stored(site)
                                                       if g.record.forfeit and "crasher" in g.record.players)
    assert "× " in listed.text
    browser.get(url(site / "games" / f"{forfeited.game_id}.html"))
    assert shown in browser.find_element("tag name", "body").text
    assert errors_in_log(browser) == []


def test_narrow_screens_do_not_scroll_sideways(sites, browser, shots):
    site = sites["santorini"]
    record = stored(site)[0].record
    try:
        browser.set_window_size(NARROW_PX, HEIGHT_PX)
        dom = sites["domineering"]
        for page in (dom / "index.html", dom / "games.html", dom / "bots" / "greedy.html",
                     site / "games" / f"{record.game_id}.html"):
            browser.get(url(page))
            width, inner = browser.execute_script(
                "return [document.documentElement.scrollWidth, window.innerWidth]")
            assert width <= inner, f"{page.name}: {width} px wide in a {inner} px window"
    finally:
        browser.set_window_size(WIDE_PX, HEIGHT_PX)
    screenshot(browser, shots / "site-game-santorini-360.png", NARROW_PX)


def test_serve_shows_a_game_finished_after_the_page_was_opened(tmp_path, browser):
    path = tournament_file(tmp_path, "domineering", "rows = 4\ncols = 4", games=2)
    play(path, tmp_path / "results")
    command = [sys.executable, "-m", "arena", "serve", path.name, "--port", "0", "--poll", "0.1"]
    server = subprocess.Popen(command, cwd=tmp_path, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    try:
        line = server.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert match, (line, server.stderr.read() if server.poll() is not None else "")
        base = match.group(0)
        browser.get(base + "games.html")
        assert len(browser.find_elements("css selector", "#games tbody tr")) == 2
        browser.get(base + "index.html")
        assert "2 of 2 played" in browser.find_element("id", "played").text
        browser.get(base + "games.html")
        # two more games a pairing, played for real while the page is open
        path.write_text(path.read_text().replace("games_per_pairing = 2", "games_per_pairing = 4"))
        play(path, tmp_path / "results")
        new = {g.record.game_id for g in stored(tmp_path / "results" / "domineering" / "site")}
        assert len(new) == 4
        # read in one script: the page redraws its rows as it polls, and a row found a moment
        # earlier may be gone (a stale element) by the time its attribute is asked for
        shown_games = "return Array.from(document.querySelectorAll('#games tbody tr'), (r) => r.dataset.game)"
        wait_for(lambda: len(browser.execute_script(shown_games)) == 4, what="the new games on the open page")
        assert set(browser.execute_script(shown_games)) == new
        browser.get(base + "index.html")
        assert "4 of 4 played" in browser.find_element("id", "played").text
        game = sorted(new)[-1]
        browser.get(base + f"games/{game}.html#ply=1")
        assert browser.find_element("id", "board").get_attribute("data-ply") == "1"
        assert errors_in_log(browser) == []
        site = tmp_path / "results" / "domineering" / "site"
        assert not list(site.rglob("*sqlite*")) and not (site / "live.json").exists()
    finally:
        server.terminate()
        server.wait(timeout=10)
        server.stdout.close()
        server.stderr.close()


def test_serve_before_the_first_game_shows_the_bots_and_no_games(tmp_path):
    """docs/site.md: T may be the tournament file before its first game (it answered 404 and logged a
    FileNotFoundError every second: the results directory did not exist yet)."""
    import httpx

    path = tournament_file(tmp_path, "domineering", "rows = 4\ncols = 4", games=2)
    command = [sys.executable, "-m", "arena", "serve", path.name, "--port", "0", "--poll", "0.1"]
    server = subprocess.Popen(command, cwd=tmp_path, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    try:
        line = server.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert match, (line, server.stderr.read() if server.poll() is not None else "")
        index = httpx.get(match.group(0), timeout=10)
        assert index.status_code == 200
        bots = re.findall(r'data-bot="([^"]+)"', index.text)
        assert bots and set(bots) <= {b for b in re.findall(r'name = "([^"]+)"', path.read_text())}
        games = httpx.get(match.group(0) + "games.html", timeout=10)
        assert games.status_code == 200 and "data-game=" not in games.text
        live = httpx.get(match.group(0) + "live.json", timeout=10).json()
        assert live == {"version": 0, "playing": []}
        assert '"poll_ms": 150' in games.text  # 1.5 times --poll, for the page
        time.sleep(0.5)  # the watcher looks again every 0.1 s: it must not complain
    finally:
        server.terminate()
        server.wait(timeout=10)
        err = server.stderr.read()
        server.stdout.close()
        server.stderr.close()
    assert "warning" not in err and "Error" not in err, err


def test_tournament_run_serve_serves_during_and_after_the_run(tmp_path):
    import signal
    import urllib.request

    path = tournament_file(tmp_path, "domineering", "rows = 4\ncols = 4", games=2)
    command = [sys.executable, "-m", "arena", "tournament", "run", path.name, "--serve", "--port", "0"]
    run = subprocess.Popen(command, cwd=tmp_path, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    try:
        match = re.search(r"http://127\.0\.0\.1:\d+/", run.stdout.readline())
        assert match
        for line in run.stderr:
            if "still serving" in line:
                break
        with urllib.request.urlopen(match.group(0) + "index.html", timeout=10) as answer:
            page = answer.read().decode()
        assert "2 of 2 played" in page and "window.ARENA_LIVE" in page
        with urllib.request.urlopen(match.group(0) + "live.json", timeout=10) as answer:
            assert json.load(answer) == {"version": 2, "playing": []}  # the run ended: nothing in progress
        run.send_signal(signal.SIGINT)
        assert run.wait(timeout=20) == 0
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
        run.stdout.close()
        run.stderr.close()


def test_bad_input_is_one_line(tmp_path, sites, capsys):
    path = tournament_file(tmp_path, "domineering", "rows = 4\ncols = 4")
    results = sites["domineering"].parent
    for args, named in ((("publish", "nothing-here", "--results", str(tmp_path)), "nothing-here"),
                        (("serve", str(path), "--port", "70000"), "--port"),
                        (("serve", str(path), "--poll", "0"), "--poll"),
                        (("tournament", "run", str(path), "--port", "8000"), "--serve"),
                        (("publish", str(path), "--results", str(tmp_path)), "no results yet"),
                        (("publish", str(results), "--out", str(results)), "database")):
        code, _, err = arena(capsys, *args)
        assert code == 2, (args, err)
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1
        assert named in err


def test_the_index_says_whether_the_bots_were_isolated(sites, tmp_path):
    """Issue 14 asks the index to say it; issue 12's records say it: a real tournament run with the
    sandbox's default (isolated where bwrap can), and one with the sandbox off."""
    from arena.cell import sandbox
    from arena.cli import main

    index = (sites["freedom"] / "index.html").read_text()
    isolated = re.search(r'<dd id="isolation">(.*?)</dd>', index).group(1)
    if sandbox.decide("auto").sandboxed:
        assert isolated == "sandboxed (all 2 games)", isolated
    else:
        assert isolated.startswith("none: ") and "2 games" in isolated, isolated
    path = tournament_file(tmp_path, "domineering", "rows = 4\ncols = 4")
    path.write_text(path.read_text() + '[limits]\nsandbox = "off"\n')
    play(path, tmp_path / "results")
    assert main(["publish", str(path), "--results", str(tmp_path / "results")]) == 0
    index = (tmp_path / "results" / "domineering" / "site" / "index.html").read_text()
    assert '<dd id="isolation">none: sandbox = off: 2 games</dd>' in index


def test_records_are_embedded_as_json_that_cannot_close_the_script(sites):
    site = sites["freedom"]
    page = next((site / "games").glob("*.html")).read_text()
    data = re.search(r'<script type="application/json" id="game-data">(.*?)</script>', page, re.S).group(1)
    parsed = json.loads(data)
    assert parsed["states"][0]["game"] == "freedom" and "<" not in data


def test_fields_of_newer_records_are_shown(tmp_path):
    """A double forfeit (0-0), bot errors and isolation (issues 12 and 13) as other versions write
    them. Hand-made records: the fields are what is tested, not the games (records without them
    are every other test's)."""
    from arena.match.records import GameRecord, MoveRecord
    from arena.site import SiteBuilder
    from arena.tournament.store import StoredGame

    def record(gid, players, **extra):
        r = GameRecord(game_id=gid, game="domineering", params={"rows": 4, "cols": 4}, players=players,
                       time_control="0.2", moves=[MoveRecord(0, 0, "1A", 0.01), MoveRecord(1, 1, "1C", 0.19)])
        for key, value in extra.items():
            setattr(r, key, value)  # fields this version's GameRecord may not have yet
        return r

    both = [{"seat": 0, "reason": "no_hello", "detail": "never said hello"},
            {"seat": 1, "reason": "crashed", "detail": "exit 3"}]
    games = [
        record("ann-vs-bob-g0", ["ann", "bob"], winner=None, reason="double_forfeit",
               forfeit={"seat": None, "reason": "double_forfeit", "both": both,
                        "detail": "seat 0 no_hello: ...; seat 1 crashed: ..."},
               errors=[0, 0], isolation="none: bwrap not installed"),
        record("ann-vs-bob-g1", ["bob", "ann"], winner=0, reason="no legal move", errors=[2, 0],
               isolation="sandbox"),
    ]
    fingerprint = {"name": "hand", "game": "domineering", "params": {"rows": 4, "cols": 4},
                   "time_control": "0.2", "seed": 1, "games_per_pairing": 2,
                   "bots": [{"name": "ann", "command": "random"}, {"name": "bob", "command": "greedy"}]}
    stored_games = [StoredGame("ann-vs-bob", n, g) for n, g in enumerate(games)]

    class Given(SiteBuilder):  # these records as the store of a version with those fields gives them
        def load(self):
            return fingerprint, stored_games

    Given(tmp_path).build()
    site = tmp_path / "site"
    double = (site / "games" / "ann-vs-bob-g0.html").read_text()
    assert "0-0" in double and "double forfeit" in double
    assert "never said hello" in double and "exit 3" in double  # each bot's forfeit, with its detail
    assert "bwrap not installed" in double
    assert "bot errors" in (site / "games" / "ann-vs-bob-g1.html").read_text()
    listing = (site / "games.html").read_text()
    assert 'data-result="0-0"' in listing and "bot errors 2/0" in listing
    index = (site / "index.html").read_text()
    assert "none: bwrap not installed: 1 game" in index and "sandbox: 1 game" in index
    assert "no_hello: 1" in index and "crashed: 1" in index
    assert "2 bot errors" in (site / "bots" / "bob.html").read_text()


class _CtrlCOnLine:
    """Standard error that sends this process SIGINT as soon as a line holding `words` is written:
    Ctrl-C pressed the moment the message appears, before whatever follows it has begun."""

    def __init__(self, real, words: str) -> None:
        self.real, self.words, self.text = real, words, []

    def write(self, text: str) -> int:
        self.text.append(text)
        if self.words in text:
            import signal

            os.kill(os.getpid(), signal.SIGINT)
        return len(text)

    def flush(self) -> None:
        pass

    def __getattr__(self, name: str):
        return getattr(self.real, name)


def test_ctrl_c_the_moment_the_run_says_it_still_serves_ends_it_with_0(tmp_path, monkeypatch):
    """A busy run once exited 130 (interrupted) for a Ctrl-C sent right after "still serving":
    the signal came before the wait for it began. Here it comes while the line is written."""
    from arena.cli import main

    path = tournament_file(tmp_path, "domineering", "rows = 4\ncols = 4", games=2)
    monkeypatch.chdir(tmp_path)
    err = _CtrlCOnLine(sys.stderr, "still serving")
    monkeypatch.setattr(sys, "stderr", err)
    code = main(["tournament", "run", path.name, "--serve", "--port", "0", "--quiet"])
    assert code == 0, "".join(err.text)
    assert "interrupted" not in "".join(err.text)
