"""``harness leaderboard`` and ``harness compare``: merged tables, a static page, plots, paired bootstrap.

Nothing heavy is imported here: ``harness list`` imports this package's command definitions only.
"""
