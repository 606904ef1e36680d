"""Counting hits: the one count step every source calls (``count``: rows classified
and counted as columns, in the recorders' pending formats), one coalescing engine
(``engine``: pending units, admission, backpressure, the exactly-once guard, retries,
the flush thread) and the recorders that drive it with a representation each
(``recorders``: the pre-aggregated stats, the dimension counters and visitor
sketches)."""

from .recorders import DimensionRecorder, HitRecorder

__all__ = ["DimensionRecorder", "HitRecorder"]
