"""What a defence sheet's copying check costs: one student's pairs (`similarity.pairs_of`, the
student against every other and the published code) beside the all-pairs check of the staff's
similarity page (`similarity.similar_pairs`), on a temporary course of N students.

The students' active sources are the corpus of benchmarks/similarity_corpus.py (honest bots and
planted copies), repeated with renamed identifiers until there are N. Printed for each N: the
all-pairs time and the one-student time (the mean over a few students), each cold (no file's
tokens in memory) and warm (asked again: `fingerprints._file` keeps the tokens), and that both flag
the same pairs for those students.

    python benchmarks/similarity_one_student.py [--students 20 40 80] [--sample 3]
"""
from __future__ import annotations

import argparse
import shlex
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def make_course(directory: Path, count: int):
    """A course of `count` students, each with an active version from the corpus (made qualified by
    hand: nothing is built or played)."""
    from similarity_corpus import corpus, rename

    from arena.course.config import course_toml as config
    from arena.course.course import Course

    config.init(directory, "domineering")
    sources, _ = corpus()
    names = sorted(sources)
    ids = [f"s{n:03d}" for n in range(count)]
    (directory / "roster.csv").write_text("id,name,email,group\n" + "".join(
        f"{sid},Student {sid},{sid}@example.org,\n" for sid in ids))
    course = Course(directory, sandbox="off")
    for n, sid in enumerate(ids):
        base = dict(sources[names[n % len(names)]])
        text = base.get("bot.py") or next(iter(base.values()))
        if n >= len(names):  # another round of the corpus: its names changed, its code the same
            text = rename(text, {"board": f"board{n}", "legal": f"legal{n}"})
        sub = course.submit(sid, "bot.py", text.encode())
        course.store.set_command(sub.id, shlex.join([sys.executable, "-m", "bots", "random"]))
        course.store.finish(sub.id, "qualified")
    return course, ids


def timed(call, *args):
    """(what `call(*args)` answers, the seconds it took)."""
    start = time.perf_counter()
    found = call(*args)
    return found, time.perf_counter() - start


def main() -> int:
    from arena.course.season import similarity
    from arena.similarity import fingerprints

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, nargs="+", default=[20, 40, 80])
    parser.add_argument("--sample", type=int, default=3, help="students whose pairs are timed")
    args = parser.parse_args()
    for count in args.students:
        with tempfile.TemporaryDirectory() as folder:
            course, ids = make_course(Path(folder) / "course", count)
            sample = ids[:: max(1, len(ids) // args.sample)][: args.sample]
            fingerprints._file.cache_clear()  # cold: every file tokenized
            every, all_cold = timed(similarity.similar_pairs, course)
            every, all_warm = timed(similarity.similar_pairs, course)
            cold, warm, same = [], [], True
            for sid in sample:
                fingerprints._file.cache_clear()
                mine, seconds = timed(similarity.pairs_of, course, sid)
                cold.append(seconds)
                mine, seconds = timed(similarity.pairs_of, course, sid)
                warm.append(seconds)
                same = same and mine == [p for p in every if sid in (p.a, p.b)]
            print(f"{count:4d} students ({len(every)} pairs flagged): all pairs {all_cold:6.2f} s cold, "
                  f"{all_warm:6.2f} s warm; one student {sum(cold) / len(cold):6.2f} s cold, "
                  f"{sum(warm) / len(warm):6.3f} s warm; same pairs: {'yes' if same else 'NO'}")
            course.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
