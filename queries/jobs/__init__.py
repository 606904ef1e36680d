"""Work done on the store as a whole rather than per hit: whole days of history written at
once (``backfill``)."""
