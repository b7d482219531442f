"""Issue 32: every starter kit, through either channel, passes a course's move-generation phase with
its own generator and fails it with a planted bug, the student seeing the positions on its own season
page. A real `arena course serve`; the kits (C++, Java over JeroMQ, Java over the text protocol, C#,
python-stdio) zipped and uploaded as students do: half through the web form, half with
`arena course submit` from the terminal; each built in the sandbox by its own build.sh. The C++ kit
is zipped with the binary its student built (the process's `built_kit`, as tests/test_course_season.py
does): the server's `make` finds it up to date, and g++ does not run a second time for the same
binary (the kit compiled in the server's sandbox: tests/test_course_engine.py). Domineering 4x4: the
kits' sample generators cover Domineering (examples/kits/README.md)."""
from __future__ import annotations

import io
import shutil
import textwrap
import time
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import require
from course_helpers import (
    Server,
    arena,
    csrf_of,
    invite_links,
    make_course,
    signed_in,
    submitted_id,
    wait_phase_checks,
)
from test_course_engine import kit_zip

from arena.cell import sandbox

KIT_TOOLS = {"cpp": ("g++",), "java": ("javac", "java"), "java-stdio": ("javac", "java"),
             "csharp": ("mcs", "mono"), "python-stdio": ("python3",)}
KITS = Path(__file__).resolve().parents[1] / "examples" / "kits"
STUDENTS = [(f"k{n}", kit) for n, kit in enumerate(KIT_TOOLS, 1)] + [("k9", "python-stdio")]
"""Each kit once, unmodified; k9: the python-stdio kit with a bug planted in its generator."""
PLANTED = ("r + 1 < rows", "r + 2 < rows")
"""The bug: vertical dominoes on the top row but one are forgotten (tests/test_kits.py plants it too)."""
T0 = datetime.now(UTC).replace(microsecond=0)


def season() -> str:
    return textwrap.dedent(f"""
        [[phases]]
        name = "move generation"
        deadline = {(T0 + timedelta(hours=2)).isoformat()}
        requires = {{ legal = {{ positions = 12, timeout_s = 5 }} }}
        """)


def with_binary(data: bytes, binary: Path) -> bytes:
    """The zip `data` with the built `binary` added as `bot`, last: extracted last, it is newer than
    bot.cpp, so the kit's make finds it up to date."""
    buffer = io.BytesIO(data)
    with zipfile.ZipFile(buffer, "a", zipfile.ZIP_DEFLATED) as archive:
        assert "bot" not in archive.namelist()
        info = zipfile.ZipInfo("bot")
        info.external_attr = 0o755 << 16
        archive.writestr(info, binary.read_bytes())
    return buffer.getvalue()


@pytest.fixture(scope="module")
def played(tmp_path_factory, built_kit):
    reason = sandbox.unavailable_reason()
    require(reason is None, f"bots cannot be sandboxed here: {reason}")
    for kit, tools in KIT_TOOLS.items():
        for tool in tools:
            require(shutil.which(tool), f"{tool} not installed: the {kit} kit cannot be built "
                                        "(.ci/run installs it)")
    roster = [(sid, f"Kit {kit}", f"{sid}@example.org", "") for sid, kit in STUDENTS]
    directory = make_course(tmp_path_factory.mktemp("kits") / "course", roster=roster, time="2")
    (directory / "course.toml").write_text((directory / "course.toml").read_text() + season())
    server = Server(directory, concurrency=2)
    try:
        links = invite_links(directory, server.url)
        clients = {sid: signed_in(server.url, links[sid]) for sid, _ in STUDENTS}
        channel = {}
        for n, (sid, kit) in enumerate(STUDENTS):
            edit = {}
            if sid == "k9":
                source = (KITS / kit / "bot.py").read_text()
                assert PLANTED[0] in source, "the kit's generator changed: plant the bug anew"
                edit = {"bot.py": source.replace(*PLANTED).encode()}
            data = kit_zip(kit, edit)
            if kit == "cpp":
                data = with_binary(data, built_kit("cpp")[0] / "bot")
            protocol = "v1" if kit in ("cpp", "java") else "stdio"
            if n % 2 == 0:  # the web form
                client = clients[sid]
                form = {"csrf": csrf_of(client.get("/me").text), "protocol": protocol}
                files = {"file": (f"{kit}.zip", data, "application/zip")}
                submitted_id(client.post("/me/submit", data=form, files=files))
                channel[sid] = "web"
            else:  # the terminal
                path = directory.parent / f"{sid}.zip"
                path.write_bytes(data)
                code, out, err = arena("course", "token", str(directory), sid)
                assert code == 0, err
                code, out, err = arena("course", "submit", server.url, str(path), "--token", out.strip(),
                                       "--protocol", protocol)
                assert code == 0, err
                channel[sid] = "terminal"
        deadline = time.monotonic() + 600
        seasons: dict[str, dict] = {}
        while time.monotonic() < deadline:
            rows = [clients[sid].get("/me/submissions.json").json()["submissions"] for sid, _ in STUDENTS]
            if all(r and r[0]["finished"] for r in rows):
                break
            time.sleep(1)
        for sid, _ in STUDENTS:
            rows = clients[sid].get("/me/submissions.json").json()["submissions"]
            assert rows and rows[0]["status"] == "qualified", (sid, rows, server.errors())
        wait_phase_checks(directory)  # the server's thread runs the move-generation checks
        for sid, _ in STUDENTS:
            seasons[sid] = clients[sid].get("/me/season.json").json()
        pages = {sid: clients[sid].get("/me/season").text for sid, _ in STUDENTS}
        yield seasons, pages, channel
        for client in clients.values():
            client.close()
    finally:
        assert server.stop() == 0, server.errors()


def phase(season_json: dict) -> dict:
    [found] = [p for p in season_json["phases"] if p["name"] == "move generation"]
    return found


@pytest.mark.parametrize(("sid", "kit"), STUDENTS[:-1])
def test_every_kit_passes_the_move_generation_phase_through_either_channel(played, sid, kit):
    seasons, pages, channel = played
    found = phase(seasons[sid])
    assert found["passed"], (kit, channel[sid], found)
    assert "agreed with the rules on 12 of 12 positions" in found["evidence"], found
    assert "where your move generator differs" not in pages[sid]


def test_a_planted_bug_fails_the_phase_and_the_student_sees_the_positions(played):
    seasons, pages, channel = played
    found = phase(seasons["k9"])
    assert not found["passed"] and "first disagreement: left out" in found["evidence"], found
    assert found["positions"], found
    assert "where your move generator differs from the rules" in pages["k9"]
    assert 'class="board position domineering"' in pages["k9"]
