"""The bots shipped with arena, and the SDK to write your own (`bots.sdk.Bot`).

Run one with `python -m bots NAME`; the referee does that for a bot named NAME in a match. The
names are listed in `shipped.json` beside this file, which arena reads without importing `bots`.
"""
from __future__ import annotations

import importlib
import json
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bots.sdk import Bot

REGISTRY_NAME = "shipped.json"
"""The registry of shipped bots, beside this file: {name: "module:Class"}."""

with open(os.path.join(os.path.dirname(__file__), REGISTRY_NAME), encoding="utf-8") as _registry:
    NAMES: dict[str, str] = json.load(_registry)
"""Shipped bot name -> "module:Class" (a subclass of bots.sdk.Bot)."""


def load(name: str) -> type[Bot]:
    """The bot class registered as `name`; ValueError names an unknown bot."""
    try:
        module_name, class_name = NAMES[name].split(":")
    except KeyError:
        raise ValueError(f"unknown bot {name!r} (shipped bots: {', '.join(sorted(NAMES))})") from None
    return getattr(importlib.import_module(module_name), class_name)
