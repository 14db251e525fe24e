"""In-training drift probe: ``from denpex.probe import DriftProbe``.

It writes the records of ``denpex.fingerprints``; drift reads them from there, so nothing
outside a training process imports this package (or torch through it).
"""

from denpex.probe.probe import DriftProbe, ReplicaMismatchError

__all__ = ["DriftProbe", "ReplicaMismatchError"]
