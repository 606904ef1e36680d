"""The server's HTTP routes beside the pages: the ``/hit`` beacon (``beacon``, which sites
and pages it counts in ``beacon_gate``, from which origins in ``beacon_origins``),
``/healthz`` (``health``) and the annotations API (``annotations_api``). Each registers
itself through its ``register_*`` function, which only the app factory calls
(``dashboard/extensions.py``)."""
