"""The game page and its replay viewer in a real browser (issue 22): a phone keeps the board in
view while stepping, the browser's own shortcuts stay the browser's, moves are counted alike in
texts and viewer, tracebacks are whole, collapsible and shown once, moves with errors are marked,
each kind of move mark has its own look, captured stones are shown leaving, a dome looks like a
dome, names lead to bot pages and each game to its neighbours.

Small tournaments played for real by the referee and published with `arena publish`, as in
tests/test_site.py (whose browser and helpers these tests share): Freedom 7x7 with a bot whose
code always raises (tests/bots/raising.py), one that crashes at its third turn and one that dies
of a SyntaxError before its hello; Fanorona, Morris and Santorini between random and greedy.
"""
from __future__ import annotations

import random
import re
import sys
import time
from pathlib import Path

import pytest
import test_site
from test_site import (
    BROKEN,
    ROOT,
    SCREENSHOTS,
    errors_in_log,
    expected_pieces,
    play,
    screenshot,
    shown_pieces,
    stored,
    tournament_file,
    url,
    wire_states,
)

import rules

shots = test_site.shots

RAISING = ROOT / "tests" / "bots" / "raising.py"
PHONE_PX, PHONE_HEIGHT_PX = 360, 640
WIDE_PX, HEIGHT_PX = 1280, 900
STEPS = 40
MIN_TAP_PX = 44
"""The smallest button a finger hits reliably (WCAG 2.5.5, Apple's and Google's guides)."""


@pytest.fixture(scope="module")
def sites(tmp_path_factory) -> dict[str, Path]:
    """name -> a published site: "freedom" (random, raising, crasher, syntax), "fanorona",
    "morris", "santorini" (random against greedy)."""
    from arena.cli import main

    base = tmp_path_factory.mktemp("viewer")
    python = sys.executable
    plans = {
        "freedom": ("size = 7", [("random", "random"), ("raising", f"{python} {RAISING}"),
                                 ("crasher", f"{python} {BROKEN} crash"),
                                 ("syntax", f"{python} {BROKEN} syntax")]),
        "fanorona": ("rows = 3\ncols = 5", None),
        "morris": ("max_turns = 80", None),
        "santorini": ("", None),
    }
    out = {}
    for game, (params, bots) in plans.items():
        path = tournament_file(base, game, params, bots=bots)
        play(path, base / "results")
        assert main(["publish", str(path), "--results", str(base / "results")]) == 0
        out[game] = base / "results" / game / "site"
    return out


def game_page(site: Path, game_id: str, fragment: str = "") -> str:
    return url(site / "games" / f"{game_id}.html", fragment)


def ply_of(driver) -> int:
    return int(driver.find_element("id", "board").get_attribute("data-ply"))


def rect(driver, element) -> dict:
    return driver.execute_script("const r = arguments[0].getBoundingClientRect();"
                                 "return {top: r.top, bottom: r.bottom, left: r.left, right: r.right,"
                                 " width: r.width, height: r.height};", element)


def in_view(driver, element) -> bool:
    box = rect(driver, element)
    width, height = driver.execute_script("return [window.innerWidth, window.innerHeight]")
    return box["top"] >= 0 and box["left"] >= 0 and box["bottom"] <= height and box["right"] <= width


# --- 1. a phone ---

def test_on_a_phone_stepping_keeps_the_board_and_its_controls_in_view(sites, browser, shots):
    site = sites["freedom"]
    record = max((g.record for g in stored(site)), key=lambda r: len(r.moves))
    assert len(record.moves) >= STEPS
    try:
        browser.set_window_size(PHONE_PX, PHONE_HEIGHT_PX)
        browser.get("about:blank")
        browser.get(game_page(site, record.game_id))
        board = browser.find_element("id", "board")
        buttons = [browser.find_element("id", name) for name in ("first", "prev", "next", "last")]
        for button in buttons:
            size = rect(browser, button)
            assert min(size["width"], size["height"]) >= MIN_TAP_PX, (button.get_attribute("id"), size)
        assert all(in_view(browser, b) for b in buttons)  # on screen from the start, board or not
        # as a person does: scroll until the board is at the top, then tap "next" again and again
        browser.execute_script("arguments[0].scrollIntoView({block: 'start'})", board)
        assert in_view(browser, board) and all(in_view(browser, b) for b in buttons)
        scrolled = browser.execute_script("return window.scrollY")
        following = browser.find_element("id", "next")
        for step in range(1, STEPS + 1):
            assert in_view(browser, following), f"the next button left the screen before tap {step}"
            following.click()
            assert ply_of(browser) == step
        assert browser.execute_script("return window.scrollY") == scrolled
        assert in_view(browser, board), rect(browser, board)
        assert all(in_view(browser, b) for b in buttons)
        # the move list followed inside its own box
        current = browser.find_element("css selector", "#moves a.current")
        assert current.get_attribute("data-ply") == str(STEPS)
        box, item = rect(browser, browser.find_element("id", "moves")), rect(browser, current)
        assert box["top"] <= item["top"] and item["bottom"] <= box["bottom"] + 1
        assert errors_in_log(browser) == []
        if SCREENSHOTS:
            browser.save_screenshot(str(shots / "site-game-phone-360.png"))
    finally:
        browser.set_window_size(WIDE_PX, HEIGHT_PX)


# --- 2. the browser's shortcuts ---

def test_alt_arrows_are_the_browsers_and_plain_arrows_step(sites, browser):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    site = sites["freedom"]
    record = max((g.record for g in stored(site)), key=lambda r: len(r.moves))
    page = game_page(site, record.game_id)

    def press(key, *modifiers):
        chain = ActionChains(browser)
        for m in modifiers:
            chain.key_down(m)
        chain.send_keys(key)
        for m in modifiers:
            chain.key_up(m)
        chain.perform()
        time.sleep(0.3)

    browser.get("about:blank")
    browser.get(page + "#ply=5")
    assert ply_of(browser) == 5
    press(Keys.ARROW_RIGHT)
    assert ply_of(browser) == 6
    press(Keys.ARROW_LEFT)
    press(Keys.ARROW_LEFT)
    assert ply_of(browser) == 4
    press(Keys.END)
    assert ply_of(browser) == len(record.moves)
    press(Keys.HOME)
    assert ply_of(browser) == 0
    browser.get("about:blank")
    browser.get(page + "#ply=5")
    for modifiers in ((Keys.ALT,), (Keys.CONTROL,), (Keys.META,), (Keys.SHIFT,)):
        press(Keys.ARROW_RIGHT, *modifiers)  # Alt+Right is Forward: there is no page forward here
        assert browser.current_url.startswith(page), modifiers
        assert ply_of(browser) == 5, modifiers
    press(Keys.ARROW_LEFT, Keys.ALT)  # Alt+Left is Back: the browser may leave, the replay must not step
    if browser.current_url.startswith(page):
        assert ply_of(browser) == 5
    else:
        assert browser.current_url == "about:blank"
    assert errors_in_log(browser) == []


# --- 3. one count of moves ---

def test_a_forfeit_names_the_move_the_viewer_shows(sites, browser):
    site = sites["freedom"]
    crashed = [g.record for g in stored(site)
               if g.record.forfeit and g.record.players[g.record.forfeit["seat"]] == "crasher"]
    assert crashed
    for record in crashed:
        detail = record.forfeit["detail"]
        ply = int(re.search(r"thinking about ply (\d+)", detail).group(1))  # the record's 0-based ply
        assert ply == len(record.moves)
        browser.get(game_page(site, record.game_id))
        forfeit = browser.find_element("css selector", ".forfeit-line").text
        assert f"while thinking about move {ply + 1}" in forfeit, forfeit
        browser.find_element("id", "last").click()
        assert browser.find_element("id", "ply-label").text == f"move {ply} / {ply}"
        info = browser.find_element("id", "move-info").text
        assert info.startswith(f"Move {ply}: ")
        browser.find_element("css selector", f"#moves a[data-ply='{ply}']").click()
        assert ply_of(browser) == ply
        body = browser.find_element("tag name", "body").text
        assert not re.search(r"\bply\b", body, re.I), "a text still counts plies"
    assert errors_in_log(browser) == []


# --- 4. tracebacks ---

def test_a_bots_tracebacks_are_whole_collapsible_marked_and_shown_once(sites, browser, shots):
    site = sites["freedom"]
    record = max((g.record for g in stored(site) if "raising" in g.record.players and not g.record.forfeit),
                 key=lambda r: len(r.moves))
    seat = record.players.index("raising")
    erred = [n for n, m in enumerate(record.moves, 1) if m.info.get("error")]
    assert len(erred) == record.errors[seat] > 1
    trace = record.moves[erred[0] - 1].info["error"]
    assert trace.count("\n") > 3 and len(trace) > 300  # the page used to cut it at 300, newlines gone
    browser.get(game_page(site, record.game_id))
    marked = browser.find_elements("css selector", "#moves a.error")
    assert [int(a.get_attribute("data-ply")) for a in marked] == erred
    assert all("error" in a.text for a in marked)
    # the game's errors: the traceback once, with its count and moves
    groups = browser.find_elements("css selector", ".trace-group")
    assert len(groups) == 1
    group = groups[0]
    assert f"× {len(erred)}" in group.text and "ZeroDivisionError" in group.text
    assert [int(a.text) for a in group.find_elements("css selector", "p a")] == erred
    pre = group.find_element("css selector", "pre.trace")
    assert not pre.is_displayed()  # collapsed until asked
    group.find_element("tag name", "summary").click()
    assert pre.is_displayed() and pre.get_attribute("textContent") == trace  # whole, newlines kept
    assert "monospace" in pre.value_of_css_property("font-family").lower()
    assert pre.get_attribute("textContent").rstrip().splitlines()[-1].startswith("ZeroDivisionError")
    # a move's info shows its traceback, collapsible too
    group.find_element("css selector", f"p a[href='#ply={erred[1]}']").click()
    assert ply_of(browser) == erred[1]
    details = browser.find_element("css selector", "#move-info details.trace")
    assert "ZeroDivisionError" in details.find_element("tag name", "summary").text
    assert details.find_element("tag name", "pre").get_attribute("textContent") == trace
    # its stderr printed the traceback at every error (the record keeps the log's end): once on
    # the page, with the count
    log = browser.find_element("id", f"log-{seat}")
    text = record.logs[str(seat)]
    printed = text.count("Traceback (most recent call last):")
    assert printed >= 2
    if not text.startswith("Traceback"):  # the record keeps the log's end: it starts inside one
        assert trace.rstrip("\n").endswith(text[:text.index("Traceback")].lstrip(".").rstrip("\n"))
        printed += 1
    traces = log.find_elements("css selector", "details.trace")
    assert len(traces) == 1 and f"× {printed}" in traces[0].text
    assert not log.find_elements("css selector", "pre.log")  # nothing else in it
    assert errors_in_log(browser) == []
    screenshot(browser, shots / "site-game-errors.png")
    try:  # open, the blocks scroll inside the page, not the page sideways
        browser.set_window_size(PHONE_PX, PHONE_HEIGHT_PX)
        browser.execute_script("document.querySelectorAll('details').forEach(e => e.open = true)")
        assert browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
    finally:
        browser.set_window_size(WIDE_PX, HEIGHT_PX)


def test_a_bot_that_never_starts_shows_what_it_printed_whole(sites, browser):
    site = sites["freedom"]
    records = [g.record for g in stored(site) if "syntax" in g.record.players]
    assert len(records) == 6 and all(r.forfeit for r in records)
    for record in records[:2]:
        printed = record.forfeit["detail"].partition("; it printed:\n")[2]
        assert "SyntaxError" in printed and "\n" in printed
        browser.get(game_page(site, record.game_id))
        block = browser.find_element("css selector", ".forfeit-line details.trace")
        assert "SyntaxError" in block.find_element("tag name", "summary").text
        pre = block.find_element("tag name", "pre")
        assert pre.get_attribute("textContent") == printed
        assert "monospace" in pre.value_of_css_property("font-family").lower()
        assert browser.page_source.count("SyntaxError: ") >= 1
        text = browser.find_element("css selector", ".forfeit-line p").text
        assert "it printed" not in text and "\n" not in text
    try:
        browser.set_window_size(PHONE_PX, PHONE_HEIGHT_PX)
        browser.execute_script("document.querySelectorAll('details').forEach(e => e.open = true)")
        assert browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
    finally:
        browser.set_window_size(WIDE_PX, HEIGHT_PX)


# --- 5. marks, captured stones, domes ---

def marks_shown(driver) -> list[tuple[str, str]]:
    return sorted(tuple(m) for m in driver.execute_script(
        "return Array.from(document.querySelectorAll('#board .mark'))"
        ".map(e => [e.getAttribute('data-kind'), e.getAttribute('data-at')]);"))


def look(driver, kind: str) -> tuple[str, str, str]:
    element = driver.find_element("css selector", f"#board .mark.{kind}")
    return tuple(element.value_of_css_property(p) for p in ("stroke", "stroke-dasharray", "stroke-width"))


def test_from_to_and_build_are_marked_each_their_own_way(sites, browser):
    site = sites["santorini"]
    record = max((g.record for g in stored(site)), key=lambda r: len(r.moves))
    moves = record.move_list()
    n = next(i for i, m in enumerate(moves, 1) if i > 2 and len(m.split()) == 3)
    start, to, build = moves[n - 1].split()
    browser.get(game_page(site, record.game_id, f"#ply={n}"))
    assert marks_shown(browser) == sorted([("from", start), ("to", to), ("build", build)])
    looks = {kind: look(browser, kind) for kind in ("from", "to", "build")}
    assert len(set(looks.values())) == 3, looks
    assert f"from {start}, to {to}, build {build}" in browser.find_element("id", "move-info").text
    browser.get(game_page(site, record.game_id, "#ply=1"))  # placing both workers
    assert marks_shown(browser) == sorted(("to", q) for q in moves[0].split())
    assert errors_in_log(browser) == []


def test_a_removed_morris_stone_is_marked_and_shown_leaving(sites, browser, shots):
    site = sites["morris"]
    found = [(g.record, n) for g in stored(site) for n, m in enumerate(g.record.move_list(), 1) if "x" in m]
    assert found, "no mill was closed in the morris games"
    record, n = found[0]
    move = record.move_list()[n - 1]
    states = wire_states(record)
    removed = move.split("x")[1]
    from rules.morris import POINTS

    was = states[n - 1]["board"][POINTS.index(removed)]
    browser.get(game_page(site, record.game_id, f"#ply={n}"))
    kinds = dict((at, kind) for kind, at in marks_shown(browser))
    assert kinds[removed] == "removed"
    assert set(kinds.values()) <= {"from", "to", "removed"} and "to" in kinds.values()
    ghost = browser.find_element("css selector", f"#board .ghost[data-at='{removed}']")
    assert f"seat{'WB'.index(was)}" in ghost.get_attribute("class")
    assert float(ghost.value_of_css_property("opacity")) < 1
    assert shown_pieces(browser) == expected_pieces(states[n])  # the ghost is not a piece
    assert look(browser, "removed") != look(browser, "to")
    screenshot(browser, shots / "site-game-morris-removed.png")


def test_captured_fanorona_stones_are_shown_leaving(sites, browser, shots):
    site = sites["fanorona"]
    seen = 0
    for g in stored(site):
        states = wire_states(g.record)
        for n in range(1, len(states)):
            mover = "WB"[states[n - 1]["seat"]]
            theirs = "B" if mover == "W" else "W"
            taken = sorted(f"{chr(65 + c)}{r + 1}" for r, row in enumerate(states[n - 1]["board"])
                           for c, ch in enumerate(row) if ch == theirs and states[n]["board"][r][c] != theirs)
            if not taken or seen >= 3:
                continue
            seen += 1
            browser.get("about:blank")
            browser.get(game_page(site, g.record.game_id, f"#ply={n}"))
            ghosts = browser.find_elements("css selector", "#board .ghost")
            assert sorted(e.get_attribute("data-at") for e in ghosts) == taken
            assert all(f"seat{'WB'.index(theirs)}" in e.get_attribute("class") for e in ghosts)
            assert shown_pieces(browser) == expected_pieces(states[n])
            kinds = marks_shown(browser)
            assert sorted(at for kind, at in kinds if kind == "captured") == taken
            path = g.record.move_list()[n - 1].split("-")
            assert ("from", path[0]) in kinds and ("to", re.sub("[AW]$", "", path[-1])) in kinds
            said = re.search(r"captured ([A-Z0-9 ]+)", browser.find_element("id", "move-info").text)
            assert said and sorted(said.group(1).split()) == taken
            if seen == 1:
                screenshot(browser, shots / "site-game-fanorona-captured.png")
            if n < len(states) - 1:  # a move later they are gone
                browser.find_element("id", "next").click()
                assert not browser.find_elements("css selector", f"#board .ghost[data-at='{taken[0]}']")
    assert seen, "no capture in the fanorona games"


def santorini_game_with_a_dome(seed_from: int = 1):
    """A real Santorini game (random legal moves, rules-checked) in which a dome is built."""
    game = rules.load("santorini")
    for seed in range(seed_from, seed_from + 500):
        rng = random.Random(seed)
        state, moves = game.start(), []
        while not state.is_over():
            legal = state.legal_moves()
            climbs = [m for m in legal if len(m.split()) == 2]  # random play, but no early win
            move = rng.choice([m for m in legal if m not in climbs] or legal)
            moves.append(move)
            state = state.play(move)
            if any(4 in row for row in state.to_wire()["levels"]):
                return moves
    raise AssertionError("no dome in 500 random games")


def test_a_dome_is_drawn_as_a_dome(tmp_path, browser, shots):
    from arena.match.records import GameRecord, MoveRecord
    from arena.site import SiteBuilder
    from arena.tournament.store import StoredGame

    moves = santorini_game_with_a_dome()
    record = GameRecord(game_id="ann-vs-bob-g0", game="santorini", params={}, players=["ann", "bob"],
                        time_control="1", moves=[MoveRecord(i, i % 2, m, 0.01) for i, m in enumerate(moves)],
                        reason="unfinished")
    fingerprint = {"name": "dome", "game": "santorini", "params": {}, "time_control": "1", "seed": 1,
                   "games_per_pairing": 1, "bots": [{"name": "ann", "command": "random"},
                                                    {"name": "bob", "command": "random"}]}

    class Given(SiteBuilder):  # this game as a store holding it would give it
        def load(self):
            return fingerprint, [StoredGame("ann-vs-bob", 0, record)]

    Given(tmp_path).build()
    states = wire_states(record)
    levels = {f"{'ABCDE'[r]}{c + 1}": v
              for r, row in enumerate(states[-1]["levels"]) for c, v in enumerate(row)}
    domes = [at for at, v in levels.items() if v == 4]
    assert domes
    browser.get(url(tmp_path / "site" / "games" / "ann-vs-bob-g0.html", f"#ply={len(moves)}"))
    assert shown_pieces(browser) == expected_pieces(states[-1])
    for at in domes:
        tower = browser.find_element("css selector", f"#board .tower[data-at='{at}']")
        assert tower.get_attribute("data-piece") == "dome"
        assert tower.find_elements("css selector", ".dome-shine")
        assert tower.find_element("css selector", ".dome").get_attribute("fill") == "url(#dome-shade)"
        assert not tower.find_elements("css selector", ".level-label")  # never the number "3"
        assert "dome" in tower.find_element("tag name", "title").get_attribute("textContent")
    for at in (at for at, v in levels.items() if v == 3):
        label = browser.find_element("css selector", f"#board .tower[data-at='{at}'] .level-label")
        assert label.text == "3"
    assert errors_in_log(browser) == []
    screenshot(browser, shots / "site-game-santorini-dome.png")


# --- 6. links ---

def test_names_lead_to_bot_pages_and_games_to_their_neighbours(sites, browser):
    site = sites["freedom"]
    browser.get(url(site / "games.html"))
    order = [r.get_attribute("data-game") for r in browser.find_elements("css selector", "#games tbody tr")]
    assert len(order) == 12
    browser.get(game_page(site, order[0]))
    assert not browser.find_elements("id", "previous-game")
    walked = [order[0]]
    while browser.find_elements("id", "next-game"):
        browser.find_element("id", "next-game").click()
        walked.append(re.search(r"/games/([^/#]+)\.html", browser.current_url).group(1))
    assert walked == order
    browser.find_element("id", "previous-game").click()
    assert f"/games/{order[-2]}.html" in browser.current_url
    players = browser.find_elements("css selector", "h1 a.player")
    record = next(g.record for g in stored(site) if g.record.game_id == order[-2])
    assert [a.text for a in players] == record.players
    players[1].click()
    assert browser.current_url.endswith(f"/bots/{record.players[1]}.html")
    assert browser.find_element("tag name", "h1").text == record.players[1]
    assert errors_in_log(browser) == []
