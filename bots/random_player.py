"""The `random` bot: a uniformly random legal move, reproducible from the game's seed."""
from __future__ import annotations

import random

from bots.sdk import Bot


class RandomBot(Bot):
    name = "random"

    def new_game(self, game, seat, opponent, seed):
        self.rng = random.Random(seed * 2 + seat)

    def choose(self, state, time_left):
        return self.rng.choice(self.legal)
