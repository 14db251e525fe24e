"""Denpex: local-first diagnosis of failed ML training runs and silent data corruption."""

__version__ = "0.1.0"
