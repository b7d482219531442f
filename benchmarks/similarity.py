"""How well the copying check finds planted copies and leaves honest bots alone.

The corpus (benchmarks/similarity_corpus.py): twelve honest Domineering bots written from the Python
stdio kit, and planted copies: renamed identifiers, reordered functions, recommented and
reformatted, split over two files, and two pasted from the shipped alphabeta search and evaluation
(bots/). A flagged pair is one scoring at least the threshold; a pair is a copy where the corpus
says so (a paste pairs the student with `published:bots/`). Printed for the current check
(arena/course/season/similarity.py) and, in the same run, the check as it was before issue 33
(benchmarks/similarity_baseline.py: copydetect, the best single file pair, no published code):
precision, recall, the copies missed, the honest pairs flagged, the highest honest pair, the time.

    python benchmarks/similarity.py [--threshold 0.5]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def measure(name: str, pairs: list, copies: set[tuple[str, str]], seconds: float) -> None:
    flagged = {(p.a, p.b) for p in pairs}
    hits = flagged & copies
    false = sorted(flagged - copies)
    precision = len(hits) / len(flagged) if flagged else 1.0
    recall = len(hits) / len(copies)
    print(f"{name}: precision {precision:.2f} ({len(hits)}/{len(flagged)} flagged), recall {recall:.2f} "
          f"({len(hits)}/{len(copies)} copies), {seconds:.2f} s")
    if sorted(copies - flagged):
        print(f"    missed: {', '.join(a + '~' + b for a, b in sorted(copies - flagged))}")
    if false:
        print(f"    honest pairs flagged: {', '.join(a + '~' + b for a, b in false)}")


def main() -> int:
    import similarity_baseline
    from similarity_corpus import corpus

    from arena.course.season import similarity

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threshold", type=float, default=similarity.DEFAULT_THRESHOLD)
    args = parser.parse_args()
    sources, copies = corpus()
    print(f"{len(sources)} students ({sum(1 for s in sources if s.startswith('h'))} honest), "
          f"{len(copies)} copied pairs, threshold {args.threshold}")
    start = time.perf_counter()
    now = similarity.compare(sources, 0.0, published=similarity.published_sources())
    now_s = time.perf_counter() - start
    start = time.perf_counter()
    before = similarity_baseline.compare(sources, 0.0)
    before_s = time.perf_counter() - start
    for label, pairs, seconds in (("current ", now, now_s), ("baseline", before, before_s)):
        flagged = [p for p in pairs if p.score >= args.threshold]
        measure(label, flagged, copies, seconds)
        honest = [p for p in pairs if (p.a, p.b) not in copies]
        copied = [p for p in pairs if (p.a, p.b) in copies]
        print(f"    highest honest pair: {max((p.score for p in honest), default=0):.2f}; lowest copy found: "
              f"{min((p.score for p in copied), default=0):.2f}; copies scored: "
              + ", ".join(f"{p.a}~{p.b} {p.score:.2f}" for p in sorted(copied, key=lambda p: (p.a, p.b))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
