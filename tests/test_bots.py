"""The reference bots: alpha-beta equals minimax, the timed search keeps its rules, every bot takes a win."""
from __future__ import annotations

import random
import sys

import pytest

import rules
from bots import NAMES, evaluation, load
from bots.players import AlphaBeta, Champion, Greedy, Minimax
from bots.search import WIN, Searcher, alphabeta, is_decided, minimax, terminal_score

# Small boards where depth 3 without pruning stays cheap; every game is covered.
GAMES: dict[str, dict] = {
    "freedom": {"size": 8},
    "domineering": {"rows": 6, "cols": 6},
    "morris": {},
    "santorini": {},
    "fanorona": {},
}
SEARCHED_BOTS = ("greedy", "minimax", "alphabeta", "champion")
MAX_SANTORINI_MOVES = 20
"""Santorini's random positions keep to those with at most this many moves (full width is b^3)."""
POSITIONS = {"santorini": 30}
"""Positions compared at depth 3 where 100 cost too much unpruned (santorini: up to 20^3 nodes each)."""


def random_positions(name: str, count: int, seed: int) -> list[rules.State]:
    """`count` running positions, each drawn from a different random playout of `name`."""
    game = rules.load(name, **GAMES[name])
    rng = random.Random(seed)
    out: list[rules.State] = []
    while len(out) < count:
        state, path = game.start(), []
        while not state.is_over():
            moves = state.legal_moves()
            if name != "santorini" or (state.ply >= 2 and len(moves) <= MAX_SANTORINI_MOVES):
                path.append(state)
            state = state.play(rng.choice(moves))
        if path:
            out.append(rng.choice(path))
    return out


@pytest.mark.parametrize("name", sorted(GAMES))
def test_alphabeta_equals_minimax_at_depth_3_with_fewer_nodes(name: str) -> None:
    evaluate = evaluation.simple(name)
    positions = random_positions(name, POSITIONS.get(name, 100), seed=1)
    mm_nodes = ab_nodes = 0
    for state in positions:
        mm = minimax(state, 3, evaluate)
        ab = alphabeta(state, 3, evaluate)
        assert ab.score == mm.score, f"{name}: {state.to_wire()}"
        assert ab.move == mm.move  # same move order, first best move kept by both
        assert mm.candidates[mm.move] == mm.score and mm.pv[0] == mm.move and len(mm.pv) <= 3
        mm_nodes += mm.nodes
        ab_nodes += ab.nodes
    assert ab_nodes < mm_nodes
    print(f"{name}: minimax {mm_nodes} nodes, alphabeta {ab_nodes} nodes over {len(positions)} positions")


@pytest.mark.parametrize("name", sorted(GAMES))
def test_iterative_deepening_with_table_finds_the_alphabeta_value(name: str) -> None:
    evaluate = evaluation.simple(name)
    for state in random_positions(name, 30, seed=2):
        expected = alphabeta(state, 3, evaluate).score
        result = Searcher(evaluate).search(state, deadline=None, max_depth=3)
        if len(state.legal_moves()) == 1:  # a forced move is answered without searching deeper
            assert result.move == state.legal_moves()[0] and result.depth == 1
            continue
        if not is_decided(expected):  # a proven result may stop the deepening early
            assert result.depth == 3
        assert result.score == expected, f"{name}: {state.to_wire()}"


@pytest.mark.parametrize("name", ["fanorona", "morris"])
def test_noisy_extension_searches_every_move_past_the_horizon(name: str) -> None:
    evaluate = evaluation.simple(name)
    for state in random_positions(name, 20, seed=6):
        if len(state.legal_moves()) == 1:
            continue
        # Every position noisy, two plies of extension: depth 1 + 2 is a full depth-3 search.
        searcher = Searcher(evaluate, noisy=lambda s: True, extension=2)
        assert searcher.search(state, deadline=None, max_depth=1).score == alphabeta(state, 3, evaluate).score
        quiet = Searcher(evaluate, noisy=lambda s: False, extension=2)
        assert quiet.search(state, deadline=None, max_depth=1).score == alphabeta(state, 1, evaluate).score


def test_fanorona_is_noisy_exactly_when_a_capture_is_compulsory() -> None:
    noisy = quiet = 0
    for state in random_positions("fanorona", 40, seed=7):
        stones = (state.white | state.black).bit_count()
        captures = any((c.white | c.black).bit_count() < stones for c in map(state.play, state.legal_moves()))
        assert evaluation.fanorona_noisy(state) == captures
        noisy, quiet = noisy + captures, quiet + (not captures)
    assert noisy and quiet


def test_fanorona_capture_adds_half_a_stone_a_stone_of_the_biggest_capture() -> None:
    seen = 0
    for state in random_positions("fanorona", 40, seed=7):
        own, opp = (state.white, state.black) if state.seat == 0 else (state.black, state.white)
        taken = [opp.bit_count() - (c.black if state.seat == 0 else c.white).bit_count()
                 for c in map(state.play, state.legal_moves())]
        material = 100 * (own.bit_count() - opp.bit_count())
        assert evaluation.fanorona_capture(state) == material + 50 * max(taken)
        seen += max(taken) > 1
    assert seen


def test_champion_contempt_scores_a_draw_below_even_for_its_own_side() -> None:
    game = rules.load("fanorona", move_limit=6)
    state = game.start()
    for _ in range(5):  # one ply before the limit: every move ends the game, level or a lead of three
        state = state.play(state.legal_moves()[0])
    assert not state.is_over()
    even = Searcher(evaluation.simple("fanorona")).search(state, deadline=None, max_depth=1)
    wary = Searcher(evaluation.simple("fanorona"), contempt=100).search(state, deadline=None, max_depth=1)
    draws = [m for m in state.legal_moves() if state.play(m).outcome.winner is None]
    assert draws
    for move in draws:
        assert even.candidates[move] == 0
        assert wary.candidates[move] == -100


def test_timed_search_answers_with_the_deepest_finished_iteration() -> None:
    name = "domineering"
    evaluate = evaluation.simple(name)
    state = rules.load(name, **GAMES[name]).start()
    calls = 0

    def counting(s: rules.State, move: str | None) -> float:
        nonlocal calls
        calls += 1
        return evaluate(s, move)

    Searcher(counting).search(state, deadline=None, max_depth=2)
    after_two = calls
    calls = 0
    # The clock stands still through iterations 1 and 2, then jumps past the deadline in iteration 3.
    searcher = Searcher(counting, clock=lambda: 0.0 if calls <= after_two else 1e9)
    result = searcher.search(state, deadline=1.0)
    depth2 = alphabeta(state, 2, evaluate)
    assert calls > after_two  # iteration 3 started ...
    assert result.depth == 2  # ... but its unfinished work was dropped
    assert result.score == depth2.score
    assert result.candidates[result.move] == depth2.score


def test_terminal_scores_prefer_faster_wins() -> None:
    game = rules.load("domineering", rows=2, cols=2)
    won = game.start().play("1A")  # vertical covers column A; horizontal has no move and loses
    assert won.is_over() and won.outcome.winner == 0
    assert terminal_score(won) == -(WIN - 1)  # the side to move (seat 1) lost at ply 1


def test_santorini_simple_evaluation_is_the_assignments_f() -> None:
    game = rules.load("santorini")
    state = game.start()
    for move in ("A1 C3", "E1 E5", "C3 C4 C5", "E5 D5 D4"):
        state = state.play(move)
    move = "C4 D4 C3"  # climb onto D4 (level 1), build C3 from level 0 to 1
    after = state.play(move)
    # m = 1; own workers A1, D4 are 2 + 1 from C3; opponent's E1, D5 are 2 + 2: l = 1 * (4 - 3)
    assert evaluation.santorini_f(after, move) == 1 + 1
    assert evaluation.santorini_simple(after, move) == -2  # seen by seat 1, who is to move
    # medium: f plus the heights' lead; seat 0 has D4 on level 1 (10), seat 1 stands on level 0
    assert evaluation.santorini_medium(after, move) == -2 - 10
    bot = Greedy()
    move, info = bot.choose(state, 1.0)
    assert info["score"] == max(evaluation.santorini_f(state.play(m), m) for m in state.legal_moves())


def win_positions(name: str, count: int, seed: int) -> list[tuple[rules.State, set[str]]]:
    """Positions from random playouts where some moves win at once and some do not, with the winners."""
    game = rules.load(name, **GAMES[name])
    rng = random.Random(seed)
    found: list[tuple[rules.State, set[str]]] = []
    while len(found) < count:
        state = game.start()
        while not state.is_over():
            moves = state.legal_moves()
            if state.ply >= 2:
                winning = set()
                for m in moves:
                    child = state.play(m)
                    if child.outcome is not None and child.outcome.winner == state.seat:
                        winning.add(m)
                if winning and len(winning) < len(moves):
                    found.append((state, winning))
                    break
            state = state.play(rng.choice(moves))
    return found


@pytest.mark.parametrize("name", sorted(GAMES))
@pytest.mark.parametrize("bot_name", SEARCHED_BOTS)
def test_every_bot_takes_a_one_move_win(name: str, bot_name: str) -> None:
    for state, winning in win_positions(name, 3, seed=3):
        bot = load(bot_name)()
        move, info = bot.choose(state, 0.5)
        assert move in winning, f"{bot_name} missed a win in {name}: {state.to_wire()}"
        assert is_decided(info["score"]) and info["score"] > 0
        assert info["mate"] == 1  # docs/PROTOCOL.md: a proven end in plies from here, + for a win
        assert info["pv"][0] == move and info["nodes"] >= 1 and info["depth"] >= 1


@pytest.mark.parametrize("bot_class", [Greedy, Minimax, AlphaBeta, Champion])
def test_info_reports_depth_score_nodes_pv_and_candidates(bot_class: type) -> None:
    state = random_positions("morris", 1, seed=4)[0]
    move, info = bot_class().choose(state, 0.5)
    legal = state.legal_moves()
    assert move in legal
    assert set(info) >= {"depth", "score", "nodes", "pv", "candidates"}
    assert info["pv"][0] == move and all(isinstance(m, str) for m in info["pv"])
    candidates = info["candidates"]  # docs/PROTOCOL.md: a list of {move, score} maps, best first
    assert {c["move"] for c in candidates} <= set(legal)
    assert {k: candidates[0][k] for k in ("move", "score")} == {"move": move, "score": info["score"]}
    assert [c["score"] for c in candidates] == sorted((c["score"] for c in candidates), reverse=True)
    assert info["nodes"] > len(legal) or info["depth"] == 1


@pytest.mark.parametrize("name", sorted(GAMES))
def test_alphabeta_bot_answers_minimax_value_at_its_depth(name: str) -> None:
    # The bot deepens 1, 2, 3 with its root ordered by the iteration before: given the time, its
    # answer is still minimax's at depth 3 (a forced move or a proven result may stop it sooner).
    for state in random_positions(name, POSITIONS.get(name, 30) // 3, seed=8):
        evaluate = AlphaBeta().evaluation_for(state)  # the bot's own evaluation
        move, info = AlphaBeta(depth=3).choose(state, 60.0)
        expected = minimax(state, 3, evaluate)
        if len(state.legal_moves()) == 1:
            assert move == state.legal_moves()[0]
            continue
        assert info["score"] == expected.score, f"{name}: {state.to_wire()}"
        assert expected.candidates[move] == expected.score  # one of minimax's best moves
        assert info["depth"] == 3 or is_decided(info["score"])


def test_alphabeta_searches_deeper_by_default_where_the_clock_allows() -> None:
    assert AlphaBeta().depth_for(rules.load("freedom")) == 6
    assert AlphaBeta().depth_for(rules.load("santorini")) == 3
    assert AlphaBeta(depth=2).depth_for(rules.load("freedom")) == 2
    state = rules.load("freedom").start().play("E5")
    assert AlphaBeta().choose(state, 60.0)[1]["depth"] == 6


def test_bot_options_and_registry() -> None:
    assert {"greedy", "minimax", "alphabeta", "champion"} <= set(NAMES)
    assert load("alphabeta") is AlphaBeta
    assert AlphaBeta(depth="2").depth == 2 and Minimax().depth == 2 and AlphaBeta().depth == 3
    with pytest.raises(ValueError):
        AlphaBeta(depth="0")


def test_every_evaluation_runs_on_random_positions() -> None:
    for name in GAMES:
        for state in random_positions(name, 20, seed=5):
            for pick in (evaluation.simple, evaluation.medium, evaluation.strong):
                assert abs(pick(name)(state, None)) < 100_000


def test_domineering_room_counts_placements_that_fit_at_once() -> None:
    # start cells of placements along a line: a run of five free cells (four starts) fits two
    # dominoes, of four two, of three one; runs apart add up
    assert evaluation._disjoint(0b1111, 1) == 2
    assert evaluation._disjoint(0b111, 1) == 2
    assert evaluation._disjoint(0b11, 1) == 1
    assert evaluation._disjoint(0b110011, 1) == 2
    assert evaluation._disjoint(0b1 | 0b1 << 8, 8) == 1  # overlapping vertical placements, 8 columns
    assert evaluation._disjoint(0, 1) == 0


GAMES_KEPT = 10
"""Games of the champion's time-keeping match: every one of its moves within the limit, game after game."""


@pytest.mark.timing  # every move within its 0.5 s, on the wall clock
def test_champion_keeps_its_time_in_a_match() -> None:
    from arena.match.clock import TimeControl
    from arena.match.referee import run_match
    from arena.match.spec import BotSpec, MatchSpec

    def bot(text: str) -> BotSpec:
        return BotSpec(text, (sys.executable, "-m", "bots", *text.split()))

    limit = 0.5
    spec = MatchSpec("champion-clock", "domineering", (bot("champion"), bot("alphabeta depth=2")),
                     TimeControl(per_move=limit), tuple(range(GAMES_KEPT)), {"rows": 6, "cols": 6})
    records = run_match(spec)
    assert len(records) == GAMES_KEPT
    champion_moves = 0
    for number, record in enumerate(records):
        assert record.forfeit is None, record.forfeit
        seat = number % 2  # bots[0] (champion) sits in seat 0 in even games
        for move in record.moves:
            assert move.time_s < limit, (number, move)
            if move.seat == seat:
                champion_moves += 1
                assert move.info["depth"] >= 1
    assert champion_moves >= 3 * GAMES_KEPT
