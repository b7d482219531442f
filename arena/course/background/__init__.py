"""The threads that keep the season moving: submission workers, ladder runner, season clock."""
