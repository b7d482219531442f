"""The season's sections of course.toml checked together at load: every problem one line, all of
them at once, so that `arena course serve` and `arena course check` refuse a bad file before a
deadline or the final finds it."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from arena.course.config.course_toml import CourseError
from arena.course.season import final, grades, phases, privacy, similarity

if TYPE_CHECKING:
    from arena.course.config.course_toml import CourseConfig


def problems(config: CourseConfig, student_ids: set[str] | None = None) -> list[str]:
    """One line per bad section of `config` ([[phases]] and [extensions], [ladder], [final],
    [grading], [privacy], [similarity]), each naming its key; [] when all are good."""
    from arena.course.season import ladder  # openskill: loaded only where the ladder is read

    checks: list[Callable[[], object]] = [
        lambda: phases.season(config, student_ids), lambda: ladder.read_settings(config),
        lambda: final.settings(config), lambda: grades.settings(config),
        lambda: privacy.pseudonyms_on(config), lambda: similarity.settings(config)]
    found = []
    for check in checks:
        try:
            check()
        except CourseError as exc:
            found.append(str(exc))
    return found


def check(config: CourseConfig, student_ids: set[str] | None = None) -> None:
    """CourseError, one line per problem, unless every season section of `config` is good."""
    found = problems(config, student_ids)
    if found:
        raise CourseError("\n".join(found))
