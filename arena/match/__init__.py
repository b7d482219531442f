"""One match between two bot processes: the protocol, the bot process and its limits, the clock,
the referee and the game records it writes.

May import: `rules` and the standard library; zmq and msgpack only in `protocol.py`. Nothing from
`arena.tournament`, `arena.site`, `arena.terminal` or `arena.cli`, nor from `bots`.
"""
