"""A person at the terminal: play against a bot, watch two bots, replay a stored game, and the
screens they draw.

May import: `arena.match` and `rules`. Nothing from `arena.tournament`, `arena.site` or
`arena.cli`, nor from `bots`.
"""
