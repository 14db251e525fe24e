"""One majority vote for data-parallel replicas, which must agree bitwise.

Used by the replica comparison of checkpoints (``drift.replicas``) and of fingerprints
(``drift.fingerprints``), and by the probe's check during training (``probe.replica``).
Voters (ranks, or positions in a process group) holding equal values form a side. The
reference side is:
1. the side held by more than half of the voters (a strict majority), when there is one;
2. otherwise, when ``moved`` is given (how far each side moved from the state all voters
   last agreed on, the probe's tie rule), the side that moved least: a fault adds
   displacement on top of the shared update;
3. otherwise the largest side, and among equally large sides the one holding the lowest
   voter. With two replicas or an even split that is the side of the lowest rank.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Vote:
    sides: list[list[int]]  # voters grouped by equal value: largest first, then lowest voter
    reference: list[int]  # the side the others are compared with

    @property
    def strict(self) -> bool:
        """The reference holds more than half of the voters."""
        return 2 * len(self.reference) > sum(map(len, self.sides))

    @property
    def tied(self) -> bool:
        """Another side is as large as the largest: size alone named no reference."""
        return len(self.sides) > 1 and len(self.sides[1]) == len(self.sides[0])

    @property
    def odd(self) -> list[int]:
        """The voters outside the reference, in order."""
        return sorted(v for side in self.sides if side is not self.reference for v in side)


def vote(values: Mapping[int, Hashable], moved: Callable[[list[int]], float] | None = None) -> Vote:
    """The reference side among ``values`` (voter -> value); ``moved`` breaks a vote
    without a strict majority (see the module docstring)."""
    groups: dict[Hashable, list[int]] = {}
    for voter in sorted(values):
        groups.setdefault(values[voter], []).append(voter)
    sides = sorted(groups.values(), key=lambda side: (-len(side), side[0]))
    reference = sides[0]
    if moved is not None and 2 * len(reference) <= len(values):
        reference = min(sides, key=lambda side: (moved(side), side[0]))
    return Vote(sides, reference)


__all__ = ["Vote", "vote"]
