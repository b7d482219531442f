"""arena.site: a tournament's results as a static website, and a server that keeps it current.

`publish_site(results_dir)` writes `results/<name>/site/`: index.html (standings, crosstable),
games.html, bots/<bot>.html, games/<game id>.html (a replay viewer), records/ (each game's JSON
record and move file) and static/ (CSS and one small JS module per game that draws its board as
SVG). Pages are rendered from Jinja2 templates (templates/); every position a page shows is a wire
state computed here with `rules` and embedded as JSON, so the pages work from file:// and from any
static host, and no JavaScript re-implements a game's rules. `serve` (serve.py) serves that
directory on 127.0.0.1 and rebuilds it whenever the results database changes.

May import: arena.tournament, arena.match, rules, Jinja2 and pandas. Nothing of arena imports it
except arena.cli.
"""
from __future__ import annotations

from typing import Any

__all__ = ["SiteBuilder", "publish_site"]


def __getattr__(name: str) -> Any:
    """SiteBuilder and publish_site, imported on first use: the course server reads the page
    model (arena.site.model) and must not pay pandas' import (0.3-0.6 s) at every start."""
    if name in __all__:
        from arena.site import build

        return getattr(build, name)
    raise AttributeError(f"module 'arena.site' has no attribute {name!r}")
