"""The load generator as the server runs it: its state and commands (``control``), the
demo's first start (``demo``) and its Flask hook (``extension``); the traffic itself is
``queries.loadgen``."""
