"""A course's settings (`DIR/course.toml`) and its roster (`DIR/roster.csv`).

`load(directory)` reads and checks course.toml once, the season's sections with it into typed,
frozen values (config/sections.py); every problem is a line of one `CourseError` naming the file
and the key, all of them at once. `init(directory, game)` writes both files as commented templates.
The keys are documented in docs/course.md, section "course.toml".
"""
from __future__ import annotations

import csv
import io
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from arena.cell.limits import Limits
from arena.course.config import checks, sections
from arena.course.config.sections import (
    AccountSettings,
    FinalSettings,
    GradingSettings,
    LadderSettings,
    PrivacySettings,
    Season,
    SimilaritySettings,
)
from arena.match.clock import TimeControl
from arena.tournament.config import read_clock

CONFIG_NAME = "course.toml"
ROSTER_NAME = "roster.csv"
ROSTER_COLUMNS = ("id", "name", "email", "group")
STUDENT_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
"""A student id: letters, digits, `_`, `.`, `-`, at most 64 (it names folders and URLs)."""

KEYS = {"game", "params", "time", "clock", "wall_factor", "qualification_games", "opens", "deadline",
        "upload_max_mb", "upload_interval_s", "storage_mb", "roster", "build", "limits", "title", "accounts"}
SEASON_SECTIONS = ("phases", "extensions", "ladder", "final", "grading", "privacy", "similarity")
"""The season's sections (issue 25): read at load into `CourseConfig.season`, `.ladder`, `.final`,
`.grading`, `.privacy`, `.similarity` (config/sections.py); `CourseConfig.sections` keeps which were
written, as written."""
KEYS |= set(SEASON_SECTIONS)
BUILD_KEYS = {"time_s", "memory_mb", "disk_mb"}
EXAMPLE_TIME = checks.EXAMPLE_TIME
DEFAULTS = {"qualification_games": 2, "upload_max_mb": 5.0, "upload_interval_s": 60.0, "storage_mb": 50.0,
            "build_time_s": 300.0, "build_memory_mb": 2048, "build_disk_mb": 512}


class CourseError(ValueError):
    """A bad course.toml or roster.csv: one line naming the file and the key (or line)."""


@dataclass(frozen=True)
class Student:
    """One line of the roster."""

    id: str
    name: str
    email: str
    group: str = ""


@dataclass(frozen=True)
class CourseConfig:
    """Everything course.toml says, checked. `limits` are the bots' in qualification games (and
    builds' processes and file sizes); `sandbox` in them is "on" unless the server was started
    with --unsafe-no-sandbox."""

    directory: Path
    game: str
    params: dict[str, Any]
    time_control: TimeControl
    build_time_s: float = DEFAULTS["build_time_s"]
    build_memory_mb: int = DEFAULTS["build_memory_mb"]
    build_disk_mb: int = DEFAULTS["build_disk_mb"]
    """All that one build may write into its folder (MB); over it the build is stopped, failed, removed."""
    limits: Limits = field(default_factory=lambda: Limits(sandbox="on"))
    qualification_games: int = DEFAULTS["qualification_games"]
    opens: datetime | None = None
    deadline: datetime | None = None
    upload_max_bytes: int = int(DEFAULTS["upload_max_mb"] * 1_000_000)
    upload_interval_s: float = DEFAULTS["upload_interval_s"]
    storage_bytes: int = int(DEFAULTS["storage_mb"] * 1_000_000)
    """What the store may keep of one student's uploads and reports together (bytes)."""
    roster: Path = Path(ROSTER_NAME)
    title: str = ""
    sections: dict[str, Any] = field(default_factory=dict)
    """The season's sections (SEASON_SECTIONS) present in course.toml, as TOML gave them (which
    are there: a `[ladder]` runs the ladder, a `[final]` starts the final by itself)."""
    season: Season = field(default_factory=Season)
    """`[[phases]]` and `[extensions]`, checked."""
    ladder: LadderSettings = field(default_factory=LadderSettings)
    """`[ladder]`, checked (its defaults without one: then no ladder runs)."""
    final: FinalSettings = field(default_factory=FinalSettings)
    """`[final]`, checked (its defaults without one)."""
    grading: GradingSettings = field(default_factory=GradingSettings)
    privacy: PrivacySettings = field(default_factory=PrivacySettings)
    similarity: SimilaritySettings = field(default_factory=SimilaritySettings)
    accounts: AccountSettings = field(default_factory=AccountSettings)

    @property
    def path(self) -> Path:
        return self.directory / CONFIG_NAME

    def error(self, key: str, why: str) -> CourseError:
        """The one-line error for a bad `key` of course.toml (dotted: "final.format")."""
        return CourseError(f"{self.path}: {key}: {why}")

    def roster_problems(self, student_ids: set[str]) -> list[str]:
        """What course.toml says of students the roster lacks (an extension), one line each."""
        return sections.extension_problems(self.season, student_ids, self.error)


def load(directory: str | Path) -> CourseConfig:
    """The course of `directory` (its course.toml); CourseError names the file and the bad key."""
    directory = Path(directory).resolve()
    path = directory / CONFIG_NAME
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CourseError(f"{path}: no such file (make one with: arena course init {directory} "
                          "--game GAME)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CourseError(f"{path}: cannot read it: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise CourseError(f"{path}: not valid TOML: {exc}") from None
    return _Reader(path, data).config()


class _Reader:
    """One reader per key of course.toml; `bad(key, why)` is the one error."""

    def __init__(self, path: Path, data: dict[str, Any]) -> None:
        self.path = path
        self.data = data

    def bad(self, key: str, why: str) -> CourseError:
        return CourseError(f"{self.path}: {key}: {why}")

    def config(self) -> CourseConfig:
        """The settings, every key checked: CourseError with one line per problem (all of them)."""
        problems: list[str] = []

        def take(read: Callable[[], Any]) -> Any:
            try:
                return read()
            except CourseError as exc:
                problems.append(str(exc))
                return None

        unknown = sorted(set(self.data) - KEYS)
        problems += [str(self.bad(key, f"unknown key (known: {', '.join(sorted(KEYS))})")) for key in unknown]
        game_params = take(self.game)
        game, params = game_params if game_params is not None else ("", {})
        build = take(self.build)
        build = build if build is not None else {}
        opens, deadline = take(lambda: self.moment("opens")), take(lambda: self.moment("deadline"))
        if opens is not None and deadline is not None and deadline <= opens:
            problems.append(str(self.bad("deadline", f"{deadline.isoformat()} is not after opens "
                                                     f"({opens.isoformat()})")))
        title = self.data.get("title", "")
        if not isinstance(title, str):
            problems.append(str(self.bad("title", f"must be a string, got {title!r}")))
        get = self.data.get
        found = dict(
            time_control=take(lambda: self.clock(game)) if game else None,
            build_time_s=take(lambda: self.number("build.time_s",
                                                  build.get("time_s", DEFAULTS["build_time_s"]))),
            build_memory_mb=take(lambda: self.whole("build.memory_mb",
                                                    build.get("memory_mb", DEFAULTS["build_memory_mb"]))),
            build_disk_mb=take(lambda: self.whole("build.disk_mb",
                                                  build.get("disk_mb", DEFAULTS["build_disk_mb"]))),
            limits=take(self.limits),
            qualification_games=take(lambda: self.whole(
                "qualification_games", get("qualification_games", DEFAULTS["qualification_games"]))),
            upload_max_mb=take(lambda: self.number("upload_max_mb",
                                                   get("upload_max_mb", DEFAULTS["upload_max_mb"]))),
            upload_interval_s=take(lambda: self.number(
                "upload_interval_s", get("upload_interval_s", DEFAULTS["upload_interval_s"]), zero_ok=True)),
            storage_mb=take(lambda: self.number("storage_mb", get("storage_mb", DEFAULTS["storage_mb"]))),
            roster=take(self.roster))
        season = take(lambda: sections.read_season(get("phases"), get("extensions"), self.bad))
        clock, directory = found["time_control"], self.path.parent
        ladder = take(lambda: sections.read_ladder(get("ladder"), self.bad, game, params, clock, directory))
        final = take(lambda: sections.read_final(get("final"), self.bad))
        grading = take(lambda: sections.read_grading(get("grading"), self.bad))
        privacy = take(lambda: sections.read_privacy(get("privacy"), self.bad))
        similarity = take(lambda: sections.read_similarity(get("similarity"), self.bad))
        accounts = take(lambda: sections.read_accounts(get("accounts"), self.bad))
        if problems:
            raise CourseError("\n".join(problems))
        return CourseConfig(
            directory=self.path.parent, game=game, params=params, time_control=found["time_control"],
            build_time_s=found["build_time_s"], build_memory_mb=found["build_memory_mb"],
            build_disk_mb=found["build_disk_mb"], limits=found["limits"], opens=opens, deadline=deadline,
            qualification_games=found["qualification_games"],
            upload_max_bytes=int(found["upload_max_mb"] * 1_000_000),
            upload_interval_s=found["upload_interval_s"], storage_bytes=int(found["storage_mb"] * 1_000_000),
            roster=found["roster"], title=title,
            sections={name: self.data[name] for name in SEASON_SECTIONS if name in self.data},
            season=season, ladder=ladder, final=final, grading=grading, privacy=privacy,
            similarity=similarity, accounts=accounts)

    def build(self) -> dict[str, Any]:
        return sections.table(self.data.get("build"), "build", BUILD_KEYS, self.bad)

    def game(self) -> tuple[str, dict[str, Any]]:
        import rules

        game = self.data.get("game")
        if not isinstance(game, str) or game not in rules.names():
            raise self.bad("game", f"must be one of {', '.join(rules.names())}, got {game!r}")
        params = self.data.get("params", {})
        if not isinstance(params, dict):
            raise self.bad("params", f"must be a table ([params]), got {params!r}")
        try:
            full = dict(rules.load(game, **params).params)
        except (ValueError, TypeError) as exc:
            raise self.bad("params", str(exc)) from None
        return game, full

    def clock(self, game: str) -> TimeControl:
        return read_clock(self.data, game, self.bad)

    def limits(self) -> Limits:
        raw = self.data.get("limits", {})
        if not isinstance(raw, dict):
            raise self.bad("limits", f"must be a table ([limits]), got {raw!r}")
        if "sandbox" in raw:
            raise self.bad("limits.sandbox", "a course always sandboxes students' bots (the server's "
                                             "--unsafe-no-sandbox is the only way around it)")
        try:
            return Limits.from_dict({**raw, "sandbox": "on"})
        except (ValueError, TypeError) as exc:
            raise self.bad("limits", str(exc)) from None

    def moment(self, key: str) -> datetime | None:
        value = self.data.get(key)
        if value is None:
            return None
        try:
            return checks.moment(value)
        except ValueError as exc:
            raise self.bad(key, str(exc)) from None

    def number(self, key: str, value: Any, zero_ok: bool = False) -> float:
        if not (checks.is_number(value, least=0) if zero_ok else checks.is_number(value, above=0)):
            least = "0 or more" if zero_ok else "more than 0"
            raise self.bad(key, f"must be a finite number, {least}, got {value!r}")
        return float(value)

    def whole(self, key: str, value: Any) -> int:
        if not checks.is_number(value, whole=True, least=1):
            raise self.bad(key, f"must be a whole number >= 1, got {value!r}")
        return value

    def roster(self) -> Path:
        value = self.data.get("roster", ROSTER_NAME)
        if not isinstance(value, str) or not value.strip():
            raise self.bad("roster", f"must be a file name, got {value!r}")
        return (self.path.parent / value).resolve()


def read_roster(path: str | Path) -> list[Student]:
    """The students of a roster (CSV: id,name,email,group; the group may be empty or left out;
    lines starting with # are comments); CourseError names the file and line of a bad one."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise CourseError(f"{path}: no such file (the roster: {','.join(ROSTER_COLUMNS)})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CourseError(f"{path}: cannot read it: {exc}") from None
    lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()
             and not line.lstrip().startswith("#")]
    if not lines:
        raise CourseError(f"{path}: no header line (it must start with: {','.join(ROSTER_COLUMNS)})")
    header_line, header = lines[0]
    columns = [c.strip().lower() for c in next(csv.reader([header]))]
    extra = columns[4:] if columns[3:4] == ["group"] else columns[3:]
    if columns[:3] != list(ROSTER_COLUMNS[:3]) or not all(extra) or len(set(columns)) != len(columns) \
            or "group" in extra:
        raise CourseError(f"{path}, line {header_line}: the header must be {','.join(ROSTER_COLUMNS)} "
                          f"(group may be left out; more named columns may follow, e.g. lms_id), "
                          f"got {header.strip()!r}")
    students: list[Student] = []
    seen: set[str] = set()
    for number, line in lines[1:]:
        row = [c.strip() for c in next(csv.reader(io.StringIO(line)))]
        allowed = (3, 4) if len(columns) <= 4 else (len(columns),)
        if len(row) not in allowed:
            expected = ("id,name,email[,group]" if len(columns) <= 4
                        else f"{len(columns)} ({','.join(columns)})")
            raise CourseError(f"{path}, line {number}: {len(row)} fields, expected {expected}")
        sid, name, email = row[:3]
        group = row[3] if len(row) >= 4 and columns[3] == "group" else ""
        if not STUDENT_ID_RE.match(sid):
            raise CourseError(f"{path}, line {number}: id {sid!r} is not usable (letters, digits, _ . -, "
                              "at most 64, starting with a letter or digit)")
        if sid in seen:
            raise CourseError(f"{path}, line {number}: id {sid!r} appears twice")
        if not name:
            raise CourseError(f"{path}, line {number}: student {sid!r} has no name")
        if email and "@" not in email:
            raise CourseError(f"{path}, line {number}: email {email!r} of {sid!r} is not an address")
        seen.add(sid)
        students.append(Student(sid, name, email, group))
    return students


def roster_extras(path: str | Path) -> tuple[list[str], dict[str, dict[str, str]]]:
    """The roster's columns after id,name,email[,group] (an LMS id...), and student id -> their
    values (read_roster checked the file; CourseError as it says)."""
    read_roster(path)
    text = Path(path).read_text(encoding="utf-8-sig")
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    rows = list(csv.reader(lines))
    columns = [c.strip().lower() for c in rows[0]]
    found = {row[0].strip(): {c: v.strip() for c, v in zip(columns, row, strict=False)} for row in rows[1:]}
    return columns, found


COURSE_TEMPLATE = """\
# The course's settings (docs/course.md, section "course.toml"). Times are ISO 8601 with their zone.
# title = "Bots 101, spring term"

game = "{game}"

# The qualification games' clock: seconds per move (1.5), or base+increment a game ("60+1").
time = {time}
clock = "wall"                 # "wall" (the assignments' rule) or "cpu" (see docs/limits.md)
qualification_games = 2        # games against `random` (seats alternate) a submission must play cleanly

# When uploads are taken (either may be left out: always open, no deadline).
# opens = 2026-02-01T09:00:00+01:00
# deadline = 2026-03-01T23:59:00+01:00

upload_max_mb = 5              # the largest upload (MB)
upload_interval_s = 60         # at most one upload a student in this many seconds (0: no limit)
storage_mb = 50                # what the server keeps of one student's uploads and reports, all versions (MB)
roster = "roster.csv"          # the students (id,name,email,group)

[params]                       # the game's parameters (README.md: "The games and their rules")
{params}

[build]                        # build.sh of an archive, in the sandbox with no network
time_s = 300                   # wall time it may take
memory_mb = 2048               # memory of all of its processes together
disk_mb = 512                  # all it may write into its folder (stopped, failed and removed past it)

[limits]                       # the bots' limits in qualification games (docs/limits.md); always sandboxed
memory_mb = 2048

# --- phases (docs/course.md, "Phases"): each judged on the student's latest qualified version
# uploaded before its deadline; after the last deadline (plus a student's extension) uploads freeze.
# [[phases]]
# name = "formulation and interface"
# deadline = 2026-12-03T23:59:00+01:00
# report = true                # a PDF or Markdown report uploaded with the code
# report_max_mb = 10
# requires = {{ qualified = true }}
#
# [[phases]]
# name = "move generation"
# deadline = 2026-12-17T23:59:00+01:00
# report = true
# requires = {{ legal = {{ positions = 50 }} }}   # the bot answers the `legal` request (docs/PROTOCOL.md)
#
# [[phases]]
# name = "search"
# deadline = 2027-01-10T23:59:00+01:00
# report = true
# requires = {{ score = {{ against = "greedy", at_least = 0.7, games = 10 }} }}
#
# [extensions]                 # student id = more time for every deadline: "48h", "2d", "90m"
# s001 = "48h"
#
# The ladder (docs/course.md, "[ladder]"): with this section the server keeps playing rated games
# between the students' active bots and the reference bots. Every key may be left out.
# [ladder]
# games_per_hour = 6           # games an hour each active bot is owed (a pair of games, both seats, counts 2)
# placement_games = 4          # a new active version first plays these against the reference bots
# reference = ["random", "greedy", "alphabeta"]   # shipped bots on the ladder, weakest first
# unrated_per_hour = 3         # unrated games a student may ask for in an hour
# model = "plackett-luce"      # openskill's model, or "thurstone-mosteller-full"
# openings = "random:2"        # each pair's opening: random:N plies, or a file of openings
# neighbours = 3               # an opponent is chosen among this many bots nearest in rating
# time = 1.5                   # the ladder games' clock (default: the course's time)
# poll_s = 10                  # how often the server looks at what is due (seconds)
# until = 2027-01-10T23:59:00+01:00   # when it stops (default: the last deadline); paused during the final
#
# --- the final and the grades (docs/course.md, "The final, grades and pseudonyms") ---
# [final]                      # played once the last deadline (plus the longest extension) has passed
# format = "round-robin"       # "round-robin", "swiss" (with rounds = N) or "gauntlet"
# games = 2                    # games a pairing (even)
# time = 0.5                   # its clock (default: the course's time)
# opponents = ["greedy"]       # shipped bots added to the field (a gauntlet's field)
#
# [grading]                    # arena course grades DIR writes grades.csv (and grades.json beside it)
# bonus = [5, 3, 2]            # extra points for the final's 1st, 2nd, 3rd place
# timeout_penalty = 2          # points taken for losing on time in the final
# penalty_per = "game"         # the two readings of timeout_penalty: "game" takes it for EVERY game
#                              # lost on time (3 such games, 2 points: 6 taken); "student" takes it
#                              # ONCE from a student who lost any game on time (2 taken, however many)
# columns = ["email"]          # roster columns added to grades.csv (the roster may carry more, e.g.
#                              # lms_id: name it here so that Moodle's or Canvas's import matches it)
#
# [similarity]                 # arena course similarity DIR, /staff/similarity: the copying check
# threshold = 0.5              # the least share of a student's own code in matching passages flagged
# min_match_tokens = 40        # passages shorter than this many tokens (about four lines) are ignored
#
# [privacy]
# pseudonyms = true            # public standings show pseudonyms; staff and the student itself see names
"""

ROSTER_TEMPLATE = """\
# The students of the course, one a line: id,name,email,group (group may be empty).
# The id names the student's folder and sign-in; letters, digits, _ . - only.
id,name,email,group
# s001,Ada Lovelace,ada@example.org,A
# s002,Alan Turing,alan@example.org,B
"""


def init(directory: str | Path, game: str) -> list[Path]:
    """Write `directory`/course.toml (for `game`, with its default parameters and clock) and
    roster.csv as commented templates; CourseError for an unknown game or a file already there
    (never overwritten). Returns the files written."""
    import rules

    if game not in rules.names():
        raise CourseError(f"unknown game {game!r} (known: {', '.join(rules.names())})")
    directory = Path(directory)
    config, roster = directory / CONFIG_NAME, directory / ROSTER_NAME
    for path in (config, roster):
        if path.exists():
            raise CourseError(f"{path}: already there (not overwritten)")
    params = "\n".join(f"{key} = {_toml_value(value)}" for key, value in rules.load(game).params.items())
    directory.mkdir(parents=True, exist_ok=True)
    config.write_text(COURSE_TEMPLATE.format(game=game, params=params or "# (none)",
                                             time=TimeControl.for_game(game).per_move), encoding="utf-8")
    roster.write_text(ROSTER_TEMPLATE, encoding="utf-8")
    roster.chmod(0o600)  # names and e-mail addresses: the staff's user's only
    return [config, roster]


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)
