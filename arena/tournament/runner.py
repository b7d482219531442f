"""A tournament: its TOML file, and the runner that plays every missing game exactly once.

The file (see examples/):

    name = "demo"                 # optional: the results directory name (default: the file's stem)
    game = "domineering"          # a game of `rules`
    time = "0.2"                  # seconds per move, or "BASE+INC" (default: the assignment's limit)
    games_per_pairing = 2         # even: every pairing plays as many games in each seat
    seed = 1                      # the games' seeds derive from it
    games_per_task = 2            # optional: games a worker plays with the same two bot processes
    format = "round_robin"        # optional: "round_robin" (default), "gauntlet" or "swiss"
    challengers = ["mybot"]       # gauntlet only: these bots play every other bot, never each other
    rounds = 5                    # swiss only: how many rounds
    description = "..."           # optional, free text
    [params]                      # optional: the game's parameters (rules.load)
    rows = 6
    [limits]                      # optional: per-bot limits and fairness (arena.limits, docs/limits.md)
    memory_mb = 2048
    pin_cpus = true
    [[bots]]                      # two or more
    name = "random"
    command = "random"            # a shipped bot NAME, or a command line ("./mybot --fast"),
                                  # or an argv list (["java", "-jar", "bot.jar"])

The runner: the parent process opens the results database (arena.store), accepts or refuses the
file's fingerprint, builds a MatchSpec for every chunk of games not yet stored, runs them through a
`concurrent.futures` executor (a ProcessPoolExecutor by default; any executor with `submit` works,
e.g. a Dask client's), and commits each returned game in its own transaction. Only the parent
writes the database. A task that is lost (killed worker, run interrupted) simply leaves its games
missing: the next run plays them.
"""
from __future__ import annotations

import _thread
import contextlib
import dataclasses
import fcntl
import json
import multiprocessing
import os
import queue
import re
import shlex
import sys
import threading
import time
import tomllib
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from arena.match.clock import TimeControl
from arena.match.limits import Limits
from arena.match.records import GameRecord
from arena.match.spec import BotSpec, MatchSpec
from arena.tournament.formats import FORMATS, Pairing, gauntlet, round_robin, swiss_rounds
from arena.tournament.store import DB_NAME, Store, StoreError, fingerprint_change

DEFAULT_GAMES_PER_PAIRING = 2
DEFAULT_GAMES_PER_TASK = 10
"""Games a worker plays with the same two bot processes: small keeps little work in flight
(an interrupted run replays at most this many games per worker), large saves bot start-ups."""
DEFAULT_RESULTS_ROOT = "results"
LOCK_NAME = "run.lock"
_POOL_RESTARTS = 2
"""How many times a broken process pool (a worker killed) is rebuilt before giving up."""
_PARENT_POLL_S = 0.5
_STREAM_POLL_S = 0.1
"""How often the parent commits the games workers streamed (seconds)."""

_KEYS = {"name", "game", "time", "games_per_pairing", "seed", "games_per_task", "params", "bots",
         "description", "title", "limits", "format", "challengers", "rounds"}
_BOT_KEYS = {"name", "command"}
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$")


class TournamentError(ValueError):
    """A tournament file that cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class BotEntry:
    """A bot of the tournament: `command` as written in the file, `argv` as it will run."""

    name: str
    command: str | tuple[str, ...]
    argv: tuple[str, ...]

    def spec(self) -> BotSpec:
        return BotSpec(self.name, self.argv)


@dataclass(frozen=True)
class Tournament:
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
    limits: Limits = field(default_factory=Limits)
    format: str = "round_robin"
    challengers: tuple[str, ...] = ()
    rounds: int = 0
    """Swiss rounds (0 for the other formats)."""

    def fingerprint(self) -> dict[str, Any]:
        """What the stored games depend on (arena.store decides which changes are allowed).

        A round-robin's fingerprint has no format keys, so results stored before formats existed
        still match."""
        extra: dict[str, Any] = {}
        if self.format == "gauntlet":
            extra = {"format": self.format, "challengers": list(self.challengers)}
        elif self.format == "swiss":
            extra = {"format": self.format, "rounds": self.rounds}
        return {**extra,
            "name": self.name,
            "game": self.game,
            "params": self.params,
            "time_control": str(self.time_control),
            "games_per_pairing": self.games_per_pairing,
            "seed": self.seed,
            "bots": [{"name": b.name, "command": b.command if isinstance(b.command, str) else list(b.command)}
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
        n = len(self.bots)
        if self.format == "gauntlet":
            return len(self.challengers) * (n - len(self.challengers)) * self.games_per_pairing
        if self.format == "swiss":
            return self.rounds * (n // 2) * self.games_per_pairing
        return n * (n - 1) // 2 * self.games_per_pairing

    def match_spec(self, pairing: Pairing, numbers: tuple[int, ...]) -> MatchSpec:
        bots = {b.name: b for b in self.bots}
        return MatchSpec(
            match_id=pairing.pairing_id, game=self.game,
            bots=(bots[pairing.a].spec(), bots[pairing.b].spec()),
            time_control=self.time_control, game_numbers=numbers, params=dict(self.params), seed=self.seed,
            limits=self.limits,
        )


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
    import rules
    from arena.match.launcher import LaunchError, resolve_command

    def bad(key: str, why: str) -> TournamentError:
        return TournamentError(f"{path}: {key}: {why}")

    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise bad(unknown[0], f"unknown key (known: {', '.join(sorted(_KEYS))})")
    name = data.get("name", path.stem)
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise bad("name", f"{name!r} is not a usable name "
                  "(letters, digits, . _ + -; it names the results directory)")
    game_name = data.get("game")
    if not isinstance(game_name, str):
        raise bad("game", f"required, a game name ({', '.join(rules.names())})" if game_name is None
                  else f"must be a game name, got {game_name!r}")
    params = data.get("params", {})
    if not isinstance(params, dict):
        raise bad("params", f"must be a table of the game's parameters, got {params!r}")
    try:
        game = rules.load(game_name, **params)
    except ValueError as exc:
        raise bad("game" if game_name not in rules.names() else "params", str(exc)) from None
    time_value = data.get("time")
    try:
        if time_value is None:
            time_control = TimeControl.for_game(game_name)
        elif isinstance(time_value, bool) or not isinstance(time_value, (str, int, float)):
            raise ValueError(f"bad time control {time_value!r}: use SECONDS (0.5) or BASE+INC (\"60+1\")")
        else:
            time_control = TimeControl.parse(str(time_value))
    except ValueError as exc:
        raise bad("time", str(exc)) from None
    ints = {}
    for key, default, low in (("games_per_pairing", DEFAULT_GAMES_PER_PAIRING, 2), ("seed", 0, None),
                              ("games_per_task", DEFAULT_GAMES_PER_TASK, 1)):
        value = data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or (low is not None and value < low):
            raise bad(key, f"must be a whole number{f' >= {low}' if low is not None else ''}, got {value!r}")
        ints[key] = value
    if ints["games_per_pairing"] % 2:
        raise bad("games_per_pairing",
                  f"must be even so that seats swap evenly, got {ints['games_per_pairing']}")
    for key in ("description", "title"):
        if not isinstance(data.get(key, ""), str):
            raise bad(key, "must be a string")
    raw_limits = data.get("limits", {})
    if not isinstance(raw_limits, dict):
        raise bad("limits", f"must be a table of limits, got {raw_limits!r}")
    try:
        limits = Limits.from_dict(raw_limits)
    except (TypeError, ValueError) as exc:
        raise bad("limits", str(exc)) from None
    raw_bots = data.get("bots")
    if not isinstance(raw_bots, list) or not all(isinstance(b, dict) for b in raw_bots):
        raise bad("bots", "required: a [[bots]] table for each bot, with name and command")
    bots: list[BotEntry] = []
    seen: set[str] = set()
    for k, raw in enumerate(raw_bots, 1):
        where = f"bots[{k}]"
        unknown = sorted(set(raw) - _BOT_KEYS)
        if unknown:
            raise bad(f"{where}.{unknown[0]}", "unknown key (known: command, name)")
        bot_name = raw.get("name")
        if not isinstance(bot_name, str) or not _NAME_RE.match(bot_name):
            raise bad(f"{where}.name", f"{bot_name!r} is not a usable bot name (letters, digits, . _ + -)")
        if bot_name in seen:
            raise bad(f"{where}.name", f"bot name {bot_name!r} appears twice")
        seen.add(bot_name)
        command = raw.get("command")
        try:
            if isinstance(command, str):
                argv = resolve_command(command, path.parent) if check_commands else _split(command)
                written: str | tuple[str, ...] = command
            elif isinstance(command, list) and command and all(isinstance(a, str) for a in command):
                argv = resolve_command(command, path.parent) if check_commands else tuple(command)
                written = tuple(command)
            else:
                raise LaunchError("must be a shipped bot name, a command line or a list of strings, "
                                  f"got {command!r}")
        except LaunchError as exc:
            raise bad(f"{where}.command", f"bot {bot_name!r}: {exc}") from None
        bots.append(BotEntry(bot_name, written, argv))
    if len(bots) < 2:
        raise bad("bots", f"a tournament needs at least 2 bots, the file has {len(bots)}")
    fmt, challengers, rounds = _format_keys(data, [b.name for b in bots], bad)
    return Tournament(
        path=path, name=name, game=game_name, params=game.params, time_control=time_control,
        bots=tuple(bots), games_per_pairing=ints["games_per_pairing"], seed=ints["seed"],
        games_per_task=ints["games_per_task"], description=data.get("description", ""), limits=limits,
        format=fmt, challengers=challengers, rounds=rounds,
    )


def _format_keys(data: dict[str, Any], names: list[str],
                 bad: Callable[[str, str], TournamentError]) -> tuple[str, tuple[str, ...], int]:
    """The checked `format`, `challengers` and `rounds` keys."""
    fmt = data.get("format", "round_robin")
    if fmt not in FORMATS:
        raise bad("format", f"must be one of {', '.join(map(repr, FORMATS))}, got {fmt!r}")
    if "challengers" in data and fmt != "gauntlet":
        raise bad("challengers", f'only for format = "gauntlet" (this file\'s format is {fmt!r})')
    if "rounds" in data and fmt != "swiss":
        raise bad("rounds", f'only for format = "swiss" (this file\'s format is {fmt!r})')
    challengers: tuple[str, ...] = ()
    rounds = 0
    if fmt == "gauntlet":
        raw = data.get("challengers")
        if not isinstance(raw, list) or not raw or not all(isinstance(c, str) for c in raw):
            raise bad("challengers", f"a gauntlet needs a list of bot names, e.g. [\"mybot\"], got {raw!r}")
        for name in raw:
            if name not in names:
                raise bad("challengers", f"{name!r} is not the name of a bot of this file")
        if len(set(raw)) != len(raw):
            raise bad("challengers", "a bot is listed twice")
        if len(raw) == len(names):
            raise bad("challengers", "every bot is a challenger: a gauntlet needs bots to challenge")
        challengers = tuple(raw)
    elif fmt == "swiss":
        raw = data.get("rounds")
        most = len(names) if len(names) % 2 else len(names) - 1
        if isinstance(raw, bool) or not isinstance(raw, int) or not 1 <= raw <= most:
            raise bad("rounds", f"a Swiss of {len(names)} bots needs a whole number of rounds from 1 to "
                      f"{most} (more would need a rematch), got {raw!r}")
        rounds = raw
    return fmt, challengers, rounds


def _split(command: str) -> tuple[str, ...]:
    try:
        return tuple(shlex.split(command))
    except ValueError:
        return (command,)


def check_resumable(tournament: Tournament, results_root: str | Path = DEFAULT_RESULTS_ROOT) -> int:
    """How many games are stored already; StoreError if the file changed in a way that breaks
    exactly-once (checked without writing anything)."""
    db = tournament.results_dir(results_root) / DB_NAME
    if not db.is_file():
        return 0
    with Store(db, create=False) as store:
        old = store.fingerprint()
        if old is not None and old != tournament.fingerprint():
            reason = fingerprint_change(old, tournament.fingerprint())
            if reason is not None:
                raise StoreError(f"the tournament file changed since the first run: {reason}")
        return store.count()


# --- the worker side ---

_STREAM: Any = None
"""In a worker of the default pool: the queue on which each finished game goes to the parent."""


def play_task(spec: MatchSpec) -> list[str]:
    """Play `spec` (in a worker process) and return its game records as JSON strings.

    In the default pool each game is also sent to the parent as soon as it ends, so that it is
    committed at once rather than when the whole task returns."""
    from arena.match.referee import run_match

    stream = _STREAM

    def on_game(record: GameRecord) -> None:
        if stream is not None:
            try:
                stream.put((spec.match_id, record.to_json()))
            except Exception:  # the parent still gets the record in the returned list
                pass

    return [record.to_json() for record in run_match(spec, on_game=on_game)]


def _init_worker(parent_pid: int, stream: Any = None) -> None:
    """Worker initializer: keep the stream, and if the parent dies (even by kill -9), interrupt the
    running match so the referee stops its bots, then leave; the next run replays the lost games."""
    global _STREAM
    _STREAM = stream

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(_PARENT_POLL_S)
        _thread.interrupt_main()
        time.sleep(5.0)
        os._exit(1)

    threading.Thread(target=watch, name="arena-parent-watch", daemon=True).start()


# --- the parent side ---

@dataclass
class RunSummary:
    planned: int = 0
    stored: int = 0
    already: int = 0
    failures: list[str] = field(default_factory=list)
    interrupted: bool = False
    wall_s: float = 0.0
    matches: int = 0
    """Matches (tasks) played to their end in this run."""
    game_s: float = 0.0
    """The games' own durations (GameRecord.duration_s) stored in this run, added up."""
    phases: int = 0
    """Pools started: 1, or one per Swiss round played."""

    def timing(self, workers: int) -> dict[str, float]:
        """What the plan calibrates its next estimates with (Store.record_run)."""
        return {"wall_s": round(self.wall_s, 3), "workers": workers, "matches": self.matches,
                "games": self.stored, "game_s": round(self.game_s, 3), "phases": self.phases}

    @property
    def missing(self) -> int:
        return self.planned - self.stored


def duration(seconds: float) -> str:
    """`42 s`, `3 min 20 s`, `5 h 07 min` (rounded up to a whole second)."""
    total = max(0, int(-(-seconds // 1)))
    if total < 60:
        return f"{total} s"
    minutes, secs = divmod(total, 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


class Progress:
    """A one-line text progress bar with a running count of results and the time left, on stderr.

    The time left is `eta_s` (the plan's estimate) minus the time elapsed until this run has
    stored a game, then the games left at this run's measured pace."""

    WIDTH = 30

    def __init__(self, total: int, done: int, stream: TextIO | None, eta_s: float | None = None) -> None:
        self.total, self.done, self.stream = total, done, stream
        self.first_done, self.eta_s = done, eta_s
        self.counts = {"seat 0 wins": 0, "seat 1 wins": 0, "draws": 0, "forfeits": 0}
        self.started = time.monotonic()
        self._last = 0.0
        self._printed = -1
        self._tty = bool(stream is not None and getattr(stream, "isatty", lambda: False)())

    def add(self, record: GameRecord) -> None:
        self.done += 1
        key = {0: "seat 0 wins", 1: "seat 1 wins"}.get(record.winner, "draws")  # type: ignore[arg-type]
        self.counts[key] += 1
        if record.forfeit:
            self.counts["forfeits"] += 1
        self.show()

    def line(self) -> str:
        filled = int(self.WIDTH * self.done / self.total) if self.total else self.WIDTH
        counts = ", ".join(f"{k} {v}" for k, v in self.counts.items())
        elapsed = time.monotonic() - self.started
        bar = "#" * filled + "." * (self.WIDTH - filled)
        return f"[{bar}] {self.done}/{self.total} games ({counts}) {elapsed:.0f}s{self.time_left(elapsed)}"

    def time_left(self, elapsed: float) -> str:
        if self.done >= self.total:
            return ""
        this_run = self.done - self.first_done
        if this_run > 0:
            left = elapsed / this_run * (self.total - self.done)
        elif self.eta_s is not None:
            left = max(0.0, self.eta_s - elapsed)
        else:
            return ""
        return f", about {duration(left)} left"

    def show(self, final: bool = False) -> None:
        if self.stream is None:
            return
        now = time.monotonic()
        if not final and not self._tty and now - self._last < 1.0 and self.done < self.total:
            return
        line = self.line()
        if not self._tty and self.done == self._printed:
            return
        self._printed = self.done
        self._last = now
        end = "\n" if final or not self._tty else ""
        self.stream.write(("\r" if self._tty else "") + line + end)
        self.stream.flush()


def plan(tournament: Tournament, stored: dict[str, set[int]],
         results: dict[str, dict[int, float]] | None = None) -> list[MatchSpec]:
    """MatchSpecs for every game not stored, in chunks of games_per_task, first chunks first.

    For a Swiss, only the games of the current round: `results` (Store.pairing_results) must hold
    the stored games' results, from which the round is planned."""
    if tournament.format == "swiss" and results is None:
        raise ValueError("planning a Swiss round needs the stored results")
    chunked: list[list[MatchSpec]] = []
    for pairing in tournament.pairings(results):
        have = stored.get(pairing.pairing_id, set())
        missing = [n for n in range(pairing.games) if n not in have]
        size = tournament.games_per_task
        chunks = [tuple(missing[i:i + size]) for i in range(0, len(missing), size)]
        chunked.append([tournament.match_spec(pairing, c) for c in chunks])
    specs = []
    for depth in range(max((len(c) for c in chunked), default=0)):
        specs += [c[depth] for c in chunked if depth < len(c)]
    return specs


def run(
    tournament: Tournament,
    results_root: str | Path = DEFAULT_RESULTS_ROOT,
    concurrency: int = 1,
    executor: Executor | None = None,
    progress: TextIO | None = sys.stderr,
    task: Callable[[MatchSpec], list[str]] = play_task,
    eta_s: float | None = None,
) -> RunSummary:
    """Play every game of `tournament` not yet stored; each game is committed as it comes back.

    `eta_s`: the plan's estimate of the wall time (arena.tournament.plan), shown as the time left
    until the first game of this run is stored.

    `executor`: any concurrent.futures-style executor (its `submit` must return Futures); by default
    a ProcessPoolExecutor of `concurrency` workers (spawned, each watching that the parent lives).
    A Swiss is played round by round: each round is planned from the stored results once the round
    before it is stored. StoreError if the file changed in a way that breaks exactly-once.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    started = time.monotonic()
    summary = RunSummary()
    out = tournament.results_dir(results_root)
    out.mkdir(parents=True, exist_ok=True)
    with _exclusive(out / LOCK_NAME, tournament.name), Store(out / DB_NAME) as store:
        store.accept_fingerprint(tournament.fingerprint())
        stored = store.stored_numbers()
        summary.already = sum(len(v) for v in stored.values())
        specs = plan(tournament, stored, store.pairing_results())
        summary.planned = sum(len(s.game_numbers) for s in specs)
        bar = Progress(tournament.total_games(), summary.already, progress, eta_s)
        bar.show()
        pending = list(specs)
        try:
            while pending:
                stored_before = summary.stored
                _play_specs(store, pending, concurrency, executor, task, summary, bar)
                pending = []
                if tournament.format == "swiss" and summary.stored > stored_before and not summary.failures:
                    pending = plan(tournament, store.stored_numbers(), store.pairing_results())
                    summary.planned += sum(len(s.game_numbers) for s in pending)
        except KeyboardInterrupt:
            summary.interrupted = True
        bar.show(final=True)
        summary.wall_s = time.monotonic() - started
        if executor is None and summary.stored and not summary.interrupted and not summary.failures:
            store.record_run(summary.timing(concurrency))
    return summary


def _play_specs(store: Store, pending: list[MatchSpec], concurrency: int,
                executor: Executor | None, task: Callable[[MatchSpec], list[str]], summary: RunSummary,
                bar: Progress) -> None:
    """Play `pending` through the executor (rebuilding a broken default pool), committing each game."""
    restarts = 0
    summary.phases += 1
    while pending:
        own = executor is None
        stream = multiprocessing.get_context("spawn").Queue() if own else None
        pool = executor if executor is not None else _make_pool(concurrency, stream)
        futures: dict[Future, MatchSpec] = {pool.submit(task, spec): spec for spec in pending}
        expected = {spec.game_id(n): (spec, n) for spec in pending for n in spec.game_numbers}
        pending = []
        broken = False
        clean = False
        try:
            running = set(futures)
            while running:
                done, running = wait(running, timeout=_STREAM_POLL_S, return_when=FIRST_COMPLETED)
                _drain(stream, store, expected, summary, bar)
                for future in done:
                    spec = futures[future]
                    try:
                        results = future.result()
                    except BrokenProcessPool:
                        broken = True
                        pending.append(spec)
                        continue
                    except Exception as exc:  # the referee failed on this match: report, go on
                        summary.failures.append(f"{spec.match_id} games {list(spec.game_numbers)}: "
                                                f"{type(exc).__name__}: {exc}")
                        continue
                    _store_results(store, spec, results, expected, summary, bar)
                    summary.matches += 1
            _drain(stream, store, expected, summary, bar)
            clean = not broken
        finally:
            if own:  # after an interrupt, do not wait for the matches still running
                pool.shutdown(wait=clean, cancel_futures=True)
        if broken:
            restarts += 1
            have = store.stored_numbers()
            pending = [dataclasses.replace(s, game_numbers=left) for s in pending
                       if (left := tuple(n for n in s.game_numbers
                                         if n not in have.get(s.match_id, set())))]
            if restarts > _POOL_RESTARTS or not own:
                summary.failures += [f"{s.match_id} games {list(s.game_numbers)}: worker process died"
                                     for s in pending]
                pending = []


@contextlib.contextmanager
def _exclusive(path: Path, name: str) -> Iterator[None]:
    """Hold an exclusive lock on `path` (released by the kernel even after kill -9): two runs of the
    same tournament at once would play the same games twice (though each would be stored once)."""
    with open(path, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.seek(0)
            pid = handle.read().strip() or "?"
            raise StoreError(f"another run of tournament {name!r} is in progress (pid {pid}); "
                             "wait for it or stop it first") from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _make_pool(concurrency: int, stream: Any = None) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(max_workers=concurrency, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_init_worker, initargs=(os.getpid(), stream))


_RECORD_FIELDS = {f.name for f in dataclasses.fields(GameRecord)}


def _drain(stream: Any, store: Store, expected: dict[str, tuple[MatchSpec, int]], summary: RunSummary,
           bar: Progress) -> None:
    """Commit the games the workers streamed so far."""
    if stream is None:
        return
    while True:
        try:
            match_id, item = stream.get_nowait()
        except queue.Empty:
            return
        except (OSError, ValueError, EOFError):  # a worker died while writing: its games come again
            return
        _store_one(store, item, expected, summary, bar, match_id)


def _store_results(store: Store, spec: MatchSpec, results: Any, expected: dict[str, tuple[MatchSpec, int]],
                   summary: RunSummary, bar: Progress) -> None:
    """Check what a worker returned and commit each game of `spec` not yet committed."""
    if not isinstance(results, list):
        summary.failures.append(f"{spec.match_id}: the worker returned {type(results).__name__}, not a list")
        results = []
    for item in results:
        _store_one(store, item, expected, summary, bar, spec.match_id)
    for n in spec.game_numbers:
        if expected.get(spec.game_id(n), (None, None))[0] is spec:
            summary.failures.append(f"{spec.match_id}: game {spec.game_id(n)} did not come back")
            del expected[spec.game_id(n)]


def _store_one(store: Store, item: Any, expected: dict[str, tuple[MatchSpec, int]], summary: RunSummary,
               bar: Progress, match_id: str) -> None:
    """Commit one game record (JSON) if it is a game still expected, for the right players."""
    try:
        data = json.loads(item) if isinstance(item, str) else item
        record = GameRecord.from_dict({k: v for k, v in data.items() if k in _RECORD_FIELDS})
    except (TypeError, ValueError, AttributeError) as exc:
        summary.failures.append(f"{match_id}: unreadable game record ({exc})")
        return
    spec, number = expected.get(record.game_id, (None, -1))
    if spec is None:
        return  # already committed (streamed, then returned again), or not a game of this run
    if spec.match_id != match_id or list(record.players) != [b.name for b in spec.seats(number)]:
        summary.failures.append(f"{match_id}: unexpected game {record.game_id!r} "
                                f"players {record.players!r} (not stored)")
        return
    del expected[record.game_id]
    if store.add_game(spec.match_id, number, record):
        summary.stored += 1
        summary.game_s += record.duration_s
        bar.add(record)
