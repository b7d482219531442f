"""A frozen copy of the copying check as it was before issue 33 (the baseline that
benchmarks/similarity.py measures beside the current one); not used by the server.

The copying check: every pair of students' active sources compared by winnowed fingerprints, as
MOSS does (Schleimer, Wilkerson and Aiken, SIGMOD 2003), with the `copydetect` package.

Each source file is tokenized (pygments, by its extension) with names, strings and comments
replaced or dropped, so renaming and reformatting change nothing; its k-grams are hashed and
winnowed. Fingerprints of the starter kits (examples/kits/) and of the SDK (bots/sdk.py) are
boilerplate: every k-gram of theirs is removed from every file first, so two bots built on the
same kit share nothing by that alone, and files matching on less than MIN_MATCH_CHARS are no
match. A pair's `score` is the larger of the two files' shares of matched code (a small bot
copied whole into a big one scores high), over the pair of files that match most; the matching
passages are given as line ranges of both files, side by side.
"""
from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from arena.course.season import archives

if TYPE_CHECKING:
    from copydetect import CodeFingerprint

    from arena.course.course import Course

DEFAULT_THRESHOLD = 0.5
NOISE_CHARS = 25
"""k: matches shorter than this many characters of tokenized code are never reported."""
GUARANTEE_CHARS = 30
"""Matches at least this long are always found."""
WINDOW = GUARANTEE_CHARS - NOISE_CHARS + 1
"""The winnowing window (in k-grams)."""
CODE_SUFFIXES = (".py", ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".java", ".cs", ".js", ".ts",
                 ".rs", ".go", ".kt", ".scala", ".rb", ".hs", ".ml", ".lua", ".jl")
"""Files compared: source code (build scripts, READMEs and data are not)."""
MIN_MATCH_CHARS = 60
"""A pair of files matching on less tokenized code than this (about four lines: names count one
character each, spaces none) is not reported whatever its share: two bots that each changed a
line of the same kit share that much by chance."""
MAX_FILE_BYTES = 1_000_000
ROOT = Path(__file__).resolve().parents[1]
BOILERPLATE = (ROOT / "examples" / "kits", ROOT / "bots" / "sdk.py")
"""The starter kits' code and the SDK every student may start from (where the checkout has them)."""


@dataclass(frozen=True)
class Passage:
    """A matching passage: lines `a_lines` (first, last; 1-based) of file `a_file` of the first
    student and `b_lines` of `b_file` of the second, with their text."""

    a_file: str
    a_lines: tuple[int, int]
    a_text: str
    b_file: str
    b_lines: tuple[int, int]
    b_text: str


@dataclass(frozen=True)
class Pair:
    """Two students (`a` < `b` by id) whose active sources match: `score` in [0, 1] (the larger of
    `a_share` and `b_share`, each file's share of matched code), and the passages, longest first."""

    a: str
    b: str
    score: float
    a_share: float
    b_share: float
    passages: tuple[Passage, ...]


def similar_pairs(course: Course, threshold: float = DEFAULT_THRESHOLD,
                  boilerplate: tuple[Path, ...] = BOILERPLATE) -> list[Pair]:
    """Every pair of students whose active sources score at least `threshold`, highest first."""
    if not 0 <= threshold <= 1:
        raise ValueError(f"threshold must be between 0 and 1, got {threshold}")
    sources = {row.student.id: _files_of(course, row.active_id) for row in course.rows()
               if row.active_id is not None}
    return compare(sources, threshold, boilerplate)


def compare(sources: dict[str, list[tuple[str, str]]], threshold: float = DEFAULT_THRESHOLD,
            boilerplate: tuple[Path, ...] = BOILERPLATE) -> list[Pair]:
    """The pairs of `sources` (name -> [(file path, text)]) scoring at least `threshold`."""
    shared = _boilerplate_hashes(boilerplate)
    prints = {name: [(path, _fingerprint(path, text, shared)) for path, text in files
                     if path.endswith(CODE_SUFFIXES)]
              for name, files in sources.items()}
    names = sorted(prints)
    pairs = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            pair = _compare_students(a, prints[a], b, prints[b])
            if pair is not None and pair.score >= threshold:
                pairs.append(pair)
    return sorted(pairs, key=lambda p: (-p.score, p.a, p.b))


def _files_of(course: Course, submission_id: int) -> list[tuple[str, str]]:
    """(path, text) of a submission's source files (archives unpacked; binary or huge ones left out)."""
    row = course.store.submission_row(submission_id)
    data = course.store.read_file(row["sha256"])
    if row["kind"] != "archive":
        members = [(row["filename"], data)]
    else:
        members = [(m.path, content) for m, content in archives.read_members(row["filename"], data)]
    out = []
    for path, content in members:
        if len(content) > MAX_FILE_BYTES:
            continue
        try:
            out.append((path, content.decode("utf-8")))
        except UnicodeDecodeError:
            continue
    return out


def _fingerprint(path: str, text: str, boilerplate: set[int], window: int = WINDOW) -> CodeFingerprint:
    """The winnowed fingerprints of one file, those of `boilerplate` removed. (Done here, not by
    copydetect's `boilerplate=`: it intersects with numpy's assume_unique=True over winnowed hashes
    that repeat, which drops the wrong ones.)"""
    from copydetect import CodeFingerprint
    from copydetect.utils import get_token_coverage

    found = CodeFingerprint(path, NOISE_CHARS, window, fp=io.StringIO(text))
    if boilerplate:
        found.hashes = found.hashes - boilerplate
        found.hash_idx = {h: i for h, i in found.hash_idx.items() if h not in boilerplate}
        found.token_coverage = get_token_coverage(found.hash_idx, found.k, len(found.filtered_code))
    return found


def _boilerplate_hashes(paths: tuple[Path, ...]) -> set[int]:
    """Every k-gram's hash of every code file under `paths` (the kits, the SDK): all of them, not
    only the winnowed ones (which ones winnowing keeps depends on the window around them)."""
    hashes: set[int] = set()
    for base in paths:
        files = [base] if base.is_file() else sorted(p for p in base.rglob("*") if p.is_file()) \
            if base.is_dir() else []
        for path in files:
            if path.suffix in CODE_SUFFIXES:
                text = path.read_text(encoding="utf-8", errors="replace")
                hashes |= _fingerprint(path.name, text, set(), window=1).hashes  # every k-gram
    return hashes


def _compare_students(a: str, files_a: list, b: str, files_b: list) -> Pair | None:
    """The best-matching pair of files of students `a` and `b`, as a Pair (None if nothing matches)."""
    from copydetect import compare_files

    best = None
    for path_a, fa in files_a:
        for path_b, fb in files_b:
            if not fa.hashes or not fb.hashes:
                continue
            overlap, (share_a, share_b), (slices_a, slices_b) = compare_files(fa, fb)
            if overlap < MIN_MATCH_CHARS:
                continue
            score = max(float(share_a), float(share_b))
            if best is None or score > best[0]:
                best = (score, float(share_a), float(share_b), path_a, fa, slices_a, path_b, fb, slices_b)
    if best is None:
        return None
    score, share_a, share_b, path_a, fa, slices_a, path_b, fb, slices_b = best
    passages = _passages(path_a, fa.raw_code, slices_a, path_b, fb.raw_code, slices_b)
    return Pair(a, b, min(1.0, score), share_a, share_b, passages)


def _passages(path_a: str, text_a: str, slices_a, path_b: str, text_b: str, slices_b) -> tuple[Passage, ...]:
    """The matched slices as line ranges. copydetect gives each file's slices separately; they are
    paired in order (the k-th copied run of one file with the k-th of the other), which is how a
    copy reads, reordered blocks aside."""
    spans_a = _line_spans(text_a, slices_a)
    spans_b = _line_spans(text_b, slices_b)
    out = []
    for (la, ta), (lb, tb) in zip(spans_a, spans_b, strict=False):
        out.append(Passage(path_a, la, ta, path_b, lb, tb))
    out.sort(key=lambda p: -(p.a_lines[1] - p.a_lines[0] + p.b_lines[1] - p.b_lines[0]))
    return tuple(out)


def _line_spans(text: str, slices) -> list[tuple[tuple[int, int], str]]:
    """Each slice (character start, end) as its (first line, last line) and the text of those lines,
    overlapping or touching line ranges merged."""
    lines = text.splitlines()
    spans: list[list[int]] = []
    for start, end in zip(slices[0], slices[1], strict=True):
        first = text.count("\n", 0, int(start)) + 1
        last = text.count("\n", 0, max(int(start), int(end) - 1)) + 1
        if spans and first <= spans[-1][1] + 1:
            spans[-1][1] = max(spans[-1][1], last)
        else:
            spans.append([first, last])
    return [((f, la), "\n".join(lines[f - 1:la])) for f, la in spans]


def format_pairs(pairs: list[Pair], names: dict[str, str] | None = None) -> str:
    """The pairs as `arena course similarity` prints them: a line a pair, then its passages'
    line ranges side by side."""
    names = names or {}
    if not pairs:
        return "no pair of students above the threshold\n"
    out = []
    for pair in pairs:
        who = [f"{s} ({names[s]})" if s in names else s for s in (pair.a, pair.b)]
        out.append(f"{pair.score:.0%}  {who[0]} ~ {who[1]}  ({pair.a_share:.0%} of {pair.a}'s file, "
                   f"{pair.b_share:.0%} of {pair.b}'s)")
        for p in pair.passages:
            out.append(f"    {p.a_file}:{p.a_lines[0]}-{p.a_lines[1]}  ~  "
                       f"{p.b_file}:{p.b_lines[0]}-{p.b_lines[1]}")
    return "\n".join(out) + "\n"
