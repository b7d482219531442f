"""The tournament file: what a tournament is (`Tournament`, `BotEntry`), read and checked from TOML.

The file (see examples/):

    name = "demo"                 # optional: the results directory name (default: the file's stem)
    game = "domineering"          # a game of `rules`
    time = "0.2"                  # seconds per move, or "BASE+INC" (default: the assignment's limit)
    games_per_pairing = 2         # even: every pairing plays as many games in each seat
    seed = 1                      # the games' seeds derive from it
    games_per_task = 2            # optional: games a worker plays with the same two bot processes
    format = "round_robin"        # optional: "round_robin" (default), "gauntlet" or "swiss"
    challengers = ["mybot"]       # gauntlet only: these bots play every other bot, never each other
    rounds = 5                    # swiss only: how many rounds (docs/tournaments.md)
    openings = "random:4"         # optional: each game pair starts after 4 random plies, or
                                  # "FILE": a file (one opening a line) or folder of move files
    title = "..."                 # optional: the website's title (default: the name)
    description = "..."           # optional, free text
    [params]                      # optional: the game's parameters (rules.load)
    rows = 6
    [limits]                      # optional: per-bot limits and fairness (arena.cell.limits, docs/limits.md)
    memory_mb = 2048
    pin_cpus = true
    [site]                        # optional: the published website (docs/site.md)
    show_commands = false         # hide the bots' commands and the paths of their programs
    [[bots]]                      # two or more
    name = "random"
    command = "random"            # a shipped bot NAME, or a command line ("./mybot --fast"),
                                  # or an argv list (["java", "-jar", "bot.jar"])
    protocol = "stdio"            # optional: "v1" (ZeroMQ + msgpack, the default) or "stdio"
                                  # (text lines on stdin/stdout, docs/PROTOCOL.md section 11)

`load(path)` reads a file, `from_dict(data, path)` checks a parsed one, one reader per key; a bad
file raises TournamentError naming the file and the key.
"""
from __future__ import annotations

import dataclasses
import os
import re
import shlex
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import rules
from arena.cell import sandbox
from arena.cell.launcher import PROTOCOL_V1, PROTOCOLS, LaunchError, resolve_command
from arena.cell.limits import Limits
from arena.match.clock import CLOCK_KINDS, DEFAULT_WALL_FACTOR, TimeControl
from arena.match.openings import Openings, OpeningsError, parse_openings
from arena.match.spec import BotSpec, MatchSpec
from arena.tournament.formats import FORMATS, Pairing, gauntlet, round_robin, swiss_rounds, total_games

DEFAULT_GAMES_PER_PAIRING = 2
DEFAULT_GAMES_PER_TASK = 10
"""Games a worker plays with the same two bot processes: small keeps little work in flight
(an interrupted run replays at most this many games per worker), large saves bot start-ups."""
DEFAULT_RESULTS_ROOT = "results"

KEYS = {"name", "game", "time", "clock", "wall_factor", "games_per_pairing", "seed", "games_per_task",
        "params", "bots", "description", "title", "limits", "format", "challengers", "rounds", "openings",
        "site"}
"""The keys a tournament file may have."""
BOT_KEYS = {"name", "command", "protocol"}
"""The keys of a [[bots]] table."""
SITE_KEYS = {"show_commands"}
"""The keys of the [site] table."""
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$")
"""A usable tournament or bot name (it names directories and rows)."""


class TournamentError(ValueError):
    """A tournament file that cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class BotEntry:
    """A bot of the tournament: `command` as written in the file, `argv` as it will run."""

    name: str
    command: str | tuple[str, ...]
    argv: tuple[str, ...]
    protocol: str = PROTOCOL_V1
    """How the bot talks: "v1" (ZeroMQ + msgpack) or "stdio" (text lines, through the adapter)."""

    def spec(self) -> BotSpec:
        return BotSpec(self.name, self.argv)


@dataclass(frozen=True)
class SiteOptions:
    """The [site] table: how the published website (arena.site) shows the tournament. Not part of
    the stored fingerprint: it may change between runs."""

    show_commands: bool = True
    """False: the site shows no bot's command, and the directories of the bots' programs and of the
    tournament file are left out of every text it publishes (logs, forfeit details, tracebacks)."""


@dataclass(frozen=True)
class Tournament:
    """A checked tournament file: `path` it was read from, `name` of its results directory, the
    game with its full `params`, the clock, the bots (two or more, unique names), how many games each
    pairing plays (even), the seed, how many games a worker task plays, and the bots' limits."""

    path: Path
    name: str
    game: str
    params: dict[str, Any]
    time_control: TimeControl
    bots: tuple[BotEntry, ...]
    games_per_pairing: int = DEFAULT_GAMES_PER_PAIRING
    seed: int = 0
    games_per_task: int = DEFAULT_GAMES_PER_TASK
    description: str = ""
    title: str = ""
    """The website's title ("" for the name)."""
    site: SiteOptions = field(default_factory=SiteOptions)
    limits: Limits = field(default_factory=Limits)
    format: str = "round_robin"
    """How bots are paired (arena.tournament.formats.FORMATS)."""
    challengers: tuple[str, ...] = ()
    """A gauntlet's challengers."""
    rounds: int = 0
    """A Swiss tournament's rounds (0 for the other formats)."""
    openings: Openings | None = None
    """Balanced openings (arena.match.openings): pair k of every pairing starts after opening k."""

    def fingerprint(self) -> dict[str, Any]:
        """What the stored games depend on (arena.tournament.store decides which changes are allowed).

        A round-robin's fingerprint has no format keys, so results stored before formats existed
        still match."""
        extra: dict[str, Any] = {}
        if self.format == "gauntlet":
            extra = {"format": self.format, "challengers": list(self.challengers)}
        elif self.format == "swiss":
            extra = {"format": self.format, "rounds": self.rounds}
        if self.time_control.kind != "wall":  # games charged otherwise are other games
            extra["clock"] = f"{self.time_control.kind} x{self.time_control.wall_factor:g}"
        if self.openings is not None:
            extra.update(self.openings.fingerprint())
        return {**extra,
            "name": self.name,
            "game": self.game,
            "params": self.params,
            "time_control": str(self.time_control),
            "games_per_pairing": self.games_per_pairing,
            "seed": self.seed,
            "bots": [{"name": b.name, "command": b.command if isinstance(b.command, str) else list(b.command),
                      **({"protocol": b.protocol} if b.protocol != PROTOCOL_V1 else {})}
                     for b in self.bots],
        }

    def pairings(self, results: dict[str, dict[int, float]] | None = None) -> list[Pairing]:
        """The pairings to play: every one of a round-robin or gauntlet; for a Swiss, those of the
        current round, planned from `results` (Store.pairing_results: the stored games)."""
        names = [b.name for b in self.bots]
        if self.format == "gauntlet":
            return list(gauntlet(names, self.challengers, self.games_per_pairing))
        if self.format == "swiss":
            return list(swiss_rounds(names, self.games_per_pairing, self.rounds, results or {})[-1].pairings)
        return round_robin(names, self.games_per_pairing)

    def pairings_per_round(self) -> int:
        """How many pairings a Swiss round has (a bye for an odd field)."""
        return len(self.bots) // 2

    def results_dir(self, root: str | Path = DEFAULT_RESULTS_ROOT) -> Path:
        return Path(root) / self.name

    def total_games(self) -> int:
        return total_games(self.format, len(self.bots), self.games_per_pairing, len(self.challengers),
                           self.rounds)

    def match_spec(self, pairing: Pairing, numbers: tuple[int, ...]) -> MatchSpec:
        bots = {b.name: b for b in self.bots}
        return MatchSpec(
            match_id=pairing.pairing_id, game=self.game,
            bots=(bots[pairing.a].spec(), bots[pairing.b].spec()),
            time_control=self.time_control, game_numbers=numbers, params=dict(self.params), seed=self.seed,
            limits=self.limits, openings=self.opening_moves(pairing.games),
        )

    def opening_moves(self, games: int) -> tuple[tuple[str, ...], ...]:
        """The openings of a pairing of `games` games (none without `openings`)."""
        if self.openings is None:
            return ()
        game = rules.load(self.game, **self.params)
        return self.openings.for_pairs(game, self.seed, (games + 1) // 2)


# --- reading the file ---

def load(path: str | Path, check_commands: bool = True) -> Tournament:
    """Read and check a tournament file; TournamentError names the file and the bad key."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TournamentError(f"{path}: no such tournament file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TournamentError(f"{path}: cannot read the tournament file ({exc})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TournamentError(f"{path}: bad TOML: {exc}") from None
    return from_dict(data, path, check_commands)


def from_dict(data: dict[str, Any], path: Path, check_commands: bool = True) -> Tournament:
    """A Tournament from a parsed file `data` read from `path` (relative bot paths are read against
    its directory); `check_commands=False` skips checking that the bots' programs exist.
    TournamentError names the file and the first bad key."""
    file = _File(data, path)
    file.check_keys()
    name = file.name()
    game, params = file.game()
    time_control = file.time(game)
    ints = file.ints()
    description = file.text("description")
    title = file.text("title")
    bots = file.bots(check_commands)
    fmt, challengers, rounds = file.format([b.name for b in bots])
    limits = file.limits()
    openings = file.openings(game, params, ints)
    if check_commands and limits.sandbox != "off":
        file.check_sight(bots, limits)
    return Tournament(
        path=path, name=name, game=game, params=params, time_control=time_control,
        limits=limits, bots=bots, description=description, title=title, site=file.site(), **ints,
        format=fmt, challengers=challengers, rounds=rounds, openings=openings,
    )


class _File:
    """One parsed tournament file: a reader per key, each raising TournamentError naming its key."""

    def __init__(self, data: dict[str, Any], path: Path) -> None:
        self.data, self.path = data, path

    def bad(self, key: str, why: str) -> TournamentError:
        return TournamentError(f"{self.path}: {key}: {why}")

    def check_keys(self) -> None:
        unknown = sorted(set(self.data) - KEYS)
        if unknown:
            raise self.bad(unknown[0], f"unknown key (known: {', '.join(sorted(KEYS))})")

    def name(self) -> str:
        name = self.data.get("name", self.path.stem)
        if not isinstance(name, str) or not NAME_RE.match(name):
            raise self.bad("name", f"{name!r} is not a usable name "
                           "(letters, digits, . _ + -; it names the results directory)")
        return name

    def game(self) -> tuple[str, dict[str, Any]]:
        """The game's name and its full parameters (`game` and `[params]`)."""
        game_name = self.data.get("game")
        if not isinstance(game_name, str):
            raise self.bad("game", f"required, a game name ({', '.join(rules.names())})" if game_name is None
                           else f"must be a game name, got {game_name!r}")
        params = self.data.get("params", {})
        if not isinstance(params, dict):
            raise self.bad("params", f"must be a table of the game's parameters, got {params!r}")
        try:
            return game_name, rules.load(game_name, **params).params
        except ValueError as exc:
            raise self.bad("game" if game_name not in rules.names() else "params", str(exc)) from None

    def time(self, game: str) -> TimeControl:
        """`time`, charged as `clock` ("wall" or "cpu") says, with `wall_factor` (TimeControl)."""
        return read_clock(self.data, game, self.bad)

    def ints(self) -> dict[str, int]:
        """games_per_pairing (even, >= 2), seed, games_per_task (>= 1)."""
        ints = {}
        for key, default, low in (("games_per_pairing", DEFAULT_GAMES_PER_PAIRING, 2), ("seed", 0, None),
                                  ("games_per_task", DEFAULT_GAMES_PER_TASK, 1)):
            value = self.data.get(key, default)
            if isinstance(value, bool) or not isinstance(value, int) or (low is not None and value < low):
                raise self.bad(key, f"must be a whole number{f' >= {low}' if low is not None else ''}, "
                               f"got {value!r}")
            ints[key] = value
        if ints["games_per_pairing"] % 2:
            raise self.bad("games_per_pairing",
                           f"must be even so that seats swap evenly, got {ints['games_per_pairing']}")
        return ints

    def text(self, key: str) -> str:
        value = self.data.get(key, "")
        if not isinstance(value, str):
            raise self.bad(key, "must be a string")
        return value

    def openings(self, game: str, params: dict[str, Any], ints: dict[str, int]) -> Openings | None:
        """`openings`: "random:N" or a file or folder (against the file's folder), every opening
        checked now (the random ones of every pair)."""
        raw = self.data.get("openings")
        if raw is None:
            return None
        if not isinstance(raw, str):
            raise self.bad("openings", f'must be "random:N" or the name of a file or folder, got {raw!r}')
        rules_game = rules.load(game, **params)
        try:
            openings = parse_openings(raw, rules_game, self.path.parent)
            openings.for_pairs(rules_game, ints["seed"], ints["games_per_pairing"] // 2)
        except OpeningsError as exc:
            raise self.bad("openings", str(exc).removeprefix("openings: ")) from None
        return openings

    def limits(self) -> Limits:
        raw = self.data.get("limits", {})
        if not isinstance(raw, dict):
            raise self.bad("limits", f"must be a table of limits, got {raw!r}")
        raw = dict(raw)
        if isinstance(raw.get("read"), list):  # paths granted to sandboxed bots, as the file says them
            raw["read"] = [os.path.abspath(self.path.parent / p) if isinstance(p, str) and p else p
                           for p in raw["read"]]
        try:
            return Limits.from_dict(raw)
        except (TypeError, ValueError) as exc:
            raise self.bad("limits", str(exc)) from None

    def site(self) -> SiteOptions:
        """The [site] table."""
        raw = self.data.get("site", {})
        if not isinstance(raw, dict):
            raise self.bad("site", f"must be a table (show_commands = false), got {raw!r}")
        unknown = sorted(set(raw) - SITE_KEYS)
        if unknown:
            raise self.bad(f"site.{unknown[0]}", f"unknown key (known: {', '.join(sorted(SITE_KEYS))})")
        show = raw.get("show_commands", True)
        if not isinstance(show, bool):
            raise self.bad("site.show_commands", f"must be true or false, got {show!r}")
        return SiteOptions(show_commands=show)

    def bots(self, check_commands: bool) -> tuple[BotEntry, ...]:
        raw_bots = self.data.get("bots")
        if not isinstance(raw_bots, list) or not all(isinstance(b, dict) for b in raw_bots):
            raise self.bad("bots", "required: a [[bots]] table for each bot, with name and command")
        bots: list[BotEntry] = []
        seen: set[str] = set()
        for k, raw in enumerate(raw_bots, 1):
            bot = self.bot(f"bots[{k}]", raw, check_commands)
            if bot.name in seen:
                raise self.bad(f"bots[{k}].name", f"bot name {bot.name!r} appears twice")
            seen.add(bot.name)
            bots.append(bot)
        if len(bots) < 2:
            raise self.bad("bots", f"a tournament needs at least 2 bots, the file has {len(bots)}")
        return tuple(bots)

    def check_sight(self, bots: tuple[BotEntry, ...], limits: Limits) -> None:
        """Refuse bots that would see another bot's files in the sandbox (a kit folder holding
        another bot, a `read` grant over the bots' folder), naming both."""
        shared = sandbox.shared_sight({b.name: b.argv for b in bots}, limits.read)
        if shared is not None:
            name, other, path = shared
            raise self.bad("bots", f"bot {name!r} would see the files of bot {other!r} ({path}) in "
                           "its sandbox: give each bot a folder of its own, and grant `read` only what "
                           "they share")

    def format(self, names: list[str]) -> tuple[str, tuple[str, ...], int]:
        """`format`, and `challengers` (gauntlet) or `rounds` (swiss), checked against the bots."""
        fmt = self.data.get("format", "round_robin")
        if fmt not in FORMATS:
            raise self.bad("format", f"must be one of {', '.join(map(repr, FORMATS))}, got {fmt!r}")
        if "challengers" in self.data and fmt != "gauntlet":
            raise self.bad("challengers", f'only for format = "gauntlet" (this file\'s format is {fmt!r})')
        if "rounds" in self.data and fmt != "swiss":
            raise self.bad("rounds", f'only for format = "swiss" (this file\'s format is {fmt!r})')
        if fmt == "gauntlet":
            return fmt, self.challengers(names), 0
        if fmt == "swiss":
            raw = self.data.get("rounds")
            most = len(names) if len(names) % 2 else len(names) - 1
            if raw is None:
                raise self.bad("rounds", f"missing: a Swiss needs its number of rounds, from 1 to {most} "
                               f"for {len(names)} bots (e.g. rounds = {min(most, 5)})")
            if isinstance(raw, bool) or not isinstance(raw, int) or not 1 <= raw <= most:
                raise self.bad("rounds", f"a Swiss of {len(names)} bots needs a whole number of rounds "
                               f"from 1 to {most} (more would need a rematch), got {raw!r}")
            return fmt, (), raw
        return fmt, (), 0

    def challengers(self, names: list[str]) -> tuple[str, ...]:
        raw = self.data.get("challengers")
        if not isinstance(raw, list) or not raw or not all(isinstance(c, str) for c in raw):
            raise self.bad("challengers",
                           f"a gauntlet needs a list of bot names, e.g. [\"mybot\"], got {raw!r}")
        for name in raw:
            if name not in names:
                raise self.bad("challengers", f"{name!r} is not the name of a bot of this file")
        if len(set(raw)) != len(raw):
            raise self.bad("challengers", "a bot is listed twice")
        if len(raw) == len(names):
            raise self.bad("challengers", "every bot is a challenger: a gauntlet needs bots to challenge")
        return tuple(raw)

    def bot(self, where: str, raw: dict[str, Any], check_commands: bool) -> BotEntry:
        """One [[bots]] table (`where`: "bots[K]")."""
        unknown = sorted(set(raw) - BOT_KEYS)
        if unknown:
            raise self.bad(f"{where}.{unknown[0]}", "unknown key (known: command, name, protocol)")
        name = raw.get("name")
        if not isinstance(name, str) or not NAME_RE.match(name):
            raise self.bad(f"{where}.name", f"{name!r} is not a usable bot name (letters, digits, . _ + -)")
        protocol = raw.get("protocol", PROTOCOL_V1)
        if protocol not in PROTOCOLS:
            raise self.bad(f"{where}.protocol",
                           f"must be one of {', '.join(map(repr, PROTOCOLS))}, got {protocol!r}")
        command = raw.get("command")
        try:
            if isinstance(command, str):
                argv = (resolve_command(command, self.path.parent, protocol) if check_commands
                        else _split(command))
                return BotEntry(name, command, argv, protocol)
            if isinstance(command, list) and command and all(isinstance(a, str) for a in command):
                argv = (resolve_command(command, self.path.parent, protocol) if check_commands
                        else tuple(command))
                return BotEntry(name, tuple(command), argv, protocol)
            raise LaunchError("must be a shipped bot name, a command line or a list of strings, "
                              f"got {command!r}")
        except LaunchError as exc:
            raise self.bad(f"{where}.command", f"bot {name!r}: {exc}") from None


def _split(command: str) -> tuple[str, ...]:
    try:
        return tuple(shlex.split(command))
    except ValueError:
        return (command,)


def read_clock(data: dict[str, Any], game: str, bad: Callable[[str, str], Exception]) -> TimeControl:
    """The clock a file's `time`, `clock` ("wall" or "cpu") and `wall_factor` keys give for `game`
    (its default time where `time` is left out): a tournament file's, and a course's. A bad value
    raises `bad(key, why)`."""
    value = data.get("time")
    try:
        if value is None:
            clock = TimeControl.for_game(game)
        elif isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise ValueError(f"bad time control {value!r}: use SECONDS (0.5) or BASE+INC (\"60+1\")")
        else:
            clock = TimeControl.parse(str(value))
    except ValueError as exc:
        raise bad("time", str(exc)) from None
    kind = data.get("clock", "wall")
    if kind not in CLOCK_KINDS:
        raise bad("clock", f"must be one of {', '.join(map(repr, CLOCK_KINDS))}, got {kind!r}")
    if "wall_factor" in data and kind != "cpu":
        raise bad("wall_factor", 'only for clock = "cpu"')
    try:
        return dataclasses.replace(clock, kind=kind, wall_factor=data.get("wall_factor", DEFAULT_WALL_FACTOR))
    except ValueError as exc:
        raise bad("wall_factor", str(exc)) from None
