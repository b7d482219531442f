"""arena: the referee, bot launcher, scheduler, ratings and standings around `rules`."""

__version__ = "0.1.0"
