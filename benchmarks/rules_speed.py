"""Random-playout speed of every game (plies/s, games/s), and Morris against OpenSpiel's C++.

Run: python benchmarks/rules_speed.py [--seconds S]
OpenSpiel is a benchmark-only extra (`pip install -e '.[bench]'`); without it that line is skipped.
Goal (issue "Rules"): Morris at least 10% of OpenSpiel's nine_mens_morris in the same loop.
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import rules  # noqa: E402


def ours(name: str, seconds: float, seed: int = 0) -> tuple[float, float]:
    """Plies/s and games/s of random playouts of `name` through the public API."""
    game = rules.load(name)
    rng = random.Random(seed)
    plies = games = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = game.start()
        while not state.is_over():
            state = state.play(rng.choice(state.legal_moves()))
            plies += 1
        games += 1
    elapsed = time.perf_counter() - start
    return plies / elapsed, games / elapsed


def openspiel(seconds: float, seed: int = 0) -> tuple[float, float] | None:
    """The same loop over OpenSpiel's nine_mens_morris, or None when open_spiel is not installed."""
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("nine_mens_morris")
    rng = random.Random(seed)
    plies = games = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            state.apply_action(rng.choice(state.legal_actions()))
            plies += 1
        games += 1
    elapsed = time.perf_counter() - start
    return plies / elapsed, games / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    args = parser.parse_args()
    print(f"{'game':<12} {'plies/s':>10} {'games/s':>9}")
    results = {}
    for name in rules.names():
        plies, games = ours(name, args.seconds)
        results[name] = plies
        print(f"{name:<12} {plies:>10,.0f} {games:>9,.1f}")
    reference = openspiel(args.seconds)
    if reference is None:
        print("\nopen_spiel not installed: pip install -e '.[bench]' to compare Morris with OpenSpiel")
        return
    ratio = results["morris"] / reference[0]
    print(f"\nOpenSpiel nine_mens_morris (C++): {reference[0]:,.0f} plies/s, {reference[1]:,.1f} games/s")
    print(f"morris / OpenSpiel = {ratio:.1%} (goal: at least 10%)")


if __name__ == "__main__":
    main()
