"""The course's statuses, each a closed set: a StrEnum whose values are the strings course.db's
rows, the JSON of the API and the pages have always held (so rows and JSON stay identical).
Compare against the members, never against string literals; the web front hands them to its
templates (Jinja globals) and to its script (`STATES_JSON`)."""
from __future__ import annotations

import json
from enum import StrEnum


class SubmissionStatus(StrEnum):
    """Where a submission stands: queued -> building -> testing -> qualified, or failed."""

    QUEUED = "queued"
    BUILDING = "building"
    TESTING = "testing"
    QUALIFIED = "qualified"
    FAILED = "failed"

    @property
    def finished(self) -> bool:
        """Its final status: it changes no more (unless staff requeue it)."""
        return self in FINISHED


FINISHED = (SubmissionStatus.QUALIFIED, SubmissionStatus.FAILED)
"""A submission's final statuses."""
UNDER_WAY = (SubmissionStatus.BUILDING, SubmissionStatus.TESTING)
"""A job a worker is running."""


class LadderState(StrEnum):
    """A ladder game: queued (asked for), scheduled (handed to the runner), done, or errored."""

    QUEUED = "queued"
    SCHEDULED = "scheduled"
    DONE = "done"
    ERRORED = "errored"

    @property
    def over(self) -> bool:
        """It will not be played (again): done or errored."""
        return self in (LadderState.DONE, LadderState.ERRORED)


class LadderStatus(StrEnum):
    """Whether the ladder plays: open, paused (while the final is played) or ended (past `[ladder]
    until`)."""

    OPEN = "open"
    PAUSED = "paused"
    ENDED = "ended"


class FinalState(StrEnum):
    """The final: not started, running (started, not every game stored), finished, published."""

    NOT_STARTED = "not started"
    RUNNING = "running"
    FINISHED = "finished"
    PUBLISHED = "published"


STATES_JSON = json.dumps({
    "submission": {m.name: m.value for m in SubmissionStatus},
    "finished": [m.value for m in FINISHED],
    "ladder": {m.name: m.value for m in LadderState},
    "final": {m.name: m.value for m in FinalState}}, separators=(",", ":"))
"""The statuses as the pages' script reads them (a data- attribute of its script element)."""
