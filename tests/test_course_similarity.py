"""The copying check as staff run it (issue 33, arena/course/season/similarity.py): planted copies
found and honest bots from one kit left alone (benchmarks/similarity_corpus.py), pastes from the
shipped reference bots found, a copy split over two files scored over all of them, the same
scores whatever PYTHONHASHSEED, `[similarity] min_match_tokens`, and near-identical submissions
shown once as a cluster on the real server's staff page and by `arena course similarity`."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from course_helpers import Server, arena, signed_in
from test_course_ladder import activate, make_course

from arena.course.course import Course
from arena.course.season import similarity

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from similarity_corpus import HONEST, corpus, rename, with_kit  # noqa: E402

SCORES = """
import json, sys
sys.path[:0] = [{root!r}, {bench!r}]
from similarity_corpus import corpus
from arena.course.season import similarity
sources, _ = corpus()
pairs = similarity.compare(sources, 0.0, published=similarity.published_sources())
print(json.dumps([[p.a, p.b, p.score, [[m.a_lines, m.b_lines] for m in p.passages]] for p in pairs]))
"""


def test_planted_copies_are_flagged_and_honest_bots_from_one_kit_are_not():
    sources, copies = corpus()
    pairs = similarity.compare(sources, 0.0, published=similarity.published_sources())
    flagged = {(p.a, p.b) for p in pairs if p.score >= similarity.DEFAULT_THRESHOLD}
    assert flagged == copies, (sorted(flagged - copies), sorted(copies - flagged))
    honest = [p for p in pairs if p.a.startswith("h") and p.b.startswith("h")]
    assert max(p.score for p in honest) < 0.4, max(honest, key=lambda p: p.score)
    paste = next(p for p in pairs if (p.a, p.b) == ("p01", "published:bots/"))
    assert paste.published and paste.score >= 0.9
    shown = {m.b_file for m in paste.passages}
    assert shown == {"bots/search.py", "bots/evaluation.py"}, shown  # covered across both files
    split = next(p for p in pairs if (p.a, p.b) == ("c04", "h07"))  # helpers moved to safety.py, renamed
    assert split.a_share >= 0.9 and {m.a_file for m in split.passages} == {"bot.py", "safety.py"}


def test_the_scores_do_not_depend_on_the_hash_seed():
    outputs = []
    for seed in ("0", "4242"):
        script = SCORES.format(root=str(ROOT), bench=str(ROOT / "benchmarks"))
        done = subprocess.run([sys.executable, "-c", script],
                              env={**os.environ, "PYTHONHASHSEED": seed}, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr
        outputs.append(json.loads(done.stdout))
    assert outputs[0] == outputs[1]
    assert len(outputs[0]) > 10  # pairs scored above 0, honest ones too: all compared


def _cluster_course(tmp_path: Path, extra: str = "") -> Path:
    directory = make_course(tmp_path / "c", 6)
    if extra:
        text = (directory / "course.toml").read_text()
        (directory / "course.toml").write_text(text.replace("[ladder]\n", extra + "\n[ladder]\n"))
    course = Course(directory, sandbox="off")
    command = [sys.executable, "-m", "bots", "random"]
    original = with_kit(HONEST["h04"])
    activate(course, "s1", command, original.encode())
    for n, names in ((2, {"board": "b"}), (3, {"Board": "Grid", "grid": "cells"}),
                     (4, {"negamax": "search", "child": "kid"})):
        activate(course, f"s{n}", command, rename(original, names).encode())
    sources, _ = corpus()
    activate(course, "s5", command, dict(sources["p01"])["bot.py"].encode())  # the alphabeta paste
    activate(course, "s6", command, with_kit(HONEST["h07"]).encode())  # honest
    course.close()
    return directory


def test_a_cluster_is_shown_once_on_the_staff_page_with_the_paste_from_the_reference_bots(tmp_path):
    directory = _cluster_course(tmp_path)
    code, out, err = arena("course", "similarity", str(directory))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("cluster of 4: s1, s2, s3, s4 (6 pairs above the threshold"), out
    heads = [line for line in lines if " ~ " in line and not line.startswith(" ")]
    assert len(heads) == 3 + 1, out  # the cluster's spanning tree, the paste
    paste = next(line for line in lines if "s5 (Student 5) ~ the published code bots/" in line)
    assert "of s5's code is published code" in paste and "s6" not in out, out
    server = Server(directory)
    try:
        code, added, err = arena("course", "staff", "add", str(directory), "teacher", "--url", server.url)
        assert code == 0, err
        staff = signed_in(server.url, added.strip().splitlines()[-1])
        page = staff.get("/staff/similarity")
        assert page.status_code == 200, page.text
        assert page.text.count('class="cluster"') == 2
        assert 'data-members="s1 s2 s3 s4"' in page.text and 'data-members="s5 published:bots/"' in page.text
        assert page.text.count('class="pair"') == 4  # the cluster's three joining pairs, the paste
        assert "bots/search.py lines" in page.text and "s6" not in page.text.split("<h1>", 1)[1]
        assert staff.get("/staff/similarity?threshold=2").status_code == 400
        staff.close()
    finally:
        server.stop()


def test_min_match_tokens_is_read_from_course_toml_and_checked(tmp_path):
    directory = _cluster_course(tmp_path, "[similarity]\nmin_match_tokens = 5000\nthreshold = 0.3")
    code, out, err = arena("course", "similarity", str(directory))
    assert code == 0 and out == "no pair above the threshold\n", (out, err)
    text = (directory / "course.toml").read_text().replace("min_match_tokens = 5000", "min_match_tokens = 2")
    (directory / "course.toml").write_text(text)
    code, out, err = arena("course", "check", str(directory))
    assert code != 0 and "similarity.min_match_tokens" in err and "Traceback" not in err, err
