"""The `random` bot: a uniformly random legal move, reproducible from the game's seed."""
from __future__ import annotations

from bots.sdk import Bot


class RandomBot(Bot):
    name = "random"

    def choose(self, state, time_left):
        return self.rng.choice(self.legal)
