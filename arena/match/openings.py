"""Balanced openings: both games of a pair (games 2k and 2k+1 of a match, seats swapped) start from
the same opening k, so two deterministic bots do not play the same game again and again, and
whatever an opening gives one seat each bot gets once.

Two sources, as a tournament file's `openings` or `arena match --openings` names them:

- `random:N`: N random legal plies for each pair, drawn from `random.Random("<seed>:<pair>:<try>")`:
  the same seed gives the same openings, pair k of every pairing the same one. A draw that ends
  the game, or repeats the opening of an earlier pair, is drawn again (a repeat is kept only when
  DRAWS_MAX draws found nothing new; openings that all end the game are refused).
- a FILE: one opening a line, its moves in the game's notation separated by spaces, or by commas
  when the line has one (Santorini, whose moves hold spaces); `#` and `//` start comments, blank
  lines are skipped. Or a FOLDER of move files (`*.txt`, as `arena match --out` writes them, in
  the order of their names with numbers compared as numbers), one opening a file. Pair k plays
  opening k, from the first again when the pairs outnumber the openings. Every opening is played
  with the rules when the file is read; a bad move, or an opening that ends the game, is refused
  naming the file and the line.
"""
from __future__ import annotations

import functools
import hashlib
import random
import re
from dataclasses import dataclass
from pathlib import Path

import rules
from arena.match.movefile import parse_moves, resolve_move, without_comment

RANDOM_RE = re.compile(r"^random:(\d+)$")
DRAWS_MAX = 100
"""Draws of a random opening before settling for one drawn before (or, when every draw ended the
game, refusing the setting)."""
_CACHED_DRAWS = 32


class OpeningsError(ValueError):
    """Openings that cannot be used: the message names the setting, or the file and the line."""


@dataclass(frozen=True)
class Openings:
    """The openings of a match or tournament: random ones (`plies` > 0) or a file's (`book`)."""

    source: str
    """As written: "random:4", or the file or folder as the user named it."""
    plies: int = 0
    """Random openings: the random plies of each."""
    book: tuple[tuple[str, ...], ...] = ()
    """A file's openings in order, each as canonical moves from the start."""

    def for_pairs(self, game: rules.Game, seed: int, pairs: int) -> tuple[tuple[str, ...], ...]:
        """The openings of pairs 0 to `pairs` - 1 (a file's: all of them, cycled by MatchSpec.start_for)."""
        if self.book:
            return self.book
        return random_openings(game, self.plies, seed, pairs)

    def fingerprint(self) -> dict[str, str]:
        """What a tournament's stored games depend on: the setting, and a file's openings (its digest)."""
        if not self.book:
            return {"openings": self.source}
        text = "\n".join(",".join(opening) for opening in self.book)
        return {"openings": self.source, "openings_sha256": hashlib.sha256(text.encode()).hexdigest()}


def parse_openings(text: str, game: rules.Game, base: Path, what: str = "openings") -> Openings:
    """`random:N`, or a file or folder of openings read against `base` (a tournament file's folder);
    OpeningsError names `what` (the key or option) and the file and line at fault."""
    text = text.strip()
    if text.startswith("random"):
        match = RANDOM_RE.match(text)
        if match is None or int(match.group(1)) < 1:
            raise OpeningsError(f"{what}: {text!r}: use random:N with N >= 1 random plies, or a file")
        openings = Openings(text, plies=int(match.group(1)))
        try:
            openings.for_pairs(game, 0, 1)  # refused now if every draw ends the game
        except OpeningsError as exc:
            raise OpeningsError(f"{what}: {exc}") from None
        return openings
    path = base / text
    if path.is_dir():
        book = read_folder(path, game)
    elif path.is_file():
        book = read_lines(path, game)
    else:
        raise OpeningsError(f"{what}: {str(path)!r}: no such file or folder "
                            "(random:N, or a file of openings)")
    if not book:
        raise OpeningsError(f"{what}: {str(path)!r}: no openings in it")
    return Openings(text, book=book)


def read_lines(path: Path, game: rules.Game) -> tuple[tuple[str, ...], ...]:
    """The openings of a file of one opening a line; OpeningsError names the file and line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise OpeningsError(f"{path}: cannot read the openings: {exc}") from None
    book = []
    for number, line in enumerate(lines, 1):
        line = without_comment(line)
        if not line:
            continue
        words = [w.strip() for w in line.split(",")] if "," in line else line.split()
        state, moves = game.start(), []
        for word in words:
            if state.outcome is not None:
                break
            try:
                move = resolve_move(state, word)
            except ValueError as exc:
                raise OpeningsError(f"{path}, line {number}: {word!r}: {exc}") from None
            state = state.play(move)
            moves.append(move)
        if state.outcome is not None:
            raise OpeningsError(f"{path}, line {number}: the opening ends the game after {len(moves)} "
                                f"moves ({state.outcome.reason}); an opening must leave the game to the bots")
        book.append(tuple(moves))
    return tuple(book)


def read_folder(path: Path, game: rules.Game) -> tuple[tuple[str, ...], ...]:
    """The openings of a folder of move files (`*.txt`, by name, numbers as numbers)."""
    files = sorted((p for p in path.iterdir() if p.suffix == ".txt" and p.is_file()), key=_natural)
    book = []
    for file in files:
        try:
            moves = parse_moves(file.read_text(encoding="utf-8"), game, str(file))
        except (OSError, UnicodeDecodeError) as exc:
            raise OpeningsError(f"{file}: cannot read the opening: {exc}") from None
        except ValueError as exc:  # MoveFileError: names the file and line
            raise OpeningsError(str(exc)) from None
        state = game.replay(moves)
        if state.outcome is not None:
            raise OpeningsError(f"{file}: the opening ends the game after {len(moves)} moves "
                                f"({state.outcome.reason}); an opening must leave the game to the bots")
        book.append(moves)
    return tuple(book)


def _natural(path: Path) -> list[tuple[int, int | str]]:
    """g2.txt before g10.txt."""
    return [(0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", path.name)]


def random_opening(game: rules.Game, plies: int, seed: int, pair: int,
                   attempt: int) -> tuple[str, ...] | None:
    """Draw `attempt` of pair `pair`'s opening: `plies` random legal plies, None if they end the game."""
    rng = random.Random(f"{seed}:{pair}:{attempt}")
    state, moves = game.start(), []
    for _ in range(plies):
        if state.outcome is not None:
            return None
        move = rng.choice(state.legal_moves())
        state = state.play(move)
        moves.append(move)
    return None if state.outcome is not None else tuple(moves)


@functools.lru_cache(maxsize=_CACHED_DRAWS)
def random_openings(game: rules.Game, plies: int, seed: int, pairs: int) -> tuple[tuple[str, ...], ...]:
    """The random openings of pairs 0 to `pairs` - 1, each new where DRAWS_MAX draws find one (pair
    k's does not depend on how many pairs follow); OpeningsError when every draw ends the game."""
    out: list[tuple[str, ...]] = []
    seen: set[tuple[str, ...]] = set()
    for pair in range(pairs):
        chosen = None
        for attempt in range(DRAWS_MAX):
            opening = random_opening(game, plies, seed, pair, attempt)
            if opening is None:
                continue
            if opening not in seen:
                chosen = opening
                break
            chosen = chosen or opening
        if chosen is None:
            raise OpeningsError(f"random:{plies}: {DRAWS_MAX} draws of {plies} random plies all ended the "
                                f"game; use fewer plies")
        seen.add(chosen)
        out.append(chosen)
    return tuple(out)
