"""arena: bots play board games under a referee. One folder a job, each using only those below it:

- `arena.match`: one match between two bot processes (protocol, bot process, clock, referee, records);
- `arena.tournament`: many matches stored and ranked (tournament file, formats, runner, store, standings);
- `arena.site`: the published results (static pages) and their server;
- `arena.terminal`: a person at the terminal (play, watch, replay);
- `arena.cli`: the `arena` command, argument parsing only.
"""

__version__ = "0.1.0"
