"""The copying check of a course (issue 33): every student's active sources compared with every
other student's AND with the published code (the shipped reference bots, bots/*.py), scored by how
much of ALL of a student's files another source covers. The engine (tokens, fingerprints,
passages, clusters) is arena/similarity/fingerprints.py; this module hands it the course's
sources and `[similarity]` settings. `pairs_of` gives the flagged pairs of one student (its
defence sheet) with n comparisons instead of n^2.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from arena.course.config.sections import SimilaritySettings
from arena.course.season import archives
from arena.similarity.fingerprints import (
    BOILERPLATE,
    DEFAULT_THRESHOLD,
    MAX_FILE_BYTES,
    Cluster,
    Pair,
    Passage,
    clusters,
    compare,
    compare_one,
    format_pairs,
    page_data,
    published_sources,
    shown_name,
)

if TYPE_CHECKING:
    from arena.course.config.course_toml import CourseConfig
    from arena.course.course import Course

__all__ = ["DEFAULT_THRESHOLD", "Cluster", "Pair", "Passage", "active_sources", "clusters", "compare",
           "files_of", "format_pairs", "page_data", "pairs_of", "published_sources", "settings",
           "shown_name", "similar_pairs"]


def settings(config: CourseConfig) -> SimilaritySettings:
    """The `[similarity]` section, read and checked with the rest of course.toml at load."""
    return config.similarity


def _threshold(course: Course, threshold: float | None) -> float:
    found = settings(course.config).threshold if threshold is None else threshold
    if not 0 <= found <= 1:
        raise ValueError(f"threshold must be between 0 and 1, got {found}")
    return found


def active_sources(course: Course) -> dict[str, list[tuple[str, str]]]:
    """Each student with an active version -> its source files (`files_of`)."""
    return {row.student.id: files_of(course, row.active_id) for row in course.rows()
            if row.active_id is not None}


def similar_pairs(course: Course, threshold: float | None = None,
                  boilerplate: tuple[Path, ...] = BOILERPLATE) -> list[Pair]:
    """Every pair (students, or a student and the published code) scoring at least `threshold`
    (default: course.toml's [similarity]), highest first."""
    threshold = _threshold(course, threshold)
    sources = active_sources(course)
    return compare(sources, threshold, boilerplate, published_sources(boilerplate=boilerplate),
                   settings(course.config).min_match_tokens)


def pairs_of(course: Course, student_id: str, threshold: float | None = None,
             boilerplate: tuple[Path, ...] = BOILERPLATE) -> list[Pair]:
    """The pairs `similar_pairs` would flag that involve `student_id` (the same scores), highest
    first (for a student's defence sheet)."""
    threshold = _threshold(course, threshold)
    sources = active_sources(course)
    published = published_sources(boilerplate=boilerplate)
    return compare_one(student_id, sources, threshold, boilerplate, published,
                       settings(course.config).min_match_tokens)


def files_of(course: Course, submission_id: int) -> list[tuple[str, str]]:
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
