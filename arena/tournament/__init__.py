"""Many matches, stored and ranked: the tournament file, pairing formats, the runner (local pool
or Dask cluster), the results database, Elo and the standings.

May import: `arena.match` and `rules`; pandas and tabulate only in `standings.py`, dask only in
`cluster.py`. Nothing from `arena.site`, `arena.terminal` or `arena.cli`, nor from `bots`.
"""
