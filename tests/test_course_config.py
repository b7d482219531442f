"""course.toml and the roster (arena/course/config/course_toml.py): the templates load as written, every bad
key or line is one error naming the file and the key or line."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from arena.course.config import course_toml as config
from arena.course.config.course_toml import CourseError, Student
from arena.course.config.sections import OWASP_FLOOR, AccountSettings
from arena.course_web.signin import weak_hashing_warning


def test_the_templates_load_with_the_games_defaults(tmp_path):
    written = config.init(tmp_path / "c", "santorini")
    assert [p.name for p in written] == ["course.toml", "roster.csv"]
    course = config.load(tmp_path / "c")
    assert (course.game, course.params, course.time_control.per_move) == ("santorini",
                                                                          {"limited_supply": False}, 5.0)
    assert (course.qualification_games, course.upload_max_bytes) == (2, 5_000_000)
    assert (course.upload_interval_s, course.storage_bytes) == (60, 50_000_000)
    assert (course.build_time_s, course.build_memory_mb, course.limits.sandbox) == (300, 2048, "on")
    assert course.build_disk_mb == 512 and "\ndisk_mb = 512 " in (tmp_path / "c" / "course.toml").read_text()
    assert (course.opens, course.deadline, course.roster) == (None, None, tmp_path / "c" / "roster.csv")
    assert config.read_roster(course.roster) == []
    assert course.accounts == AccountSettings(3, 65536, 4, False)
    assert weak_hashing_warning(course.accounts) == ""


def write(tmp_path, text: str, roster: str = "id,name,email,group\n"):
    (tmp_path / "course.toml").write_text(text)
    (tmp_path / "roster.csv").write_text(roster)
    return tmp_path


def test_every_key_is_read(tmp_path):
    course = config.load(write(tmp_path, """
        title = "Bots 101"
        game = "domineering"
        time = "10+0.5"
        clock = "cpu"
        wall_factor = 2
        qualification_games = 4
        opens = 2026-02-01T09:00:00+01:00
        deadline = "2026-03-01T23:59:00Z"
        upload_max_mb = 0.5
        upload_interval_s = 0
        storage_mb = 20
        roster = "people.csv"
        [params]
        rows = 5
        [build]
        time_s = 30
        memory_mb = 512
        disk_mb = 40
        [limits]
        memory_mb = 256
        [accounts]
        argon2_time_cost = 2
        argon2_memory_kib = 19456
        argon2_parallelism = 1
        """))
    assert course.title == "Bots 101" and course.params == {"rows": 5, "cols": 8, "first": "vertical"}
    clock = course.time_control
    assert (clock.base, clock.increment, clock.kind, clock.wall_factor) == (10, 0.5, "cpu", 2)
    assert course.opens == datetime(2026, 2, 1, 9, tzinfo=timezone(timedelta(hours=1)))
    assert course.deadline == datetime(2026, 3, 1, 23, 59, tzinfo=UTC)
    assert (course.upload_max_bytes, course.upload_interval_s) == (500_000, 0)
    assert course.storage_bytes == 20_000_000
    assert course.roster.name == "people.csv"
    assert (course.build_time_s, course.build_memory_mb, course.limits.memory_mb) == (30, 512, 256)
    assert course.build_disk_mb == 40
    assert course.accounts == AccountSettings(2, 19456, 1, False)


@pytest.mark.parametrize(("text", "expected"), [
    ('game = "chess"', "game: must be one of domineering, fanorona, freedom, morris, santorini, got 'chess'"),
    ('game = "domineering"\ncolour = 1', "colour: unknown key (known: "),
    ('game = "domineering"\n[params]\nrows = 0', "params: "),
    ('game = "domineering"\ntime = 0', "time: bad time control '0'"),
    ('game = "domineering"\nclock = "sun"', "clock: must be one of 'wall', 'cpu', got 'sun'"),
    ('game = "domineering"\nwall_factor = 2', 'wall_factor: only for clock = "cpu"'),
    ('game = "domineering"\ndeadline = 2026-03-01T23:59:00', "deadline: 2026-03-01T23:59:00 has no zone"),
    ('game = "domineering"\nopens = "next monday"', "opens: not an ISO 8601 time: 'next monday'"),
    ('game = "domineering"\nopens = 2026-03-02T00:00:00Z\ndeadline = 2026-03-01T00:00:00Z',
     "deadline: 2026-03-01T00:00:00+00:00 is not after opens"),
    ('game = "domineering"\nqualification_games = 0', "qualification_games: must be a whole number >= 1"),
    ('game = "domineering"\nupload_max_mb = -1', "upload_max_mb: must be a finite number, more than 0"),
    ('game = "domineering"\nstorage_mb = 0', "storage_mb: must be a finite number, more than 0, got 0"),
    ('game = "domineering"\nstorage_mb = "lots"', "storage_mb: must be a finite number, more than 0"),
    ('game = "domineering"\n[build]\ntime_s = "long"', "build.time_s: must be a finite number"),
    ('game = "domineering"\n[build]\ncores = 2', "build.cores: unknown key"),
    ('game = "domineering"\n[build]\ndisk_mb = 0', "build.disk_mb: must be a whole number >= 1, got 0"),
    ('game = "domineering"\n[build]\ndisk_mb = 1.5', "build.disk_mb: must be a whole number >= 1"),
    ('game = "domineering"\n[limits]\nsandbox = "off"', "limits.sandbox: a course always sandboxes"),
    ('game = "domineering"\n[limits]\nmemory_mb = -5', "limits: limit memory_mb must be a whole number"),
    ('game = "domineering"\naccounts = 3', "accounts: must be a table ([accounts]), got 3"),
    ('game = "domineering"\n[accounts]\nmemory = 1',
     "accounts.memory: unknown key (known: argon2_memory_kib, "),
    ('game = "domineering"\n[accounts]\nargon2_time_cost = 0',
     "accounts.argon2_time_cost: must be a whole number from 1 to 16, got 0"),
    ('game = "domineering"\n[accounts]\nargon2_time_cost = 2.5',
     "accounts.argon2_time_cost: must be a whole"),
    ('game = "domineering"\n[accounts]\nargon2_parallelism = true',
     "accounts.argon2_parallelism: must be a whole number from 1 to 16, got True"),
    ('game = "domineering"\n[accounts]\nargon2_memory_kib = 2097152',
     "accounts.argon2_memory_kib: must be a whole number from 1 to 1048576, got 2097152"),
    ('game = "domineering"\n[accounts]\nargon2_memory_kib = 8192',
     "accounts.argon2_memory_kib: 8192 KiB with argon2_time_cost = 3 and argon2_parallelism = 4 is below "
     "OWASP's floor (at least 47104 at argon2_time_cost = 1, 19456 at argon2_time_cost = 2, 12288 at "
     "argon2_time_cost = 3, 9216 at argon2_time_cost = 4, 7168 at argon2_time_cost = 5 or more); "
     "weak_hashing_for_tests lifts it"),
    ('game = "domineering"\n[accounts]\nargon2_time_cost = 1\nargon2_memory_kib = 47103',
     "accounts.argon2_memory_kib: 47103 KiB with argon2_time_cost = 1 and argon2_parallelism = 4 is below "
     "OWASP's floor"),
    ('game = "domineering"\n[accounts]\nweak_hashing_for_tests = "yes"',
     "accounts.weak_hashing_for_tests: must be true or false, got 'yes'"),
    ('game = "domineering"\n[accounts]\nweak_hashing_for_tests = true\nargon2_memory_kib = 16',
     "accounts.argon2_memory_kib: 16 KiB with argon2_time_cost = 3 and argon2_parallelism = 4 is below "
     "argon2's floor (at least 32 at argon2_time_cost = 1 or more)"),
    ("game = ", "not valid TOML"),
])
def test_a_bad_course_toml_is_one_line_naming_the_key(tmp_path, text, expected):
    with pytest.raises(CourseError) as caught:
        config.load(write(tmp_path, text))
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'course.toml'}: ") and "\n" not in message
    assert expected in message


@pytest.mark.parametrize(("memory", "passes"), OWASP_FLOOR)
def test_a_real_course_may_hash_at_any_of_owasps_argon2id_choices_and_no_lower(tmp_path, memory, passes):
    def settings(memory: int, passes: int) -> AccountSettings:
        return config.load(write(tmp_path, f'game = "domineering"\n[accounts]\nargon2_time_cost = {passes}\n'
                                           f"argon2_memory_kib = {memory}\nargon2_parallelism = 1")).accounts

    assert settings(memory, passes) == AccountSettings(passes, memory, 1, False)
    assert settings(memory, passes + 1) == AccountSettings(passes + 1, memory, 1, False)
    for less in ((memory - 1, passes), (memory, passes - 1)) if passes > 1 else ((memory - 1, passes),):
        with pytest.raises(CourseError, match=f"argon2_memory_kib: {less[0]} KiB with argon2_time_cost = "
                                              f"{less[1]} and argon2_parallelism = 1 is below OWASP's floor"):
            settings(*less)


def test_without_accounts_the_defaults_hold_and_the_largest_costs_are_taken(tmp_path):
    defaults = config.load(write(tmp_path, 'game = "domineering"')).accounts
    assert defaults == AccountSettings(3, 65536, 4, False)
    text = ('game = "domineering"\n[accounts]\nargon2_time_cost = 16\nargon2_memory_kib = 1048576\n'
            "argon2_parallelism = 16")
    assert config.load(write(tmp_path, text)).accounts == AccountSettings(16, 1048576, 16, False)


def test_a_test_course_may_hash_cheaply_and_says_so(tmp_path):
    settings = config.load(write(tmp_path, 'game = "domineering"\n[accounts]\nweak_hashing_for_tests = true\n'
                                           "argon2_time_cost = 1\nargon2_memory_kib = 8\n"
                                           "argon2_parallelism = 1")).accounts
    assert settings == AccountSettings(1, 8, 1, True)
    assert weak_hashing_warning(settings).startswith("WARNING: TEST COURSE: course.toml's [accounts] "
                                         "weak_hashing_for_tests = true: password hashes "
                                         "(argon2id t=1, 8 KiB, p=1) may be below OWASP's floor")


def test_a_missing_course_says_how_to_make_one(tmp_path):
    with pytest.raises(CourseError, match=r"course.toml: no such file \(make one with: arena course init"):
        config.load(tmp_path)
    with pytest.raises(CourseError, match="unknown game 'go'"):
        config.init(tmp_path, "go")


def test_the_roster_is_read_and_bad_lines_are_named(tmp_path):
    path = tmp_path / "roster.csv"
    path.write_text("# the class\nid,name,email,group\ns1,\"Lovelace, Ada\",ada@example.org,A\n\ns2,Alan,,\n"
                    "# s3,Left Out,,\n")
    assert config.read_roster(path) == [Student("s1", "Lovelace, Ada", "ada@example.org", "A"),
                                        Student("s2", "Alan", "", "")]
    path.write_text("id,name,email\ns1,Ada,ada@example.org\n")  # no group column
    assert config.read_roster(path) == [Student("s1", "Ada", "ada@example.org", "")]
    for text, expected in [
        ("name,id,email\n", "line 1: the header must be id,name,email,group"),
        ("id,name,email\ns1,Ada,ada@x.org\ns1,Bob,bob@x.org\n", "line 3: id 's1' appears twice"),
        ("id,name,email\n../x,Ada,ada@x.org\n", "line 2: id '../x' is not usable"),
        ("id,name,email\ns1,,ada@x.org\n", "line 2: student 's1' has no name"),
        ("id,name,email\ns1,Ada,ada\n", "line 2: email 'ada' of 's1' is not an address"),
        ("id,name,email\ns1,Ada\n", "line 2: 2 fields, expected id,name,email[,group]"),
        ("", "no header line"),
    ]:
        path.write_text(text)
        with pytest.raises(CourseError) as caught:
            config.read_roster(path)
        assert str(caught.value).startswith(str(path)) and expected in str(caught.value), text


def test_the_seasons_sections_are_read_once_at_load_into_typed_frozen_values(tmp_path):
    import dataclasses

    course = config.load(write(tmp_path, """
        game = "domineering"
        [[phases]]
        name = "search"
        deadline = 2026-12-03T23:59:00+01:00
        requires = { score = { against = "greedy", at_least = 0.7, games = 10 } }
        [extensions]
        s1 = "1d 12h"
        [ladder]
        games_per_hour = 3
        time = 0.5
        [final]
        format = "swiss"
        rounds = 3
        [grading]
        bonus = [4, 2]
        [privacy]
        pseudonyms = true
        """))
    [phase] = course.season.phases
    assert (phase.name, phase.score.against, phase.score.games) == ("search", "greedy", 10)
    assert course.season.extension_for("s1") == timedelta(hours=36)
    assert course.season.extension_for("s2") == timedelta(0)
    assert (course.ladder.games_per_hour, course.ladder.time_control.per_move) == (3.0, 0.5)
    assert (course.final.format, course.final.rounds) == ("swiss", 3)
    assert (course.grading.bonus, course.privacy.pseudonyms) == ((4, 2), True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        course.final.rounds = 4  # type: ignore[misc]
    assert course.roster_problems({"s2"}) == [f"{tmp_path / 'course.toml'}: extensions.s1: no such student "
                                              "in the roster"]
    assert course.roster_problems({"s1"}) == []


def test_every_problem_of_every_section_is_told_at_load_one_line_each(tmp_path):
    """The course's own keys and each season section, checked together: one line a problem."""
    with pytest.raises(CourseError) as caught:
        config.load(write(tmp_path, """
            game = "domineering"
            upload_max_mb = -1
            [[phases]]
            name = "a"
            deadline = 2026-01-01T00:00:00
            [ladder]
            games_per_hour = true
            [final]
            games = 3
            [grading]
            timeout_penalty = -1
            [privacy]
            pseudonyms = "yes"
            """))
    lines = str(caught.value).splitlines()
    keys = [line.removeprefix(f"{tmp_path / 'course.toml'}: ").split(":")[0] for line in lines]
    assert keys == ["upload_max_mb", "phases[1].deadline", "ladder.games_per_hour", "final.games",
                    "grading.timeout_penalty", "privacy.pseudonyms"], lines


@pytest.mark.parametrize("value, bounds, ok", [
    (1, {}, True), (1.5, {"whole": True}, False), (True, {}, False), (False, {"least": 0}, False),
    (float("inf"), {}, False), (float("nan"), {}, False), ("1", {}, False), (0, {"above": 0}, False),
    (0, {"least": 0}, True), (1000, {"whole": True, "least": 1, "most": 1000}, True),
    (1e6, {"below": 1e6}, False), (2, {"most": 1}, False),
])
def test_one_number_check_for_every_key(value, bounds, ok):
    from arena.course.config import checks

    assert checks.is_number(value, **bounds) is ok


def test_times_and_durations_are_read_alike_everywhere():
    from arena.course.config import checks

    assert checks.moment("2026-03-01T23:59:00Z") == datetime(2026, 3, 1, 23, 59, tzinfo=UTC)
    for bad, why in (("2026-03-01T23:59:00", "has no zone"), ("soon", "not an ISO 8601 time"),
                     (5, "must be a time with its zone")):
        with pytest.raises(ValueError, match=why):
            checks.moment(bad)
    assert checks.duration("2d 1h") == timedelta(hours=49)
    assert checks.duration_text(timedelta(hours=49)) == "49h"
    for bad in ("", "0h", "two days", 48, None):
        with pytest.raises(ValueError):
            checks.duration(bad)


def test_the_ladder_models_course_toml_takes_are_the_ones_the_ladder_has():
    from arena.course.config.sections import LADDER_MODELS
    from arena.course.season.ladder import MODELS

    assert set(LADDER_MODELS) == set(MODELS)
