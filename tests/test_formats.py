"""Gauntlet and Swiss pairings against hand-worked rounds: no rematches, byes, seats balanced,
deterministic replanning from stored results."""
from __future__ import annotations

import random
from collections import Counter

import pytest

from arena.tournament.formats import (
    SwissRound,
    bye_points,
    gauntlet,
    round_complete,
    swiss_round,
    swiss_rounds,
)

# --- gauntlet ---


def test_gauntlet_two_challengers_against_four_plays_two_times_four_pairings():
    bots = ["ref1", "alice", "ref2", "ref3", "bob", "ref4"]
    pairings = gauntlet(bots, ["alice", "bob"], 2)
    assert len(pairings) == 2 * 4
    pairs = {frozenset((p.a, p.b)) for p in pairings}
    assert pairs == {frozenset((c, r)) for c in ("alice", "bob") for r in ("ref1", "ref2", "ref3", "ref4")}
    # names follow the file's order, as in a round-robin: alice is listed after ref1
    assert "ref1-vs-alice" in {p.pairing_id for p in pairings}
    # the first round of pairings gives each challenger a different opponent
    assert {p.a for p in pairings[:2]} | {p.b for p in pairings[:2]} >= {"alice", "bob"}


@pytest.mark.parametrize(("challengers", "message"), [
    ([], "at least one challenger"),
    (["zed"], "'zed' is not one of the bots"),
    (["a", "a"], "listed twice"),
    (["a", "b", "c"], "every bot is a challenger"),
])
def test_gauntlet_refuses_bad_challengers(challengers, message):
    with pytest.raises(ValueError, match=message):
        gauntlet(["a", "b", "c"], challengers, 2)


# --- Swiss: hand-worked rounds ---

FIVE = ["A", "B", "C", "D", "E"]


def test_swiss_five_bots_two_rounds_by_hand():
    # Round 1: nobody has points; ranked by the file's order. E (last) gets the bye; A-B, C-D.
    r1 = swiss_round(FIVE, 2, 1, [], {})
    assert [p.pairing_id for p in r1.pairings] == ["r1-A-vs-B", "r1-C-vs-D"]
    assert r1.bye == "E"
    # A wins both games against B; C and D draw 1-1. Points: A 2, E 2 (bye = a won pairing), C 1, D 1, B 0.
    results = {"r1-A-vs-B": {0: 1.0, 1: 1.0}, "r1-C-vs-D": {0: 1.0, 1: 0.0}}
    planned = swiss_rounds(FIVE, 2, 3, results)
    assert planned[0] == r1
    r2 = planned[1]
    # Ranked A, E, C, D, B. The bye goes to the lowest without one: B. A-E then C-D would be a
    # rematch, so the search backtracks: A-C and E-D.
    assert r2.bye == "B"
    assert [p.pairing_id for p in r2.pairings] == ["r2-A-vs-C", "r2-E-vs-D"]
    # A and C both started round 1: the higher-ranked A starts; E and D never started: E (higher).
    assert [(p.a, p.b) for p in r2.pairings] == [("A", "C"), ("E", "D")]
    assert len(planned) == 2  # round 3 waits until round 2 is stored


def test_swiss_seats_go_to_the_bot_that_started_fewer():
    # Round 1: A-B (A started), C-D (C started). Everybody draws. Round 2 ranks A, B, C, D again; A-B is
    # a rematch, so A-C and B-D: A and C both started once, A ranks higher; B never started, so B starts.
    results = {"r1-A-vs-B": {0: 1.0, 1: 0.0}, "r1-C-vs-D": {0: 1.0, 1: 0.0}}
    r2 = swiss_rounds(["A", "B", "C", "D"], 2, 2, results)[1]
    assert [(p.a, p.b) for p in r2.pairings] == [("A", "C"), ("B", "D")]
    results.update({"r2-A-vs-C": {0: 0.0, 1: 0.0}, "r2-B-vs-D": {0: 1.0, 1: 1.0}})
    # Points: A 1, B 3, C 3, D 1 -> ranked B, C, A, D; B-C and A-D are new. Starts: B 1, C 1, but B
    # started last round and C did not, so C starts; A started twice, D never, so D starts.
    r3 = swiss_rounds(["A", "B", "C", "D"], 2, 3, results)[2]
    assert [(p.a, p.b) for p in r3.pairings] == [("C", "B"), ("D", "A")]


def test_swiss_refuses_a_round_that_would_need_a_rematch():
    bots = ["A", "B", "C", "D"]
    history: list[SwissRound] = []
    points: dict[str, float] = {}
    for number in (1, 2, 3):
        history.append(swiss_round(bots, 2, number, history, points))
    with pytest.raises(ValueError, match="no pairing without a rematch"):
        swiss_round(bots, 2, 4, history, points)


@pytest.mark.parametrize("n", range(2, 12))
def test_swiss_random_results_never_rematch_and_spread_byes_and_seats(n):
    bots = [f"b{i}" for i in range(n)]
    rounds = min(n - 1 if n % 2 == 0 else n, 5)
    rng = random.Random(n)
    results: dict[str, dict[int, float]] = {}
    while True:
        planned = swiss_rounds(bots, 2, rounds, results)
        last = planned[-1]
        if round_complete(last, results):
            break
        for p in last.pairings:
            results[p.pairing_id] = {0: rng.choice([0.0, 0.5, 1.0]), 1: rng.choice([0.0, 0.5, 1.0])}
    assert len(planned) == rounds
    pairs = [frozenset((p.a, p.b)) for r in planned for p in r.pairings]
    assert len(pairs) == len(set(pairs))  # no rematch
    for r in planned:
        seen = Counter([p.a for p in r.pairings] + [p.b for p in r.pairings] + [r.bye] * (r.bye is not None))
        assert set(seen) == set(bots) and max(seen.values()) == 1  # everybody once a round
    byes = [r.bye for r in planned if r.bye is not None]
    assert len(byes) == len(set(byes)) == (rounds if n % 2 else 0)
    starts = Counter(p.a for r in planned for p in r.pairings)
    played = Counter(x for r in planned for p in r.pairings for x in (p.a, p.b))
    for bot in bots:
        assert abs(2 * starts[bot] - played[bot]) <= 2, (bot, starts[bot], played[bot])
    # deterministic: planning again from the same results gives the same rounds
    assert swiss_rounds(bots, 2, rounds, results) == planned


def test_swiss_bye_is_a_won_pairing():
    assert bye_points(2) == 2.0
    planned = swiss_rounds(["A", "B", "C"], 2, 1, {"r1-A-vs-B": {0: 0.5, 1: 0.5}})
    assert planned[0].bye == "C"
