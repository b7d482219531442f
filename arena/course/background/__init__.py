"""The server's background threads over the season: submissions, the ladder, the season clock."""
