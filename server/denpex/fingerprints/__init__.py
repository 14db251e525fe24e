"""The probe's fingerprint files: the on-disk format the probe writes and drift reads.

It belongs to neither side, so the probe (the writer, which needs torch) and the drift
engine and language server (the readers, which do not) import it and not each other.
"""
