"""Sharding the stats collections: the cluster commands, the key planner, and its advice as
text."""
