"""Issue 12's dimensions: who, from where and how many people, pre-aggregated.

``classify`` turns a hit into (dimension, value) pairs; ``DimensionRecorder`` counts them
into ``dims.*`` documents and visitor sketches into ``visitors.*``; ``reads`` answers
breakdowns, visitors and filtered series from those documents only.
"""

from .classify import Dimensions, classify
from .counters import DimensionRecorder, ensure_indexes
from .encoding import CAPS, DIMENSIONS

__all__ = ["CAPS", "DIMENSIONS", "DimensionRecorder", "Dimensions", "classify",
           "ensure_indexes"]
