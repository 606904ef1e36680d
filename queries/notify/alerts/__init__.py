"""Alerts: a site's traffic above or below its expected range, or stopped, told by email
or webhook once per incident (``rules``: who is told of what; ``check``: the scheduler's
step; ``incidents``: the ``anomaly`` notes they are)."""
