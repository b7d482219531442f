"""The published site's lists, crosstable, live view and accessibility, in a real browser.

A small Domineering tournament played for real (a 64-character bot name among its bots, a bot that
crashes for forfeits) and published; a 41-bot crosstable from records made here (the layout is
what is tested); and `arena serve` while `arena tournament run` plays, for the live view. axe-core
comes from the npm registry (.ci/run: `npm install --prefix tests/.axe axe-core`; ARENA_AXE may
name another axe.min.js) and is injected into each page. With ARENA_SCREENSHOTS=1 the screenshots
go to docs/img/.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import test_site
from conftest import require
from test_site import (
    BROKEN,
    ENV,
    HEIGHT_PX,
    NARROW_PX,
    WIDE_PX,
    errors_in_log,
    expected_pieces,
    play,
    screenshot,
    stored,
    tournament_file,
    url,
    wait_for,
    wire_states,
)

shots = test_site.shots
ROOT = Path(__file__).resolve().parents[1]
AXE = Path(os.environ.get("ARENA_AXE")
           or ROOT / "tests" / ".axe" / "node_modules" / "axe-core" / "axe.min.js")
LONG = "a_bot_whose_name_goes_on_and_on_and_on_until_it_has_64_letters.."
assert len(LONG) == 64


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """A Domineering round robin (random, greedy, a greedy with a 64-character name, a crasher),
    played for real and published."""
    from arena.cli import main

    base = tmp_path_factory.mktemp("lists")
    bots = [("random", "random"), ("greedy", "greedy"), (LONG, "greedy"),
            ("crasher", f"{sys.executable} {BROKEN} crash")]
    path = tournament_file(base, "domineering", "rows = 5\ncols = 5", bots=bots)
    play(path, base / "results")
    assert main(["publish", str(path), "--results", str(base / "results")]) == 0
    return base / "results" / "domineering" / "site"


@pytest.fixture(scope="module")
def axe_source() -> str:
    require(AXE.is_file(), f"needs axe-core at {AXE} (npm install --prefix tests/.axe axe-core)")
    return AXE.read_text(encoding="utf-8")


def axe_violations(driver, source: str) -> list[dict]:
    """axe-core's violations on the page open in `driver` (every rule axe runs by default)."""
    driver.execute_script(source)
    driver.set_script_timeout(60)
    found = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document).then((r) => done(r.violations.map((v) => ({id: v.id, help: v.help,"
        " nodes: v.nodes.map((n) => n.target.join(' '))}))), (e) => done([{id: 'axe failed', help: String(e),"
        " nodes: []}]));")
    driver.get_log("browser")  # axe's own requests (a stylesheet it cannot read from file://)
    return found


POLL_S = 0.2
"""`arena serve --poll` here: the watcher looks every 0.2 s and the pages ask every 0.3 s, so that the
tests wait for what changes, not for the default second and a half."""


def serve(path: Path) -> subprocess.Popen:
    """`arena serve` of the tournament file `path` (results under its folder) on a free port."""
    return subprocess.Popen([sys.executable, "-m", "arena", "serve", path.name, "--port", "0", "--poll",
                             str(POLL_S)],
                            cwd=path.parent, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def visible_games(driver) -> list[str]:
    return [r.get_attribute("data-game") for r in driver.find_elements("css selector", "#games tbody tr")
            if r.is_displayed()]


def page_width(driver) -> tuple[int, int]:
    return tuple(driver.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]"))


def too_wide(driver) -> list[str]:
    """The elements that reach past the window's right edge (for the message of a failed check)."""
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('body *')).filter((e) =>"
        " e.getBoundingClientRect().right > window.innerWidth + 1).slice(0, 8)"
        ".map((e) => `${e.tagName}.${e.className.baseVal ?? e.className}"
        " ${e.getBoundingClientRect().right} ${JSON.stringify(e.textContent.slice(0, 80))}`)")


# --- accessibility, both widths, every kind of page ---

def test_every_page_has_no_axe_violations_at_both_widths(site, browser, shots, axe_source):
    game = next(g.record for g in stored(site) if LONG in g.record.players and not g.record.forfeit)
    pages = {"index": site / "index.html", "games": site / "games.html",
             "bot": site / "bots" / f"{LONG}.html", "game": site / "games" / f"{game.game_id}.html"}
    found = {}
    try:
        for width in (WIDE_PX, NARROW_PX):
            browser.set_window_size(width, HEIGHT_PX)
            for name, page in pages.items():
                browser.get(url(page))
                assert errors_in_log(browser) == []
                wide, inner = page_width(browser)
                assert wide <= inner, f"{name} at {width} px: {wide} px wide: {too_wide(browser)}"
                found[(name, width)] = axe_violations(browser, axe_source)
    finally:
        browser.set_window_size(WIDE_PX, HEIGHT_PX)
    assert {k: v for k, v in found.items() if v} == {}
    assert set(found) == {(n, w) for n in pages for w in (WIDE_PX, NARROW_PX)}
    # the screenshots test_site.py does not take (it has the index at both widths, a bot's page and
    # each game's page at 1280 px, and a Santorini game at 360 px), with ARENA_SCREENSHOTS=1
    shots_only = (("site-games.png", pages["games"], WIDE_PX),
                  ("site-games-360.png", pages["games"], NARROW_PX),
                  ("site-bot-360.png", pages["bot"], NARROW_PX),
                  ("site-game-domineering-360.png", pages["game"], NARROW_PX))
    for shot, page, width in shots_only if test_site.SCREENSHOTS else ():
        browser.get(url(page))
        screenshot(browser, shots / shot, width)


def test_axe_finds_what_it_should(browser, axe_source, tmp_path):
    """The check above can fail: the three kinds of violation the site had, on a page made for it."""
    page = tmp_path / "bad.html"
    page.write_text('<!DOCTYPE html><html lang="en"><head><title>bad</title></head><body><main><h1>bad</h1>'
                    '<table><tr><th></th><td>1</td></tr></table>'
                    '<p>text <a href="#" style="text-decoration:none;color:#2457a6">link</a> text</p>'
                    '<details><summary><a href="#">a</a></summary>b</details></main></body></html>')
    browser.get(url(page))
    ids = {v["id"] for v in axe_violations(browser, axe_source)}
    assert {"empty-table-header", "link-in-text-block", "nested-interactive"} <= ids


def test_phone_controls_are_big_enough_and_chart_labels_readable(site, browser):
    try:
        browser.set_window_size(NARROW_PX, HEIGHT_PX)
        browser.get(url(site / "games.html"))
        sizes = browser.execute_script(
            "return Array.from(document.querySelectorAll('#filters input, #filters select'))"
            ".map(e => [e.id, e.getBoundingClientRect().width, e.getBoundingClientRect().height])")
        assert len(sizes) == 3 and all(w >= 44 and h >= 44 for _, w, h in sizes), sizes
        game = stored(site)[0].record.game_id
        browser.get(url(site / "games" / f"{game}.html"))
        buttons = browser.execute_script(
            "return Array.from(document.querySelectorAll('.controls button'))"
            ".map(e => [e.getBoundingClientRect().width, e.getBoundingClientRect().height])")
        assert len(buttons) == 4 and all(w >= 44 and h >= 44 for w, h in buttons), buttons
        browser.get(url(site / "bots" / "greedy.html"))
        heights = browser.execute_script(
            "return Array.from(document.querySelectorAll('#time-chart text'))"
            ".map(e => e.getBoundingClientRect().height)")
        assert heights and min(heights) >= 11, heights  # rendered text height in CSS px
        wide, inner = page_width(browser)
        assert wide <= inner
    finally:
        browser.set_window_size(WIDE_PX, HEIGHT_PX)


# --- long names ---

def test_long_names_are_cut_and_shown_whole_on_hover_and_focus(site, browser):
    from selenium.webdriver.common.action_chains import ActionChains

    for width in (WIDE_PX, NARROW_PX):
        try:
            browser.set_window_size(width, HEIGHT_PX)
            browser.get(url(site / "games.html"))
            assert page_width(browser)[0] <= page_width(browser)[1]
            browser.get(url(site / "index.html"))
            assert page_width(browser)[0] <= page_width(browser)[1]
            table = browser.find_element("id", "standings")
            box = browser.find_element("id", "standings-wrap")
            name = table.find_element("css selector", f'tr[data-bot="{LONG}"] a.name')
            assert name.text.endswith("…") or browser.execute_script(
                "return arguments[0].scrollWidth > arguments[0].clientWidth", name)
            assert name.get_attribute("textContent") == LONG  # cut on screen only
            # the standings show more than rank and name on a phone: points and score % too
            heads = table.find_elements("css selector", "thead th")
            right = box.rect["x"] + box.rect["width"]
            shown = [h.get_attribute("data-key") for h in heads if h.rect["x"] + h.rect["width"] <= right + 1]
            assert {"rank", "bot", "points", "score %"} <= set(shown), shown
            browser.execute_script("arguments[0].focus()", name)
            tip = wait_for(lambda: browser.find_elements("css selector", ".name-tip"), what="the tip")[0]
            assert tip.text == LONG and tip.is_displayed()
            browser.execute_script("arguments[0].blur()", name)
            assert not browser.find_elements("css selector", ".name-tip")
            if width == WIDE_PX:
                ActionChains(browser).move_to_element(name).perform()
                tip = wait_for(lambda: browser.find_elements("css selector", ".name-tip"), what="the tip")[0]
                assert tip.text == LONG
            short = table.find_element("css selector", 'tr[data-bot="random"] a.name')
            browser.execute_script("arguments[0].focus()", short)  # a name shown whole gets no tip
            assert not browser.find_elements("css selector", ".name-tip")
        finally:
            browser.set_window_size(WIDE_PX, HEIGHT_PX)


def test_names_link_to_bot_pages_on_every_list(site, browser):
    from arena.site.model import safe_name

    bots = {"random", "greedy", LONG, "crasher"}
    for page, selector in (("index.html", "#standings a.name"), ("index.html", "#crosstable tbody a.name"),
                           ("games.html", "#games td.player a"), ("bots/greedy.html", "#opponents a.name"),
                           ("bots/greedy.html", "#bot-games a.name")):
        browser.get(url(site / page))
        links = browser.find_elements("css selector", selector)
        assert links, (page, selector)
        for link in links:
            name = link.get_attribute("textContent")
            assert name in bots
            assert link.get_attribute("href").endswith(f"bots/{safe_name(name)}.html"), (page, name)
    browser.get(url(site / "games.html"))
    browser.find_element("css selector", f'#games td.player a[href$="{LONG}.html"]').click()
    wait_for(lambda: browser.current_url.endswith(f"bots/{LONG}.html"), what="the bot page")
    assert LONG in browser.find_element("tag name", "h1").text


# --- the games list ---

def test_games_list_filters_and_sort_live_in_the_address(site, browser):
    from selenium.webdriver.support.ui import Select

    games = stored(site)
    browser.get(url(site / "games.html"))
    assert len(visible_games(browser)) == len(games) == 12
    search = browser.find_element("id", "filter-bot")
    search.send_keys("AN")  # part of names, any case: random's and the long name's games
    want = {g.record.game_id for g in games if {"random", LONG} & set(g.record.players)}
    wait_for(lambda: set(visible_games(browser)) == want, what="the search")
    assert "bot=AN" in browser.current_url
    search.clear()
    search.send_keys("greedy")  # a whole name: that bot's games only
    want = {g.record.game_id for g in games if "greedy" in g.record.players}
    wait_for(lambda: set(visible_games(browser)) == want, what="greedy's games")
    search.send_keys("\ue007")  # Enter: the filter becomes a step of the history
    Select(browser.find_element("id", "filter-result")).select_by_value("forfeit")
    forfeits = {g.record.game_id for g in games if "greedy" in g.record.players and g.record.forfeit}
    assert set(visible_games(browser)) == forfeits and forfeits
    browser.find_element("css selector", "#games th[data-key=plies] button").click()  # most plies first
    plies = [int(r.find_elements("css selector", "td")[5].text)
             for r in browser.find_elements("css selector", "#games tbody tr") if r.is_displayed()]
    assert plies == sorted(plies, reverse=True)
    assert browser.find_element("css selector", "#games th[data-key=plies]").get_attribute("aria-sort") == \
        "descending"
    assert Select(browser.find_element("id", "sort")).first_selected_option.get_attribute("value") == "-plies"
    address = browser.current_url
    assert re.search(r"#.*bot=greedy.*result=forfeit.*sort=-plies", address), address
    # Back undoes one step at a time: the sort, the result filter, the search (as a whole)
    browser.back()
    wait_for(lambda: "sort=" not in browser.current_url, what="Back")
    assert browser.find_element("css selector", "#games th[data-key=game]").get_attribute("aria-sort") == \
        "ascending"
    assert set(visible_games(browser)) == forfeits
    browser.back()
    want = {g.record.game_id for g in games if "greedy" in g.record.players}
    wait_for(lambda: set(visible_games(browser)) == want, what="Back to the bot filter alone")
    result = Select(browser.find_element("id", "filter-result")).first_selected_option
    assert result.get_attribute("value") == ""
    browser.back()  # the two searches, each one step: "greedy", then "AN"
    browser.back()
    wait_for(lambda: len(visible_games(browser)) == 12, what="Back to no filter")
    assert browser.find_element("id", "filter-bot").get_attribute("value") == ""
    assert browser.current_url.endswith("games.html")
    # the link reproduces the view in a fresh page
    browser.get("about:blank")
    browser.get(address)
    assert set(visible_games(browser)) == forfeits
    assert browser.find_element("id", "filter-bot").get_attribute("value") == "greedy"
    assert browser.find_element("css selector", "#games th[data-key=plies]").get_attribute("aria-sort") == \
        "descending"
    assert errors_in_log(browser) == []


def test_games_sort_by_each_column_and_the_phones_sort_box(site, browser):
    from selenium.webdriver.support.ui import Select

    browser.get(url(site / "games.html"))
    rows = browser.find_elements("css selector", "#games tbody tr")
    seat0 = sorted(r.find_elements("css selector", "td")[1].get_attribute("textContent") for r in rows)
    Select(browser.find_element("id", "sort")).select_by_value("-seat0")
    shown = [r.find_elements("css selector", "td")[1].get_attribute("textContent")
             for r in browser.find_elements("css selector", "#games tbody tr")]
    assert shown == seat0[::-1] and "sort=-seat0" in browser.current_url
    browser.find_element("css selector", "#games th[data-key=seat0] button").click()  # the other way
    shown = [r.find_elements("css selector", "td")[1].get_attribute("textContent")
             for r in browser.find_elements("css selector", "#games tbody tr")]
    assert shown == seat0 and "sort=seat0" in browser.current_url


# --- the crosstable ---

def crosstable_site(directory: Path, n: int = 41) -> tuple[Path, dict]:
    """A round robin of `n` bots (one game a pairing) from records made here, and each pair's points."""
    from arena.match.records import GameRecord, MoveRecord
    from arena.site import SiteBuilder
    from arena.tournament.store import StoredGame

    names = [f"bot{i:02d}" for i in range(n - 1)] + [LONG]
    games, points = [], {}
    for i, a in enumerate(names):
        for j in range(i + 1, len(names)):
            b = names[j]
            winner = None if (i + j) % 5 == 0 else (i * 7 + j) % 2
            r = GameRecord(game_id=f"{a}-vs-{b}-g0", game="domineering", params={"rows": 4, "cols": 4},
                           players=[a, b], time_control="1", winner=winner,
                           reason="draw" if winner is None else "no legal move",
                           moves=[MoveRecord(0, 0, "1A", 0.01), MoveRecord(1, 1, "1C", 0.02)])
            games.append(StoredGame(f"{a}-vs-{b}", 0, r))
            points[(a, b)] = 0.5 if winner is None else float(winner == 0)
            points[(b, a)] = 1 - points[(a, b)]
    fingerprint = {"name": "big", "game": "domineering", "params": {"rows": 4, "cols": 4},
                   "time_control": "1", "seed": 1, "games_per_pairing": 1,
                   "bots": [{"name": b, "command": "random"} for b in names]}

    class Given(SiteBuilder):
        def load(self):
            return fingerprint, games

    Given(directory).build()
    return directory / "site", points


def test_a_41_bot_crosstable_keeps_its_heads_in_view_and_says_points_of_games(tmp_path, browser, shots,
                                                                            axe_source):
    site, points = crosstable_site(tmp_path)
    for width in (WIDE_PX, NARROW_PX):
        try:
            browser.set_window_size(width, HEIGHT_PX)
            browser.get(url(site / "index.html"))
            assert page_width(browser)[0] <= page_width(browser)[1]
            table = browser.find_element("id", "crosstable")
            rows = table.find_elements("css selector", "tbody tr")
            assert len(rows) == 41 and len(table.find_elements("css selector", "thead th")) == 42
            if width == WIDE_PX:  # every cell: "P of G", the row bot's points of the games played
                assert axe_violations(browser, axe_source) == []  # a big table too (slow: once)
                cells = browser.execute_script(
                    "return Array.from(document.querySelectorAll('#crosstable tbody tr')).map(r =>"
                    " [r.querySelector('th a').textContent, Array.from(r.querySelectorAll('td'))"
                    ".map(c => c.textContent.trim())])")
                names = [name for name, _ in cells]
                for me, texts in cells:
                    for opp, text in zip(names, texts, strict=True):
                        if me == opp:
                            continue
                        m = re.fullmatch(r"(\d*)(½?) of (\d+)", text)
                        assert m, text
                        got = (int(m.group(1)) if m.group(1) else 0) + (0.5 if m.group(2) else 0)
                        assert (got, int(m.group(3))) == (points[(me, opp)], 1), (me, opp, text)
            box = browser.find_element("id", "cross-wrap")
            browser.execute_script("arguments[0].scrollIntoView(); arguments[0].scrollLeft = 1e6;"
                                   "arguments[0].scrollTop = 1e6;", box)
            time.sleep(0.2)
            left, top = box.rect["x"], box.rect["y"]
            assert browser.execute_script("return arguments[0].scrollLeft > 0 && arguments[0].scrollTop > 0",
                                          box), "the table does not scroll in its box"
            last = rows[-1].find_element("css selector", "th")
            head = table.find_elements("css selector", "thead th")[-1]
            assert abs(last.rect["x"] - left) <= 2, "the row names scrolled away"  # sticky left
            assert abs(head.rect["y"] - top) <= 2, "the column heads scrolled away"  # sticky top
            assert last.find_element("css selector", "a").is_displayed()
            screenshot(browser, shots / ("site-crosstable-41.png" if width == WIDE_PX
                                         else "site-crosstable-41-360.png"), width)
        finally:
            browser.set_window_size(WIDE_PX, HEIGHT_PX)


# --- live: arena serve while arena tournament run plays ---

def test_live_games_page_keeps_filter_and_sort_shows_games_in_progress_and_lists_new_games(
        tmp_path, browser, shots, axe_source):
    from selenium.webdriver.support.ui import Select

    slow = "slow_" + LONG[5:]
    bots = [("random", "random"), (slow, f"{sys.executable} {BROKEN} sleep 0.4")]
    path = tournament_file(tmp_path, "domineering", "rows = 4\ncols = 4", games=2, bots=bots)
    path.write_text(path.read_text().replace('time = "2"', 'time = "5"'))
    play(path, tmp_path / "results")  # two games stored before the page opens
    browser.get("about:blank")
    browser.get_log("browser")  # what earlier pages logged is not this test's
    server = serve(path)
    run = None
    try:
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", server.stdout.readline())
        assert match, server.stderr.read() if server.poll() is not None else ""
        base = match.group(0)
        browser.get(base + "games.html")
        assert len(browser.find_elements("css selector", "#games tbody tr")) == 2
        browser.find_element("id", "filter-bot").send_keys("SLOW")
        Select(browser.find_element("id", "sort")).select_by_value("-plies")
        browser.execute_script("window.arenaMarker = 'still the same page'")
        assert "bot=SLOW" in browser.current_url and "sort=-plies" in browser.current_url
        # two more games a pairing, played by a real run (its workers write the games in progress)
        path.write_text(path.read_text().replace("games_per_pairing = 2", "games_per_pairing = 4"))
        run = subprocess.Popen([sys.executable, "-m", "arena", "tournament", "run", path.name], cwd=tmp_path,
                               env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        snapshot = ("return Array.from(document.querySelectorAll('#playing .live-game')).map((card) => ({"
                    " game: card.dataset.game, ply: Number(card.querySelector('svg').dataset.ply),"
                    " names: card.querySelector('h3').textContent, pieces: Array.from("
                    " card.querySelectorAll('svg .piece'), (e) => [e.dataset.piece, e.dataset.at])}))")
        seen = wait_for(lambda: [c for c in browser.execute_script(snapshot) if c["ply"] >= 2],
                        what="a game in progress with its board")[0]
        assert slow in seen["names"] and "random" in seen["names"]
        screenshot(browser, shots / "site-live.png")
        wait_for(lambda: all(c["ply"] > seen["ply"] for c in browser.execute_script(snapshot)
                             if c["game"] == seen["game"]),  # or the game ended
                 what="the board of the game in progress to move on")
        assert run.wait(timeout=120) == 0, run.stderr.read()
        wait_for(lambda: len(browser.find_elements("css selector", "#games tbody tr")) == 4,
                 what="the new games listed on the open page")
        assert browser.execute_script("return window.arenaMarker") == "still the same page"  # no reload
        assert browser.execute_script("return window.arenaLive.updates") >= 1
        assert browser.find_element("id", "filter-bot").get_attribute("value") == "SLOW"
        assert "bot=SLOW" in browser.current_url and "sort=-plies" in browser.current_url
        rows = [r for r in browser.find_elements("css selector", "#games tbody tr")]
        assert all(r.is_displayed() for r in rows)  # every game has the slow bot
        plies = [int(r.find_elements("css selector", "td")[5].text) for r in rows]
        assert plies == sorted(plies, reverse=True)
        th = browser.find_element("css selector", "#games th[data-key=plies]")
        assert th.get_attribute("aria-sort") == "descending"
        new = {g.record.game_id: g.record for g in stored(tmp_path / "results" / "domineering" / "site")}
        assert {r.get_attribute("data-game") for r in rows} == set(new)
        # the board shown while it was played is that game's position at that ply
        shown = sorted(map(tuple, seen["pieces"]))
        assert shown == expected_pieces(wire_states(new[seen["game"]])[seen["ply"]])
        wait_for(lambda: not browser.find_element("id", "playing-now").is_displayed(),
                 what="the games in progress to go when the run ends")
        assert not (tmp_path / "results" / "domineering" / "playing").exists()
        assert errors_in_log(browser) == []
        assert axe_violations(browser, axe_source) == []
    finally:
        browser.get("about:blank")  # the page stops polling before its server goes
        for process in (run, server):
            if process is not None and process.poll() is None:
                process.terminate()
                process.wait(timeout=20)
        server.stdout.close()
        server.stderr.close()
        if run is not None:
            run.stderr.close()


def test_the_index_updates_in_place_keeping_its_sort_and_scroll(tmp_path, browser):
    path = tournament_file(tmp_path, "domineering", "rows = 4\ncols = 4", games=2)
    play(path, tmp_path / "results")
    browser.get("about:blank")
    browser.get_log("browser")  # what earlier pages logged is not this test's
    server = serve(path)
    try:
        base = re.search(r"http://127\.0\.0\.1:\d+/", server.stdout.readline()).group(0)
        browser.get(base + "index.html")
        assert "2 of 2 played" in browser.find_element("id", "played").text
        browser.find_element("css selector", "#standings th[data-key=bot] button").click()  # A to Z at once
        browser.execute_script("window.arenaMarker = 1; window.scrollTo(0, 200)")
        y = browser.execute_script("return window.scrollY")
        path.write_text(path.read_text().replace("games_per_pairing = 2", "games_per_pairing = 4"))
        play(path, tmp_path / "results")
        played = "return document.getElementById('played').textContent"  # read at once: parts get replaced
        wait_for(lambda: "4 of 4 played" in browser.execute_script(played), what="the new count")
        assert browser.execute_script("return window.arenaMarker") == 1
        assert browser.execute_script("return window.scrollY") == y
        th = browser.find_element("css selector", "#standings th[data-key=bot]")
        assert th.get_attribute("aria-sort") == "ascending"
        rows = browser.find_elements("css selector", "#standings tbody tr")
        names = [r.get_attribute("data-bot") for r in rows]
        assert names == sorted(names)
        with urllib.request.urlopen(base + "live.json", timeout=10) as answer:
            assert json.load(answer) == {"version": 4, "playing": []}
        assert errors_in_log(browser) == []
    finally:
        browser.get("about:blank")
        server.terminate()
        server.wait(timeout=10)
        server.stdout.close()
        server.stderr.close()


def test_games_in_progress_are_shown_only_while_a_run_holds_the_lock(tmp_path):
    """A run's files of its games in progress, read by `arena serve`; a killed run's (no lock held)
    and a half-written file are not shown."""
    import rules
    from arena.match.records import GameRecord, MoveRecord
    from arena.site import SiteBuilder
    from arena.site.serve import LiveSite
    from arena.tournament.runner import LOCK_NAME, PLAYING_DIR, exclusive, show_playing

    record = GameRecord(game_id="ann-vs-bob-g0", game="domineering", params={"rows": 4, "cols": 4},
                        players=["ann", "bob"], time_control="1",
                        moves=[MoveRecord(0, 0, "1A", 0.1), MoveRecord(1, 1, "1C", 0.1)])
    (tmp_path / PLAYING_DIR).mkdir()
    show_playing(tmp_path / PLAYING_DIR / "ann-vs-bob-0.json", record)
    (tmp_path / PLAYING_DIR / "ann-vs-bob-1.json").write_text('{"game_id": "ann-vs-bob-g1", "ga')
    fingerprint = {"name": "t", "game": "domineering", "params": {"rows": 4, "cols": 4}, "time_control": "1",
                   "games_per_pairing": 2, "bots": [{"name": "ann", "command": "random"},
                                                    {"name": "bob", "command": "random"}]}
    live = LiveSite(SiteBuilder(tmp_path, tmp_path / "site", fingerprint=fingerprint), log=None)
    live.refresh()
    assert live.state() == {"version": 0, "playing": []}  # no run holds the lock: left by a killed run
    with exclusive(tmp_path / LOCK_NAME, "t"):
        live.refresh()
        [game] = live.state()["playing"]
    states = rules.load("domineering", rows=4, cols=4).positions(["1A", "1C"])
    assert game["game_id"] == "ann-vs-bob-g0" and game["ply"] == 2 and game["move"] == "1C"
    assert game["state"] == states[2].to_wire() and game["before"] == states[1].to_wire()
    assert game["players"] == ["ann", "bob"] and game["files"] == ["ann", "bob"]
    json.dumps(live.state())  # what /live.json sends
