"""The pre-aggregated statistics: storage contract, writes, the coalescing recorder, backfill,
and the reads charts make of them."""
