"""arena's rule engines: five games behind one API, standard library only.

    >>> import rules
    >>> game = rules.load("domineering", rows=8, cols=8)
    >>> state = game.start().play("4C")
"""
from __future__ import annotations

from typing import Any

from rules.core import Game, IllegalMoveError, InvalidMoveError, Outcome, State
from rules.domineering import Domineering
from rules.fanorona import Fanorona
from rules.freedom import Freedom
from rules.morris import Morris
from rules.santorini import Santorini

__all__ = ["Game", "IllegalMoveError", "InvalidMoveError", "Outcome", "State", "load", "names"]

_GAMES: dict[str, type[Game]] = {
    cls.name: cls for cls in (Domineering, Fanorona, Freedom, Morris, Santorini)
}


def names() -> list[str]:
    """The registered game names, sorted."""
    return sorted(_GAMES)


def load(name: str, **params: Any) -> Game:
    """The game `name` with `params` over its defaults; ValueError names an unknown game or parameter."""
    try:
        cls = _GAMES[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown game {name!r} (known: {', '.join(names())})") from None
    return cls(**params)
