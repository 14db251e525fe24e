"""Checkpoint drift: compare runs and replicas, judge the series (silent data corruption)."""
