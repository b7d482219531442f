"""An SDK bot whose choose() always raises: the SDK must answer legal[0] and report the error."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bots.sdk import Bot  # noqa: E402


class RaisingBot(Bot):
    name = "raising"

    def choose(self, state, time_left):
        return 1 // 0


if __name__ == "__main__":
    sys.exit(RaisingBot().run())
