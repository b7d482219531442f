"""One match between two bot processes: the protocol, the bot process in its limits and sandbox,
the clock, the referee and the game records it writes.

- the wire: `protocol.py` (protocol v1), `stdio.py` (the adapter for text-protocol bots), `relay.py`
  (a TCP hop inside a sandbox for bots whose library lacks `ipc://`);
- the bot process: `launcher.py` (`BotProcess`, bot commands), `interpreters.py` (which word of a
  command is a file), `limits.py`, `sandbox.py` (bubblewrap), `cgroup.py`, `reuse.py` (bots kept
  between a worker's matches);
- the referee: `referee.py` (`run_match`), `players.py` (start-up, hellos, connections), `turns.py`
  (one game's moves on the clock), `forfeits.py`, `clock.py`;
- what a match leaves: `records.py`, `movefile.py`, `recorder.py`; `spec.py` (`MatchSpec`);
  `sprt.py` (when a match of pairs may stop, `arena match --sprt`).

May import: `rules` and the standard library; zmq and msgpack only in `protocol.py`. Nothing from
`arena.tournament`, `arena.site`, `arena.terminal` or `arena.cli`, nor from `bots`.
"""
