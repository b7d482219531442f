"""How the suite is spread over pytest-xdist's workers (tests/conftest.py installs it).

A module at a time, so that its module-scoped fixtures (a season, a published site, a browser's
pages) are set up on one worker only; the longest modules first (their times from the last full
run, kept in pytest's cache, else the estimates below), so that the workers end together. Tests
marked `timing` (their checks read a clock against a limit) run one at a time, as one unit sent
first, so that no two of them ever run side by side, and while they run no more workers than the
machine has CPUs run anything (the suite starts one worker more than the CPUs: tests wait on
clocks, sockets and browsers a third of their time; that worker starts its first unit once the
timing tests are done); those marked `loads_machine` (CPU hogs of their own, or checks that the
machine is quiet) run after every other test, one at a time on the last worker left while no other
worker runs anything. The workers list both in a folder the controller
reads: it sees node ids only.
"""
from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from xdist.remote import Producer
from xdist.workermanage import parse_tx_spec_config

CACHE_KEY = "arena/module_seconds"
"""Where the last full run's seconds per module are kept (pytest's cache, .pytest_cache/)."""
MARKED_KEY = "(timing and loads_machine)"
"""The cache's entry for the tests that run apart from their modules' units (their total)."""
EXPECTED_S = {
    "tests/test_kits.py": 106.9, "tests/test_course_season.py": 102.4, "tests/test_tournament.py": 94.5,
    "tests/test_site_live.py": 90.2, "tests/test_cluster.py": 76, "tests/test_site_viewer.py": 64,
    "tests/test_hostile.py": 46.9, "tests/test_site.py": 46.8, "tests/test_course_engine.py": 42.1,
    "tests/test_course_web.py": 36.7, "tests/test_course_phase_checks.py": 36.5,
    "tests/test_sandbox.py": 36.2, "tests/test_stdio_extensions.py": 35.3, "tests/test_referee.py": 33,
    "tests/test_layout.py": 32.2, "tests/test_docs_commands.py": 30.7, "tests/test_match_cli.py": 30.6,
    "tests/test_bots.py": 29.2, "tests/test_course_student_season.py": 28.9, "tests/test_play.py": 28,
    "tests/test_course_security.py": 27.1, "tests/test_hardening.py": 24.8,
    "tests/test_standings_site.py": 24.7, "tests/test_suite_runs.py": 23.2,
    "tests/test_course_attacks.py": 22.4, "tests/test_check_bot.py": 22.2,
    "tests/test_course_deploy.py": 22, "tests/test_openings.py": 20.5, "tests/test_aborted.py": 19.8,
    "tests/test_course_staff_guards.py": 19.2, "tests/test_course_phases.py": 17.3,
    "tests/test_course_load.py": 17.1, "tests/test_course_staff_views.py": 16.1,
    "tests/test_tournament_formats.py": 15.8, "tests/test_nonroot.py": 15.4,
    "tests/test_course_ladder.py": 15, "tests/test_reuse.py": 13.9,
    "tests/test_course_kits_season.py": 13.8, "tests/test_backends.py": 12.9,
    "tests/test_bot_ladder.py": 11.8, "tests/test_stdio.py": 11.1, "tests/test_course_similarity.py": 11,
    "tests/test_output_and_sockets.py": 10.4, "tests/test_course_final.py": 9.9,
    "tests/test_course_clock.py": 8.8, "tests/test_sprt.py": 7, "tests/test_network_rule.py": 6.8,
    "tests/test_course_games.py": 6.6, "tests/test_fairness.py": 5.8, "tests/test_morris.py": 4.8,
    "tests/test_protocol.py": 3.5, "tests/test_legal_check.py": 3.1,
    "tests/test_course_background.py": 3.1, "tests/test_domineering.py": 2.4, "tests/test_stale.py": 2.4,
    "tests/test_santorini.py": 1.6, "tests/test_course_archives.py": 1.6, "tests/test_fanorona.py": 1.2,
    "tests/test_commands.py": 1.1, "tests/test_freedom.py": 1.1, "tests/test_course_signin.py": 1,
    "tests/test_forfeiture.py": 1, "tests/test_standings.py": 0.9, "tests/test_course_accounts.py": 0.9,
    "tests/test_rules_generic.py": 0.8, "tests/test_course_config.py": 0.7, "tests/test_cpu_wait.py": 0.6,
    "tests/test_board_text.py": 0.5, "tests/test_course_upgrade.py": 0.4, "tests/test_course_db.py": 0.4,
    "tests/test_ratings.py": 0.4, "tests/test_plan.py": 0.3, "tests/test_course_check.py": 0.3,
    "tests/test_rules_doc.py": 0.3, "tests/test_scheduler.py": 0.3, "tests/test_formats.py": 0.3,
    "tests/test_course_states.py": 0.1
}
"""Seconds of each module's unit (its timing and loads_machine tests apart) where the cache has none
(a fresh checkout, as in CI): from a full run on this 2-core machine (xdist -n 2, other sessions'
tests beside it, load 5 to 9), after issue 35's cuts; only their order matters. A module not listed (a
new one) counts PER_TEST_S a test: rather too much than too little, since a long module sent last
is what keeps one worker busy while the other waits."""
PER_TEST_S = 0.5


def write_marked(folder: Path, worker: str, marked: dict[str, list[str]]) -> None:
    """A worker's node ids of its `timing` and `loads_machine` tests, for the controller (written
    whole, then renamed)."""
    part = folder / f"{worker}.part"
    part.write_text(json.dumps(marked))
    part.rename(folder / f"{worker}.json")


def read_marked(folder: Path, mark: str) -> set[str]:
    """The node ids of the tests marked `mark`, as the workers listed them."""
    return {nodeid for path in folder.glob("*.json") for nodeid in json.loads(path.read_text()).get(mark, [])}


class ModuleScheduling:
    """xdist's scheduler protocol (xdist/scheduler/protocol.py), a module at a time."""

    def __init__(self, config: Any, log: Producer | None, timing_dir: Path) -> None:
        self.numnodes = len(parse_tx_spec_config(config))
        self.node2collection: dict[Any, list[str]] = {}
        self.node2pending: dict[Any, list[int]] = {}
        self.collection: list[str] | None = None
        self.units: list[list[int]] = []
        """Units not yet sent, the longest expected first."""
        self.alone: list[int] = []
        """The tests that load the machine, held until every other test has run."""
        self.alone_node: Any = None
        self.seconds: dict[str, float] = {}
        """Seconds each module's unit took in this run (setup, call and teardown of its tests); its
        `timing` and `loads_machine` tests, which run in units of their own, under MARKED_KEY."""
        self.marked: set[int] = set()
        """The indices of the `timing` and `loads_machine` tests."""
        self.clocked: set[int] = set()
        """The `timing` tests not yet run: while there are any, at most `cpus` workers run tests."""
        self.cpus = len(os.sched_getaffinity(0))
        self.config = config
        self.timing_dir = timing_dir
        self.log = Producer("arenasched") if log is None else log.arenasched
        cache = getattr(config, "cache", None)
        last_run = (cache.get(CACHE_KEY, None) if cache is not None else None) or {}
        self.expected: dict[str, float] = {**EXPECTED_S, **last_run}

    @property
    def nodes(self) -> list[Any]:
        return list(self.node2pending)

    @property
    def collection_is_completed(self) -> bool:
        return len(self.node2collection) >= self.numnodes

    @property
    def tests_finished(self) -> bool:
        if not self.collection_is_completed or self.units or self.alone:
            return False
        return all(len(pending) < 2 for pending in self.node2pending.values())

    @property
    def has_pending(self) -> bool:
        return bool(self.units or self.alone or any(self.node2pending.values()))

    def add_node(self, node: Any) -> None:
        assert node not in self.node2pending
        self.node2pending[node] = []

    def add_node_collection(self, node: Any, collection: Sequence[str]) -> None:
        assert node in self.node2pending
        self.node2collection[node] = list(collection)

    def schedule(self) -> None:
        """Split the collection into units, longest first, and give each worker one."""
        assert self.collection_is_completed
        if self.collection is None:
            collections = list(self.node2collection.values())
            if any(c != collections[0] for c in collections):
                self.log("**Different tests collected, aborting run**")
                return
            self.collection = collections[0]
            timing = read_marked(self.timing_dir, "timing")
            alone = read_marked(self.timing_dir, "loads_machine")
            units: dict[str, list[int]] = {}
            clocked: list[int] = []
            for index, nodeid in enumerate(self.collection):
                if nodeid in alone:
                    self.alone.append(index)
                    self.marked.add(index)
                elif nodeid in timing:
                    clocked.append(index)
                    self.marked.add(index)
                else:
                    units.setdefault(nodeid.split("::")[0], []).append(index)
            self.units = ([clocked] if clocked else []) + sorted(units.values(), key=self._expected_s,
                                                                  reverse=True)
            self.clocked = set(clocked)
        for node in self.nodes:
            self.check_schedule(node)

    def _expected_s(self, unit: list[int]) -> float:
        assert self.collection is not None
        module = self.collection[unit[0]].split("::")[0]
        return self.expected.get(module, PER_TEST_S * len(unit))

    def check_schedule(self, node: Any, duration: float = 0) -> None:
        """Give `node` its next unit once it holds at most one test (a worker keeps its last test
        until it knows what runs after it: more tests, or its shutdown; a worker left holding one
        test and nothing else waits for ever); the tests that load the machine once every other
        worker is done."""
        if node.shutting_down or len(self.node2pending[node]) > 1:
            return
        if self.units and self._held(node):
            return
        if self.units:
            self._send(node, self.units.pop(0))
            if len(self.node2pending[node]) == 1:  # a unit of one test (the timing unit of a subset,
                self.check_schedule(node)  # a test put back): run only once the worker knows what follows
        elif self.alone:
            self._take_alone(node)
        elif node is not self.alone_node:
            node.shutdown()

    def _take_alone(self, node: Any) -> None:
        """The tests that load the machine go to the last worker left, once the others have gone. A
        worker done while another goes on leaves: kept for them, it would hold its last test unrun
        until every other worker had left."""
        if self.alone_node is None:
            if any(other is not node and not other.shutting_down for other in self.nodes):
                node.shutdown()
                return
            self.alone_node = node
        if self.alone_node is not node:
            node.shutdown()
        elif all(other is node for other in self.nodes):  # the others have finished and left
            self._send(node, self.alone)
            self.alone = []

    def _held(self, node: Any) -> bool:
        """True if `node`, idle, waits while the timing tests run: `cpus` other workers are busy
        (one of them with the timing tests, sent first)."""
        if not self.clocked or self.node2pending[node]:
            return False
        return sum(1 for other in self.nodes if other is not node and self.node2pending[other]) >= self.cpus

    def _send(self, node: Any, indices: list[int]) -> None:
        self.node2pending[node].extend(indices)
        node.send_runtest_some(indices)

    def mark_test_complete(self, node: Any, item_index: int, duration: float = 0) -> None:
        self.node2pending[node].remove(item_index)
        assert self.collection is not None
        key = MARKED_KEY if item_index in self.marked else self.collection[item_index].split("::")[0]
        self.seconds[key] = self.seconds.get(key, 0.0) + duration
        if item_index in self.clocked:
            self.clocked.discard(item_index)
            if not self.clocked:  # the timing tests are done: the workers held start first
                for other in self.nodes:
                    if other is not node and not self.node2pending[other]:
                        self.check_schedule(other)
        self.check_schedule(node, duration)

    def mark_test_pending(self, item: str) -> None:
        assert self.collection is not None
        self.units.insert(0, [self.collection.index(item)])
        for node in self.nodes:
            self.check_schedule(node)

    def remove_pending_tests_from_node(self, node: Any, indices: Sequence[int]) -> None:
        raise NotImplementedError()

    def remove_node(self, node: Any) -> str | None:
        """A worker left (finished, or crashed: its unrun tests go back to the front)."""
        pending = self.node2pending.pop(node)
        if self.alone_node is node:
            self.alone_node = None
        crashed = None
        if pending:
            assert self.collection is not None
            index = pending.pop(0)
            crashed = self.collection[index]
            self.clocked.discard(index)  # never marked complete: the workers held would wait for it
            if pending:
                self.units.insert(0, pending)
        for other in self.nodes:
            self.check_schedule(other)
        return crashed
