"""Tiny real trainings for ``denpex demo`` and the drift tests: not part of any engine.

It may import drift and the probe; no engine imports it.
"""
