"""The pre-aggregated statistics: storage contract, writes, the coalescing recorder, and
the reads charts make of them. The ground floor of ``queries/``: it imports no other folder
of it (whole-store jobs are in ``jobs/``, reads across representations in ``reads/``)."""
