"""arena's rule engines: five games behind one API, standard library only.

    >>> import rules
    >>> game = rules.load("domineering", rows=8, cols=8)
    >>> state = game.start().play("4C")
"""
from __future__ import annotations

import importlib
from typing import Any

from rules.core import Game, IllegalMoveError, InvalidMoveError, Outcome, State

__all__ = ["Game", "IllegalMoveError", "InvalidMoveError", "Outcome", "State", "load", "names"]

_GAMES: dict[str, str] = {
    "domineering": "rules.domineering:Domineering",
    "fanorona": "rules.fanorona:Fanorona",
    "freedom": "rules.freedom:Freedom",
    "morris": "rules.morris:Morris",
    "santorini": "rules.santorini:Santorini",
}
"""Game name -> "module:Class". Modules are imported on first use: a bot process that plays one
game pays only for that game's precomputed tables (start-up time matters in tournaments)."""


def names() -> list[str]:
    """The registered game names, sorted."""
    return sorted(_GAMES)


def load(name: str, **params: Any) -> Game:
    """The game `name` with `params` over its defaults; ValueError names an unknown game or parameter."""
    try:
        module_name, class_name = _GAMES[name].split(":")
    except (KeyError, TypeError):
        raise ValueError(f"unknown game {name!r} (known: {', '.join(names())})") from None
    cls: type[Game] = getattr(importlib.import_module(module_name), class_name)
    return cls(**params)
