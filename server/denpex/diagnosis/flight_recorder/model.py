"""Typed Flight Recorder data: what one rank's dump says, and what the analysis concludes.

Field names follow torch's dump (torch/csrc/distributed/c10d/FlightRecorder.hpp); see
docs/flight-recorder.md for the versions read.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Sizes and dtypes as the dump gives them: one list per tensor ([[4], [2, 3]], ["Float"]).
Sizes = tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class Frame:
    filename: str
    line: int
    name: str

    def __str__(self) -> str:
        return f"{self.filename}:{self.line} in {self.name}"


@dataclass(frozen=True)
class Entry:
    """One recorded operation of one rank."""

    record_id: int  # order in the rank's buffer, across process groups
    group: str  # the process group's name (the first of ``process_group``)
    group_desc: str  # "default_pg", "undefined", a user's description
    seq: int  # collective_seq_id: the k-th collective of this rank on this group
    is_p2p: bool
    op: str  # profiling_name without the backend: "all_reduce", "all_gather", ...
    input_sizes: Sizes
    input_dtypes: tuple[str, ...]
    output_sizes: Sizes
    output_dtypes: tuple[str, ...]
    state: str  # scheduled, started, completed (gloo leaves every entry "scheduled")
    frames: tuple[Frame, ...]

    def user_frame(self) -> Frame | None:
        """The innermost frame outside torch: the caller's line."""
        for frame in self.frames:
            if "/torch/" not in frame.filename.replace("\\", "/"):
                return frame
        return self.frames[0] if self.frames else None


@dataclass
class RankDump:
    rank: int  # from the file name's trailing digits, as torch names dumps <prefix><rank>
    path: str
    prefix: str  # the path without the rank: dumps of one job share it
    version: str
    backend: str  # "nccl", "gloo", ... from the entries' profiling names ("" when none)
    entries: list[Entry]
    group_ranks: dict[str, tuple[int, ...]]  # pg_config: members per group name, when given

    @property
    def tracks_completion(self) -> bool:
        # Gloo records every entry as "scheduled" and never updates it (torch 2.13), so its
        # states say nothing; only the order of seq ids does.
        return self.backend not in ("gloo", "")


@dataclass
class Stuck:
    """The oldest collective of one process group that did not complete on every member."""

    group: str
    group_desc: str
    seq: int
    members: list[int]
    members_known: bool  # False when the dumps do not list the group's ranks (gloo subgroups)
    entered: dict[int, Entry]  # rank -> its entry for this collective
    missing: list[int]  # members with a dump and no entry for it: never arrived
    undumped: list[int]  # members without a dump: unknown
    mismatch: list[str] = field(default_factory=list)  # "op: all_reduce on 0-2, all_gather on 3"
    odd: list[int] = field(default_factory=list)  # the minority in a mismatch


@dataclass
class Verdict:
    """Across process groups: who started the hang and who only waited."""

    stuck: list[Stuck]
    initiating: int | None
    suspects: list[int]
    waiting: list[int]  # ranks blocked in a stuck collective: collateral
    undumped: list[int]
    kind: str  # "stall" (a rank never arrived), "mismatch", "no-dump", "not-completed"
    dumps: dict[int, RankDump]
