"""The course's statuses as enums (arena/course/db/states.py): their values are the strings rows
and JSON always held, and neither the templates nor the pages' script compare against string
literals of them (they get the members: Jinja globals, and `data-states` for course.js)."""
from __future__ import annotations

import json
import re
from pathlib import Path

from arena.course.db import store
from arena.course.db.states import (
    FINISHED,
    STATES_JSON,
    UNDER_WAY,
    FinalState,
    LadderState,
    SubmissionStatus,
)
from arena.course.season import final

WEB = Path(__file__).resolve().parents[1] / "arena" / "course_web"
VALUES = sorted({m.value for enum in (SubmissionStatus, LadderState, FinalState) for m in enum})


def test_the_values_are_the_strings_rows_and_json_hold():
    assert [m.value for m in SubmissionStatus] == ["queued", "building", "testing", "qualified", "failed"]
    assert [m.value for m in LadderState] == ["queued", "scheduled", "done", "errored"]
    assert [m.value for m in FinalState] == ["not started", "running", "finished", "published"]
    assert store.STATUSES == tuple(SubmissionStatus) and store.FINAL == FINISHED == ("qualified", "failed")
    assert UNDER_WAY == ("building", "testing") and final.RUNNING is FinalState.RUNNING
    assert json.dumps({"status": SubmissionStatus.FAILED}) == '{"status": "failed"}'
    assert f"{FinalState.NOT_STARTED}" == "not started"
    assert SubmissionStatus("qualified").finished and not SubmissionStatus.TESTING.finished
    assert LadderState.ERRORED.over and not LadderState.SCHEDULED.over


def test_the_script_gets_the_statuses_from_the_enums():
    states = json.loads(STATES_JSON)
    assert states["submission"] == {m.name: m.value for m in SubmissionStatus}
    assert states["finished"] == ["qualified", "failed"]
    assert states["final"]["NOT_STARTED"] == "not started"


def test_no_template_nor_script_compares_against_a_status_literal():
    literal = "|".join(map(re.escape, VALUES))
    compare = re.compile(rf"""(==|!=|===|!==|\bin)\s*\(?\s*["']({literal})["']"""
                         rf"""|data-status=["']({literal})["']""")
    found = []
    for path in sorted([*WEB.glob("templates/*.html"), WEB / "static" / "course.js"]):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            found += [f"{path.name}:{number}: {m.group(0)}" for m in compare.finditer(line)]
    assert not found, found
