"""One match between two bot processes: the protocol, the clock, the referee and the game records
it writes. The bot processes themselves, sealed off, are the cell's (`arena/cell/`).

- the wire: `protocol.py` (protocol v1), `stdio.py` (the adapter for text-protocol bots);
  `reuse.py` (bots kept between a worker's matches, which talk the protocol);
- the referee: `referee.py` (`run_match`), `players.py` (start-up, hellos, connections), `turns.py`
  (one game's moves on the clock), `forfeits.py`, `clock.py`;
- what a match leaves: `records.py`, `movefile.py`, `recorder.py`; `spec.py` (`MatchSpec`);
  `sprt.py` (when a match of pairs may stop, `arena match --sprt`).

May import: `rules`, `arena.cell` and the standard library; zmq and msgpack only in `protocol.py`.
Nothing from `arena.tournament`, `arena.site`, `arena.terminal` or `arena.cli`, nor from `bots`.
"""
