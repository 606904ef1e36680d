"""Dimensions: who, from where and how many people, pre-aggregated.

``classify`` turns a hit into (dimension, value) pairs; ``counters`` is how they are
counted into ``dims.*`` documents and visitor sketches into ``visitors.*`` (the count
engine's ``DimensionRecorder`` drives it); ``reads`` answers breakdowns, visitors and
filtered series from those documents only.
"""

from .classify import Dimensions, classify
from .counters import ensure_indexes
from .encoding import CAPS, DIMENSIONS

__all__ = ["CAPS", "DIMENSIONS", "Dimensions", "classify", "ensure_indexes"]
