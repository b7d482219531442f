"""Fingerprints of source code and the pairs of sources that share passages: the copying check's
engine, for any set of sources (the course's students: arena.course.season.similarity).

Each source file is tokenized (pygments, by its extension) with names, strings and numbers
replaced by one token each and comments and spaces dropped, so renaming, recommenting and
reformatting change nothing. Every run of `min_match_tokens` tokens (a k-gram, hashed with a
fixed polynomial over blake2b token digests: the same sources give the same scores whatever
PYTHONHASHSEED) is a fingerprint. The baseline, the starter kits' code (examples/kits/) and the
SDK (bots/sdk.py) every student may start from, is subtracted: a token inside a k-gram of the
baseline is nobody's own, and a passage is only found from a k-gram that is not the baseline's.
A matching passage is found greedily (the longest extension of a shared k-gram, as Greedy String
Tiling does), so reordered functions match one by one. A source's share of a pair is the part
of its own tokens (all its files, the baseline left out) inside the pair's passages; a pair
scores the larger of the two shares (a small bot copied whole into a big one scores high), a
source against the published code its own share. Pairs at or above the threshold are flagged,
and joined into clusters (union-find) so that near-identical submissions read as one group.
`compare_one` gives the flagged pairs of one source with n comparisons instead of n^2; each
file's tokens are kept in memory by its text (FILES_KEPT), so a check asked again tokenizes only
what changed.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

DEFAULT_THRESHOLD = 0.5
"""A pair is flagged from this share of a source's own code on (course.toml's `[similarity]`)."""
DEFAULT_MIN_MATCH_TOKENS = 40
"""Shorter matching passages are ignored: about four lines of code (the standard board loop every
honest bot has is shorter)."""

CODE_SUFFIXES = (".py", ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".java", ".cs", ".js", ".ts",
                 ".rs", ".go", ".kt", ".scala", ".rb", ".hs", ".ml", ".lua", ".jl")
"""Files compared: source code (build scripts, READMEs and data are not)."""
MAX_FILE_BYTES = 1_000_000
"""A file larger than this is left out (data, not code)."""
ROOT = Path(__file__).resolve().parents[2]
BOILERPLATE = (ROOT / "examples" / "kits", ROOT / "bots" / "sdk.py")
"""The baseline: the starter kits' code and the SDK every student may start from."""
PUBLISHED = {"bots/": ROOT / "bots"}
"""Published solutions compared with every student: label -> folder of code (the reference bots;
the baseline files in it are left out)."""
PUBLISHED_PREFIX = "published:"
"""How a published source is named in a Pair (`published:bots/`)."""
_MOD = (1 << 61) - 1
_BASE = 1_000_003
BASELINE_TOKENS = 12
"""A token inside a run of this many tokens found in the baseline is the baseline's (a kit line)."""
_CANDIDATES = 8
"""Where a k-gram occurs more often in the other source, the first this many places are tried."""


@dataclass(frozen=True)
class Passage:
    """A matching passage: lines `a_lines` (first, last; 1-based) of file `a_file` of the first
    source and `b_lines` of `b_file` of the second, with their text."""

    a_file: str
    a_lines: tuple[int, int]
    a_text: str
    b_file: str
    b_lines: tuple[int, int]
    b_text: str


@dataclass(frozen=True)
class Pair:
    """Two sources whose code matches: students `a` < `b` by id, or a student `a` and the published
    code `b` (`published:bots/`). `a_share`, `b_share`: each one's own code inside the passages;
    `score`: the larger (against published code: `a_share`). Passages longest first."""

    a: str
    b: str
    score: float
    a_share: float
    b_share: float
    passages: tuple[Passage, ...]

    @property
    def published(self) -> bool:
        """`b` is published code, not a student."""
        return self.b.startswith(PUBLISHED_PREFIX)


@dataclass(frozen=True)
class Cluster:
    """Sources joined by flagged pairs (union-find): its members sorted (students first), every
    flagged pair among them, and the strongest pairs that join them (a spanning tree: one pair a
    member, what the page shows in full)."""

    members: tuple[str, ...]
    pairs: tuple[Pair, ...]
    shown: tuple[Pair, ...] = field(default=())


# --- tokens and fingerprints ---

@dataclass
class _File:
    path: str
    text: str
    ids: list[int]
    """Each token's normalized digest."""
    spans: list[tuple[int, int]]
    """Each token's characters in `text`."""
    grams: list[int]
    """The hash of the k-gram starting at each token (len(ids) - k + 1 of them)."""
    own: list[bool]
    """Each token outside every k-gram of the baseline."""


@dataclass
class _Source:
    name: str
    files: list[_File]
    index: dict[int, list[tuple[int, int]]]
    """k-gram hash (not the baseline's) -> (file, position), in file and position order."""
    own_tokens: int


@lru_cache(maxsize=4096)
def _digest(token: str) -> int:
    return int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest(), "big") % _MOD


def _tokens(path: str, text: str) -> tuple[list[int], list[tuple[int, int]]]:
    """The normalized tokens of a source file and their character spans (nothing for a file
    pygments has no lexer for)."""
    from pygments.lexers import get_lexer_for_filename
    from pygments.token import Comment, Name, Number, String, Text
    from pygments.util import ClassNotFound

    try:
        lexer = get_lexer_for_filename(path, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return [], []
    ids: list[int] = []
    spans: list[tuple[int, int]] = []
    for start, kind, value in lexer.get_tokens_unprocessed(text):
        if kind in Comment or kind in Text or kind in String.Doc or not value.strip():
            continue
        if kind in Name:
            word = "V"
        elif kind in String:
            if spans and spans[-1][1] == start and ids[-1] == _digest("S"):  # one string, many tokens
                spans[-1] = (spans[-1][0], start + len(value))
                continue
            word = "S"
        elif kind in Number:
            word = "N"
        else:
            word = value.strip()
        ids.append(_digest(word))
        spans.append((start, start + len(value)))
    return ids, spans


def _grams(ids: list[int], k: int) -> list[int]:
    """The rolling hash of every k-gram of `ids`."""
    if len(ids) < k:
        return []
    top = pow(_BASE, k - 1, _MOD)
    value = 0
    for t in ids[:k]:
        value = (value * _BASE + t) % _MOD
    out = [value]
    for i in range(k, len(ids)):
        value = ((value - ids[i - k] * top) * _BASE + ids[i]) % _MOD
        out.append(value)
    return out


FILES_KEPT = 256
"""Source files whose tokens are kept in memory (by path and text): tokenizing is nearly all of a
check's time, so a check run again (the staff's page reloaded, a defence sheet) reads only what
changed. A file's tokens take some 100-300 kB."""


@lru_cache(maxsize=FILES_KEPT)
def _file(path: str, text: str, k: int, baseline: frozenset[int]) -> _File:
    """A file's tokens, its k-grams and which tokens are its own: outside every BASELINE_TOKENS-gram
    of the baseline (finer than k, so that a passage stitched from kit lines is no one's own). Kept
    (FILES_KEPT): callers only read it."""
    ids, spans = _tokens(path, text)
    own = [True] * len(ids)
    for i, g in enumerate(_grams(ids, BASELINE_TOKENS)):
        if g in baseline:
            own[i:i + BASELINE_TOKENS] = [False] * BASELINE_TOKENS
    return _File(path, text, ids, spans, _grams(ids, k), own)


def _source(name: str, files: list[tuple[str, str]], k: int, baseline: frozenset[int]) -> _Source:
    made = [_file(p, t, k, baseline) for p, t in sorted(files) if p.endswith(CODE_SUFFIXES)]
    index: dict[int, list[tuple[int, int]]] = {}
    for fi, f in enumerate(made):
        for i, g in enumerate(f.grams):
            if f.own[i]:
                index.setdefault(g, []).append((fi, i))
    return _Source(name, made, index, sum(sum(f.own) for f in made))


@lru_cache(maxsize=8)
def _baseline(paths: tuple[Path, ...]) -> frozenset[int]:
    """Every BASELINE_TOKENS-gram of every code file under `paths` (the kits, the SDK)."""
    found: set[int] = set()
    for path in _code_files(paths):
        text = path.read_text(encoding="utf-8", errors="replace")
        found.update(_grams(_tokens(path.name, text)[0], BASELINE_TOKENS))
    return frozenset(found)


def _code_files(paths: tuple[Path, ...]) -> list[Path]:
    out = []
    for base in paths:
        files = [base] if base.is_file() else sorted(p for p in base.rglob("*") if p.is_file()) \
            if base.is_dir() else []
        out += [p for p in files if p.suffix in CODE_SUFFIXES]
    return out


def published_sources(published: dict[str, Path] | None = None,
                      boilerplate: tuple[Path, ...] = BOILERPLATE) -> dict[str, list[tuple[str, str]]]:
    """The published code as sources: `published:<label>` -> [(path, text)] (baseline files left out)."""
    skip = {p.resolve() for p in _code_files(boilerplate)}
    out = {}
    for label, folder in sorted((PUBLISHED if published is None else published).items()):
        files = [(str(p.relative_to(folder.parent)), p.read_text(encoding="utf-8", errors="replace"))
                 for p in _code_files((folder,)) if p.resolve() not in skip]
        if files:
            out[PUBLISHED_PREFIX + label] = files
    return out


# --- comparing ---

def compare(sources: dict[str, list[tuple[str, str]]], threshold: float = DEFAULT_THRESHOLD,
            boilerplate: tuple[Path, ...] = BOILERPLATE,
            published: dict[str, list[tuple[str, str]]] | None = None,
            min_match_tokens: int = DEFAULT_MIN_MATCH_TOKENS) -> list[Pair]:
    """The pairs of `sources` (name -> [(file path, text)]), and of each source with each of
    `published` (`published:label` -> files), scoring at least `threshold`, highest first."""
    k = min_match_tokens
    baseline = _baseline(tuple(boilerplate))
    students = {name: _source(name, files, k, baseline) for name, files in sorted(sources.items())}
    refs = {name: _source(name, files, k, baseline) for name, files in sorted((published or {}).items())}
    names = sorted(students)
    pairs = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            pair = _pair(students[a], students[b], k, published=False)
            if pair is not None and pair.score >= threshold:
                pairs.append(pair)
        for ref in refs.values():
            pair = _pair(students[a], ref, k, published=True)
            if pair is not None and pair.score >= threshold:
                pairs.append(pair)
    return sorted(pairs, key=lambda p: (-p.score, p.a, p.b))


def _pair(a: _Source, b: _Source, k: int, published: bool) -> Pair | None:
    """The passages `a` and `b` share (greedy, longest first from each k-gram of `a`) as a Pair,
    None where they share none."""
    found: list[tuple[int, int, int, int, int]] = []  # a's file, a's start, b's file, b's start, length
    for fa, f in enumerate(a.files):
        i = 0
        while i < len(f.grams):
            places = b.index.get(f.grams[i]) if f.own[i] else None
            best = (0, 0, 0)
            for fb, j in (places or ())[:_CANDIDATES]:
                length = _extend(f.ids, i, b.files[fb].ids, j)
                if length > best[0]:
                    best = (length, fb, j)
            if best[0] >= k and sum(f.own[i:i + best[0]]) >= k:  # k tokens of its own, kit lines aside
                found.append((fa, i, best[1], best[2], best[0]))
                i += best[0]
            else:
                i += 1
    if not found:
        return None
    a_share = _share(a, [(fa, i, n) for fa, i, _, _, n in found])
    b_share = _share(b, [(fb, j, n) for _, _, fb, j, n in found])
    if a_share == 0:
        return None
    score = a_share if published else max(a_share, b_share)
    passages = [_passage(a.files[fa], i, b.files[fb], j, n) for fa, i, fb, j, n in found]
    passages.sort(key=lambda p: (-(p.a_lines[1] - p.a_lines[0]), p.a_file, p.a_lines))
    return Pair(a.name, b.name, round(min(1.0, score), 6), round(a_share, 6), round(b_share, 6),
                tuple(_merged(passages)))


def _extend(x: list[int], i: int, y: list[int], j: int) -> int:
    """How many tokens match from x[i] and y[j] on."""
    n = 0
    while i + n < len(x) and j + n < len(y) and x[i + n] == y[j + n]:
        n += 1
    return n


def _share(source: _Source, runs: list[tuple[int, int, int]]) -> float:
    """The part of `source`'s own tokens inside `runs` (file, start, length)."""
    if not source.own_tokens:
        return 0.0
    covered: set[tuple[int, int]] = set()
    for fi, start, n in runs:
        own = source.files[fi].own
        covered.update((fi, t) for t in range(start, start + n) if own[t])
    return len(covered) / source.own_tokens


def _lines(f: _File, start: int, n: int) -> tuple[tuple[int, int], str]:
    first_char, last_char = f.spans[start][0], f.spans[start + n - 1][1]
    first = f.text.count("\n", 0, first_char) + 1
    last = f.text.count("\n", 0, max(first_char, last_char - 1)) + 1
    return (first, last), "\n".join(f.text.splitlines()[first - 1:last])


def _passage(fa: _File, i: int, fb: _File, j: int, n: int) -> Passage:
    la, ta = _lines(fa, i, n)
    lb, tb = _lines(fb, j, n)
    return Passage(fa.path, la, ta, fb.path, lb, tb)


def _merged(passages: list[Passage]) -> list[Passage]:
    """The passages without one whose both sides lie inside another's."""
    out: list[Passage] = []
    for p in passages:
        if not any(p.a_file == q.a_file and p.b_file == q.b_file and q.a_lines[0] <= p.a_lines[0]
                   and p.a_lines[1] <= q.a_lines[1] and q.b_lines[0] <= p.b_lines[0]
                   and p.b_lines[1] <= q.b_lines[1] for q in out):
            out.append(p)
    return out


def compare_one(name: str, sources: dict[str, list[tuple[str, str]]], threshold: float = DEFAULT_THRESHOLD,
                boilerplate: tuple[Path, ...] = BOILERPLATE,
                published: dict[str, list[tuple[str, str]]] | None = None,
                min_match_tokens: int = DEFAULT_MIN_MATCH_TOKENS) -> list[Pair]:
    """The pairs `compare` would flag that involve source `name` (the same scores), highest first:
    it against every other source and each of `published`, n comparisons instead of n^2."""
    if name not in sources:
        return []
    k = min_match_tokens
    baseline = _baseline(tuple(boilerplate))
    made = {n: _source(n, files, k, baseline) for n, files in sorted(sources.items())}
    pairs = []
    for other in made:
        if other == name:
            continue
        a, b = sorted((name, other))
        pair = _pair(made[a], made[b], k, published=False)
        if pair is not None and pair.score >= threshold:
            pairs.append(pair)
    for label, files in sorted((published or {}).items()):
        pair = _pair(made[name], _source(label, files, k, baseline), k, published=True)
        if pair is not None and pair.score >= threshold:
            pairs.append(pair)
    return sorted(pairs, key=lambda p: (-p.score, p.a, p.b))


# --- clusters ---

def clusters(pairs: list[Pair]) -> list[Cluster]:
    """The flagged pairs grouped by union-find: sources joined by any chain of pairs are one
    cluster; the biggest cluster, then the highest-scoring, first."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for p in pairs:
        ra, rb = find(p.a), find(p.b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    groups: dict[str, list[Pair]] = {}
    for p in pairs:
        groups.setdefault(find(p.a), []).append(p)
    out = []
    for group in groups.values():
        members = sorted({m for p in group for m in (p.a, p.b)},
                         key=lambda m: (m.startswith(PUBLISHED_PREFIX), m))
        ordered = sorted(group, key=lambda p: (-p.score, p.a, p.b))
        out.append(Cluster(tuple(members), tuple(ordered), tuple(_spanning(ordered))))
    return sorted(out, key=lambda c: (-len(c.members), -c.pairs[0].score, c.members))


def _spanning(ordered: list[Pair]) -> list[Pair]:
    """The strongest pairs that join a cluster's members (Kruskal over pairs highest first)."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            x = parent[x]
        return x

    out = []
    for p in ordered:
        ra, rb = find(p.a), find(p.b)
        if ra != rb:
            parent[ra] = rb
            out.append(p)
    return out


def shown_name(source: str, names: dict[str, str] | None = None) -> str:
    """A source as staff read it: `s001 (Ada Lovelace)`, or `the published code bots/`."""
    if source.startswith(PUBLISHED_PREFIX):
        return f"the published code {source[len(PUBLISHED_PREFIX):]}"
    names = names or {}
    return f"{source} ({names[source]})" if source in names else source


def format_pairs(pairs: list[Pair], names: dict[str, str] | None = None) -> str:
    """What `arena course similarity` prints: a cluster of more than two as one line naming its
    members, then the pairs that join it (a line a pair, then its passages' line ranges side by
    side)."""
    if not pairs:
        return "no pair above the threshold\n"
    out: list[str] = []
    for cluster in clusters(pairs):
        if len(cluster.members) > 2:
            out.append(f"cluster of {len(cluster.members)}: {', '.join(cluster.members)} "
                       f"({len(cluster.pairs)} pairs above the threshold; the strongest that join them:)")
        for pair in cluster.shown:
            out += _pair_lines(pair, names)
    return "\n".join(out) + "\n"


def _pair_lines(pair: Pair, names: dict[str, str] | None) -> list[str]:
    a, b = shown_name(pair.a, names), shown_name(pair.b, names)
    whose = f"{pair.a_share:.0%} of {pair.a}'s code, {pair.b_share:.0%} of {pair.b}'s" if not pair.published \
        else f"{pair.a_share:.0%} of {pair.a}'s code is published code"
    lines = [f"{pair.score:.0%}  {a} ~ {b}  ({whose})"]
    lines += [f"    {p.a_file}:{p.a_lines[0]}-{p.a_lines[1]}  ~  {p.b_file}:{p.b_lines[0]}-{p.b_lines[1]}"
              for p in pair.passages]
    return lines


def page_data(pairs: list[Pair]) -> dict[str, Any]:
    """The staff page's data: the clusters (each shown once) and how many pairs in all."""
    return {"clusters": clusters(pairs), "count": len(pairs)}
