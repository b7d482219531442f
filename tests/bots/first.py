"""A deterministic bot: it always plays the first legal move (`python first.py`)."""
from __future__ import annotations

from bots.sdk import Bot


class FirstBot(Bot):
    name = "first"

    def choose(self, state, time_left):
        return self.legal[0]


if __name__ == "__main__":
    FirstBot().run()
