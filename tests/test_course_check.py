"""`arena course check DIR` (and the course's load, which `serve` shares): every problem of
course.toml and the roster, one line each, all of them at once; exit 0 and what was read when all
is well. A bad [final] is refused at once, not when the final is due."""
from __future__ import annotations

import pytest
from course_helpers import ROSTER, arena, make_course

from arena.course.config.course_toml import CourseError
from arena.course.course import Course


def test_a_good_course_says_what_it_read(tmp_path):
    directory = make_course(tmp_path / "c")
    code, out, err = arena("course", "check", str(directory))
    assert code == 0, err
    assert "course.toml: ok: domineering (rows=4, cols=4" in out
    assert f"roster.csv: ok: {len(ROSTER)} students" in out
    assert not (directory / "course.db").exists()  # a check opens no database
    # a test course's cheap password hashes (course_helpers.CHEAP_HASHING) are said, a real course's are not
    assert err.startswith(f"{directory / 'course.toml'}: WARNING: TEST COURSE: course.toml's [accounts] "
                          "weak_hashing_for_tests = true: password hashes (argon2id t=1, 1024 KiB, p=1)"), err
    real = make_course(tmp_path / "real", cheap_hashing=False)
    code, out, err = arena("course", "check", str(real))
    assert code == 0 and err == "" and "course.toml: ok: domineering" in out, err


def test_a_bad_final_is_one_line_at_check_and_at_load(tmp_path):
    directory = make_course(tmp_path / "c")
    with (directory / "course.toml").open("a") as f:
        f.write('\n[final]\nformat = "knockout"\n')
    code, _, err = arena("course", "check", str(directory))
    assert code == 2 and err.count("\n") == 1 and "final.format" in err and "knockout" in err, err
    with pytest.raises(CourseError, match="final.format"):  # what `serve` does first
        Course(directory, sandbox="off")


def test_every_problem_is_a_line_the_sections_with_the_courses_own_keys(tmp_path):
    directory = make_course(tmp_path / "c")
    text = (directory / "course.toml").read_text().replace("upload_interval_s = 0", 'upload_interval_s = "x"')
    text = text.replace("qualification_games = 1", "qualification_games = 0")
    text = "colour = 2\n" + text + '\n[grading]\npenalty_per = "team"\n'
    (directory / "course.toml").write_text(text)
    code, _, err = arena("course", "check", str(directory))
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 4, err  # the season's sections with course.toml's own keys
    assert "colour: unknown key" in lines[0]
    assert "qualification_games" in lines[1] and "upload_interval_s" in lines[2]
    assert "grading.penalty_per" in lines[3]
    text = text.replace("colour = 2\n", "").replace('upload_interval_s = "x"', "upload_interval_s = 0")
    text = text.replace("qualification_games = 0", "qualification_games = 1")
    text += '[privacy]\npseudonyms = "yes"\n[final]\ngames = 3\n'
    (directory / "course.toml").write_text(text)
    code, _, err = arena("course", "check", str(directory))
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 3, err
    assert ["final.games" in lines[0], "grading.penalty_per" in lines[1], "privacy.pseudonyms" in lines[2]] \
        == [True, True, True], lines
    assert all(line.startswith("arena course: error: ") for line in lines)
