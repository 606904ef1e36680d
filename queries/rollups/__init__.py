"""Hierarchical rollups of the events: building them, reading them, and checking them against
the statistics."""
