"""Differential check: the working tree's rules against a baseline commit's, over random games.

    python benchmarks/rules_agreement.py [game ...] [--games N] [--commit 5dc3553] [--seed 0]

Both `rules` packages are loaded in this process (the baseline from `git archive`) and every game is
played through both side by side, each variant of PARAMS in turn (every other game shunning moves
that end it, to reach long games and draws). After every move it asserts the same
legal_moves() (as lists, order included), to_wire(), is_over(), outcome, seat and ply; that the
state read back from its wire equals it and hashes alike; and, for a sample of bad or odd moves
(moves of other positions, other spellings, garbage), the same resulting state or the same error
(class and message). For a rewrite made for speed, which must not change a single answer.
"""
from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import baseline_rules  # noqa: E402

VARIANTS: dict[str, list[dict[str, Any]]] = {
    "domineering": [{}, {"rows": 5, "cols": 7}, {"rows": 3, "cols": 3}, {"rows": 9, "cols": 11},
                    {"rows": 26, "cols": 3, "first": "horizontal"}],
    "fanorona": [{}],
    "freedom": [{}],
    "morris": [{}, {"flying": True}, {"flying": True, "repetition": 2, "quiet_plies": 30},
               {"repetition": 0, "quiet_plies": 0, "max_turns": 60},
               {"flying": True, "repetition": 0, "quiet_plies": 12, "max_turns": 0},
               {"repetition": 5, "quiet_plies": 200, "max_turns": 150}],
    "santorini": [{}, {"limited_supply": True}],
}
"""Parameter sets played per game; a set naming a parameter the game lacks is skipped."""

GARBAGE = ["", " ", "x", "zz9", "a0", "a1-a1", "A1 A1", "Z9 A1 B2", "a1xa1", "e5 e5 e5", "--", 42, None]


def outcome_wire(state: Any) -> Any:
    outcome = state.outcome
    return None if outcome is None else outcome.to_wire()


def snapshot(state: Any) -> tuple:
    """Everything the API says about a state, comparable across the two implementations."""
    return (state.legal_moves(), state.to_wire(), state.is_over(), outcome_wire(state), state.seat,
            state.ply)


def attempt(state: Any, move: Any) -> tuple:
    """('ok', snapshot of the result) or ('error', class name, message)."""
    try:
        after = state.play(move)
    except (ValueError, TypeError) as exc:
        return ("error", type(exc).__name__, str(exc))
    return ("ok", snapshot(after))


def variants(name: str, new_rules: Any) -> list[dict[str, Any]]:
    known = new_rules.load(name).PARAMS
    return [v for v in VARIANTS.get(name, [{}]) if set(v) <= set(known)]


def oddities(move: str, rng: random.Random) -> list[Any]:
    """Other spellings of a legal move and near misses of it."""
    out: list[Any] = [move.upper(), move.lower(), f" {move} ", move.replace(" ", "  ")]
    out.append(move[:-1])
    out.append(move + move[-1])
    parts = move.split()
    if len(parts) > 1:
        out.append(" ".join(reversed(parts)))
        out.append(" ".join(parts[:-1]))
    if "x" in move:
        out.append(move.split("x")[0])
    return [rng.choice(out)]


def compare_game(name: str, params: dict[str, Any], base_rules: Any, new_rules: Any, games: int,
                 rng: random.Random) -> tuple[int, int]:
    """Play `games` random games through both; (positions compared, bad moves compared)."""
    base_game, new_game = base_rules.load(name, **params), new_rules.load(name, **params)
    positions = probes = 0
    pool: list[str] = []
    for g in range(games):
        base, new = base_game.start(), new_game.start()
        while True:
            positions += 1
            expected, got = snapshot(base), snapshot(new)
            if expected != got:
                raise AssertionError(f"{name} {params} game {g} ply {base.ply}: baseline {expected!r}\n"
                                     f"working tree {got!r}")
            again = new_game.state_from_wire(got[1])
            assert again == new and hash(again) == hash(new), f"{name}: wire round trip differs"
            assert snapshot(again) == got, f"{name}: the state read from the wire answers differently"
            moves = got[0]
            tries = [rng.choice(pool)] if pool else []
            if moves:
                tries += oddities(rng.choice(moves), rng)
            if rng.random() < 0.05:
                tries.append(rng.choice(GARBAGE))
            for bad in tries:
                probes += 1
                a, b = attempt(base, bad), attempt(new, bad)
                if a != b:
                    raise AssertionError(f"{name} {params} game {g} ply {base.ply} move {bad!r}: "
                                         f"baseline {a!r}\nworking tree {b!r}")
            if not moves:
                break
            pool.extend(moves[:3])
            if len(pool) > 2000:
                del pool[:1000]
            move = rng.choice(moves)
            if g % 2:  # every other game shuns moves that end it, to reach late positions and draws
                for _ in range(3):
                    if not new.play(move).is_over():
                        break
                    move = rng.choice(moves)
            base, new = base.play(move), new.play(move)
    return positions, probes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("games", nargs="*", help="games to check (default: all)")
    parser.add_argument("--games", dest="count", type=int, default=300, help="random games per variant")
    parser.add_argument("--commit", default=baseline_rules.DEFAULT_COMMIT, help="the baseline commit")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    base_rules = baseline_rules.load(baseline_rules.extract(args.commit))
    new_rules = baseline_rules.load(baseline_rules.ROOT)
    total_games = total_positions = total_probes = 0
    for name in args.games or new_rules.names():
        for params in variants(name, new_rules):
            rng = random.Random(f"{args.seed}/{name}/{sorted(params.items())}")
            positions, probes = compare_game(name, params, base_rules, new_rules, args.count, rng)
            total_games += args.count
            total_positions += positions
            total_probes += probes
            print(f"{name:<12} {str(params):<75} {args.count:>6} games {positions:>8} positions "
                  f"{probes:>8} odd moves: identical")
    print(f"all identical: {total_games} games, {total_positions} positions, {total_probes} odd moves "
          f"(baseline {args.commit})")


if __name__ == "__main__":
    main()
