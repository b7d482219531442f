"""One standings model everywhere, and a site another user can read.

A round-robin, a gauntlet and a Swiss with an odd field (byes, forfeits, a double forfeit), each
played for real (Domineering 4x4: the shipped `random` and `greedy`, and tests/bots/broken.py's
`crash`, `nohello` and `syntax` for forfeits) and published with `arena publish`. For each, the
standings tables the site shows, read in headless chromium, equal the ones `arena standings`
prints, row by row and column by column; a Swiss's rounds page equals its rounds table; score %
never exceeds 100. The site's files are 0644 and its folders 0755 whatever the umask, and a web
server running as `nobody` serves every one of them, while the run's database, lock and folder
stay private (0600/0700).
"""
from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import require
from test_site import url  # the browser fixture (headless Debian chromium) is tests/conftest.py's

from arena.tournament import config, runner
from arena.tournament.store import DB_NAME

ROOT = Path(__file__).resolve().parents[1]
BROKEN = ROOT / "tests" / "bots" / "broken.py"
NOBODY = 65534
SYSTEM_PYTHON = "/usr/bin/python3"
"""A Python that `nobody` can run (the tests' own may live under /root)."""

CRASHER = f"{sys.executable} {BROKEN} crash"
NO_HELLO = f"{sys.executable} {BROKEN} nohello"
SYNTAX = f"{sys.executable} {BROKEN} syntax"
TOURNAMENTS = {
    # name: (format keys, bots)
    "rr": ("", [("random", "random"), ("greedy", "greedy"), ("crasher", CRASHER)]),
    "gauntlet": ('format = "gauntlet"\nchallengers = ["greedy", "crasher"]\n',
                 [("random", "random"), ("greedy", "greedy"), ("crasher", CRASHER), ("mute", NO_HELLO)]),
    # round 1 pairs the file's order: random-greedy, mute-broken (neither starts: a double
    # forfeit); crasher has the bye. [site] show_commands = false hides the commands and paths.
    "swiss": ('format = "swiss"\nrounds = 3\n[site]\nshow_commands = false\n',
              [("random", "random"), ("greedy", "greedy"), ("mute", NO_HELLO), ("broken", SYNTAX),
               ("crasher", CRASHER)]),
}


def tournament_file(directory: Path, name: str) -> Path:
    extra, bots = TOURNAMENTS[name]
    head, _, site = extra.partition("[site]")
    text = (f'name = "{name}"\ngame = "domineering"\ntime = "2"\ngames_per_pairing = 2\nseed = 5\n{head}'
            '[params]\nrows = 4\ncols = 4\n')
    text += f"[site]{site}" if site else ""
    text += "".join(f'[[bots]]\nname = "{n}"\ncommand = "{c}"\n' for n, c in bots)
    path = directory / f"{name}.toml"
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> dict[str, tuple[Path, Path, Path]]:
    """name -> (tournament file, results directory, site): each tournament played for real under a
    permissive umask (what stays private must be made so by arena, not by the umask), then
    published with --out into a folder anyone may enter (the way to a site must be open too)."""
    from arena.cli import main

    base = tmp_path_factory.mktemp("standings")
    public = Path(tempfile.mkdtemp(prefix="arena-public-"))
    os.chmod(public, 0o755)
    out = {}
    before = os.umask(0o022)
    try:
        for name in TOURNAMENTS:
            path = tournament_file(base, name)
            with ThreadPoolExecutor(2) as pool:
                summary = runner.run(config.load(path), base / "results", executor=pool, progress=None)
            assert not summary.failures and summary.missing == 0, summary.failures
            site = public / name
            assert main(["publish", str(path), "--results", str(base / "results"), "--out", str(site)]) == 0
            out[name] = (path, base / "results" / name, site)
    finally:
        os.umask(before)
    yield out
    shutil.rmtree(public, ignore_errors=True)


# --- `arena standings` and the page, read as a person reads them ---

def printed_tables(text: str) -> list[list[dict[str, str]]]:
    """Every table `arena standings` printed (tabulate's simple format): a list of rows, each
    column name -> the text in its column (columns found from the dashes under the header)."""
    tables = []
    for block in text.split("\n\n"):
        lines = block.splitlines()
        if len(lines) < 2 or not re.fullmatch(r"[- ]+", lines[1]):
            continue
        spans = [m.span() for m in re.finditer(r"-+", lines[1])]
        names = [lines[0][a:b].strip() for a, b in spans]
        tables.append([{n: line[a:b].strip() for n, (a, b) in zip(names, spans, strict=True)}
                       for line in lines[2:]])
    return tables


def standings_printed(capsys, path: Path, results: Path) -> tuple[str, list[list[dict[str, str]]]]:
    from arena.cli import main

    assert main(["standings", str(path), "--results", str(results.parent)]) == 0
    text = capsys.readouterr().out
    return text, printed_tables(text)


def standings_shown(driver) -> list[list[dict[str, str]]]:
    """Every standings table of the page open in `driver`: rows of column key -> cell text."""
    out = []
    for table in driver.find_elements("css selector", "table.standings"):
        keys = [th.get_attribute("data-key") for th in table.find_elements("css selector", "thead th")]
        rows = []
        for tr in table.find_elements("css selector", "tbody tr"):
            cells = [td.text.strip() for td in tr.find_elements("css selector", "td")]
            rows.append(dict(zip(keys, cells, strict=True)))
        out.append(rows)
    return out


@pytest.mark.parametrize("name", list(TOURNAMENTS))
def test_the_sites_standings_are_arena_standings_row_by_row(published, browser, capsys, name):
    path, results, site = published[name]
    text, printed = standings_printed(capsys, path, results)
    printed_standings = [t for t in printed if t and "rank" in t[0]]
    browser.get(url(site / "index.html"))
    shown = standings_shown(browser)
    assert len(shown) == len(printed_standings) == (2 if name == "gauntlet" else 1)
    for on_page, in_terminal in zip(shown, printed_standings, strict=True):
        assert len(on_page) == len(in_terminal) > 0
        for page_row, terminal_row in zip(on_page, in_terminal, strict=True):
            assert page_row == terminal_row
        for row in on_page:
            assert float(row["score %"]) <= 100.0, row
            assert row["rank"].rstrip("=").isdigit()
    ranks = [row["rank"] for table in shown for row in table]
    for rank in {r for r in ranks if r.endswith("=")}:  # a shared rank is shown on every bot that shares it
        assert ranks.count(rank) >= 2
    played = re.search(r"(\d+)/(\d+) games played", text)
    assert played and played.group(1) == played.group(2)
    shown = browser.find_element("id", "played").text  # "; N played under load" may follow
    assert shown.split(";")[0] == f"{played.group(1)} of {played.group(2)} played", shown
    assert "rows=4, cols=4" in browser.find_element("css selector", "dl.facts").text  # the game's order
    csv_text = (results / "standings.csv").read_text()
    score = csv_text.splitlines()[0].split(",").index("score %")
    assert all(float(line.split(",")[score]) <= 100.0 for line in csv_text.splitlines()[1:])


def test_a_gauntlet_ranks_its_challengers_apart_from_its_field(published, browser):
    _, _, site = published["gauntlet"]
    browser.get(url(site / "index.html"))
    challengers, fields = ([row["bot"] for row in table] for table in standings_shown(browser))
    assert sorted(challengers) == ["crasher", "greedy"] and sorted(fields) == ["mute", "random"]
    heads = [th.text for th in browser.find_elements("css selector", "#crosstable thead th")]
    rows = [th.text for th in browser.find_elements("css selector", "#crosstable tbody th")]
    assert heads[1:] == fields and [r.split(maxsplit=1)[-1] for r in rows] == challengers  # "1 crasher"


def test_a_swiss_has_byes_counted_and_a_rounds_page(published, browser, capsys):
    path, results, site = published["swiss"]
    text, printed = standings_printed(capsys, path, results)
    standings, rounds = printed[0], printed[-1]
    assert "round" in rounds[0] and "Rounds" in text
    byes = [r for r in rounds if r["points"].startswith("bye")]
    assert len(byes) == 3 and {r["points"] for r in byes} == {"bye: 2"}
    by_bot = {r["bot"]: r for r in standings}
    for bot in by_bot:  # the byes column counts byes (a bye's 2 points are in points, not there)
        assert by_bot[bot]["byes"] == str(sum(1 for r in byes if r["bot"] == bot))
    assert by_bot["crasher"]["byes"] == "1"  # round 1's bye: the lowest of the file's order
    double = [r for r in rounds if r["round"] == "1" and {r["bot"], r["opponent"]} == {"mute", "broken"}]
    assert double and double[0]["points"] == "0-0"  # neither could start: a double forfeit
    assert "double_forfeit 2" in by_bot["mute"]["forfeit reasons"]
    browser.get(url(site / "index.html"))
    browser.find_element("link text", "Round by round").click()
    assert browser.current_url.endswith("/rounds.html")
    shown = [[td.text.strip() for td in tr.find_elements("css selector", "td")]
             for tr in browser.find_elements("css selector", "table.rounds tbody tr")]
    assert shown == [[r["bot"], r["points"], r["opponent"], r["games"]] for r in rounds]
    assert [h.text for h in browser.find_elements("css selector", "h2")] == ["Round 1", "Round 2", "Round 3"]


def test_show_commands_false_hides_commands_and_paths(published):
    hidden_site, shown_site = published["swiss"][2], published["rr"][2]
    assert str(BROKEN) in (shown_site / "bots" / "crasher.html").read_text()  # shown by default
    where = str(BROKEN.parent)
    assert "bots/broken.py" not in (hidden_site / "bots" / "crasher.html").read_text()
    texts = [p.read_text(encoding="utf-8") for p in hidden_site.rglob("*") if p.suffix in (".html", ".json")]
    assert not [t for t in texts if where in t or sys.executable in t]
    broken = (hidden_site / "bots" / "broken.html").read_text()
    assert "SyntaxError" in broken and "…/broken.py" in broken  # its traceback, without the directory


def test_an_unknown_key_of_site_is_refused(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text('game = "domineering"\n[site]\nshow_command = false\n'
                    '[[bots]]\nname = "a"\ncommand = "random"\n[[bots]]\nname = "b"\ncommand = "random"\n')
    with pytest.raises(config.TournamentError, match=r"t\.toml: site\.show_command: unknown key "
                                                      r"\(known: show_commands\)"):
        config.load(path)
    path.write_text(path.read_text().replace("show_command = false", 'show_commands = "no"'))
    with pytest.raises(config.TournamentError, match="site.show_commands: must be true or false"):
        config.load(path)


# --- who may read what ---

def modes(folder: Path) -> dict[str, int]:
    return {p.relative_to(folder).as_posix(): stat.S_IMODE(p.stat().st_mode) for p in folder.rglob("*")}


def test_site_files_are_world_readable_and_the_results_private(published, tmp_path):
    from arena.cli import main

    for _, results, site in published.values():
        assert stat.S_IMODE(site.stat().st_mode) == 0o755
        found = modes(site)
        assert {f for f, m in found.items() if m != (0o755 if (site / f).is_dir() else 0o644)} == set()
        assert "index.html" in found and "static/boards/domineering.js" in found
        assert stat.S_IMODE(results.stat().st_mode) == 0o700  # played under umask 022
        for private in (DB_NAME, runner.LOCK_NAME, DB_NAME + "-wal", DB_NAME + "-shm"):
            if (results / private).exists():
                assert stat.S_IMODE((results / private).stat().st_mode) == 0o600, private
    # the default place (results/<name>/site/), and a site first written private by an older arena
    path, results, _ = published["rr"]
    before = os.umask(0o077)
    try:
        assert main(["publish", str(path), "--results", str(results.parent)]) == 0
        default = results / "site"
        os.chmod(default / "index.html", 0o600)
        os.chmod(default / "bots", 0o700)
        assert main(["publish", str(path), "--results", str(results.parent)]) == 0
    finally:
        os.umask(before)
    assert set(modes(default).values()) == {0o644, 0o755}
    assert stat.S_IMODE(default.stat().st_mode) == 0o755


def test_a_web_server_running_as_nobody_serves_every_file(published):
    require(os.geteuid() == 0 and shutil.which("setpriv") and Path(SYSTEM_PYTHON).is_file(),
            f"needs root, setpriv (util-linux) and {SYSTEM_PYTHON} to serve the site as nobody")
    for _, _, site in published.values():
        server = subprocess.Popen(
            ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
             SYSTEM_PYTHON, "-u", "-m", "http.server", "--bind", "127.0.0.1", "0"],
            cwd=site, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            port = re.search(r"port (\d+)", server.stdout.readline())
            assert port, "http.server did not start as nobody"
            base = f"http://127.0.0.1:{port.group(1)}/"
            files = sorted(p for p in site.rglob("*") if p.is_file())
            assert len(files) > 10
            for file in files:
                with urllib.request.urlopen(base + file.relative_to(site).as_posix(), timeout=10) as answer:
                    assert answer.status == 200 and answer.read() == file.read_bytes(), file
            # the check has teeth: a file only root may read is refused to nobody
            secret = site / "private.txt"
            secret.write_text("not for the web\n")
            os.chmod(secret, 0o600)
            try:
                with pytest.raises(urllib.error.HTTPError):
                    urllib.request.urlopen(base + "private.txt", timeout=10)
            finally:
                secret.unlink()
        finally:
            server.terminate()
            server.wait(timeout=10)
            server.stdout.close()
