"""Bot processes kept from one match to the next (issue 15): a `BotHub` per worker process.

Starting a bot costs an interpreter start-up and its imports (about 150 ms of CPU for a Python bot,
0.8 s of wall time for two on 2 loaded cores); a tournament worker plays match after match, often
with a bot it has just played. With a hub, `run_match(spec, hub=hub)` takes the match's bots from
the hub when it has them running, and gives them back at the end instead of stopping them. The
bots notice nothing new: protocol v1 already sends `new_game` with the opponent's name for every
game, and a bot waits for the next `new_game` (or `bye`) after `game_over`.

What is kept and what is not:
- A bot is given back only if it is ready (it said hello), has no failure and its process runs: a
  bot that crashed, timed out with `restart_on_forfeit`, or failed in any way is stopped, and the
  next match starts it afresh, as before.
- A bot is reused only by a match with the same bot: same name, command, limits and clock.
- Bots pinned to CPUs (`limits.pin_cpus`) are not reused: the pinning is per seat of a match.
- A bot that has used half of its CPU-seconds limit is retired, so a long tournament never turns
  the limit summed over many matches into a forfeit.
- At most `idle_max` idle bots are kept; the least recently used is told `bye` and stopped.
- The hub owns one socket, one watchdog and one working directory for all its bots: a worker that
  dies (even by kill -9) takes its bots with it, as a referee does.
- Sandboxed bots are kept too: each bot process has its own private `ipc://` socket on the hub's
  endpoint (arena.cell.endpoint.PrivateSocket), in a 0700 directory the hub owns for its life; the
  socket belongs to the process, not to a seat, so a kept bot keeps it in whatever seat it plays
  next, and it is closed when the process is stopped. A kept bot is thawed (its cgroup's freezer)
  when it is given back.
"""
from __future__ import annotations

import os
import shutil
from collections import OrderedDict
from pathlib import Path
from typing import Any

from arena.cell import scratch
from arena.cell.limits import Limits, Watchdog
from arena.match.protocol import BYE, RefereeEndpoint

IDLE_MAX = 8
"""Idle bots a hub keeps by default."""
_CPU_RETIRE_FRACTION = 0.5
"""A bot that has used this fraction of its CPU-seconds limit is not reused."""


def bot_key(spec: Any, limits: Limits) -> tuple:
    """What makes two seats the same bot for reuse."""
    return (spec.name, tuple(spec.command), repr(limits), str(spec.time_control))


class BotHub:
    """A worker's idle bots between matches, and the socket, watchdog and directory they share."""

    def __init__(self, idle_max: int = IDLE_MAX) -> None:
        self.idle_max = idle_max
        self.endpoint = RefereeEndpoint()
        self.watchdog = Watchdog()
        self.workdir = scratch.make("hub")
        self._private_dir: str | None = None
        self.idle: OrderedDict[tuple, Any] = OrderedDict()
        self.started = 0
        """Bot processes started through this hub (by the matches that used it)."""
        self.reused = 0
        """Seats of matches that got a running bot from the hub."""

    def private_dir(self) -> str:
        """The 0700 directory of the private sockets of the hub's sandboxed bots (made on first use,
        removed by `close`)."""
        if self._private_dir is None:
            self._private_dir = str(scratch.make("ipc"))
        return self._private_dir

    def take(self, spec: Any, limits: Limits) -> Any | None:
        """The idle Player of this bot, if the hub has one still running, else None."""
        if limits.pin_cpus:
            return None
        player = self.idle.pop(bot_key(spec, limits), None)
        if player is None:
            return None
        if player.needs_restart():
            self._stop(player)
            return None
        self.reused += 1
        return player

    def give_back(self, player: Any, limits: Limits) -> bool:
        """Keep `player` for a later match; False (and nothing kept) if it may not be reused."""
        process = player.process
        if (limits.pin_cpus or player.spec.external or player.failure is not None or player.needs_restart()
                or _cpu_used_s(process) > _CPU_RETIRE_FRACTION * (limits.cpu_s or float("inf"))):
            return False
        key = bot_key(player.spec, limits)
        if key in self.idle:  # the same bot twice (cannot happen in a tournament): keep one
            return False
        process.resume()
        self.idle[key] = player
        while len(self.idle) > self.idle_max:
            _, oldest = self.idle.popitem(last=False)
            self._stop(oldest)
        return True

    def _stop(self, player: Any) -> None:
        try:
            if player.identity is not None:
                self.endpoint.send(player.identity, {"type": BYE})
        finally:
            player.stop()

    def close(self) -> None:
        """Say bye to every idle bot, stop them, close the socket and the watchdog, remove the files."""
        try:
            while self.idle:
                _, player = self.idle.popitem()
                self._stop(player)
        finally:
            self.watchdog.close()
            self.endpoint.close()
            shutil.rmtree(self.workdir, ignore_errors=True)
            if self._private_dir is not None:
                shutil.rmtree(self._private_dir, ignore_errors=True)


def _cpu_used_s(process: Any) -> float:
    """CPU seconds (user + system) the bot has used: its cgroup's when it has one (a sandboxed bot's
    main process is the sandbox's), else its main process's; 0 when it cannot be read."""
    cgroup = getattr(process, "cgroup", None)
    if cgroup is not None:
        try:
            return cgroup.cpu_seconds()
        except (OSError, ValueError):
            return 0.0
    pid = getattr(process, "pid", None)
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0
