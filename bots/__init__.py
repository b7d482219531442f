"""The bots shipped with arena, and the SDK to write your own (`bots.sdk.Bot`).

Run one with `python -m bots NAME`; the referee does that for a bot named NAME in a match.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bots.sdk import Bot

NAMES: dict[str, str] = {
    "random": "bots.random_player:RandomBot",
    "greedy": "bots.players:Greedy",
    "minimax": "bots.players:Minimax",
    "alphabeta": "bots.players:AlphaBeta",
    "champion": "bots.players:Champion",
}
"""Shipped bot name -> "module:Class" (a subclass of bots.sdk.Bot)."""


def load(name: str) -> type[Bot]:
    """The bot class registered as `name`; ValueError names an unknown bot."""
    try:
        module_name, class_name = NAMES[name].split(":")
    except KeyError:
        raise ValueError(f"unknown bot {name!r} (shipped bots: {', '.join(sorted(NAMES))})") from None
    return getattr(importlib.import_module(module_name), class_name)
