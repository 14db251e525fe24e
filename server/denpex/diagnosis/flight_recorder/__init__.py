"""Flight Recorder dumps: recognised by content, read as untrusted data, analysed across ranks.

    kind = sniff(first_bytes)                 # "pickle", "json" or None (a text log)
    dump = read_dump(path, kind)              # RankDump, or InputError / NotADump
    verdict = analyse({dump.rank: dump, ...})  # per process group, then across groups
    finding = verdict_finding(verdict, topology)

See docs/flight-recorder.md.
"""

from denpex.diagnosis.flight_recorder.analysis import analyse
from denpex.diagnosis.flight_recorder.inputs import (
    may_be_dump,
    read_dumps_beside,
    read_if_dump,
    siblings,
)
from denpex.diagnosis.flight_recorder.merge import (
    DumpSet,
    merge_findings,
    merge_verdict,
    verdict_finding,
)
from denpex.diagnosis.flight_recorder.reading import NotADump, read_dump, sniff

__all__ = [
    "DumpSet",
    "NotADump",
    "analyse",
    "may_be_dump",
    "merge_findings",
    "merge_verdict",
    "read_dump",
    "read_dumps_beside",
    "read_if_dump",
    "siblings",
    "sniff",
    "verdict_finding",
]
