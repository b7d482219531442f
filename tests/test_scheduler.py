"""Round-robin pairings: counts, seat balance and stable names for 2 to 9 bots."""
from __future__ import annotations

from collections import Counter
from itertools import combinations

import pytest

from arena.tournament.formats import Pairing, round_robin


@pytest.mark.parametrize("n", range(2, 10))
@pytest.mark.parametrize("games", [2, 4, 10])
def test_every_pair_meets_once_with_seats_balanced(n, games):
    bots = [f"bot{i}" for i in range(n)]
    pairings = round_robin(bots, games)
    assert len(pairings) == n * (n - 1) // 2
    assert {frozenset((p.a, p.b)) for p in pairings} == {frozenset(c) for c in combinations(bots, 2)}
    seat0, seat1, played = Counter(), Counter(), Counter()
    for p in pairings:
        assert p.games == games
        for number in range(p.games):
            first, second = p.seats(number)
            seat0[first] += 1
            seat1[second] += 1
            played[first] += 1
            played[second] += 1
    for bot in bots:
        assert played[bot] == (n - 1) * games
        assert seat0[bot] == seat1[bot] == (n - 1) * games // 2


@pytest.mark.parametrize("n", range(2, 10))
def test_rounds_spread_each_bot(n):
    """Circle method: in the first n//2 pairings (one round) no bot appears twice."""
    bots = [f"b{i}" for i in range(n)]
    first_round = round_robin(bots, 2)[: n // 2]
    names = [x for p in first_round for x in (p.a, p.b)]
    assert len(names) == len(set(names))


def test_pairing_names_follow_file_order_and_survive_an_appended_bot():
    before = {p.pairing_id for p in round_robin(["zed", "amy", "bob"], 2)}
    assert before == {"zed-vs-amy", "zed-vs-bob", "amy-vs-bob"}
    after = {p.pairing_id for p in round_robin(["zed", "amy", "bob", "new"], 2)}
    assert before < after
    assert after - before == {"zed-vs-new", "amy-vs-new", "bob-vs-new"}


def test_seats_swap_with_game_number():
    p = Pairing("a", "b", 4)
    assert [p.seats(k) for k in range(4)] == [("a", "b"), ("b", "a"), ("a", "b"), ("b", "a")]


@pytest.mark.parametrize(
    ("bots", "games", "message"),
    [
        (["solo"], 2, "at least 2 bots"),
        (["a", "a"], 2, "'a' appears twice"),
        (["a", "b"], 3, "even number"),
        (["a", "b"], 0, "even number"),
        (["a", "b"], True, "even number"),
    ],
)
def test_bad_input_is_named(bots, games, message):
    with pytest.raises(ValueError, match=message):
        round_robin(bots, games)
