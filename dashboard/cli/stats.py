"""Commands on the pre-aggregated statistics (filled in by the foundation work)."""

COMMANDS = ()
