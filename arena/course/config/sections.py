"""The season's sections of course.toml as typed, frozen values, each read and checked once when
course.toml is loaded (config/course_toml.py): `[[phases]]` and `[extensions]` (a `Season`),
`[ladder]`, `[final]`, `[grading]`, `[privacy]` and `[similarity]`; `[accounts]` alike. A reader
raises CourseError naming its key (through `fail`); the loader collects them, one line each. The
keys are documented in docs/course.md."""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.course.config import checks
from arena.match.clock import TimeControl
from arena.similarity.fingerprints import DEFAULT_MIN_MATCH_TOKENS, DEFAULT_THRESHOLD

if TYPE_CHECKING:
    from arena.course.config.course_toml import CourseError

Fail = Callable[[str, str], "CourseError"]
"""(dotted key, why) -> the one-line error naming course.toml and the key."""


def table(raw: Any, name: str, keys: set[str] | frozenset[str], fail: Fail,
          shape: str = "") -> dict[str, Any]:
    """A section (or an inline table, its `shape` shown as the example) as written, empty when left
    out, checked to be a table of `keys` only."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise fail(name, f"must be a table: {shape}" if shape else f"must be a table ([{name}]), got {raw!r}")
    unknown = sorted(set(raw) - set(keys))
    if unknown:
        raise fail(f"{name}.{unknown[0]}", f"unknown key (known: {', '.join(sorted(keys))})")
    return raw


def _shipped() -> list[str]:
    from arena.cell.launcher import shipped_bots

    return sorted(shipped_bots())


# --- [[phases]] and [extensions] ---

PHASE_KEYS = {"name", "deadline", "requires", "report", "report_max_mb"}
REQUIRE_KEYS = {"qualified", "score", "legal"}
SCORE_KEYS = {"against", "at_least", "games"}
LEGAL_KEYS = {"positions", "timeout_s"}
REPORT_MAX_MB = 10.0
"""A report's size limit when the phase names none (MB)."""


@dataclass(frozen=True)
class Score:
    """`score = {against, at_least, games}`: at least `at_least` of the points (win 1, draw 1/2)
    against the reference bot `against` over `games` games, seats alternating."""

    against: str
    at_least: float
    games: int


@dataclass(frozen=True)
class Legal:
    """`legal = {positions}`: the bot's move generator agrees with the rules on every one of
    `positions` positions (`timeout_s` for each answer)."""

    positions: int
    timeout_s: float = 2.0


@dataclass(frozen=True)
class Phase:
    """One `[[phases]]` entry, checked."""

    name: str
    deadline: datetime
    qualified: bool = False
    score: Score | None = None
    legal: Legal | None = None
    report: bool = False
    report_max_bytes: int = int(REPORT_MAX_MB * 1_000_000)

    def requirements(self) -> str:
        """What the phase asks for, in words."""
        parts = ["a qualified bot"]
        if self.score is not None:
            parts.append(f"a score of at least {self.score.at_least:g} against {self.score.against} over "
                         f"{self.score.games} games")
        if self.legal is not None:
            parts.append(f"move generation agreeing with the rules on {self.legal.positions} positions")
        if self.report:
            parts.append("a report")
        return ", ".join(parts)


@dataclass(frozen=True)
class Season:
    """The phases (in course.toml's order) and the students' extensions."""

    phases: tuple[Phase, ...] = ()
    extensions: dict[str, timedelta] = field(default_factory=dict)

    def last_deadline(self) -> datetime | None:
        return max((p.deadline for p in self.phases), default=None)

    def extension_for(self, student_id: str) -> timedelta:
        """The student's extension, nothing without one."""
        return self.extensions.get(student_id, timedelta(0))


def read_season(phases_raw: Any, extensions_raw: Any, fail: Fail) -> Season:
    """`[[phases]]` and `[extensions]`; CourseError naming the first bad key. Extensions for
    students not in the roster are `extension_problems`' (the roster is read after)."""
    raw = phases_raw if phases_raw is not None else []
    if not isinstance(raw, list) or not all(isinstance(p, dict) for p in raw):
        raise fail("phases", "must be a list of tables ([[phases]] with name, deadline, requires)")
    phases = tuple(_phase(fail, n, p) for n, p in enumerate(raw, 1))
    names = [p.name for p in phases]
    twice = next((n for n in names if names.count(n) > 1), None)
    if twice is not None:
        raise fail("phases", f"two phases named {twice!r}")
    extensions: dict[str, timedelta] = {}
    raw_ext = extensions_raw if extensions_raw is not None else {}
    if not isinstance(raw_ext, dict):
        raise fail("extensions", 'must be a table of student id = duration ("48h", "2d", "90m")')
    for sid, value in raw_ext.items():
        try:
            extensions[sid] = checks.duration(value)
        except ValueError as exc:
            raise fail(f"extensions.{sid}", str(exc)) from None
    return Season(phases, extensions)


def extension_problems(season: Season, student_ids: set[str], fail: Fail) -> list[str]:
    """One line for each extension given to a student not in the roster."""
    return [str(fail(f"extensions.{sid}", "no such student in the roster"))
            for sid in season.extensions if sid not in student_ids]


def _phase(fail: Fail, number: int, raw: dict[str, Any]) -> Phase:
    where = f"phases[{number}]"
    unknown = sorted(set(raw) - PHASE_KEYS)
    if unknown:
        raise fail(f"{where}.{unknown[0]}", f"unknown key (known: {', '.join(sorted(PHASE_KEYS))})")
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        raise fail(f"{where}.name", f"each phase needs a name, got {name!r}")
    try:
        deadline = checks.moment(raw.get("deadline"))
    except ValueError as exc:
        raise fail(f"{where}.deadline", str(exc)) from None
    report = raw.get("report", False)
    if not isinstance(report, bool):
        raise fail(f"{where}.report", f"must be true or false, got {report!r}")
    max_mb = raw.get("report_max_mb", REPORT_MAX_MB)
    if not checks.is_number(max_mb, above=0, below=1e6):
        raise fail(f"{where}.report_max_mb", f"must be a number of MB more than 0, got {max_mb!r}")
    requires = raw.get("requires", {})
    if not isinstance(requires, dict):
        raise fail(f"{where}.requires", "must be a table, e.g. { qualified = true }")
    unknown = sorted(set(requires) - REQUIRE_KEYS)
    if unknown:
        raise fail(f"{where}.requires.{unknown[0]}",
                   f"unknown requirement (known: {', '.join(sorted(REQUIRE_KEYS))})")
    qualified = requires.get("qualified", False)
    if not isinstance(qualified, bool):
        raise fail(f"{where}.requires.qualified", f"must be true or false, got {qualified!r}")
    return Phase(name.strip(), deadline, qualified, _score(fail, where, requires.get("score")),
                 _legal(fail, where, requires.get("legal")), report, int(max_mb * 1_000_000))


def _score(fail: Fail, where: str, raw: Any) -> Score | None:
    if raw is None:
        return None
    key = f"{where}.requires.score"
    raw = table(raw, key, SCORE_KEYS, fail, '{ against = "greedy", at_least = 0.7, games = 10 }')
    against = raw.get("against")
    if against not in _shipped():
        raise fail(f"{key}.against", f"must be a reference bot ({', '.join(_shipped())}), got {against!r}")
    at_least = raw.get("at_least")
    if not checks.is_number(at_least, least=0, most=1):
        raise fail(f"{key}.at_least", f"must be a share of the points from 0 to 1, got {at_least!r}")
    games = raw.get("games", 10)
    if not checks.is_number(games, whole=True, least=1, most=1000):
        raise fail(f"{key}.games", f"must be a whole number from 1 to 1000, got {games!r}")
    return Score(against, float(at_least), games)


def _legal(fail: Fail, where: str, raw: Any) -> Legal | None:
    if raw is None:
        return None
    key = f"{where}.requires.legal"
    raw = table(raw, key, LEGAL_KEYS, fail, "{ positions = 50 }")
    positions = raw.get("positions", 50)
    if not checks.is_number(positions, whole=True, least=1, most=10000):
        raise fail(f"{key}.positions", f"must be a whole number from 1 to 10000, got {positions!r}")
    timeout_s = raw.get("timeout_s", 2.0)
    if not checks.is_number(timeout_s, above=0, most=600):
        raise fail(f"{key}.timeout_s", f"must be seconds, more than 0, got {timeout_s!r}")
    return Legal(positions, float(timeout_s))


# --- [ladder] ---

LADDER_MODELS = ("plackett-luce", "thurstone-mosteller-full")
"""openskill's models a ladder may use (arena.course.season.ladder.MODELS)."""
LADDER_DEFAULTS: dict[str, Any] = {
    "games_per_hour": 6.0, "placement_games": 4, "reference": ["random", "greedy", "alphabeta"],
    "unrated_per_hour": 3, "model": "plackett-luce", "openings": "random:2", "neighbours": 3, "poll_s": 10.0}
LADDER_KEYS = set(LADDER_DEFAULTS) | {"time", "until"}


@dataclass(frozen=True)
class LadderSettings:
    """`[ladder]` of course.toml, checked (docs/course.md, "[ladder]")."""

    games_per_hour: float = LADDER_DEFAULTS["games_per_hour"]
    placement_games: int = LADDER_DEFAULTS["placement_games"]
    reference: tuple[str, ...] = tuple(LADDER_DEFAULTS["reference"])
    unrated_per_hour: int = LADDER_DEFAULTS["unrated_per_hour"]
    model: str = LADDER_DEFAULTS["model"]
    openings: str = LADDER_DEFAULTS["openings"]
    neighbours: int = LADDER_DEFAULTS["neighbours"]
    poll_s: float = LADDER_DEFAULTS["poll_s"]
    """How often the server's LadderRunner (arena.course.background.ladder) looks at what is due (seconds)."""
    time_control: TimeControl | None = None
    """The ladder games' clock (None: the course's)."""
    until: datetime | None = None
    """When the ladder stops playing (None: at the course's last deadline, when it has one)."""


def read_ladder(raw_section: Any, fail: Fail, game: str | None, params: dict[str, Any],
                clock: TimeControl | None, directory: Path) -> LadderSettings:
    """`[ladder]` (defaults where left out); its openings and clock are checked against the
    course's `game` and `clock` (left unchecked when those are bad: their own lines say so)."""
    raw = table(raw_section, "ladder", LADDER_KEYS, fail)

    def number(key: str) -> float:
        value = raw.get(key, LADDER_DEFAULTS[key])
        if not checks.is_number(value, above=0):
            raise fail(f"ladder.{key}", f"must be a number more than 0, got {value!r}")
        return float(value)

    def whole(key: str, least: int) -> int:
        value = raw.get(key, LADDER_DEFAULTS[key])
        if not checks.is_number(value, whole=True, least=least):
            raise fail(f"ladder.{key}", f"must be a whole number >= {least}, got {value!r}")
        return value

    reference = raw.get("reference", LADDER_DEFAULTS["reference"])
    known = _shipped()
    if not isinstance(reference, list) or not all(isinstance(r, str) for r in reference):
        raise fail("ladder.reference", f"must be a list of bot names, got {reference!r}")
    for name in reference:
        if name not in known:
            raise fail("ladder.reference", f"{name!r} is not a shipped bot (known: {', '.join(known)})")
    if len(set(reference)) != len(reference):
        raise fail("ladder.reference", "names a bot twice")
    model = raw.get("model", LADDER_DEFAULTS["model"])
    if model not in LADDER_MODELS:
        raise fail("ladder.model", f"must be one of {', '.join(map(repr, LADDER_MODELS))}, got {model!r}")
    openings = raw.get("openings", LADDER_DEFAULTS["openings"])
    if not isinstance(openings, str):
        raise fail("ladder.openings", f"must be a string (random:N or a file), got {openings!r}")
    if game:
        import rules
        from arena.match.openings import OpeningsError, parse_openings

        try:
            parse_openings(openings, rules.load(game, **params), directory)
        except OpeningsError as exc:
            raise fail("ladder.openings", str(exc)) from None
    ladder_clock = None
    if "time" in raw and clock is not None:
        try:
            ladder_clock = dataclasses.replace(TimeControl.parse(str(raw["time"])), kind=clock.kind,
                                               wall_factor=clock.wall_factor)
        except ValueError as exc:
            raise fail("ladder.time", str(exc)) from None
    until = None
    if "until" in raw:
        try:
            until = checks.moment(raw["until"])
        except ValueError as exc:
            raise fail("ladder.until", str(exc)) from None
    return LadderSettings(
        games_per_hour=number("games_per_hour"), placement_games=whole("placement_games", 0),
        reference=tuple(reference), unrated_per_hour=whole("unrated_per_hour", 0), model=model,
        openings=openings, neighbours=whole("neighbours", 1), poll_s=number("poll_s"),
        time_control=ladder_clock, until=until)


# --- [final] ---

FINAL_FORMATS = {"round-robin": "round_robin", "round_robin": "round_robin", "swiss": "swiss",
                 "gauntlet": "gauntlet"}
"""`[final] format` as written (a tournament file's names, or "round-robin") -> the runner's."""
FINAL_KEYS = {"format", "games", "time", "clock", "rounds", "opponents", "seed", "concurrency"}
FINAL_GAMES = 2


@dataclass(frozen=True)
class FinalSettings:
    """`[final]` of course.toml, checked. `time` None: the course's clock; `opponents`: shipped
    reference bots added to the field (a gauntlet's field: the students are its challengers)."""

    format: str = "round_robin"
    games: int = FINAL_GAMES
    time: str | None = None
    clock: str | None = None
    rounds: int = 0
    opponents: tuple[str, ...] = ()
    seed: int = 1
    concurrency: int = 1


def read_final(raw_section: Any, fail: Fail) -> FinalSettings:
    """The `[final]` section (defaults without one)."""
    raw = table(raw_section, "final", FINAL_KEYS, fail)
    fmt = raw.get("format", "round-robin")
    if fmt not in FINAL_FORMATS:
        raise fail("final.format", f'must be "round-robin", "swiss" or "gauntlet", got {fmt!r}')
    fmt = FINAL_FORMATS[fmt]

    def whole(key: str, default: int, low: int) -> int:
        value = raw.get(key, default)
        if not checks.is_number(value, whole=True, least=low):
            raise fail(f"final.{key}", f"must be a whole number >= {low}, got {value!r}")
        return value

    games = whole("games", FINAL_GAMES, 2)
    if games % 2:
        raise fail("final.games", f"must be even so that seats swap evenly, got {games}")
    rounds = whole("rounds", 0, 0)
    if fmt == "swiss" and rounds < 1:
        raise fail("final.rounds", "a Swiss final needs its number of rounds, e.g. rounds = 5")
    if fmt != "swiss" and "rounds" in raw:
        raise fail("final.rounds", 'only for format = "swiss"')
    time = raw.get("time")
    if time is not None:
        if not (isinstance(time, str) or checks.is_number(time)):
            raise fail("final.time", f'seconds a move (0.5) or "BASE+INC", got {time!r}')
        time = str(time)
    clock = raw.get("clock")
    if clock is not None and clock not in ("wall", "cpu"):
        raise fail("final.clock", f'must be "wall" or "cpu", got {clock!r}')
    opponents = raw.get("opponents", [])
    if not isinstance(opponents, list) or not all(isinstance(o, str) and o for o in opponents):
        raise fail("final.opponents", f'a list of shipped bots, e.g. ["greedy"], got {opponents!r}')
    if fmt == "gauntlet" and not opponents:
        raise fail("final.opponents", "a gauntlet final needs the bots the students challenge, "
                                      'e.g. opponents = ["greedy", "alphabeta"]')
    return FinalSettings(format=fmt, games=games, time=time, clock=clock, rounds=rounds,
                         opponents=tuple(opponents), seed=whole("seed", 1, 0),
                         concurrency=whole("concurrency", 1, 1))


# --- [grading] and [privacy] ---

GRADING_KEYS = {"bonus", "timeout_penalty", "penalty_per", "columns"}
PENALTY_PER = ("game", "student")


@dataclass(frozen=True)
class GradingSettings:
    """`[grading]`, checked."""

    bonus: tuple[float, ...] = (5, 3, 2)
    timeout_penalty: float = 0
    penalty_per: str = "game"
    columns: tuple[str, ...] = ()
    """Roster columns added at the end of grades.csv (an email, an LMS id), lower case."""


def read_grading(raw_section: Any, fail: Fail) -> GradingSettings:
    """The `[grading]` section (defaults without one)."""
    raw = table(raw_section, "grading", GRADING_KEYS, fail)
    bonus = raw.get("bonus", [5, 3, 2])
    if not isinstance(bonus, list) or not all(checks.is_number(b, least=0) for b in bonus):
        raise fail("grading.bonus", f"a list of points, first place first, e.g. [5, 3, 2], got {bonus!r}")
    penalty = raw.get("timeout_penalty", 0)
    if not checks.is_number(penalty, least=0):
        raise fail("grading.timeout_penalty", f"must be a number >= 0, got {penalty!r}")
    per = raw.get("penalty_per", "game")
    if per not in PENALTY_PER:
        raise fail("grading.penalty_per", f'must be "game" or "student", got {per!r}')
    columns = raw.get("columns", [])
    if not isinstance(columns, list) or not all(isinstance(c, str) and c.strip() for c in columns):
        raise fail("grading.columns", f'a list of roster columns, e.g. ["email", "lms_id"], got {columns!r}')
    return GradingSettings(tuple(bonus), penalty, per, tuple(c.strip().lower() for c in columns))


PRIVACY_KEYS = {"pseudonyms"}


@dataclass(frozen=True)
class PrivacySettings:
    """`[privacy]`, checked: `pseudonyms` names students by pseudonyms on public pages."""

    pseudonyms: bool = False


def read_privacy(raw_section: Any, fail: Fail) -> PrivacySettings:
    """The `[privacy]` section (pseudonyms off without one)."""
    raw = table(raw_section, "privacy", PRIVACY_KEYS, fail)
    value = raw.get("pseudonyms", False)
    if not isinstance(value, bool):
        raise fail("privacy.pseudonyms", f"must be true or false, got {value!r}")
    return PrivacySettings(value)


# --- [similarity] ---

SIMILARITY_KEYS = {"threshold", "min_match_tokens"}


@dataclass(frozen=True)
class SimilaritySettings:
    """`[similarity]`, checked: the copying check's flagging `threshold` (a share of a submission's
    code) and `min_match_tokens` (shorter matching passages are ignored: about four lines of code;
    the standard board loop every honest bot has is shorter)."""

    threshold: float = DEFAULT_THRESHOLD
    min_match_tokens: int = DEFAULT_MIN_MATCH_TOKENS


def read_similarity(raw_section: Any, fail: Fail) -> SimilaritySettings:
    """The `[similarity]` section (defaults without one)."""
    raw = table(raw_section, "similarity", SIMILARITY_KEYS, fail)
    threshold = raw.get("threshold", SimilaritySettings.threshold)
    if not checks.is_number(threshold, least=0) or threshold > 1:
        raise fail("similarity.threshold", f"a share between 0 and 1, e.g. 0.5, got {threshold!r}")
    tokens = raw.get("min_match_tokens", SimilaritySettings.min_match_tokens)
    if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 5:
        raise fail("similarity.min_match_tokens", f"a whole number of tokens >= 5, e.g. 40, got {tokens!r}")
    return SimilaritySettings(float(threshold), tokens)


# --- [accounts], read alike: a real course's argon2id costs reach one of OWASP's equally strong
# choices (memory KiB, passes) and none passes its largest (1 GiB a hash: the server hashes two at once)
OWASP_FLOOR = ((47104, 1), (19456, 2), (12288, 3), (9216, 4), (7168, 5))
HASH_MOST = {"argon2_time_cost": 16, "argon2_memory_kib": 1024 * 1024, "argon2_parallelism": 16}


@dataclass(frozen=True)
class AccountSettings:
    """`[accounts]`, checked: argon2id's costs (memory in KiB); `weak_hashing_for_tests` lifts the floor."""

    argon2_time_cost: int = 3
    argon2_memory_kib: int = 64 * 1024
    argon2_parallelism: int = 4
    weak_hashing_for_tests: bool = False


def read_accounts(raw_section: Any, fail: Fail) -> AccountSettings:
    """The `[accounts]` section (the defaults without one)."""
    raw = table(raw_section, "accounts", {*HASH_MOST, "weak_hashing_for_tests"}, fail)
    for_tests = raw.get("weak_hashing_for_tests", False)
    if not isinstance(for_tests, bool):
        raise fail("accounts.weak_hashing_for_tests", f"must be true or false, got {for_tests!r}")
    time_cost, memory, lanes = costs = [raw.get(key, getattr(AccountSettings, key)) for key in HASH_MOST]
    for (key, most), value in zip(HASH_MOST.items(), costs, strict=True):
        if not checks.is_number(value, whole=True, least=1, most=most):
            raise fail(f"accounts.{key}", f"must be a whole number from 1 to {most}, got {value!r}")
    floor = ((8 * lanes, 1),) if for_tests else OWASP_FLOOR  # argon2's own: 8 KiB a lane
    if not any(memory >= m and time_cost >= t for m, t in floor):
        least = ", ".join(f"{m} at argon2_time_cost = {t}" for m, t in floor)
        raise fail("accounts.argon2_memory_kib", f"{memory} KiB with argon2_time_cost = {time_cost} and "
                   f"argon2_parallelism = {lanes} is below {'argon2' if for_tests else 'OWASP'}'s floor "
                   f"(at least {least} or more){'' if for_tests else '; weak_hashing_for_tests lifts it'}")
    return AccountSettings(time_cost, memory, lanes, for_tests)
